"""Context-pruned storage of trigram potentials: one row per distinct context instead of (n+2)^3 entries.

``T[a, b, c]`` (contract 2) is stored as ``rows[ctx[a, b], c]``: ``ctx`` (shape (n+2, n+2), int64) maps
each context pair to a row of ``rows`` (shape (S, n+2), float64), and pairs with the same context share a
row. For a KenLM model the row of (a, b) depends only on the model's state after ``w_a w_b``, so S is the
number of distinct states of the sentence's context pairs (at most (n+2)^2, usually far fewer: a pair
the LM cannot extend collapses to the state of ``w_b`` alone). Only the entries the trigram DP reads are
meaningful: ``T[0, 0, c]`` (c >= 1) and ``T[a, b, c]`` with ``0 <= a < b < c <= n+1``; :meth:`dense` sets
every other entry to -inf, as the contract's dense tensor has them. The DP is unchanged (exact): it
reads the same numbers through one more index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError

__all__ = ["PackedTrigram"]


@dataclass(frozen=True, eq=False)
class PackedTrigram:
    """Trigram potentials as shared context rows (module docstring).

    Attributes
    ----------
    rows : numpy.ndarray
        float64 (S, n+2), read-only; no NaN or +inf.
    ctx : numpy.ndarray
        int64 (n+2, n+2), read-only; ``ctx[a, b]`` indexes ``rows``.
    """

    rows: np.ndarray
    ctx: np.ndarray

    def __post_init__(self) -> None:
        rows = np.asarray(self.rows, dtype=np.float64)
        ctx = np.asarray(self.ctx)
        if ctx.ndim != 2 or ctx.shape[0] != ctx.shape[1] or ctx.shape[0] < 2:
            raise InputError(f"ctx must have shape (n+2, n+2), got {ctx.shape}")
        if rows.ndim != 2 or rows.shape[1] != ctx.shape[0] or rows.shape[0] < 1:
            raise InputError(f"rows must have shape (S, {ctx.shape[0]}), got {rows.shape}")
        if not np.issubdtype(ctx.dtype, np.integer) or ctx.min() < 0 or ctx.max() >= rows.shape[0]:
            raise InputError("ctx must hold row indices of rows")
        if np.isnan(rows).any() or np.isposinf(rows).any():
            raise InputError("T contains NaN or +inf")
        rows = np.ascontiguousarray(rows)
        ctx = np.ascontiguousarray(ctx, dtype=np.int64)
        rows.flags.writeable = False
        ctx.flags.writeable = False
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "ctx", ctx)

    @property
    def n(self) -> int:
        """Number of tokens."""
        return self.ctx.shape[0] - 2

    @property
    def nbytes(self) -> int:
        """Bytes held (rows and ctx)."""
        return self.rows.nbytes + self.ctx.nbytes

    @classmethod
    def from_dense(cls, T: np.ndarray) -> PackedTrigram:
        """Wrap a dense (m, m, m) tensor without copying: one row per pair (``ctx`` is the identity)."""
        T = np.ascontiguousarray(T, dtype=np.float64)
        m = T.shape[0]
        return cls(T.reshape(m * m, m), np.arange(m * m, dtype=np.int64).reshape(m, m))

    def scaled(self, weight: float) -> PackedTrigram:
        """The potentials multiplied by ``weight`` (> 0; the rows are scaled once)."""
        return PackedTrigram(self.rows * float(weight), self.ctx)

    def at(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """``T[a, b, c]`` for index arrays (entries the DP reads)."""
        return self.rows[self.ctx[a, b], c]

    def dense(self) -> np.ndarray:
        """The contract's dense (n+2)^3 tensor (-inf outside the entries the DP reads)."""
        m = self.ctx.shape[0]
        T = self.rows[self.ctx]  # (m, m, m)
        a, b, c = np.ogrid[:m, :m, :m]
        valid = ((a < b) | ((a == 0) & (b == 0))) & (c > b)
        T[~valid] = -np.inf
        return T
