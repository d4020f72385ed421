"""Exact component for groups of tokens that are kept or dropped together (contract 4).

The structures are the keep vectors with ``keep_i = keep_j`` for every pair (i, j) given; every such
vector scores 0, any other −inf. Decoded jointly with another component (``dualdecomp.decode([chart,
PairedTokens(n, pairs)])``), it turns the agreement the engine enforces into the constraint "each pair
is kept whole or dropped whole" on the other component's keep vector, and the engine's certificate then
proves the result optimal *under* that constraint. ``dualdecomp rewrite --paired-punctuation`` uses it
for brackets and quotation marks (:func:`dualdecomp.data.punctuation.punctuation_pairs`).

Algorithms (exact): the pairs join tokens into groups (union–find; pairs may share a token). ``solve(u)``
keeps each group whose ``Σ u_k`` is positive (a group of one token: ``u_k > 0``), and ``best_given(keep)``
is 0 when ``keep`` is constant on every group, else −inf; ``to_ilp`` adds ``keep_i = keep_j`` per pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from dualdecomp.core.checks import as_keep, as_u
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError
from dualdecomp.core.solution import Solution

__all__ = ["PairedTokens"]


class PairedTokens:
    """Component (contract 4): keep vectors on which every pair of tokens agrees, each scoring 0.

    Parameters
    ----------
    n : int
        Number of tokens.
    pairs : iterable of (int, int)
        0-based positions of tokens kept or dropped together.

    Attributes
    ----------
    n : int
    pairs : tuple of (int, int)
    group : numpy.ndarray
        int64 (n,): the group of each token (tokens joined by pairs share one; ids 0..groups−1).

    Raises
    ------
    InputError
        A position outside 0..n−1, or a pair of one token.
    """

    capabilities: ClassVar[Capabilities] = Capabilities()

    def __init__(self, n: int, pairs: Iterable[tuple[int, int]]) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError(f"n must be a positive integer, got {n!r}")
        self.n = n
        self.pairs = tuple((int(i), int(j)) for i, j in pairs)
        root = list(range(n))

        def find(k: int) -> int:
            while root[k] != k:
                root[k] = root[root[k]]
                k = root[k]
            return k

        for i, j in self.pairs:
            if not (0 <= i < n and 0 <= j < n) or i == j:
                raise InputError(f"a pair must join two positions in 0..{n - 1}, got {(i, j)}")
            root[find(i)] = find(j)
        _, group = np.unique([find(k) for k in range(n)], return_inverse=True)
        self.group = group.astype(np.int64)

    def __repr__(self) -> str:
        return f"PairedTokens(n={self.n}, pairs={list(self.pairs)})"

    def solve(self, u: Any = None) -> Solution:
        """Argmax of ``u · keep`` over the agreeing keep vectors (a group is kept when its ``Σ u`` > 0);
        the solution's score is that ``u · keep`` (the own score is 0)."""
        u = as_u(u, self.n)
        sums = np.bincount(self.group, weights=u)
        keep = (sums > 0)[self.group]
        return Solution(keep=keep, score=float(u[keep].sum()))

    def best_given(self, keep: Any) -> float:
        """0 when ``keep`` agrees on every pair, else −inf."""
        keep = as_keep(keep, self.n)
        return 0.0 if all(keep[i] == keep[j] for i, j in self.pairs) else -np.inf

    def to_ilp(self, problem: Any, keep_vars: list[Any]) -> float:
        """``keep_i = keep_j`` per pair; the objective adds nothing."""
        for i, j in self.pairs:
            problem += keep_vars[i] - keep_vars[j] == 0
        return 0.0
