"""Completing and re-linearising a best-first output with the tree beam DP — an APPROXIMATE decoder.

For inputs without a complete tree (bags of words, partial POS or dependencies), best-first search
(``dualdecomp.models.ordering.paper.search``) gives an ordered tree, or after its timeout a concatenation of
fragments that misses some words. This second stage:

1. builds a complete tree over *every* input word: the given heads are restored, the output's arcs
   (the timeout rule's attachments of fragment roots included) and tags are kept where they make no
   cycle and do not hang an outside word on a word of an ordered unit other than its head, and each
   part still not connected to the root (a missing word with its given dependents) is attached, best
   first, to the word of the root's part whose two-word arc the model scores highest (a leaf of each
   word, either side; the part's top word with each tag it may take; never a word of an ordered unit
   other than its head);
2. orders that tree with the tree beam DP (``exact_linearisation(..., beam=K)``) under the same model;
3. keeps the best-first output instead when it was complete and scores at least as high (both are goal
   edges of the same model, so their scaled scores compare).

Every output then holds all the input words and respects the given POS and heads. Nothing is certified.

With the input's ``Deadline`` (shared with the first stage) step 1 checks it before each arc score and,
once it has passed, attaches the parts still loose to the root; step 2 is the tree beam DP's own
deadline rule (it finishes greedily). Either is labelled in ``OrderingResult.stopped``.
"""

from __future__ import annotations

import time
from dataclasses import replace

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Edge
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.search import goal_result

REFINED_METHOD = "best-first + tree beam DP (approximate)"


def output_arcs(result: OrderingResult) -> dict[int, int]:
    """Input word → input head (``ROOT`` for the root) of an output's tree."""
    return {result.order[k]: ROOT if h == 0 else result.order[h - 1] for k, h in enumerate(result.heads)}


def completed_input(model: OrderingModel, inp: OrderingInput, result: OrderingResult,
                    lm: OrderingLM | None = None) -> OrderingInput:
    """A full tree over every input word that keeps the output's arcs and tags and every given head.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
        The original input (its given POS and heads are kept).
    result : OrderingResult
        A best-first output (complete or joined from fragments).
    lm : OrderingLM, optional
        The LM term of the model's arc scores (the one the search decoded with).

    Returns
    -------
    OrderingInput
        Every head given; the output's tags given for its words, the input's for the others. The root is
        the given root, else the output's root (or the top of its chain of given heads).
    """
    return completed_tree(model, inp, result, lm=lm)[0]


def completed_tree(model: OrderingModel, inp: OrderingInput, result: OrderingResult,
                   deadline: Deadline | None = None, lm: OrderingLM | None = None
                   ) -> tuple[OrderingInput, tuple[str, ...]]:
    """:func:`completed_input` under a deadline: once it has passed, the parts still loose are attached to
    the root instead of where the model scores them best.

    Parameters
    ----------
    model, inp, result, lm
        As for :func:`completed_input`.
    deadline : Deadline, optional
        Checked before each arc score.

    Returns
    -------
    (OrderingInput, tuple of str)
        The tree, and what the deadline cut short (empty, or one note).
    """
    n = len(inp)
    heads: list[int | None] = list(inp.heads)
    pos: list[str | None] = list(inp.pos)
    for w, tag in zip(result.order, result.pos, strict=True):
        pos[w] = tag
    root = inp.given_root()
    arcs = output_arcs(result)
    if root is None:  # the output's root (the first word when the output is empty), or the top of its
        root = next((w for w, h in arcs.items() if h == ROOT), 0)  # chain of given heads
        while inp.heads[root] is not None:
            root = inp.heads[root]
    heads[root] = ROOT
    closed = inp.closed_words()  # unit words other than the unit's head take no outside dependent
    for w, h in arcs.items():  # (the timeout rule may have hung a fragment on such a word)
        if heads[w] is None and h != ROOT and h not in closed and not _above(heads, h, w):
            heads[w] = h
    ctx = model.context(OrderingInput(inp.words, tuple(pos), (None,) * n, inp.ident))
    leaves: dict[int, list[Edge]] = {}
    for leaf in model.leaves(ctx, lm=lm):
        leaves.setdefault(leaf.head, []).append(leaf)
    scores: dict[tuple[int, int], float] = {}  # an arc's score does not change as parts are joined
    late = 0
    while True:
        top = _tops(heads)
        connected = [w for w in range(n) if top[w] == root and w not in closed]
        loose = sorted({top[w] for w in range(n)} - {root})
        if not loose:
            break
        if late or deadline is not None and deadline.expired():
            late = late or len(loose)
            for u in loose:
                heads[u] = root
            continue
        best = None
        for u in loose:
            for h in connected:
                if deadline is not None and deadline.expired():
                    break
                if (h, u) not in scores:
                    scores[h, u] = _arc_score(model, ctx, leaves, h, u, lm)
                if best is None or scores[h, u] > best[0]:
                    best = (scores[h, u], u, h)
        if deadline is not None and deadline.expired():
            continue  # the next round attaches what is loose to the root
        heads[best[1]] = best[2]
    tree = OrderingInput(inp.words, tuple(pos), tuple(heads), inp.ident, inp.units)
    note = (f"completing the tree ({late} loose parts attached to the root at the deadline)",) if late else ()
    return tree, note


