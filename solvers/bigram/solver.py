"""Exact bigram compression solver (docs/architecture.md §2, contracts 1 and 4).

A compression keeps the positions 0 = s_0 < s_1 < ... < s_L < s_{L+1} = n+1 (0 is ``<s>``, n+1 is
``</s>``) and scores

    Σ_{t=1}^{L+1} B[s_{t-1}, s_t] + Σ_k u_k keep_k.

Only the entries ``B[i, j]`` with ``i < j`` are read. Entries may be ``-inf`` (forbidden transitions);
NaN and ``+inf`` are rejected with :class:`~dualdecomp.core.errors.InputError`.

Algorithms (numba kernels, single threaded):

* free length: a longest-path DP over the last kept position, O(n^2);
* exact length L: a DP over (number kept, last kept position), O(n^2 L), restricted to the positions that
  can still reach the end with exactly L tokens;
* every length at once (:func:`solve_lengths`): the same DP without the restriction, O(n^3).

Tie-breaking (deterministic): backtracking always takes the *smallest* predecessor position among those
reaching a cell's maximum (the free-length DP stores it, the count DPs recompute it exactly), and the
final transition into n+1 likewise prefers the smallest last position. With exact arithmetic (e.g.
integer-valued potentials) the returned compression is therefore, among all optimal ones, the one whose
kept positions read from right to left, (s_L, s_{L-1}, ..., s_1), are lexicographically smallest.

``u`` may contain ``-inf`` (the token cannot be kept) but not NaN or ``+inf``.

Infeasibility: when every admissible compression scores ``-inf`` (for instance all transitions out of
``<s>`` are forbidden, or no path has exactly ``length`` tokens) the solvers raise
:class:`~dualdecomp.core.errors.SolverError` ("no feasible compression"); they never return a ``-inf`` score.
A ``length`` outside 0..n is an :class:`~dualdecomp.core.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

from dualdecomp.core.checks import as_keep, as_length, as_padded_u, as_potentials, check_score
from dualdecomp.core.component import Capabilities
from dualdecomp.core.ilp_vars import unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.bigram.char_budget import CharBudgetBigram
from dualdecomp.solvers.bigram.path_ilp import add_path_ilp

__all__ = ["Bigram", "LengthTable", "dp_updates", "solve", "solve_lengths"]

_NEG = -np.inf


# ----------------------------------------------------------------------------------------------------
# numba kernels
# ----------------------------------------------------------------------------------------------------


@njit(cache=True)
def _free_kernel(B, ue):  # pragma: no cover - compiled
    """Free-length DP. Returns (score, keep)."""
    m = B.shape[0]
    n = m - 2
    f = np.full(m, -np.inf)
    back = np.full(m, -1, dtype=np.int64)
    f[0] = 0.0
    for i in range(n + 1):
        v = f[i]
        if v != -np.inf:
            row = B[i]
            for j in range(i + 1, m):
                w = v + row[j]
                if w > f[j]:
                    f[j] = w
                    back[j] = i
        # every push into i+1 comes from a source <= i: its value is final, add its bonus
        f[i + 1] += ue[i + 1]
    keep = np.zeros(n, dtype=np.bool_)
    score = f[m - 1]
    if score != -np.inf:
        j = back[m - 1]
        while j > 0:
            keep[j - 1] = True
            j = back[j]
    return score, keep


@njit(cache=True)
def _count_tables(B, ue, cmax, target):  # pragma: no cover - compiled
    """DP over (count, last kept position) up to count ``cmax``.

    g[c, j] is the best score of a prefix ending at kept token j with c kept tokens (u included). With
    ``target >= 0`` only positions that can still end with exactly ``target`` tokens are filled (the
    others stay -inf; ``cmax`` must then equal ``target``). No back-pointers: the inner loop is a
    branch-free max and :func:`_predecessor` recomputes the argmax when backtracking.
    """
    m = B.shape[0]
    n = m - 2
    g = np.full((cmax + 1, m), -np.inf)
    g[0, 0] = 0.0
    for c in range(cmax):
        # targets j hold the (c+1)-th token: j <= hi
        hi = n if target < 0 else n - (target - c - 1)
        gc = g[c]
        gn = g[c + 1]
        for i in range(c, hi if c >= 1 else 1):  # count 0: only position 0
            v = gc[i]
            if v == -np.inf:
                continue
            row = B[i]
            for j in range(i + 1, hi + 1):
                gn[j] = max(gn[j], v + row[j])
        for j in range(c + 1, hi + 1):
            gn[j] += ue[j]
    return g


@njit(cache=True)
def _predecessor(B, g, c, j):  # pragma: no cover - compiled
    """Smallest i whose cell (c-1, i) attains the best push into (c, j) (exact recomputation)."""
    gp = g[c - 1]
    lo = c - 1
    hi = j if c >= 2 else 1
    best = -np.inf
    for i in range(lo, hi):
        best = max(best, gp[i] + B[i, j])
    for i in range(lo, hi):
        if gp[i] + B[i, j] == best:
            return i
    return -1


@njit(cache=True)
def _finish(B, g, c):  # pragma: no cover - compiled
    """Best transition into n+1 with exactly c tokens, and the backtracked keep."""
    m = B.shape[0]
    n = m - 2
    best = -np.inf
    last = -1
    gc = g[c]
    for i in range(c, n + 1):
        w = gc[i] + B[i, m - 1]
        if w > best:
            best = w
            last = i
    keep = np.zeros(n, dtype=np.bool_)
    if last >= 0:
        j = last
        for k in range(c, 0, -1):
            keep[j - 1] = True
            j = _predecessor(B, g, k, j)
    return best, keep


@njit(cache=True)
def _exact_kernel(B, ue, length):  # pragma: no cover - compiled
    g = _count_tables(B, ue, length, length)
    return _finish(B, g, length)


@njit(cache=True)
def _lengths_kernel(B, ue):  # pragma: no cover - compiled
    m = B.shape[0]
    n = m - 2
    g = _count_tables(B, ue, n, -1)
    scores = np.empty(n + 1)
    keeps = np.zeros((n + 1, n), dtype=np.bool_)
    for c in range(n + 1):
        s, k = _finish(B, g, c)
        scores[c] = s
        keeps[c] = k
    return scores, keeps


# ----------------------------------------------------------------------------------------------------
# public API
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LengthTable:
    """Best compression for every exact length 0..n, from one DP.

    Attributes
    ----------
    scores : numpy.ndarray
        float64 (n+1,): best objective (u included) with exactly m kept tokens; -inf if infeasible.
    keeps : numpy.ndarray
        bool (n+1, n): row m is the best keep with m tokens (all False where infeasible). Ties are broken
        as in :func:`solve` with ``length=m``.
    """

    scores: np.ndarray
    keeps: np.ndarray

    @property
    def n(self) -> int:
        """Number of tokens."""
        return int(self.keeps.shape[1])

    def solution(self, length: int) -> Solution:
        """The best ``Solution`` with exactly ``length`` tokens.

        Raises
        ------
        InputError
            ``length`` outside 0..n.
        SolverError
            No feasible compression of that length.
        """
        m = as_length(length, self.n)
        assert m is not None
        score = check_score(self.scores[m], f"length {m}")
        return Solution(keep=self.keeps[m].copy(), score=score)


def _solve_checked(B: np.ndarray, ue: np.ndarray, length: int | None) -> Solution:
    if length is None:
        score, keep = _free_kernel(B, ue)
        what = "the bigram problem"
    else:
        score, keep = _exact_kernel(B, ue, length)
        what = f"the bigram problem with length {length}"
    return Solution(keep=keep, score=check_score(score, what))


def solve(B: Any, u: Any = None, length: int | None = None) -> Solution:
    """Best compression under bigram potentials (contract 1).

    Parameters
    ----------
    B : array_like
        Shape (n+2, n+2); ``B[i, j]`` (i < j) scores keeping j right after i. -inf forbids it.
    u : array_like, optional
        Shape (n,), added for every kept token (token k is ``u[k-1]``). Defaults to zeros.
    length : int, optional
        Exact number of kept tokens; None for free length.

    Returns
    -------
    Solution
        ``keep`` (bool (n,)) and ``score`` (objective including the u terms). Ties: see module docstring.

    Raises
    ------
    InputError
        Wrong shapes, NaN/+inf potentials, length outside 0..n.
    SolverError
        No compression (of the requested length) has a finite score.
    """
    Bv = as_potentials(B, 2, "B")
    n = Bv.shape[0] - 2
    ue = as_padded_u(u, n)
    return _solve_checked(Bv, ue, as_length(length, n))


def solve_lengths(B: Any, u: Any = None) -> LengthTable:
    """Best compression for every exact length 0..n at once (one O(n^3) DP).

    Parameters
    ----------
    B : array_like
        Shape (n+2, n+2), as in :func:`solve`.
    u : array_like, optional
        Shape (n,), as in :func:`solve`.

    Returns
    -------
    LengthTable
        ``scores[m]`` and ``keeps[m]`` for m = 0..n (-inf / all False when length m is infeasible);
        ``table.solution(m)`` gives a ``Solution``. Never raises for infeasibility.

    Raises
    ------
    InputError
        Wrong shapes, NaN/+inf potentials.
    """
    Bv = as_potentials(B, 2, "B")
    ue = as_padded_u(u, Bv.shape[0] - 2)
    scores, keeps = _lengths_kernel(Bv, ue)
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
    if length is None and not all_lengths:
        return (n + 1) * (n + 2) // 2
    cmax = n if all_lengths else int(length)  # type: ignore[arg-type]
    target = -1 if all_lengths else cmax
    ops = 0
    for c in range(cmax):  # pushes from count c to count c+1, as in _count_tables
        hi = n if target < 0 else n - (target - c - 1)
        ops += sum(hi - i for i in range(c, hi if c >= 1 else 1))
    finals = range(cmax + 1) if all_lengths else [cmax]
    return ops + sum(n + 1 - c for c in finals)  # transitions into n+1, as in _finish


def token_potentials(w: Any) -> np.ndarray:
    """The bigram potentials of a per-token score: ``w[j - 1]`` on every entry (i, j) with 0 <= i < j <= n,
    so that every path scores ``Σ_k w_k keep_k`` (a path enters each kept token once), 0 elsewhere.

    Parameters
    ----------
    w : array_like
        (n,) per-token scores, finite or -inf (a token never kept).

    Returns
    -------
    numpy.ndarray
        float64 (n+2, n+2).
    """
    u = np.asarray(w, dtype=np.float64)
    n = u.shape[0]
    E = np.zeros((n + 2, n + 2))
    E[:n + 1, 1:n + 1] = np.triu(np.broadcast_to(u, (n + 1, n)))
    return E


class PathComponent:
    """What the bigram and trigram components share: potentials validated once (copied, read-only),
    the exact solve at free or exact length, and the every-length table. A subclass sets ``ndim``,
    ``potentials_name`` and its module's ``_solve`` and ``_lengths`` kernels."""

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True)

    ndim: int
    potentials_name: str

    def _init(self, P: Any, name: str) -> None:
        Pv = np.array(as_potentials(P, self.ndim, self.potentials_name), dtype=np.float64, order="C",
                      copy=True)
        Pv.flags.writeable = False
        self.potentials = Pv
        self.n = Pv.shape[0] - 2
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n})"

    def solve(self, u: Any = None, length: int | None = None) -> Solution:
        """Argmax of the component's score + u·keep (``length``: optional exact number of kept tokens).

        Raises
        ------
        InputError
            Bad ``u`` or ``length``.
        SolverError
            No feasible compression.
        """
        return self._solve(self.potentials, as_padded_u(u, self.n), as_length(length, self.n))

    def solve_lengths(self, u: Any = None) -> LengthTable:
        """Best compression for every exact length (see the module's ``solve_lengths``)."""
        scores, keeps = self._lengths(self.potentials, as_padded_u(u, self.n))
        return LengthTable(scores=scores, keeps=keeps)


