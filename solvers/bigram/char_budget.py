"""Exact bigram compression under a character budget (subtitles, small screens).

A compression keeping tokens s_1 < ... < s_L is written with one space between kept tokens, so it is
``Σ_t width[s_t] + (L - 1)`` characters long (0 when L = 0). :func:`solve` maximises the bigram
objective of contract 1 (+ Σ u·keep) subject to that length being **at most** ``budget`` characters.

The DP runs over (last kept position j, characters used c), where c = Σ_{kept so far} (width + 1), so the
final length is c - 1: ``f[j, c] = max_i f[i, c - width[j] - 1] + B[i, j] + u_j``, O(n^2 · budget)
(numba). The budget is a knapsack constraint, so there is no polynomial algorithm in the bit size, but
budgets are small (a subtitle line holds ~42 characters) and the DP is exact. Ties: the smallest
predecessor and the smallest character count win.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numba import njit

from dualdecomp.core.checks import as_keep, as_padded_u, as_potentials, check_score
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError
from dualdecomp.core.ilp_vars import unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.bigram.path_ilp import add_path_ilp

__all__ = ["CharBudgetBigram", "compression_chars", "solve"]


@njit(cache=True)
def _budget_kernel(B, ue, cost, cap):  # pragma: no cover - compiled
    """f[j, c]: best prefix ending at kept j having used c = Σ (width+1) characters; cap = budget + 1."""
    m = B.shape[0]
    n = m - 2
    f = np.full((m, cap + 1), -np.inf)
    f[0, 0] = 0.0
    for j in range(1, n + 1):
        w = cost[j]
        for c in range(w, cap + 1):
            best = -np.inf
            for i in range(0, j):
                v = f[i, c - w] + B[i, j]
                if v > best:
                    best = v
            if best != -np.inf:
                f[j, c] = best + ue[j]
    # close with </s>: the empty compression (c = 0) or c - 1 <= budget, i.e. c <= cap
    best = -np.inf
    last = -1
    lastc = -1
    for i in range(0, n + 1):
        for c in range(0, cap + 1):
            v = f[i, c] + B[i, m - 1]
            if v > best:
                best = v
                last = i
                lastc = c
    keep = np.zeros(n, dtype=np.bool_)
    j = last
    c = lastc
    while j > 0:
        keep[j - 1] = True
        prev = c - cost[j]
        target = -np.inf  # recompute the cell's max exactly (f[j, c] - u_j may round differently)
        for i in range(0, j):
            target = max(target, f[i, prev] + B[i, j])
        nxt = -1
        for i in range(0, j):
            if f[i, prev] + B[i, j] == target:
                nxt = i
                break
        j = nxt
        c = prev
    return best, keep


def _costs(widths: Any, n: int) -> np.ndarray:
    w = np.asarray(widths)
    if w.shape != (n,) or (n and (not np.issubdtype(w.dtype, np.integer) or w.min() < 1)):
        raise InputError(f"widths must be {n} positive integers (characters per token)")
    return np.concatenate(([0], w.astype(np.int64) + 1, [0]))


def _budget(budget: Any) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 0:
        raise InputError(f"the character budget must be a non-negative integer, got {budget!r}")
    return int(budget)


def compression_chars(widths: Any, keep: Any) -> int:
    """Characters of a compression written with single spaces: Σ kept widths + (L - 1), 0 if empty."""
    w = np.asarray(widths, dtype=np.int64)
    k = np.asarray(keep, dtype=bool)
    count = int(k.sum())
    return int(w[k].sum()) + max(0, count - 1)


def solve(B: Any, widths: Any, budget: int, u: Any = None) -> Solution:
    """Best compression under bigram potentials with at most ``budget`` characters.

    Parameters
    ----------
    B : array_like
        Bigram potentials (n+2, n+2) of contract 1.
    widths : array_like of int
        Characters of each token (n,), each >= 1.
    budget : int
        Maximum number of characters, counting one space between kept tokens.
    u : array_like, optional
        Added per kept token.

    Returns
    -------
    Solution

    Raises
    ------
    InputError
        Bad shapes, widths or budget.
    SolverError
        No compression within the budget has a finite score.
    """
    Bv = as_potentials(B, 2, "B")
    n = Bv.shape[0] - 2
    cost = _costs(widths, n)
    cap = _budget(budget) + 1
    score, keep = _budget_kernel(Bv, as_padded_u(u, n), cost, cap)
    return Solution(keep=keep, score=check_score(score, f"the bigram problem within {cap - 1} characters"))


class CharBudgetBigram:
    """Bigram component (contract 4) whose structures are the compressions within a character budget.

    Parameters
    ----------
    B : array_like
        Bigram potentials (n+2, n+2).
    widths : array_like of int
        Characters of each token.
    budget : int
        Maximum characters (one space between kept tokens counted).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=False)

    def __init__(self, B: Any, widths: Any, budget: int, name: str = "charbigram") -> None:
        Bv = np.array(as_potentials(B, 2, "B"), dtype=np.float64, order="C", copy=True)
        Bv.flags.writeable = False
        self.B = Bv
        self.n = Bv.shape[0] - 2
        self.widths = _costs(widths, self.n)[1:-1] - 1
        self.budget = _budget(budget)
        self.name = name

    def solve(self, u: Any = None) -> Solution:
        """Argmax of the bigram score + u·keep within the budget."""
        return solve(self.B, self.widths, self.budget, u)

    def best_given(self, keep: Any) -> float:
        """Bigram score of the compression ``keep``; -inf when it exceeds the budget."""
        kv = as_keep(keep, self.n)
        if compression_chars(self.widths, kv) > self.budget:
            return -np.inf
        seq = np.concatenate(([0], np.flatnonzero(kv) + 1, [self.n + 1]))
        return float(np.sum(self.B[seq[:-1], seq[1:]]))

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """The bigram path formulation plus Σ (width_k + 1) keep_k - 1 <= budget (exact).

        The budget row is written as Σ (width_k + 1) keep_k <= budget + 1, which also admits the empty
        compression (0 characters).
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths


        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        objective = add_path_ilp(self.B, problem, keep_vars, pre)
        problem += (pulp.lpSum(int(w + 1) * v for w, v in zip(self.widths, keep_vars, strict=True))
                    <= self.budget + 1), f"{pre}chars"
        return objective