def refine(model: OrderingModel, inp: OrderingInput, first: OrderingResult, beam: int,
           beam_attachments: int | None = None, deadline: Deadline | None = None,
           lm: OrderingLM | None = None) -> OrderingResult:
    """The second stage (module docstring): complete the output's tree and order it by the tree beam DP.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
    first : OrderingResult
        The best-first output for ``inp``.
    beam : int
        Beam of the tree DP.
    beam_attachments : int or None
        A bound on the tree DP's worst case of attachments (``exact.budgeted_beam``); None: none.
    deadline : Deadline, optional
        The input's deadline (module docstring).
    lm : OrderingLM, optional
        The LM term the first stage decoded with (added to every edge's score here too).

    Returns
    -------
    OrderingResult
        Method ``"best-first + tree beam DP (approximate)"`` (seconds include the first stage), or
        ``first`` itself when it was complete and scores at least as high; ``stopped``: the first stage's,
        then this one's.
    """
    start = time.perf_counter()
    tree, stopped = completed_tree(model, inp, first, deadline, lm)
    found = exact_linearisation(model, tree, beam=beam, beam_attachments=beam_attachments, deadline=deadline,
                                lm=lm)
    if found.timed_out:
        stopped += ("the tree beam DP (finished greedily at the deadline)",)
    if found.best is None or (first.complete and first.score >= found.best.scaled):
        return replace(first, stopped=first.stopped + stopped) if stopped else first
    result = goal_result(model.context(inp), found.best, first.expansions + found.states,
                         first.seconds + time.perf_counter() - start, method=REFINED_METHOD)
    return result.after(first.stopped + stopped)


def _above(heads: list[int | None], start: int, target: int) -> bool:
    """Whether ``target`` is ``start`` or one of its known ancestors."""
    u: int | None = start
    while u is not None and u != ROOT:
        if u == target:
            return True
        u = heads[u]
    return False


def _tops(heads: list[int | None]) -> list[int]:
    """The top word of each word's part (following known heads up to a word without one, or the root)."""
    top: list[int] = []
    for w in range(len(heads)):
        seen = {w}
        u = w
        while heads[u] is not None and heads[u] != ROOT:
            u = heads[u]
            if u in seen:  # cannot happen: given heads are acyclic and new arcs join separate parts
                raise AssertionError("cycle while completing the tree")
            seen.add(u)
        top.append(u)
    return top


def _arc_score(model: OrderingModel, ctx, leaves: dict[int, list[Edge]], head: int, dep: int,
               lm: OrderingLM | None) -> float:
    """The model's best score gain of making ``dep`` a dependent of ``head`` in a two-word edge."""
    best = float("-inf")
    for h in leaves[head]:
        for d in leaves[dep]:
            for right in (True, False):
                gain = model.attach_score(ctx, h, d, right, lm) - h.score - d.score
                best = max(best, gain)
    return best
