"""The ``Solution`` every solver returns (docs/architecture.md §2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Solution:
    """An argmax structure.

    Attributes
    ----------
    keep : numpy.ndarray
        bool array of shape (n,): token k is kept iff ``keep[k-1]``.
    score : float
        Objective value of the structure, including the ``u`` terms.
    heads : numpy.ndarray or None
        For dependency solvers, int array of shape (n,): head of each kept token, -1 if dropped.
    """

    keep: np.ndarray
    score: float
    heads: np.ndarray | None = None

    @property
    def length(self) -> int:
        """Number of kept tokens."""
        return int(np.count_nonzero(self.keep))
