"""The decomposition problem max Σ_c f_c(z) over one shared keep z: components, solves, primal evaluation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dualdecomp.core.component import capabilities_of
from dualdecomp.core.solution import Solution


class DecompositionProblem:
    """Components over the same n tokens, an optional exact length, and cached primal evaluations.

    Parameters
    ----------
    components : sequence of components (contract 4)
        All with the same ``n``.
    length : int or None
        Exact number of kept tokens required of the answer.

    Attributes
    ----------
    exact_capable : tuple of bool
        For each component, whether it has an exact-length DP.
    """

    def __init__(self, components: Sequence, length: int | None) -> None:
        self.components = list(components)
        self.K = len(self.components)
        self.n = int(self.components[0].n)
        self.length = length
        self.exact_capable = tuple(capabilities_of(c).exact_length for c in self.components)
        self._scores: dict[bytes, np.ndarray] = {}

    @property
    def has_exact_length(self) -> bool:
        """Whether at least one component can enforce the length exactly."""
        return any(self.exact_capable)

    def solve(self, c: int, w: np.ndarray, exact: bool = False) -> Solution:
        """Argmax of component ``c`` with per-token weights ``w``; with ``exact`` (and a length and an
        exact-length DP) the component keeps exactly ``length`` tokens.

        Raises
        ------
        SolverError
            No feasible structure.
        """
        comp = self.components[c]
        if exact and self.length is not None and self.exact_capable[c]:
            return comp.solve(w, length=self.length)
        return comp.solve(w)

    def scores(self, keep: np.ndarray) -> np.ndarray:
        """float (K,): ``best_given`` of ``keep`` under every component (cached; -inf if infeasible)."""
        key = keep.tobytes()
        got = self._scores.get(key)
        if got is None:
            got = np.array([float(comp.best_given(keep)) for comp in self.components], dtype=np.float64)
            self._scores[key] = got
        return got

    def value(self, keep: np.ndarray) -> float:
        """Objective Σ_c best_given_c(keep): -inf if a component cannot yield it or the length is wrong."""
        if self.length is not None and int(np.count_nonzero(keep)) != self.length:
            return -np.inf
        s = self.scores(keep)
        if not np.isfinite(s).all():
            return -np.inf
        return float(s.sum())
