"""Exhaustive oracle for skip-bigram dependency parsing (contract 3 of docs/architecture.md §2), for tests
only.

Enumerates every kept subset and every projective tree over root + kept tokens and scores each one
straight from the contract's definition; nothing is shared with the dynamic programs of
``solvers/dependency.py``. Projective trees are generated from the definition of projectivity (the
yield of every subtree is contiguous): the dependents of a node, below it, form a sequence of subtrees
over consecutive blocks. :func:`is_projective_tree` checks the generated trees independently (tree +
no crossing arcs), and the tests compare the generator with a filter over all head vectors.

Exponential: use on n <= 8.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from dualdecomp.core.errors import SolverError
from dualdecomp.core.solution import Solution

__all__ = [
    "best_given",
    "count_structures",
    "dependency",
    "is_projective_tree",
    "projective_trees",
    "score",
    "siblings",
]


# --------------------------------------------------------------------------------------------------
# kept sets (the helpers of ``solvers/bruteforce.py``, repeated here: that module imports this one at
# its end, so importing it from here would be circular)


def kept_subsets(n: int) -> list[np.ndarray]:
    """Every keep vector (bool (n,)) in lexicographic order."""
    return [np.array(bits, dtype=bool) for bits in itertools.product((False, True), repeat=n)]


def kept_sequence(keep: np.ndarray) -> list[int]:
    """The kept positions with the boundaries: [0, s_1, ..., s_L, n+1]."""
    return [0, *(int(k) + 1 for k in np.flatnonzero(keep)), len(keep) + 1]


# --------------------------------------------------------------------------------------------------
# trees over local nodes 0 (root) .. L


@cache
def _blocks(lo: int, hi: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every way to arrange nodes ``lo..hi`` as consecutive subtrees hanging from one outside head.

    Each arrangement is a tuple of ``(node, parent)`` pairs; ``parent = -1`` marks a subtree root (a
    dependent of the outside head).
    """
    if lo > hi:
        return ((),)
    out = []
    for end in range(lo, hi + 1):  # first block lo..end
        for top in range(lo, end + 1):  # its root
            for left in _blocks(lo, top - 1):
                for right in _blocks(top + 1, end):
                    for rest in _blocks(end + 1, hi):
                        below = tuple((v, top if p == -1 else p) for v, p in (*left, *right))
                        out.append(((top, -1), *below, *rest))
    return tuple(out)


@cache
def projective_trees(L: int) -> np.ndarray:
    """All projective trees over the root 0 and the nodes ``1..L`` (the root may have several children).

    Returns
    -------
    numpy.ndarray
        int (T, L+1): ``trees[t, m]`` is the head of node ``m`` in tree ``t``; column 0 is -1.
    """
    trees = []
    for arrangement in _blocks(1, L):
        heads = [-1] * (L + 1)
        for v, p in arrangement:
            heads[v] = 0 if p == -1 else p
        trees.append(heads)
    return np.array(trees, dtype=np.int64).reshape(len(trees), L + 1)


def siblings(heads: np.ndarray) -> np.ndarray:
    """Previous sibling of every node (its head for the closest modifier of a side), -1 for the root.

    ``heads`` is int (L+1,) over local nodes, ``heads[0] = -1``; nodes are ordered by position.
    """
    sib = np.full(len(heads), -1, dtype=np.int64)
    for h in range(len(heads)):
        mods = [m for m in range(len(heads)) if heads[m] == h]
        left = sorted((m for m in mods if m < h), reverse=True)  # closest first
        right = sorted(m for m in mods if m > h)
        for side in (left, right):
            prev = h
            for m in side:
                sib[m] = prev
                prev = m
    return sib


@cache
def _trees_with_siblings(L: int) -> tuple[np.ndarray, np.ndarray]:
    """Heads and previous siblings of every projective tree over L nodes (columns 1..L)."""
    trees = projective_trees(L)
    sibs = np.array([siblings(t) for t in trees], dtype=np.int64).reshape(trees.shape)
    return trees[:, 1:], sibs[:, 1:]


