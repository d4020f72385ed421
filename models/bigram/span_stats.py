"""Statistics of every dropped span of a parsed sentence, for the bigram model's features.

For each pair of adjacent kept positions (i, j), 0 <= i < j <= n+1, the tokens i+1 .. j-1 are dropped.
:func:`span_stats` computes, for all O(n^2) pairs in one numba pass, what the features need to know about
that span: whether it is a union of complete subtrees, how many subtree roots it has, whether it is one
constituent (and which token heads it), and whether it holds a verb, the sentence root or punctuation.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _span_stats(heads, lo, hi, is_verb, is_punct, pair_i, pair_j):  # pragma: no cover - numba
    n = heads.shape[0] - 2
    npairs = pair_i.shape[0]
    complete = np.zeros(npairs, dtype=np.bool_)
    nroots = np.zeros(npairs, dtype=np.int64)
    single = np.full(npairs, -1, dtype=np.int64)
    has_verb = np.zeros(npairs, dtype=np.bool_)
    has_root = np.zeros(npairs, dtype=np.bool_)
    has_punct = np.zeros(npairs, dtype=np.bool_)
    # constituent[a, b] = token whose subtree is exactly a..b, or -1
    # (only contiguous subtrees qualify: a non-projective subtree has fewer tokens than its extent)
    size = np.zeros(n + 2, dtype=np.int64)
    for t in range(1, n + 1):
        a = t
        steps = 0
        while a != 0 and steps <= n:
            size[a] += 1
            a = heads[a]
            steps += 1
    constituent = np.full((n + 2, n + 2), -1, dtype=np.int64)
    for k in range(1, n + 1):
        if size[k] == hi[k] - lo[k] + 1:
            constituent[lo[k], hi[k]] = k
    p = 0
    for i in range(0, n + 1):
        minlo = n + 2
        maxhi = -1
        inside = 0
        verb = False
        root = False
        punct = False
        for j in range(i + 1, n + 2):
            e = j - 1  # token added to the span when moving from j-1 to j
            if e > i:
                minlo = min(minlo, lo[e])
                maxhi = max(maxhi, hi[e])
                if i + 1 <= heads[e] < e:
                    inside += 1
                for c in range(i + 1, e):
                    if heads[c] == e:
                        inside += 1
                verb = verb or is_verb[e]
                root = root or heads[e] == 0
                punct = punct or is_punct[e]
            size = j - i - 1
            # pairs are laid out row by row in the same order as pair_i/pair_j
            if size > 0:
                complete[p] = minlo >= i + 1 and maxhi <= j - 1
                nroots[p] = size - inside
                single[p] = constituent[i + 1, j - 1]
            has_verb[p] = verb
            has_root[p] = root
            has_punct[p] = punct
            p += 1
    return complete, nroots, single, has_verb, has_root, has_punct


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) with 0 <= i < j <= n+1, row by row (i ascending, then j ascending)."""
    ii, jj = np.triu_indices(n + 2, k=1)
    return ii.astype(np.int64), jj.astype(np.int64)


def span_stats(heads: np.ndarray, spans: np.ndarray, is_verb: np.ndarray, is_punct: np.ndarray):
    """Dropped-span statistics for every pair of :func:`all_pairs`.

    Parameters
    ----------
    heads : numpy.ndarray of int, shape (n+2,)
        Head of each position (1-based; 0 = root); entries 0 and n+1 are ignored.
    spans : numpy.ndarray of int, shape (n+2, 2)
        Leftmost and rightmost position of each token's subtree (rows 0 and n+1 ignored).
    is_verb, is_punct : numpy.ndarray of bool, shape (n+2,)

    Returns
    -------
    tuple of numpy.ndarray
        ``complete`` (span is a non-empty union of complete subtrees), ``nroots`` (tokens of the span
        whose head lies outside it), ``single`` (the token whose subtree is exactly the span, or -1),
        ``has_verb``, ``has_root``, ``has_punct``; one entry per pair.
    """
    n = len(heads) - 2
    pi, pj = all_pairs(n)
    return _span_stats(np.ascontiguousarray(heads, dtype=np.int64), np.ascontiguousarray(spans[:, 0]),
                       np.ascontiguousarray(spans[:, 1]), is_verb, is_punct, pi, pj)