class Bigram(PathComponent):
    """Bigram component (contract 4) built from the potentials of contract 1.

    Parameters
    ----------
    B : array_like
        Shape (n+2, n+2), validated once here (copied, read-only).
    name : str, optional
        Base of the pulp variable names made by :meth:`to_ilp` (default ``"bigram"``; a free index is
        appended so several components can share one problem).
    """

    ndim = 2
    potentials_name = "B"
    _solve = staticmethod(_solve_checked)
    _lengths = staticmethod(_lengths_kernel)

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True, length_bias=1, char_budget=True,
                                                        summable=True, absorbs=True)

    def __init__(self, B: Any, name: str = "bigram") -> None:
        self._init(B, name)

    @property
    def B(self) -> np.ndarray:
        """The potentials (read-only)."""
        return self.potentials

    def best_given(self, keep: Any) -> float:
        """Own score (no u) of the unique bigram path with that yield; -inf if a transition is -inf."""
        kv = as_keep(keep, self.n)
        seq = np.concatenate(([0], np.flatnonzero(kv) + 1, [self.n + 1]))
        return float(np.sum(self.B[seq[:-1], seq[1:]]))

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add an exact path formulation to a pulp problem and return its objective (without u).

        The formulation of :func:`~dualdecomp.solvers.bigram.path_ilp.add_path_ilp`: binary arc variables
        x[i, j] (i < j, B[i, j] finite), one path from 0 to n+1 through exactly the kept tokens.

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
            Σ B[i, j] x[i, j].
        """
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        return add_path_ilp(self.B, problem, keep_vars, pre)

    def summed(self, others: Sequence[Bigram]) -> Bigram:
        """One bigram component scoring this one's potentials plus those of ``others`` (capability
        ``summable``): every path's score is the sum of its scores. It keeps this component's name."""
        return Bigram(sum(c.B for c in (self, *others)), name=self.name)

    def absorbed(self, other: Any) -> Bigram | None:
        """This component plus ``other`` as one bigram component when ``other``'s score is a sum of
        per-token scores (``other.token_scores()`` is not None: an unconstrained
        :class:`~dualdecomp.solvers.unary.Unary`), else None (capability ``absorbs``): every path's score
        is the sum of the two scores of its yield (:func:`token_potentials`). It keeps this component's
        name."""
        scores = getattr(other, "token_scores", lambda: None)()
        if scores is None or len(scores) != self.B.shape[0] - 2:
            return None
        return Bigram(self.B + token_potentials(scores), name=self.name)

    def with_length_bias(self, bias: float) -> Bigram:
        """This component with ``bias`` added to every finite pair potential: ``bias · (L + 1)`` more for a
        compression of L tokens (capability ``length_bias``). The new component has the default name."""
        return Bigram(self.B + np.where(np.isfinite(self.B), bias, 0.0))

    def with_char_budget(self, widths: Any, chars: int) -> CharBudgetBigram:
        """This component restricted to compressions of at most ``chars`` characters (capability
        ``char_budget``; :class:`~dualdecomp.solvers.bigram.char_budget.CharBudgetBigram`)."""
        return CharBudgetBigram(self.B, widths, chars)
