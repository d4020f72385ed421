"""Exhaustive oracle for the joint problem of contract 5 (tests only).

max over keep vectors z (with Σ z = length when given) of Σ_c best_given_c(z). Exponential: n <= 10.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tests.oracles.bruteforce import kept_subsets


@dataclass(frozen=True)
class JointOptimum:
    """The optimum of the joint problem and every keep attaining it.

    Attributes
    ----------
    value : float
        The optimal objective (-inf when no keep is feasible).
    keeps : tuple of numpy.ndarray
        Every keep whose objective equals ``value`` within ``rtol`` (empty when infeasible).
    """

    value: float
    keeps: tuple[np.ndarray, ...]

    @property
    def feasible(self) -> bool:
        """Whether some keep has a finite objective."""
        return bool(np.isfinite(self.value))


def objective(components: Sequence, keep: np.ndarray) -> float:
    """Σ_c best_given_c(keep) (-inf as soon as one component cannot yield ``keep``)."""
    total = 0.0
    for comp in components:
        value = float(comp.best_given(keep))
        if value == -np.inf:
            return -np.inf
        total += value
    return total


def joint(components: Sequence, length: int | None = None, rtol: float = 1e-9) -> JointOptimum:
    """Best keep of the joint problem by enumeration of every kept subset.

    Parameters
    ----------
    components : sequence of components (contract 4)
        Over the same n tokens.
    length : int, optional
        Exact number of kept tokens.
    rtol : float
        Relative tolerance for the list of optimal keeps (ties).

    Returns
    -------
    JointOptimum
    """
    n = components[0].n
    scored = [(keep, objective(components, keep)) for keep in kept_subsets(n, length)]
    best = max((v for _, v in scored), default=-np.inf)
    if best == -np.inf:
        return JointOptimum(-np.inf, ())
    tol = rtol * max(1.0, abs(best))
    return JointOptimum(best, tuple(k for k, v in scored if v >= best - tol))
