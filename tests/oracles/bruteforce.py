"""Exhaustive oracles for the solvers (contracts 1–3 of docs/architecture.md §2), for tests only.

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


# --- oracles for contracts 1 and 2 (bigram, trigram) ---------------------------------------------------
# (imports kept here so that the module above stays untouched)
from collections.abc import Callable  # noqa: E402

from dualdecomp.core.errors import InputError, SolverError  # noqa: E402
from dualdecomp.core.solution import Solution  # noqa: E402


def _u_terms(u: np.ndarray | None, keep: np.ndarray) -> float:
    """Σ u·keep over the kept tokens only (so that u = -inf on a dropped token adds nothing)."""
    if u is None:
        return 0.0
    return float(sum(float(u[k]) for k in range(len(keep)) if keep[k]))


def bigram_score(B: np.ndarray, keep: np.ndarray, u: np.ndarray | None = None) -> float:
    """Contract-1 objective of one keep vector: Σ_t B[s_{t-1}, s_t] + Σ u·keep (may be -inf)."""
    seq = kept_sequence(keep)
    total = 0.0
    for t in range(1, len(seq)):
        total += float(B[seq[t - 1], seq[t]])
    return total + _u_terms(u, keep)


def trigram_score(T: np.ndarray, keep: np.ndarray, u: np.ndarray | None = None) -> float:
    """Contract-2 objective: T[0, 0, s_1] + Σ_{t>=2} T[s_{t-2}, s_{t-1}, s_t] + Σ u·keep (may be -inf)."""
    seq = kept_sequence(keep)
    total = float(T[0, 0, seq[1]])
    for t in range(2, len(seq)):
        total += float(T[seq[t - 2], seq[t - 1], seq[t]])
    return total + _u_terms(u, keep)


def _best(n: int, length: int | None, score: Callable[[np.ndarray], float]) -> Solution:
    if length is not None and not 0 <= length <= n:
        raise InputError(f"length must be between 0 and n={n}, got {length}")
    best_keep: np.ndarray | None = None
    best_score = -np.inf
    for keep in kept_subsets(n, length):
        value = score(keep)
        if value > best_score:  # strict: the first optimum in lexicographic order wins
            best_keep, best_score = keep, value
    if best_keep is None:
        raise SolverError("no feasible compression")
    return Solution(keep=best_keep, score=best_score)


def bigram(B: np.ndarray, u: np.ndarray | None = None, length: int | None = None) -> Solution:
    """Best keep under contract 1 by enumeration (first optimum in ``kept_subsets`` order).

    Raises
    ------
    InputError
        ``length`` outside 0..n.
    SolverError
        Every candidate scores -inf.
    """
    B = np.asarray(B, dtype=np.float64)
    n = B.shape[0] - 2
    return _best(n, length, lambda keep: bigram_score(B, keep, u))


def trigram(T: np.ndarray, u: np.ndarray | None = None, length: int | None = None) -> Solution:
    """Best keep under contract 2 by enumeration (first optimum in ``kept_subsets`` order).

    Raises
    ------
    InputError
        ``length`` outside 0..n.
    SolverError
        Every candidate scores -inf.
    """
    T = np.asarray(T, dtype=np.float64)
    n = T.shape[0] - 2
    return _best(n, length, lambda keep: trigram_score(T, keep, u))
from tests.oracles.dependency import dependency  # noqa: E402,F401
