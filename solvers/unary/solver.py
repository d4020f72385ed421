"""Exact component for a score that is a sum of per-token keep scores, with tokens that must be kept.

The score of a keep vector is

    Σ_k w_k keep_k + Σ_k u_k keep_k,   subject to keep_k = 1 for every k in ``required``,

with ``w_k`` finite or ``-inf`` (token k can never be kept). This is the component for your own per-token
scores (a salience model, a classifier's log-odds) and for hard constraints such as "keep every named
entity" (``required``); decode it jointly with the shipped components (docs/architecture.md, contract 4).

Algorithms (exact):

* free length: keep the required tokens and every other token with ``w_k + u_k > 0``. O(n).
* exact length L: keep the required tokens and the ``L − r`` other tokens with the largest
  ``w_k + u_k`` (r = number of required tokens). O(n log n).
* every length at once (:meth:`Unary.solve_lengths`): the same prefix sums read at every L.

Ties: among equal ``w_k + u_k`` the leftmost tokens are kept first; at free length a token with
``w_k + u_k == 0`` is dropped. Infeasibility (a required token with score -inf, or a length below r or above
the number of keepable tokens) raises :class:`~dualdecomp.core.errors.SolverError`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from dualdecomp.core.checks import as_keep, as_length, as_u, check_score, float_array
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError
from dualdecomp.core.ilp_vars import unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.bigram import LengthTable

__all__ = ["Unary"]


class Unary:
    """Component (contract 4) scoring ``Σ_k w_k keep_k`` with optional tokens that must be kept.

    Parameters
    ----------
    w : array_like
        Shape (n,): the score of keeping token k (``w[k-1]``); finite or -inf (never kept).
    required : array_like of bool, optional
        Shape (n,): tokens that must be kept (default: none).
    name : str
        Base of the pulp names made by :meth:`to_ilp`.

    Attributes
    ----------
    n : int
        Number of tokens.
    w : numpy.ndarray
        float64 (n,), read-only.
    required : numpy.ndarray
        bool (n,), read-only.

    Raises
    ------
    InputError
        Bad shapes, NaN or +inf scores.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True, length_bias=3)

    def __init__(self, w: Any, required: Any = None, name: str = "unary") -> None:
        arr = float_array(w, "w")
        if arr.ndim != 1:
            raise InputError(f"w must be 1-dimensional (n,), got shape {arr.shape}")
        n = int(arr.shape[0])
        req = np.zeros(n, dtype=bool) if required is None else as_keep(required, n).copy()
        if (req & (arr == -np.inf)).any():
            raise InputError("a required token cannot have score -inf")
        arr = arr.copy()
        arr.flags.writeable = False
        req.flags.writeable = False
        self.w = arr
        self.required = req
        self.n = n
        self.name = name

    def __repr__(self) -> str:
        return f"Unary(n={self.n}, required={int(self.required.sum())})"

    def token_scores(self) -> np.ndarray | None:
        """The per-token scores ``w`` when the score is exactly ``Σ_k w_k keep_k`` over every keep vector
        (no required token), else None: what a bigram component absorbs (``Bigram.absorbed``)."""
        return None if self.required.any() else self.w

    def with_length_bias(self, bias: float) -> Unary:
        """This component with ``bias`` added to the score of every keepable token: ``bias · L`` more for L
        kept tokens (capability ``length_bias``)."""
        w = self.w + np.where(np.isfinite(self.w), bias, 0.0)
        return Unary(w, required=self.required, name=self.name)

    # --- decoding -----------------------------------------------------------------------------------

    def _order(self, u: Any) -> tuple[np.ndarray, np.ndarray, float]:
        """(scores w+u, optional positions by decreasing score (keepable ones only), required score)."""
        s = self.w + as_u(u, self.n)
        req_score = float(np.sum(s[self.required])) if self.required.any() else 0.0
        optional = np.flatnonzero(~self.required & (s > -np.inf))
        order = optional[np.argsort(-s[optional], kind="stable")]
        return s, order, req_score

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
            No structure (of that length) has a finite score.
        """
        length = as_length(length, self.n)
        s, order, req_score = self._order(u)
        keep = self.required.copy()
        if length is None:
            chosen = order[s[order] > 0]
        else:
            extra = length - int(self.required.sum())
            if extra < 0 or extra > order.size:
                check_score(-np.inf, f"the unary problem with length {length}")
            chosen = order[:extra]
        keep[chosen] = True
        score = req_score + (float(np.sum(s[chosen])) if chosen.size else 0.0)
        return Solution(keep=keep, score=check_score(score, "the unary problem"))

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
        s, order, req_score = self._order(u)
        r = int(self.required.sum())
        scores = np.full(self.n + 1, -np.inf)
        keeps = np.zeros((self.n + 1, self.n), dtype=bool)
        if req_score > -np.inf:
            prefix = np.concatenate(([0.0], np.cumsum(s[order])))
            for extra in range(order.size + 1):
                scores[r + extra] = req_score + prefix[extra]
                keeps[r + extra] = self.required
                keeps[r + extra, order[:extra]] = True
        return LengthTable(scores=scores, keeps=keeps)

    # --- contract 4 ---------------------------------------------------------------------------------

    def best_given(self, keep: Any) -> float:
        """Own score (no u) of a keep vector: Σ w over kept tokens; -inf if a required token is dropped."""
        kv = as_keep(keep, self.n)
        if (self.required & ~kv).any():
            return -np.inf
        return float(np.sum(self.w[kv])) if kv.any() else 0.0

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add the exact formulation to a pulp problem and return its objective (without u).

        The objective is linear in the keep variables, ``Σ_k w_k keep_k``; a required token gets the
        constraint ``keep_k = 1`` and a token with ``w_k = -inf`` the constraint ``keep_k = 0``.

        Parameters
        ----------
        problem : pulp.LpProblem
        keep_vars : list of pulp.LpVariable
            n binary variables, ``keep_vars[k-1]`` for token k.
        prefix : str, optional
            Name prefix of the constraints (default: a fresh ``f"{name}{k}_"``).

        Returns
        -------
        pulp.LpAffineExpression
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

        if len(keep_vars) != self.n:
            raise InputError(f"keep_vars must have {self.n} variables, got {len(keep_vars)}")
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        for k in range(self.n):
            if self.required[k]:
                problem += keep_vars[k] == 1, f"{pre}required_{k}"
            elif self.w[k] == -np.inf:
                problem += keep_vars[k] == 0, f"{pre}forbidden_{k}"
        return pulp.lpSum(float(self.w[k]) * keep_vars[k] for k in range(self.n) if self.w[k] > -np.inf)
