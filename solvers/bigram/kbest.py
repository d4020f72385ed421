"""The k best compressions under bigram potentials (contract 1), at free or exact length.

Used by k-best MIRA training. The DP keeps, for every cell (count c, last kept position j) — or every j at
free length — the k best prefix scores with back-pointers (predecessor position and rank); the k best
complete compressions are then read off the transitions into n+1. O(n² L k log k) (numba). Results are
exact: the brute-force test compares the whole list of k scores with exhaustive enumeration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from dualdecomp.core.checks import as_length, as_padded_u, as_potentials
from dualdecomp.core.errors import InputError
from dualdecomp.core.solution import Solution

__all__ = ["kbest"]


@njit(cache=True)
def _kbest_kernel(B, ue, k, length):  # pragma: no cover - compiled
    """g[c, j, r]: r-th best prefix ending at j with c kept (c = 0 only at j = 0). length < 0: free."""
    m = B.shape[0]
    n = m - 2
    free = length < 0
    cmax = n if free else length
    # with free length the count dimension is collapsed into c = 0 (index by position only)
    cdim = 1 if free else cmax + 1
    g = np.full((cdim, m, k), -np.inf)
    bp = np.full((cdim, m, k), -1, dtype=np.int64)
    br = np.full((cdim, m, k), -1, dtype=np.int64)
    g[0, 0, 0] = 0.0
    cand = np.empty(m * k)
    cpos = np.empty(m * k, dtype=np.int64)
    crank = np.empty(m * k, dtype=np.int64)
    for j in range(1, n + 1):
        for c in range(1, cmax + 1):
            src_c = 0 if free else c - 1
            dst_c = 0 if free else c
            if free and c > 1:
                break
            t = 0
            for i in range(0, j):
                if not free and i == 0 and c != 1:
                    continue
                for r in range(k):
                    v = g[src_c, i, r]
                    if v == -np.inf:
                        break
                    cand[t] = v + B[i, j] + ue[j]
                    cpos[t] = i
                    crank[t] = r
                    t += 1
            if t == 0:
                continue
            order = np.argsort(-cand[:t], kind="mergesort")
            for r in range(min(k, t)):
                o = order[r]
                if cand[o] == -np.inf:
                    break
                g[dst_c, j, r] = cand[o]
                bp[dst_c, j, r] = cpos[o]
                br[dst_c, j, r] = crank[o]
    # transitions into n+1
    t = 0
    last_c = 0 if free else cmax
    for i in range(0, n + 1):
        if not free and i == 0 and cmax != 0:
            continue
        for r in range(k):
            v = g[last_c, i, r]
            if v == -np.inf:
                break
            cand[t] = v + B[i, m - 1]
            cpos[t] = i
            crank[t] = r
            t += 1
    scores = np.full(k, -np.inf)
    keeps = np.zeros((k, n), dtype=np.bool_)
    if t == 0:
        return scores, keeps
    order = np.argsort(-cand[:t], kind="mergesort")
    for out in range(min(k, t)):
        o = order[out]
        if cand[o] == -np.inf:
            break
        scores[out] = cand[o]
        j = cpos[o]
        r = crank[o]
        c = last_c
        while j > 0:
            keeps[out, j - 1] = True
            pj = bp[c, j, r]
            pr = br[c, j, r]
            j = pj
            r = pr
            if not free:
                c -= 1
    return scores, keeps


def kbest(B: Any, k: int, u: Any = None, length: int | None = None) -> list[Solution]:
    """The k best compressions (fewer if fewer are feasible), best first.

    Parameters
    ----------
    B : array_like
        Bigram potentials (n+2, n+2).
    k : int
        How many (>= 1).
    u : array_like, optional
        Added per kept token.
    length : int, optional
        Exact number of kept tokens.

    Returns
    -------
    list of Solution
        Distinct compressions in non-increasing score order; ties keep the DP's order.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    Bv = as_potentials(B, 2, "B")
    n = Bv.shape[0] - 2
    m = as_length(length, n)
    scores, keeps = _kbest_kernel(Bv, as_padded_u(u, n), int(k), -1 if m is None else m)
    return [Solution(keep=keeps[r].copy(), score=float(scores[r])) for r in range(int(k))
            if np.isfinite(scores[r])]
