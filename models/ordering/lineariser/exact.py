"""The exact decoder of the head-domain lineariser *with* its LM term, by DP over partial subtrees.

With λ > 0 the lineariser's score of an ordered tree is its domain features plus λ × (KenLM log10 of
the sentence − the words read alone): a trigram crosses the domains, so the domains can no longer be
ordered one by one. This module runs the model-agnostic DP of ``dualdecomp.solvers.ordering.linearise``
instead: a head's dependents are attached one at a time, right ones nearest first and then left ones
nearest first (each linearisation has exactly one such derivation), and a partial subtree is a state
whose *signature* holds everything a later step reads — the outermost element on each side (for the
adjacent-pair and side features), whether a left dependent was attached, and what the trigram reads
of its ends. Those are keyed by what the LM can tell apart, not by the words themselves: the last two
words by KenLM's minimised state (``context_key``: only the words some n-gram of the model extends, so
"zebra xylophone" and "xylophone" are one context when no trigram starts with "zebra xylophone"), the
first two by their LM words, the second of them dropped when no trigram "x w1 w2" exists for any word x
of the sentence or the sentence start (then any context changes the phrase's score by the same amount
whatever w2 is: ``LanguageModel.extended_left``); repeated words are one key too. A complete subtree
adds its first and last element's features (and, for the root, the sentence start and end) and keeps
only those end keys as signature. With a complete signature the DP is exact: ``certified`` when it
finishes within ``max_states`` states (exponential in the number of dependents of a head, so long flat
domains give up; the caller then uses the beam).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT
from dualdecomp.models.ordering.lineariser.features import Domain, constrained_tables
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.solvers.ordering import Linearisation, best_linearisation


@dataclass(frozen=True)
class Partial:
    """A partial (or complete) ordered subtree of one head.

    Attributes
    ----------
    head : int
    words : tuple of int
        Its words (input indices) in order.
    left, right : int
        Domain element index of the outermost element on each side (the head's own index when none).
    lefts : bool
        A left dependent is attached (no right one may follow).
    score : float
        Domain features and LM terms of everything inside.
    complete : bool
    """

    head: int
    words: tuple[int, ...]
    left: int
    right: int
    lefts: bool
    score: float
    complete: bool = False


def exact_with_lm(words, heads, domains: list[Domain], weights, lm: OrderingLM,
                  max_states: int, merge_contexts: bool = True, units=(), deadline: Deadline | None = None
                  ) -> Linearisation[Partial]:
    """The lineariser's best linearisation of a complete tree with its LM term, exactly (or uncertified).

    Parameters
    ----------
    words : sequence of str
    heads : sequence of int
        Every head (0-based, ``ROOT`` for the root).
    domains : list of Domain
        The tree's head domains (``Lineariser.domains``).
    weights : numpy.ndarray
        The lineariser's weights.
    lm : OrderingLM
        The LM term with its weight λ.
    max_states : int
        Give up (``certified=False``, no output) after building this many states.
    merge_contexts : bool
        Merge the partial subtrees whose ends the LM cannot tell apart (above); False: the signature keeps
        the input indices of the first and last two words (the same optimum, more states).
    units : sequence of sequence of int
        Ordered units: only linearisations that keep them (``lineariser.features.constrained_tables``).
    deadline : Deadline, optional
        The DP gives up there too (``timed_out``, no output).

    Returns
    -------
    Linearisation
        ``best.words`` is the order; ``score`` the lineariser score with the LM term (λ × (KenLM log10 of
        the sentence − the null-context log10 of each word)).
    """
    n = len(words)
    children: list[list[int]] = [[] for _ in range(n)]
    root = ROOT
    for d, h in enumerate(heads):
        if h == ROOT:
            root = d
        else:
            children[h].append(d)
    tables = {d.head: (constrained_tables(weights, d, units), {e: k for k, e in enumerate(d.elements)},
                       d.head_index) for d in domains}

    def leaf(h: int) -> list[Partial]:
        index = tables[h][2] if h in tables else 0
        return [Partial(h, (h,), index, index, False, 0.0)]

    def attach(head: Partial, dep: Partial, right: bool) -> Partial | None:
        if right and head.lefts:
            return None
        (side, pair, _, _), element, _ = tables[head.head]
        e = element[dep.head]
        if right:
            if pair[head.right, e] == -np.inf:  # it would break an ordered unit
                return None
            gain = pair[head.right, e] + side[e, 1] + lm.join(words, head.words, dep.words, False)
            return Partial(head.head, head.words + dep.words, head.left, e, False,
                           head.score + dep.score + float(gain))
        if pair[e, head.left] == -np.inf:
            return None
        gain = pair[e, head.left] + side[e, 0] + lm.join(words, dep.words, head.words, False)
        return Partial(head.head, dep.words + head.words, e, head.right, True,
                       head.score + dep.score + float(gain))

    def finish(state: Partial, is_root: bool) -> Partial:
        gain = 0.0
        if state.head in tables:
            (_, _, start, end), _, _ = tables[state.head]
            gain = float(start[state.left] + end[state.right])
        if is_root:
            gain += lm.ends(words, state.words)
        return Partial(state.head, state.words, state.left, state.right, state.lefts, state.score + gain,
                       True)

    before = (*set(lm.words(words, range(n))), "<s>")
    first_keys: dict[tuple[str, ...], tuple] = {}

    def first_key(indices: tuple[int, ...]) -> tuple:
        # a phrase's first two LM words; the second only if some trigram "x w1 w2" (x a word of the
        # sentence or the sentence start) exists: otherwise what any context adds does not depend on it
        first = lm.words(words, indices[:lm.k])
        key = first_keys.get(first)
        if key is None:
            key = first_keys[first] = (first if len(first) < 2 or lm.lm.extended_left(first, before)
                                       else (first[0], None))
        return key

    def signature(state: Partial) -> tuple:
        if merge_contexts:
            edges = (first_key(state.words), lm.context_key(words, state.words))
        else:
            edges = (state.words[:2], state.words[-2:])
        if state.complete:
            return edges
        return (state.left, state.right, state.lefts, *edges)

    return best_linearisation(children, root, leaf, attach, lambda s: s.score, signature, max_states,
                              finish=finish, deadline=deadline)
