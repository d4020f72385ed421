"""Exact component for a score that is a sum over token types of a function of the type's count.

Every token k has a type ``types[k]`` in 0..K-1 and the score of a keep vector is

    Σ_t g_t(p_t) + Σ_k u_k keep_k,    p_t = number of kept tokens of type t,

with arbitrary finite tables ``g_t(0), ..., g_t(n_t)`` (n_t = number of tokens of type t). This covers the
bag-of-tokens losses of Cohn & Lapata (2009, §3.6): the edit distance (eq. 13) is
``g_t(p) = p − 2 min(p, q_t)`` (plus the constant q) and, at a fixed output length L, the F1 loss (eq. 14)
is ``g_t(p) = −2 min(p, q_t) / (L + q)`` (plus the constant 1); see
:mod:`dualdecomp.models.transducer.losses`.

Algorithms (exact):

* free length: for every type independently, sort the u of its positions in decreasing order; keeping c
  tokens of that type is best done with the c largest, so the type contributes
  ``max_c g_t(c) + (sum of the c largest u)``. O(n log n).
* exact length L: a knapsack DP over the types, ``F_t(m) = max_c F_{t-1}(m − c) + best_t(c)`` with
  ``best_t(c)`` the value above for exactly c tokens of type t. O(n²) (Σ_t n_t · n).
* every length at once (:meth:`BagCount.solve_lengths`): the same DP, read at every m.

Ties: among positions of one type with equal u the leftmost are kept first; among counts of equal value
the smallest count wins (free length); the DP keeps the first maximising count per cell.

``u`` may contain ``-inf`` (the token cannot be kept) but not NaN or ``+inf``. Infeasibility (every
structure of the requested length scores -inf) raises :class:`~dualdecomp.core.errors.SolverError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dualdecomp.core.checks import as_keep, as_length, as_padded_u, check_score
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError
from dualdecomp.core.ilp_vars import binary_var, unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.bigram.solver import LengthTable

__all__ = ["BagCount"]


class BagCount:
    """Component (contract 4) scoring ``Σ_t g_t(count of kept tokens of type t)``.

    Parameters
    ----------
    types : array_like of int
        Shape (n,): the type of every token, in 0..K-1 (K = ``len(gains)``).
    gains : sequence of array_like
        ``gains[t][c]`` is g_t(c) for c = 0..n_t (at least n_t + 1 finite entries; extra ones are ignored).
        Types without tokens contribute the constant ``gains[t][0]``.
    name : str
        Base of the pulp names made by :meth:`to_ilp`.

    Attributes
    ----------
    n : int
        Number of tokens.
    types : numpy.ndarray
        int64 (n,), read-only.
    gains : tuple of numpy.ndarray
        g_t(0..n_t) of every type (read-only copies).

    Raises
    ------
    InputError
        Bad shapes, types out of range, tables too short, NaN or infinite gains.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True)

    def __init__(self, types: Any, gains: Sequence[Any], name: str = "bagcount") -> None:
        t = np.asarray(types)
        if t.ndim != 1 or (t.size and not np.issubdtype(t.dtype, np.integer)):
            raise InputError("types must be a 1-d integer array")
        t = t.astype(np.int64)
        K = len(gains)
        if t.size and (t.min() < 0 or t.max() >= K):
            raise InputError(f"types must lie in 0..{K - 1}")
        counts = np.bincount(t, minlength=K) if K else np.zeros(0, dtype=np.int64)
        tables = []
        for k, g in enumerate(gains):
            arr = np.asarray(g, dtype=np.float64)
            if arr.ndim != 1 or arr.shape[0] < counts[k] + 1:
                raise InputError(f"gains[{k}] needs at least {counts[k] + 1} entries (counts 0..{counts[k]})")
            arr = np.array(arr[: counts[k] + 1], dtype=np.float64)
            if not np.isfinite(arr).all():
                raise InputError(f"gains[{k}] must be finite")
            arr.flags.writeable = False
            tables.append(arr)
        t.flags.writeable = False
        self.types = t
        self.gains = tuple(tables)
        self.n = int(t.shape[0])
        self.name = name
        self._positions = [np.flatnonzero(t == k) for k in range(K)]
        self._constant = float(sum(tables[k][0] for k in range(K) if counts[k] == 0))

    def __repr__(self) -> str:
        return f"BagCount(n={self.n}, types={len(self.gains)})"

    # --- decoding -----------------------------------------------------------------------------------

    def _per_type(self, ue: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """For every type with tokens: (type, positions by decreasing u, value of keeping c = 0..n_t)."""
        out = []
        for k, pos in enumerate(self._positions):
            if pos.size == 0:
                continue
            order = pos[np.argsort(-ue[pos], kind="stable")]
            pref = np.concatenate(([0.0], np.cumsum(ue[order])))
            out.append((k, order, self.gains[k] + pref))
        return out

    def solve(self, u: Any = None, length: int | None = None) -> Solution:
        """Argmax of the component's score + u·keep (``length``: optional exact number of kept tokens).

        Parameters
        ----------
        u : array_like, optional
            Shape (n,); defaults to zeros.
        length : int, optional
            Exact number of kept tokens.

        Returns
        -------
        Solution

        Raises
        ------
        InputError
            Bad ``u`` or ``length``.
        SolverError
            No structure of that length has a finite score.
        """
        ue = as_padded_u(u, self.n)[1:-1]
        length = as_length(length, self.n)
        per = self._per_type(ue)
        keep = np.zeros(self.n, dtype=bool)
        if length is None:
            score = self._constant
            for _, order, val in per:
                c = int(np.argmax(val))
                score += float(val[c])
                keep[order[:c]] = True
            return Solution(keep=keep, score=check_score(score, "the bag-count problem"))
        F, choice = self._knapsack(per)
        score = check_score(F[length] + self._constant, f"the bag-count problem with length {length}")
        self._backtrack(per, choice, length, keep)
        return Solution(keep=keep, score=score)

    def solve_lengths(self, u: Any = None) -> LengthTable:
        """Best structure for every exact length 0..n (-inf / all False where infeasible).

        Parameters
        ----------
        u : array_like, optional
            Shape (n,).

        Returns
        -------
        LengthTable
        """
        ue = as_padded_u(u, self.n)[1:-1]
        per = self._per_type(ue)
        F, choice = self._knapsack(per)
        scores = F + self._constant
        keeps = np.zeros((self.n + 1, self.n), dtype=bool)
        for m in range(self.n + 1):
            if scores[m] > -np.inf:
                self._backtrack(per, choice, m, keeps[m])
        return LengthTable(scores=scores, keeps=keeps)

    def _knapsack(self, per: list[tuple[int, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, list[np.ndarray]]:
        n = self.n
        F = np.full(n + 1, -np.inf)
        F[0] = 0.0
        choice = []
        for _, _, val in per:
            best = np.full(n + 1, -np.inf)
            arg = np.full(n + 1, -1, dtype=np.int64)
            for c in range(val.shape[0]):
                cand = np.full(n + 1, -np.inf)
                cand[c:] = F[: n + 1 - c] + val[c]
                better = cand > best
                best[better] = cand[better]
                arg[better] = c
            F = best
            choice.append(arg)
        return F, choice

    @staticmethod
    def _backtrack(per: list[tuple[int, np.ndarray, np.ndarray]], choice: list[np.ndarray], m: int,
                   keep: np.ndarray) -> None:
        for (_, order, _), arg in zip(reversed(per), reversed(choice), strict=True):
            c = int(arg[m])
            keep[order[:c]] = True
            m -= c

    # --- contract 4 ---------------------------------------------------------------------------------

    def best_given(self, keep: Any) -> float:
        """Own score (no u) of a keep vector: Σ_t g_t(number of kept tokens of type t)."""
        kv = as_keep(keep, self.n)
        counts = np.bincount(self.types[kv], minlength=len(self.gains))
        return float(sum(float(g[c]) for g, c in zip(self.gains, counts, strict=True)))

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add an exact count formulation to a pulp problem and return its objective (without u).

        For every type t with tokens: binaries z[t, c] (c = 0..n_t) with Σ_c z[t, c] = 1 and
        Σ_c c·z[t, c] = Σ_{k of type t} keep_k; the objective is Σ_{t, c} g_t(c) z[t, c] (plus the
        constant of the types without tokens). Any integer solution selects the true count of every type,
        so the objective is exactly the component's score.

        Parameters
        ----------
        problem : pulp.LpProblem
        keep_vars : list of pulp.LpVariable
            n binary variables, ``keep_vars[k-1]`` for token k.
        prefix : str, optional
            Name prefix (default: a fresh ``f"{name}{k}_"``).

        Returns
        -------
        pulp.LpAffineExpression
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

        if len(keep_vars) != self.n:
            raise InputError(f"keep_vars must have {self.n} variables, got {len(keep_vars)}")
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        terms = []
        for k, pos in enumerate(self._positions):
            if pos.size == 0:
                continue
            z = [binary_var(problem, f"{pre}z_{k}_{c}") for c in range(pos.size + 1)]
            problem += pulp.lpSum(z) == 1, f"{pre}one_{k}"
            problem += (pulp.lpSum(c * z[c] for c in range(1, pos.size + 1))
                        - pulp.lpSum(keep_vars[int(p)] for p in pos) == 0), f"{pre}count_{k}"
            terms.extend(float(self.gains[k][c]) * z[c] for c in range(pos.size + 1))
        return pulp.lpSum(terms) + self._constant
