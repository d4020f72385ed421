"""Exact trigram compression solver (docs/architecture.md §2, contracts 2 and 4).

A compression keeps 0 = s_0 < s_1 < ... < s_L < s_{L+1} = n+1 and scores

    T[0, 0, s_1] + Σ_{t=2}^{L+1} T[s_{t-2}, s_{t-1}, s_t] + Σ_k u_k keep_k

(with L = 0 the objective is ``T[0, 0, n+1]``). Only the entries ``T[0, 0, c]`` (c >= 1) and
``T[a, b, c]`` with ``a < b < c`` are read. Entries may be ``-inf``; NaN and ``+inf`` are an
:class:`~dualdecomp.core.errors.InputError`.

The DP runs over pair states (previous kept, last kept) starting from the state (0, 0): the transition
(a, b) → (b, c) scores ``T[a, b, c] + u_c``. Free length: O(n^3). Exact length L: states also carry the
number of kept tokens, O(n^3 L), restricted to positions that can still end with exactly L tokens.
Every length at once (:func:`solve_lengths`): O(n^4).

Tie-breaking (deterministic): backtracking takes the smallest predecessor ``a`` reaching a state's
maximum; the final transition into n+1 prefers the smallest last position, then the smallest previous
one. With exact arithmetic the result is, among all optimal compressions, the one whose kept positions
read from right to left are lexicographically smallest (the same rule as
:mod:`dualdecomp.solvers.bigram.solver`).

Infeasibility (every admissible compression scores -inf) raises
:class:`~dualdecomp.core.errors.SolverError` ("no feasible compression"); a length outside 0..n is an
:class:`~dualdecomp.core.errors.InputError`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numba import njit

from dualdecomp.core.checks import as_keep, as_length, as_padded_u, as_potentials, check_score
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError
from dualdecomp.core.ilp_vars import binary_var, unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.bigram import LengthTable, PathComponent
from dualdecomp.solvers.ngram.packed import PackedTrigram

__all__ = ["LengthTable", "PackedTrigram", "Trigram", "dp_updates", "solve", "solve_lengths"]


# ----------------------------------------------------------------------------------------------------
# numba kernels
# ----------------------------------------------------------------------------------------------------


@njit(cache=True)
def _free_kernel(R, ctx, ue):  # pragma: no cover - compiled
    """Free-length DP over pair states. Returns (score, keep). T[a, b, c] is R[ctx[a, b], c]."""
    m = ctx.shape[0]
    n = m - 2
    # F[a, b]: best prefix whose last two kept positions are a < b (or the start state (0, 0))
    F = np.full((m, m), -np.inf)
    back = np.full((m, m), -1, dtype=np.int32)
    F[0, 0] = 0.0
    for b in range(n + 1):
        ahi = b if b > 0 else 1
        ub = ue[b]
        for a in range(ahi):
            # every push into (a, b) came from a middle position a < b: F[a, b] is final
            v = F[a, b] + ub
            if v == -np.inf:
                continue
            row = R[ctx[a, b]]
            Fb = F[b]
            bb = back[b]
            for c in range(b + 1, m):
                w = v + row[c]
                if w > Fb[c]:
                    Fb[c] = w
                    bb[c] = a
    best = -np.inf
    last = -1
    for b in range(n + 1):
        if F[b, m - 1] > best:
            best = F[b, m - 1]
            last = b
    keep = np.zeros(n, dtype=np.bool_)
    if last >= 0:
        x = last
        y = m - 1
        while x > 0:
            keep[x - 1] = True
            a = back[x, y]
            y = x
            x = a
    return best, keep


@njit(cache=True)
def _count_tables(R, ctx, ue, cmax, target):  # pragma: no cover - compiled
    """DP over (count, previous kept, last kept) up to ``cmax`` kept tokens.

    G[k, a, b] is the best prefix whose k-th kept token is b and (k-1)-th is a (a = 0 when k <= 1;
    G[0, 0, 0] = 0 is the start), u included. With ``target >= 0`` only positions that can still
    finish with exactly ``target`` tokens are filled (the others stay -inf). No back-pointers: the inner
    loop is a branch-free max (about 3x faster at n = 60) and :func:`_predecessor` recomputes the argmax.
    """
    m = ctx.shape[0]
    n = m - 2
    G = np.full((cmax + 1, m, m), -np.inf)
    G[0, 0, 0] = 0.0
    for k in range(cmax):
        # the (k+1)-th token c satisfies c <= hi; the k-th token b is in k..hi-1
        hi = n if target < 0 else n - (target - k - 1)
        Gk = G[k]
        Gn = G[k + 1]
        for b in range(k, hi if k >= 1 else 1):  # count 0: only the start state (0, 0)
            alo = k - 1 if k >= 2 else 0
            ahi = b if k >= 2 else 1
            row_n = Gn[b]
            for a in range(alo, ahi):
                v = Gk[a, b]
                if v == -np.inf:
                    continue
                row = R[ctx[a, b]]
                for c in range(b + 1, hi + 1):
                    row_n[c] = max(row_n[c], v + row[c])
            for c in range(b + 1, hi + 1):
                row_n[c] += ue[c]
    return G


@njit(cache=True)
def _predecessor(R, ctx, G, k, a, b):  # pragma: no cover - compiled
    """Smallest a' whose state (a', a) at count k-1 attains the best push into (a, b) at count k.

    Recomputes exactly the maximum formed by :func:`_count_tables` (same sums, max is exact), so the
    equality test is exact.
    """
    j = k - 1  # count of the source state (a', a)
    alo = j - 1 if j >= 2 else 0
    ahi = a if j >= 2 else 1
    Gj = G[j]
    best = -np.inf
    for p in range(alo, ahi):
        best = max(best, Gj[p, a] + R[ctx[p, a], b])
    for p in range(alo, ahi):
        if Gj[p, a] + R[ctx[p, a], b] == best:
            return p
    return -1


@njit(cache=True)
def _finish(R, ctx, G, k):  # pragma: no cover - compiled
    """Best transition into n+1 with exactly k kept tokens, and the backtracked keep."""
    m = ctx.shape[0]
    n = m - 2
    best = -np.inf
    lb = -1
    la = -1
    Gk = G[k]
    blo = k if k >= 1 else 0
    bhi = n + 1 if k >= 1 else 1
    for b in range(blo, bhi):
        alo = k - 1 if k >= 2 else 0
        ahi = b if k >= 2 else 1
        for a in range(alo, ahi):
            w = Gk[a, b] + R[ctx[a, b], m - 1]
            if w > best:
                best = w
                lb = b
                la = a
    keep = np.zeros(n, dtype=np.bool_)
    if lb >= 0:
        a = la
        b = lb
        for j in range(k, 0, -1):
            keep[b - 1] = True
            p = _predecessor(R, ctx, G, j, a, b)
            b = a
            a = p
    return best, keep


@njit(cache=True)
def _exact_kernel(R, ctx, ue, length):  # pragma: no cover - compiled
    G = _count_tables(R, ctx, ue, length, length)
    return _finish(R, ctx, G, length)


@njit(cache=True)
def _lengths_kernel(R, ctx, ue):  # pragma: no cover - compiled
    m = ctx.shape[0]
    n = m - 2
    G = _count_tables(R, ctx, ue, n, -1)
    scores = np.empty(n + 1)
    keeps = np.zeros((n + 1, n), dtype=np.bool_)
    for k in range(n + 1):
        s, kp = _finish(R, ctx, G, k)
        scores[k] = s
        keeps[k] = kp
    return scores, keeps


# ----------------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------------


def _solve_checked(P: PackedTrigram, ue: np.ndarray, length: int | None) -> Solution:
    if length is None:
        score, keep = _free_kernel(P.rows, P.ctx, ue)
        what = "the trigram problem"
    else:
        score, keep = _exact_kernel(P.rows, P.ctx, ue, length)
        what = f"the trigram problem with length {length}"
    return Solution(keep=keep, score=check_score(score, what))


def _as_packed(T: Any) -> PackedTrigram:
    """Dense potentials (validated, wrapped without another copy) or a :class:`PackedTrigram`."""
    if isinstance(T, PackedTrigram):
        return T
    return PackedTrigram.from_dense(as_potentials(T, 3, "T"))


def _lengths_packed(P: PackedTrigram, ue: np.ndarray):
    return _lengths_kernel(P.rows, P.ctx, ue)


def solve(T: Any, u: Any = None, length: int | None = None) -> Solution:
    """Best compression under trigram potentials (contract 2).

    Parameters
    ----------
    T : array_like or PackedTrigram
        Shape (n+2, n+2, n+2); ``T[a, b, c]`` scores keeping c right after a, b (``T[0, 0, c]`` for the
        first kept token c). -inf forbids a transition. Or the same potentials context-pruned
        (:class:`~dualdecomp.solvers.ngram.packed.PackedTrigram`).
    u : array_like, optional
        Shape (n,), added for every kept token. Defaults to zeros.
    length : int, optional
        Exact number of kept tokens; None for free length.

    Returns
    -------
    Solution
        ``keep`` (bool (n,)) and ``score`` (objective including the u terms). Ties: module docstring.

    Raises
    ------
    InputError
        Wrong shapes, NaN/+inf potentials, length outside 0..n.
    SolverError
        No compression (of the requested length) has a finite score.
    """
    P = _as_packed(T)
    ue = as_padded_u(u, P.n)
    return _solve_checked(P, ue, as_length(length, P.n))


def solve_lengths(T: Any, u: Any = None) -> LengthTable:
    """Best compression for every exact length 0..n at once (one O(n^4) DP).

    Parameters
    ----------
    T : array_like
        Shape (n+2, n+2, n+2), as in :func:`solve`.
    u : array_like, optional
        Shape (n,), as in :func:`solve`.

    Returns
    -------
    LengthTable
        ``scores[m]`` / ``keeps[m]`` for m = 0..n (-inf / all False when infeasible).

    Raises
    ------
    InputError
        Wrong shapes, NaN/+inf potentials.
    """
    P = _as_packed(T)
    ue = as_padded_u(u, P.n)
    scores, keeps = _lengths_kernel(P.rows, P.ctx, ue)
    return LengthTable(scores=scores, keeps=keeps)


def dp_updates(n: int, length: int | None = None, all_lengths: bool = False) -> int:
    """Number of DP cell updates (inner-loop relaxations) the kernels perform, ignoring -inf skips.

    Parameters
    ----------
    n : int
        Number of tokens.
    length : int, optional
        Exact length (None: free length).
    all_lengths : bool
        Count for :func:`solve_lengths` instead.

    Returns
    -------
    int
        The operation count (used by the benchmarks for ns/op).
    """
    m = n + 2
    if length is None and not all_lengths:
        return sum((b if b > 0 else 1) * (m - 1 - b) for b in range(n + 1)) + (n + 1)
    cmax = n if all_lengths else int(length)  # type: ignore[arg-type]
    target = -1 if all_lengths else cmax
    ops = 0
    for k in range(cmax):  # as in _count_tables
        hi = n if target < 0 else n - (target - k - 1)
        for b in range(k, hi if k >= 1 else 1):
            na = (b - k + 1) if k >= 2 else 1
            ops += na * (hi - b)
    for k in range(cmax + 1) if all_lengths else [cmax]:  # as in _finish
        ops += sum(((b - k + 1) if k >= 2 else 1) for b in (range(k, n + 1) if k >= 1 else [0]))
    return ops


class Trigram(PathComponent):
    """Trigram component (contract 4) built from the potentials of contract 2.

    Parameters
    ----------
    T : array_like or PackedTrigram
        Shape (n+2, n+2, n+2), validated once here (copied, read-only); or the context-pruned
        :class:`~dualdecomp.solvers.ngram.packed.PackedTrigram` (kept as is: the LM component's storage,
        O(S·n) instead of O(n^3)).
    name : str, optional
        Base of the pulp names made by :meth:`to_ilp` (default ``"trigram"``; a free index is appended).
    """

    ndim = 3
    potentials_name = "T"
    _solve = staticmethod(_solve_checked)
    _lengths = staticmethod(_lengths_packed)

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True, trigram_potentials=True)

    def __init__(self, T: Any, name: str = "trigram") -> None:
        self._dense: np.ndarray | None = None
        if isinstance(T, PackedTrigram):
            self.potentials = T
        else:
            Tv = np.array(as_potentials(T, 3, "T"), dtype=np.float64, order="C", copy=True)
            Tv.flags.writeable = False
            self._dense = Tv
            self.potentials = PackedTrigram.from_dense(Tv)  # a view: no second copy
        self.n = self.potentials.n
        self.name = name

    @property
    def T(self) -> np.ndarray:
        """The dense potentials (read-only; built on each call when the component holds a PackedTrigram)."""
        return self._dense if self._dense is not None else self.potentials.dense()

    def best_given(self, keep: Any) -> float:
        """Own score (no u) of the unique trigram path with that yield; -inf if a transition is -inf."""
        kv = as_keep(keep, self.n)
        seq = np.concatenate(([0, 0], np.flatnonzero(kv) + 1, [self.n + 1]))
        return float(np.sum(self.potentials.at(seq[:-2], seq[1:-1], seq[2:])))

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add an exact flow formulation over pair states and return its objective (without u).

        Pair states are (0, 0) (the start), (a, b) with 0 <= a < b <= n (last two kept positions; a = 0
        when b is the first kept token) and the final states (b, n+1). A binary variable y[a, b, c] is
        the transition (a, b) → (b, c) with score T[a, b, c] (only finite ones; from the start the
        transitions are y[0, 0, c]). Constraints: one unit leaves (0, 0); flow is conserved at every
        state (a, b) with 1 <= b <= n; one unit enters the final states; keep_b equals the flow leaving
        the states (·, b). The state graph is acyclic (positions increase), so an integer solution is a
        single path, i.e. a compression, and the objective is exactly its trigram score.

        Parameters
        ----------
        problem : pulp.LpProblem
            The shared problem (constraints are added to it).
        keep_vars : list of pulp.LpVariable
            n binary variables, ``keep_vars[k-1]`` for token k.
        prefix : str, optional
            Name prefix of the new variables/constraints; default: ``f"{self.name}{k}_"`` with the
            smallest k not used in ``problem``.

        Returns
        -------
        pulp.LpAffineExpression
            Σ T[a, b, c] y[a, b, c].
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

        n = self.n
        m = n + 2
        if len(keep_vars) != n:
            raise InputError(f"keep_vars must have {n} variables, got {len(keep_vars)}")
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        T = self.T
        y: dict[tuple[int, int, int], Any] = {}
        for c in range(1, m):
            if np.isfinite(T[0, 0, c]):
                y[0, 0, c] = binary_var(problem, f"{pre}y_0_0_{c}")
        for b in range(1, n + 1):
            for a in range(b):
                for c in range(b + 1, m):
                    if np.isfinite(T[a, b, c]):
                        y[a, b, c] = binary_var(problem, f"{pre}y_{a}_{b}_{c}")
        into: dict[tuple[int, int], list[Any]] = {}
        out_of: dict[tuple[int, int], list[Any]] = {}
        for (a, b, c), var in y.items():
            out_of.setdefault((a, b), []).append(var)
            into.setdefault((b, c), []).append(var)
        problem += pulp.lpSum(out_of.get((0, 0), [])) == 1, f"{pre}start"
        problem += pulp.lpSum(v for (_, c), vs in into.items() if c == m - 1 for v in vs) == 1, f"{pre}end"
        for b in range(1, n + 1):
            leaving: list[Any] = []
            for a in range(b):
                ins = into.get((a, b), [])
                outs = out_of.get((a, b), [])
                leaving.extend(outs)
                if ins or outs:
                    problem += pulp.lpSum(ins) - pulp.lpSum(outs) == 0, f"{pre}flow_{a}_{b}"
            problem += pulp.lpSum(leaving) - keep_vars[b - 1] == 0, f"{pre}keep_{b}"
        return pulp.lpSum(float(T[a, b, c]) * var for (a, b, c), var in y.items())
