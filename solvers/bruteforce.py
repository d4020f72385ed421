"""Exhaustive oracles for the solvers (contracts 1–3 of DESIGN.md §2), for tests only.

Every oracle enumerates all kept subsets (and, for dependency parsing, all projective trees) and returns
the best ``Solution``. Exponential: use on n <= 8.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np


def kept_subsets(n: int, length: int | None = None) -> Iterator[np.ndarray]:
    """Yield every keep vector (bool (n,)) in lexicographic order, optionally with exactly ``length`` ones."""
    for bits in itertools.product((False, True), repeat=n):
        keep = np.array(bits, dtype=bool)
        if length is None or int(keep.sum()) == length:
            yield keep


def kept_sequence(keep: np.ndarray) -> list[int]:
    """The kept positions with the boundaries: [0, s_1, ..., s_L, n+1]."""
    n = len(keep)
    return [0, *[k + 1 for k in range(n) if keep[k]], n + 1]
