"""Sibling scores ``S[h, s, m]`` of the second-order dependency parsers, stored in factored form.

The dense (n+1)³ tensor costs 8·(n+1)³ bytes (677 MB at 300 tokens, 8 GB at 1,000). The model's sibling
features depend only on per-token types (POS, tag, label) and the direction, so ``S`` is a sum of a few
table lookups whose addresses split into a (head, sibling) part and a (head, modifier) part:

    S[h, s, m] = scale · Σ_k table[hs[k, h, s] + md[k, h, m]]        (k = 0..K-1)

:class:`SiblingScores` holds ``table`` (the small weight tables of the K templates, concatenated) and the
two (K, n+1, n+1) address arrays: O(K·n² + |table|) memory. The numba chart of
:func:`dualdecomp.solvers.dependency.kernels.second_order_chart` computes each ``S[h, s, m]`` on the fly
from them, so the DP reads exactly the numbers the dense tensor would hold (the same float additions in
the same order as :meth:`SiblingScores.dense`; a component weight is the factor ``scale``, applied
after the sum as ``weight * S`` was to the dense tensor). A dense tensor given by a caller is the special case
K = 1 (:meth:`SiblingScores.from_dense`: ``table = S.ravel()``, ``hs[h, s] = (h·N + s)·N``,
``md[h, m] = m``), so there is one kernel for both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.checks import float_array
from dualdecomp.core.errors import InputError

__all__ = ["SiblingScores", "as_sibling_scores"]


def _index_array(x: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype not in (np.int32, np.int64):
        raise InputError(f"{name} must be an int32 or int64 array, got {arr.dtype}")
    if arr.shape != shape:
        raise InputError(f"{name} must have shape {shape}, got {arr.shape}")
    if arr.size and arr.min() < 0:
        raise InputError(f"{name} holds a negative address")
    arr = np.ascontiguousarray(arr)
    if arr.flags.writeable:
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class SiblingScores:
    """Factored sibling scores ``S[h, s, m] = scale·Σ_k table[hs[k, h, s] + md[k, h, m]]`` (module docstring).

    Parameters
    ----------
    table : array_like
        float64 (T,): the weights of every template; finite or -inf (no NaN, no +inf).
    hs : array_like
        int32/int64 (K, N, N): ``hs[k, h, s]``, the (head, previous sibling) part of template k's address
        (``s = h`` for the closest modifier), N = n+1.
    md : array_like
        int32/int64 (K, N, N): ``md[k, h, m]``, the (head, modifier) part.
    scale : float
        Factor applied to every sum (a component's weight, :meth:`scaled`); finite, and positive when
        ``table`` holds -inf.

    Raises
    ------
    InputError
        Wrong shapes or dtypes, NaN or +inf in ``table``, an address outside ``table``, a bad ``scale``.
    """

    table: np.ndarray
    hs: np.ndarray
    md: np.ndarray
    scale: float = 1.0

    def __post_init__(self) -> None:
        table = float_array(self.table, "sibling table")
        if table.ndim != 1:
            raise InputError(f"sibling table must be 1-D, got shape {table.shape}")
        hs = np.asarray(self.hs)
        if hs.ndim != 3 or hs.shape[1] != hs.shape[2] or hs.shape[0] < 1 or hs.shape[1] < 1:
            raise InputError(f"hs must have shape (K, N, N) with K, N >= 1, got {hs.shape}")
        hs = _index_array(hs, "hs", hs.shape)
        md = _index_array(self.md, "md", hs.shape)
        # every address in range: max over (h, s) plus max over (h, m), per template and head
        top = hs.max(axis=2).astype(np.int64) + md.max(axis=2).astype(np.int64)
        if top.max() >= len(table):
            raise InputError(f"sibling addresses reach {int(top.max())}, outside the table of {len(table)}")
        scale = float(self.scale)
        if not np.isfinite(scale) or (scale <= 0 and not np.isfinite(table).all()):
            raise InputError(f"sibling scale must be finite (and > 0 with -inf entries), got {scale}")
        object.__setattr__(self, "scale", scale)
        if table.flags.writeable:
            table = table.copy()
            table.setflags(write=False)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "hs", hs)
        object.__setattr__(self, "md", md)

    @property
    def n(self) -> int:
        """Number of tokens (positions 0..n)."""
        return self.hs.shape[1] - 1

    @property
    def nbytes(self) -> int:
        """Bytes held by the three arrays."""
        return int(self.table.nbytes + self.hs.nbytes + self.md.nbytes)

    @classmethod
    def from_dense(cls, S: object) -> SiblingScores:
        """The factored form of a dense (N, N, N) tensor (K = 1; a float64 C-contiguous ``S`` is not copied).

        Parameters
        ----------
        S : array_like
            (n+1, n+1, n+1) sibling scores ``S[h, s, m]``.

        Returns
        -------
        SiblingScores
            With ``table = S.ravel()``, ``hs[0, h, s] = (h·N + s)·N`` and ``md[0, h, m] = m``.
        """
        S = float_array(S, "S")
        if S.ndim != 3 or not S.shape[0] == S.shape[1] == S.shape[2] or S.shape[0] < 1:
            raise InputError(f"S must have shape (n+1, n+1, n+1), got {S.shape}")
        N = S.shape[0]
        dtype = np.int32 if N**3 < 2**31 else np.int64
        pos = np.arange(N, dtype=dtype)
        hs = ((pos[:, None] * N + pos[None, :]) * N)[None]
        md = np.broadcast_to(pos[None, :], (N, N))[None]
        table = S.ravel().view()  # a read-only view: the caller's tensor is not copied
        table.setflags(write=False)
        return cls(table, hs, md)

    def __getitem__(self, key: tuple) -> np.ndarray | float:
        """``S[h, s, m]`` for integer (or broadcastable integer-array) positions."""
        h, s, m = key
        total = self.table[self.hs[0][h, s] + self.md[0][h, m]]
        for k in range(1, self.hs.shape[0]):
            total = total + self.table[self.hs[k][h, s] + self.md[k][h, m]]
        return self.scale * total

    def dense(self) -> np.ndarray:
        """The (N, N, N) tensor (memory 8·N³ bytes: for tests and small n)."""
        N = self.n + 1
        pos = np.arange(N)
        return np.asarray(self[pos[:, None, None], pos[None, :, None], pos[None, None, :]], dtype=np.float64)

    def abs_bound(self) -> float:
        """An upper bound on ``|S[h, s, m]|`` over the finite entries: ``|scale|`` times the sum over the
        templates of the largest finite ``|table|`` entry in the range each template addresses."""
        total = 0.0
        for k in range(self.hs.shape[0]):
            lo = int(self.hs[k].min()) + int(self.md[k].min())
            hi = int(self.hs[k].max()) + int(self.md[k].max())
            part = self.table[lo : hi + 1]
            part = np.abs(part[np.isfinite(part)])
            total += float(part.max()) if part.size else 0.0
        return abs(self.scale) * total

    def scaled(self, weight: float) -> SiblingScores:
        """``weight · S`` (shares the arrays; the weight multiplies each sum, as it did the dense tensor)."""
        return SiblingScores(self.table, self.hs, self.md, float(weight) * self.scale)

    def finite(self) -> SiblingScores:
        """The 0/1 indicator form used by the counting semiring: every finite table entry 1.0, -inf 0.0.

        The counting kernel multiplies the K entries, so ``S[h, s, m]`` counts 1 exactly when the sum is
        finite.
        """
        return SiblingScores(np.isfinite(self.table).astype(np.float64), self.hs, self.md)


def as_sibling_scores(S: object, n: int) -> SiblingScores:
    """Validate sibling scores for ``n`` tokens: a :class:`SiblingScores` or a dense (n+1)³ array.

    Raises
    ------
    InputError
        Wrong shape (or a factored form for another number of tokens), NaN or +inf.
    """
    if not isinstance(S, SiblingScores):
        S = float_array(S, "S", (n + 1, n + 1, n + 1))
        return SiblingScores.from_dense(S)
    if S.n != n:
        raise InputError(f"S is for {S.n} tokens, expected {n}")
    return S
