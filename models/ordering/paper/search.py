"""Best-first search over dependency edges (Algorithm 4 of the paper) — an APPROXIMATE decoder.

An agenda (priority queue on the scaled score F(e)/|e|) and a chart (a single beam of accepted edges).
The top edge is popped; if it covers every word it is the output; otherwise it is combined with every
chart edge in the four ways (either order, either head) that the constraints allow, the new edges go on
the agenda, and the popped edge enters the chart (the lowest-scored chart edge drops out when the beam
is full). The search stops at the first goal edge, so it does not certify that the output is the
model's best: only ``dualdecomp.solvers.ordering`` (through ``dualdecomp.models.ordering.paper.exact``)
certifies.

Timeout rule (§3.4 of the paper): when the time limit (``SearchConfig.timeout``, or the input's shared
``Deadline``) or the expansion limit is reached first, the chart
edges are sorted by number of words (ties: higher scaled score first); the largest is the current
output, and each following edge that shares no word with it is concatenated to its right. Words in no
chosen edge are missing from the output (``recovered`` < 1). In the output tree each fragment root
takes its given head when that word is in the output and no cycle results, else it is attached to the
root of the first fragment. A search the time limit stopped is labelled (``OrderingResult.stopped``);
the deadline is checked before every pop, so it stops within one expansion of the deadline.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Context, Edge, can_attach
from dualdecomp.models.ordering.paper.model import OrderingModel


@dataclass(frozen=True)
class SearchConfig:
    """Settings of the best-first search.

    Attributes
    ----------
    chart_size : int or None
        Beam size of the chart (``None``: unbounded).
    timeout : float or None
        Seconds per sentence (the paper uses 5); ``None``: no time limit.
    max_expansions : int or None
        Limit on popped edges (deterministic alternative to the timeout); ``None``: no limit.
    exhaustive : bool
        Do not stop at the first goal: run until the agenda is empty and return the best goal popped
        (for tests on tiny inputs only).
    """

    chart_size: int | None = 32
    timeout: float | None = 5.0
    max_expansions: int | None = None
    exhaustive: bool = False


def expand(model: OrderingModel, ctx: Context, edge: Edge, chart: list[Edge], lm: OrderingLM | None = None
           ) -> list[tuple[float, Edge, Edge, bool]]:
    """``(F, head, dep, right)`` of every edge buildable from ``edge`` and a chart edge (chart order; for
    each chart edge ``edge`` as head first, right before left), scored in one compiled call (with the LM
    term ``lm``, if any)."""
    found = []
    for k, other in enumerate(chart):
        if other.mask & edge.mask:
            continue
        for edge_heads, head, dep in ((True, edge, other), (False, other, edge)):
            for right in (True, False):
                if can_attach(ctx, head, dep, right):
                    found.append((k, edge_heads, right, head, dep))
    if not found:
        return []
    scores = model.attach_scores(ctx, edge, chart, [(k, heads, right) for k, heads, right, _, _ in found], lm)
    return [(score, head, dep, right) for score, (_, _, right, head, dep) in zip(scores, found, strict=True)]


def expand_each(model: OrderingModel, ctx: Context, edge: Edge, chart: list[Edge],
                lm: OrderingLM | None = None) -> list[tuple[float, Edge, Edge, bool]]:
    """:func:`expand` with one :meth:`~OrderingModel.attach_score` call per attachment: its definition
    (the same list, the same floats; ``training.ReferenceTrainer`` and the tests use it)."""
    return [(model.attach_score(ctx, head, dep, right, lm), head, dep, right)
            for other in chart if not other.mask & edge.mask
            for head, dep in ((edge, other), (other, edge))
            for right in (True, False) if can_attach(ctx, head, dep, right)]


def add_to_chart(chart: list[Edge], edge: Edge, size: int | None) -> Edge | None:
    """Insert into the beam; return the edge that dropped out (lowest scaled score) or None."""
    chart.append(edge)
    if size is not None and len(chart) > size:
        worst = min(range(len(chart)), key=lambda k: chart[k].scaled)
        return chart.pop(worst)
    return None


def best_first(model: OrderingModel, inp: OrderingInput, config: SearchConfig = SearchConfig(),
               clock: Callable[[], float] = time.perf_counter, deadline: Deadline | None = None,
               lm: OrderingLM | None = None) -> OrderingResult:
    """Order a bag of words by best-first search (approximate; see the module docstring).

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
        The bag with its hard constraints (given POS tags and heads).
    config : SearchConfig
    clock : callable
        Time source (seconds) of ``config.timeout``.
    deadline : Deadline, optional
        The input's deadline, shared with the other stages: the search also stops there.
    lm : OrderingLM, optional
        The LM term added to every edge's score (``dualdecomp.models.ordering.lm_term``).

    Returns
    -------
    OrderingResult
        ``certified`` is always False; ``stopped`` names the search when a time limit stopped it before
        a goal.
    """
    start = clock()
    ctx = model.context(inp)
    agenda: list = []
    seq = 0
    for leaf in model.leaves(ctx, lm=lm):
        agenda.append((-leaf.scaled, seq, leaf, None, None, False))
        seq += 1
    heapq.heapify(agenda)
    chart: list[Edge] = []
    expansions = 0
    best: Edge | None = None
    timed_out = False
    while agenda:
        if (config.timeout is not None and clock() - start > config.timeout
                or deadline is not None and deadline.expired()):
            timed_out = True
            break
        if config.max_expansions is not None and expansions >= config.max_expansions:
            break
        _, _, edge, head, dep, right = heapq.heappop(agenda)
        if edge is None:
            edge = model.attach(ctx, head, dep, right, with_phi=False, lm=lm)
        expansions += 1
        if edge.mask == ctx.full:
            if best is None or edge.scaled > best.scaled:
                best = edge
            if not config.exhaustive:
                break
            continue
        for score, h, d, r in expand(model, ctx, edge, chart, lm):
            size = h.size + d.size + 1
            heapq.heappush(agenda, (-score / size, seq, None, h, d, r))
            seq += 1
        add_to_chart(chart, edge, config.chart_size)
    seconds = clock() - start
    if best is not None:
        return goal_result(ctx, best, expansions, seconds)
    joined = joined_result(ctx, chart, expansions, seconds)
    if not timed_out:
        return joined
    return joined.after((f"best-first search (stopped after {expansions} pops: its chart's fragments "
                         f"joined, {len(joined.order)} of {ctx.n} words)",))


def goal_result(ctx: Context, edge: Edge, expansions: int, seconds: float,
                method: str = "best-first (approximate)", certified: bool = False) -> OrderingResult:
    """The result of a goal edge."""
    arcs = edge.arcs()
    position = {w: k for k, w in enumerate(edge.words)}
    heads = tuple(0 if arcs[w] == ROOT else position[arcs[w]] + 1 for w in edge.words)
    return OrderingResult(order=edge.words, words=tuple(ctx.words[w] for w in edge.words),
                          pos=tuple(ctx.tag_names[t] for t in edge.tags), heads=heads, complete=True,
                          score=edge.scaled, recovered=1.0, expansions=expansions, seconds=seconds,
                          method=method, certified=certified)


def joined_result(ctx: Context, chart: list[Edge], expansions: int, seconds: float) -> OrderingResult:
    """The timeout rule: greedily concatenate the largest chart edges (module docstring)."""
    fragments: list[Edge] = []
    used = 0
    for edge in sorted(chart, key=lambda e: (-len(e.words), -e.scaled)):
        if edge.mask & used == 0:
            fragments.append(edge)
            used |= edge.mask
    order = tuple(w for f in fragments for w in f.words)
    tags = tuple(t for f in fragments for t in f.tags)
    arcs: dict[int, int] = {}
    for f in fragments:
        arcs.update(f.arcs())
    main = fragments[0].head if fragments else None
    for f in fragments[1:]:
        given = ctx.given_head[f.head]
        arcs[f.head] = main
        if given is not None and given != ROOT and used >> given & 1:
            arcs[f.head] = given
            if _has_cycle(arcs, f.head):
                arcs[f.head] = main
    position = {w: k for k, w in enumerate(order)}
    heads = tuple(0 if arcs[w] == ROOT else position[arcs[w]] + 1 for w in order)
    return OrderingResult(order=order, words=tuple(ctx.words[w] for w in order),
                          pos=tuple(ctx.tag_names[t] for t in tags), heads=heads, complete=False,
                          score=float("nan"), recovered=len(order) / ctx.n, expansions=expansions,
                          seconds=seconds)


def _has_cycle(arcs: dict[int, int], start: int) -> bool:
    seen = set()
    k = start
    while k != ROOT:
        if k in seen:
            return True
        seen.add(k)
        k = arcs[k]
    return False