def is_projective_tree(heads: np.ndarray) -> bool:
    """Whether ``heads`` (int (L+1,), ``heads[0] = -1``) is a tree rooted at 0 without crossing arcs."""
    L = len(heads) - 1
    if len(heads) == 0 or heads[0] != -1:
        return False
    for m in range(1, L + 1):
        if not 0 <= heads[m] <= L or heads[m] == m:
            return False
        seen, v = set(), m
        while v != 0:  # must reach the root without a cycle
            if v in seen:
                return False
            seen.add(v)
            v = heads[v]
    arcs = [(min(m, int(heads[m])), max(m, int(heads[m]))) for m in range(1, L + 1)]
    for (a, b), (c, d) in itertools.combinations(arcs, 2):
        if a < c < b < d or c < a < d < b:
            return False
    return True


# --------------------------------------------------------------------------------------------------
# scoring from the definition


def _prepare(
    A: np.ndarray, B: np.ndarray | None, S: np.ndarray | None, u: np.ndarray | None, lam: float
) -> tuple[int, np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray]:
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0] - 1
    B = None if B is None else np.asarray(B, dtype=np.float64)
    if S is not None:  # a factored SiblingScores is expanded (the oracle's n is tiny)
        S = S.dense() if hasattr(S, "dense") else np.asarray(S, dtype=np.float64)
    u = np.zeros(n) if u is None else np.asarray(u, dtype=np.float64)
    return n, A, B, S, u - float(lam)


def score(
    A: np.ndarray,
    B: np.ndarray | None,
    S: np.ndarray | None,
    u: np.ndarray | None,
    lam: float,
    keep: np.ndarray,
    heads: np.ndarray,
) -> float:
    """Score of one structure from the contract's definition.

    Parameters
    ----------
    A, B, S, u, lam
        As in ``dualdecomp.solvers.dependency.solver.solve``.
    keep : numpy.ndarray
        bool (n,).
    heads : numpy.ndarray
        int (n,): head position of each kept token (0 = root), -1 for dropped ones.

    Returns
    -------
    float
        Σ A + Σ S + bigram(B) + Σ (u - lam)·keep.

    Raises
    ------
    ValueError
        If ``keep``/``heads`` is not a projective tree over root + kept tokens.
    """
    n, A, B, S, w = _prepare(A, B, S, u, lam)
    keep = np.asarray(keep, dtype=bool)
    heads = np.asarray(heads)
    seq = kept_sequence(keep)
    nodes = seq[:-1]  # root and kept tokens, by position
    local = {p: t for t, p in enumerate(nodes)}
    if any((heads[k] >= 0) != keep[k] for k in range(n)):
        raise ValueError("heads must be >= 0 exactly for the kept tokens")
    if any(int(heads[p - 1]) not in local for p in nodes[1:]):
        raise ValueError("a head is not a kept node")
    lh = np.array([-1, *[local[int(heads[p - 1])] for p in nodes[1:]]], dtype=np.int64)
    if not is_projective_tree(lh):
        raise ValueError("not a projective tree over root + kept tokens")
    sib = siblings(lh)
    total = 0.0
    for t in range(1, len(nodes)):
        h, s, m = nodes[lh[t]], nodes[sib[t]], nodes[t]
        total += A[h, m]
        if S is not None:
            total += S[h, s, m]
    if B is not None:
        total += sum(B[a, b] for a, b in itertools.pairwise(seq))
    total += float(w[keep].sum())
    return float(total)


