"""The best order of one head domain (a head and its dependents) under adjacent-pair scores.

A head domain holds n elements: the head word and its dependents (each standing for its whole subtree).
An order of the domain scores ``start[first] + end[last] + sum of pair[a, b] over adjacent (a, b) +
sum of side[d, s]`` over the dependents d, where s is 0 when d comes before the head and 1 after it.
Any projective linearisation of a tree is one order of each of its head domains, and every combination
of domain orders is one projective linearisation, so a model whose score is such a sum over domains is
maximised exactly by maximising each domain alone.

:func:`best_domain_order` solves one domain exactly by the Held–Karp dynamic programme over (set of
placed elements, last element) — O(2^n n^2), numba-compiled — for n up to ``exact_limit`` elements, and
by a beam search over prefixes (APPROXIMATE, ``exact=False``) above it. With a ``Deadline`` the beam
search checks it before each step and, once it has passed, completes its best prefix greedily
(:func:`greedy_domain_order`: each next element the best by the tables alone, O(n²) array work).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from dualdecomp.core.deadline import Deadline

EXACT_LIMIT = 12
"""Largest domain solved exactly by default (2^12 × 12 × 12 ≈ 0.6 M steps)."""


@dataclass(frozen=True)
class DomainOrder:
    """The outcome of :func:`best_domain_order`.

    Attributes
    ----------
    order : numpy.ndarray of int64
        Element indices in output order.
    score : float
        Its score.
    exact : bool
        True when the order is proven best (the Held–Karp DP ran); False for the beam search.
    timed_out : bool
        The deadline stopped the beam search and its best prefix was completed greedily.
    """

    order: np.ndarray
    score: float
    exact: bool
    timed_out: bool = False


def order_score(order, side: np.ndarray, pair: np.ndarray, start: np.ndarray, end: np.ndarray,
                head: int) -> float:
    """The score of one order of a domain (the definition the solvers maximise).

    Parameters
    ----------
    order : sequence of int
        A permutation of ``range(n)``.
    side : numpy.ndarray, shape (n, 2)
        ``side[d, 0]`` / ``side[d, 1]``: dependent d before / after the head (row ``head`` unused).
    pair : numpy.ndarray, shape (n, n)
        ``pair[a, b]``: b directly after a.
    start, end : numpy.ndarray, shape (n,)
        The first and the last element.
    head : int
        Index of the head element.

    Returns
    -------
    float
    """
    order = [int(k) for k in order]
    total = float(start[order[0]] + end[order[-1]])
    after = False
    for k, d in enumerate(order):
        if d == head:
            after = True
        else:
            total += float(side[d, 1 if after else 0])
        if k:
            total += float(pair[order[k - 1], d])
    return total


@njit(cache=True)
def _held_karp(side, pair, start, end, head):  # pragma: no cover - compiled
    n = start.shape[0]
    full = (1 << n) - 1
    neg = -np.inf
    best = np.full((1 << n, n), neg)
    back = np.full((1 << n, n), -1, dtype=np.int64)
    for j in range(n):
        best[1 << j, j] = start[j] + (side[j, 0] if j != head else 0.0)
    for placed in range(1, 1 << n):
        after = (placed >> head) & 1
        for i in range(n):
            value = best[placed, i]
            if value == neg:
                continue
            for j in range(n):
                if (placed >> j) & 1:
                    continue
                gain = pair[i, j]
                if j != head:
                    gain += side[j, 1] if after else side[j, 0]
                nxt = placed | (1 << j)
                if value + gain > best[nxt, j]:
                    best[nxt, j] = value + gain
                    back[nxt, j] = i
    top = neg
    last = 0
    for i in range(n):
        value = best[full, i] + end[i]
        if value > top:
            top = value
            last = i
    order = np.empty(n, dtype=np.int64)
    placed = full
    current = last
    for k in range(n - 1, -1, -1):
        order[k] = current
        previous = back[placed, current]
        placed ^= 1 << current
        current = previous
    return order, top


def beam_domain_order(side, pair, start, end, head: int, width: int,
                      bonus: Callable[[tuple[int, ...]], float] | None = None,
                      deadline: Deadline | None = None) -> DomainOrder:
    """Beam search over prefixes (APPROXIMATE): keep the ``width`` best prefixes of each length.

    Parameters
    ----------
    side, pair, start, end : numpy.ndarray
        The scores (:func:`order_score`).
    head : int
    width : int
    bonus : callable, optional
        ``prefix -> float``: a further term of a prefix that is not a sum over adjacent pairs (e.g. an
        LM's), recomputed for every prefix; it ranks the prefixes and is added to the final score.
    deadline : Deadline, optional
        Checked before each step; once it has passed, the best prefix is completed by
        :func:`greedy_domain_order` (its score then includes ``bonus`` of the whole order).

    Returns
    -------
    DomainOrder
        The best order found and its score (``exact`` False).
    """
    extra = bonus if bonus is not None else (lambda prefix: 0.0)

    def rank(item):  # ties: the larger prefix first, so the result never depends on the visiting order
        return item[0] + extra(item[1]), item[1]

    n = len(start)
    beam = [(float(start[j] + (side[j, 0] if j != head else 0.0)), (j,)) for j in range(n)]
    beam = sorted(beam, key=rank, reverse=True)[:width]
    for _ in range(n - 1):
        if deadline is not None and deadline.expired():
            return greedy_domain_order(side, pair, start, end, head, beam[0][1], bonus)
        grown = []
        for value, prefix in beam:
            after = head in prefix
            for j in range(n):
                if j in prefix:
                    continue
                gain = pair[prefix[-1], j] + (0.0 if j == head else side[j, 1 if after else 0])
                grown.append((float(value + gain), (*prefix, j)))
        beam = sorted(grown, key=rank, reverse=True)[:width]
    value, prefix = max(beam, key=lambda item: item[0] + float(end[item[1][-1]]) + extra(item[1]))
    total = float(value + float(end[prefix[-1]]) + extra(prefix))
    return DomainOrder(np.array(prefix, dtype=np.int64), total, False)


def greedy_domain_order(side, pair, start, end, head: int, prefix: tuple[int, ...] = (),
                        bonus: Callable[[tuple[int, ...]], float] | None = None) -> DomainOrder:
    """The order of a domain at the deadline: ``prefix`` extended greedily, each next element the one with
    the best gain by the tables (its side, plus its pair with the last element, or its start score when
    it is first; ties: the lower index). O(n²) array work; APPROXIMATE.

    Parameters
    ----------
    side, pair, start, end : numpy.ndarray
        The scores (:func:`order_score`); an element a table scores ``-inf`` after the last one is taken
        only when no other is left.
    head : int
    prefix : tuple of int
        Elements already placed, in order.
    bonus : callable, optional
        As for :func:`beam_domain_order`: added to the score (of the whole order only).

    Returns
    -------
    DomainOrder
        ``exact`` False, ``timed_out`` True.
    """
    n = side.shape[0]
    order = [int(k) for k in prefix]
    free = np.ones(n, dtype=bool)
    free[order] = False
    while len(order) < n:
        gain = np.where(np.arange(n) == head, 0.0, side[:, 1 if head in order else 0])
        gain = np.where(free, gain + (pair[order[-1]] if order else start), -np.inf)
        best = int(np.argmax(gain)) if np.isfinite(gain).any() else int(np.flatnonzero(free)[0])
        order.append(best)
        free[best] = False
    value = order_score(order, side, pair, start, end, head) + (bonus(tuple(order)) if bonus else 0.0)
    return DomainOrder(np.array(order, dtype=np.int64), value, False, timed_out=True)


def best_domain_order(side: np.ndarray, pair: np.ndarray, start: np.ndarray, end: np.ndarray, head: int,
                      exact_limit: int = EXACT_LIMIT, beam: int = 64, deadline: Deadline | None = None
                      ) -> DomainOrder:
    """The highest-scoring order of one head domain (see the module docstring).

    Parameters
    ----------
    side, pair, start, end : numpy.ndarray
        The scores (:func:`order_score` defines how they add up).
    head : int
        Index of the head element.
    exact_limit : int
        Domains of at most this many elements are solved exactly (Held–Karp); larger ones by beam search.
    beam : int
        Width of that beam search.
    deadline : Deadline, optional
        Checked by that beam search (:func:`beam_domain_order`); the Held–Karp DP is not stopped (at most
        2^exact_limit · exact_limit² steps).

    Returns
    -------
    DomainOrder
    """
    n = len(start)
    if n == 1:
        return DomainOrder(np.zeros(1, dtype=np.int64), float(start[0] + end[0]), True)
    if n <= exact_limit:
        order, value = _held_karp(np.ascontiguousarray(side, dtype=np.float64),
                                  np.ascontiguousarray(pair, dtype=np.float64),
                                  np.ascontiguousarray(start, dtype=np.float64),
                                  np.ascontiguousarray(end, dtype=np.float64), int(head))
        return DomainOrder(order, float(value), True)
    return beam_domain_order(side, pair, start, end, int(head), beam, deadline=deadline)