@cache
def _tree_index(L: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Local heads (T, L) of every tree and flat indices of its arcs / sibling triples (T*L,)."""
    heads, sibs = _trees_with_siblings(L)
    mods = np.arange(1, L + 1)[None, :]
    arc = (heads * (L + 1) + mods).ravel()
    sib = ((heads * (L + 1) + sibs) * (L + 1) + mods).ravel()
    return heads, arc, sib


def _all_scores(
    A: np.ndarray, B: np.ndarray | None, S: np.ndarray | None, w: np.ndarray, keeps: list[np.ndarray]
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Group the keep vectors by length L; for each group: (keeps (C, n), local heads (T, L), totals (C, T)).

    ``totals[c, t]`` is the score of tree ``t`` over root + the kept tokens of ``keeps[c]``.
    """
    groups: dict[int, list[np.ndarray]] = {}
    for keep in keeps:
        groups.setdefault(int(keep.sum()), []).append(keep)
    out = []
    for L, group in sorted(groups.items()):
        kp = np.array(group, dtype=bool).reshape(len(group), len(w))
        seq = np.array([kept_sequence(k) for k in kp], dtype=np.int64)  # (C, L+2)
        pos = seq[:, :-1]  # positions of the local nodes 0..L
        heads, arc, sib = _tree_index(L)
        C, T = len(group), len(heads)
        sub = A[pos[:, :, None], pos[:, None, :]].reshape(C, -1)
        total = sub[:, arc].reshape(C, T, L).sum(axis=2)
        if S is not None:
            sub = S[pos[:, :, None, None], pos[:, None, :, None], pos[:, None, None, :]].reshape(C, -1)
            total = total + sub[:, sib].reshape(C, T, L).sum(axis=2)
        base = np.where(kp, w[None, :], 0.0).sum(axis=1)
        if B is not None:
            base = base + B[seq[:, :-1], seq[:, 1:]].sum(axis=1)
        out.append((kp, heads, total + base[:, None]))
    return out


def dependency(
    A: np.ndarray,
    B: np.ndarray | None = None,
    S: np.ndarray | None = None,
    u: np.ndarray | None = None,
    lam: float = 0.0,
    *,
    keep: np.ndarray | None = None,
) -> Solution:
    """Best structure by enumeration (contract 3).

    Parameters
    ----------
    A, B, S, u, lam
        As in ``dualdecomp.solvers.dependency.solver.solve``.
    keep : numpy.ndarray, optional
        Only this kept set (e.g. all True for plain parsing).

    Returns
    -------
    Solution
        With ``heads``; the first best structure in enumeration order.

    Raises
    ------
    SolverError
        If every structure scores -inf.
    """
    n, A, B, S, w = _prepare(A, B, S, u, lam)
    keeps = list(kept_subsets(n)) if keep is None else [np.asarray(keep, dtype=bool)]
    best = None
    for kps, heads, totals in _all_scores(A, B, S, w, keeps):
        c, t = np.unravel_index(int(np.argmax(totals)), totals.shape)
        if totals[c, t] > -np.inf and (best is None or totals[c, t] > best[0]):
            best = (float(totals[c, t]), kps[c], heads[t])
    if best is None:
        raise SolverError("every structure scores -inf")
    total, kp, lh = best
    pos = np.array(kept_sequence(kp))[:-1]
    out = np.full(n, -1, dtype=np.int64)
    out[pos[1:] - 1] = pos[lh]
    return Solution(keep=kp.copy(), score=total, heads=out)


def best_given(A: np.ndarray, B: np.ndarray | None, S: np.ndarray | None, keep: np.ndarray) -> float:
    """Best own score (no u) over trees on exactly root + kept tokens; -inf if none is finite."""
    try:
        return dependency(A, B, S, keep=keep).score
    except SolverError:
        return -np.inf


def count_structures(
    n: int,
    A: np.ndarray | None = None,
    B: np.ndarray | None = None,
    S: np.ndarray | None = None,
    u: np.ndarray | None = None,
    lam: float = 0.0,
    *,
    drop: bool = True,
) -> int:
    """Number of structures (kept set + projective tree) over n tokens, of finite score if arrays given.

    Parameters
    ----------
    n : int
        Number of tokens.
    A, B, S, u, lam
        Optional scores (A defaults to zeros); only structures of finite score are counted.
    drop : bool
        Whether tokens may be dropped (False: only the all-kept set).

    Returns
    -------
    int
        The count.
    """
    if A is None:
        A = np.zeros((n + 1, n + 1))
    n, A, B, S, w = _prepare(A, B, S, u, lam)
    keeps = list(kept_subsets(n)) if drop else [np.ones(n, dtype=bool)]
    return sum(int(np.isfinite(totals).sum()) for _, _, totals in _all_scores(A, B, S, w, keeps))
