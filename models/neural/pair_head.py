"""The neural scorer's optional pair head: scores for adjacent kept tokens, decoded as a bigram model.

With a pair head the scorer is a linear-chain model over the kept tokens (a CRF over compressions):
a compression keeping positions ``s_1 < ... < s_L`` of an n-token sentence scores

    start(s_1) + Σ_t pair(s_{t-1}, s_t) + end(s_L) + Σ_t u(s_t)        (``empty`` when L = 0)

with ``u`` the unary keep log-odds of the keep head and, from the encoder's states ``h`` (first pieces),

* ``pair(i, j) = (L h_i) · (R h_j) / sqrt(rank) + gap[bucket(j - i - 1)]``;
* ``start(j) = h_j · w_start + b_start + gap_start[bucket(j)]`` (j tokens dropped before the first kept);
* ``end(i) = h_i · w_end + b_end + gap_end[bucket(n - 1 - i)]`` (tokens dropped after the last kept).

:func:`bigram_potentials` writes this as the (n+2, n+2) matrix of
:class:`~dualdecomp.solvers.bigram.Bigram` (row 0 = ``<s>``, column n+1 = ``</s>``, the unary scores
folded into the column of the token entered), so the exact bigram DP decodes it, alone, at a fixed
length, or with the other components by dual decomposition. Training (:mod:`.training`) maximises the
conditional log-likelihood of the gold compression under this model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.solvers.bigram import token_potentials

__all__ = ["GAP_BUCKETS", "PAIR_ARRAYS", "PairHead", "bigram_potentials", "gap_bucket"]

GAP_BUCKETS = 8
"""Number of gap buckets: 0, 1, 2, 3, 4, 5-7, 8-15, 16 or more tokens."""

PAIR_ARRAYS = ("pair.left", "pair.right", "pair.start_weight", "pair.start_bias", "pair.end_weight",
               "pair.end_bias", "pair.gap", "pair.gap_start", "pair.gap_end", "pair.empty")
"""The names of the pair head's arrays in ``weights.npz``."""


def gap_bucket(gap: np.ndarray | int) -> np.ndarray:
    """Bucket of a number of skipped tokens (see :data:`GAP_BUCKETS`)."""
    g = np.asarray(gap, dtype=np.int64)
    return np.where(g <= 4, g, np.where(g <= 7, 5, np.where(g <= 15, 6, 7)))


@dataclass(frozen=True)
class PairHead:
    """The pair head's parameters (float64 for decoding).

    Attributes
    ----------
    left, right : numpy.ndarray
        (rank, hidden) projections of the earlier and the later token of a pair.
    start_weight, end_weight : numpy.ndarray
        (hidden,).
    start_bias, end_bias, empty : float
    gap, gap_start, gap_end : numpy.ndarray
        (GAP_BUCKETS,) scores of the number of skipped tokens.
    """

    left: np.ndarray
    right: np.ndarray
    start_weight: np.ndarray
    start_bias: float
    end_weight: np.ndarray
    end_bias: float
    gap: np.ndarray
    gap_start: np.ndarray
    gap_end: np.ndarray
    empty: float

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], hidden: int, where: str) -> PairHead | None:
        """The pair head stored in ``arrays`` (None when it has none).

        Raises
        ------
        ModelError
            Some but not all arrays present, or wrong shapes.
        """
        present = [name for name in PAIR_ARRAYS if name in arrays]
        if not present:
            return None
        if len(present) != len(PAIR_ARRAYS):
            missing = sorted(set(PAIR_ARRAYS) - set(present))
            raise ModelError(f"{where}: incomplete pair head (missing {', '.join(missing)})")
        a = {name: np.asarray(arrays[name], dtype=np.float64) for name in PAIR_ARRAYS}
        rank = a["pair.left"].shape[0] if a["pair.left"].ndim == 2 else -1
        shapes = {"pair.left": (rank, hidden), "pair.right": (rank, hidden), "pair.start_weight": (hidden,),
                  "pair.end_weight": (hidden,), "pair.gap": (GAP_BUCKETS,), "pair.gap_start": (GAP_BUCKETS,),
                  "pair.gap_end": (GAP_BUCKETS,)}
        for name, shape in shapes.items():
            if rank < 1 or a[name].shape != shape:
                raise ModelError(f"{where}: {name} has shape {a[name].shape}, expected {shape}")
        for name in ("pair.start_bias", "pair.end_bias", "pair.empty"):
            if a[name].size != 1:
                raise ModelError(f"{where}: {name} must be a scalar")
        if not all(np.isfinite(v).all() for v in a.values()):
            raise ModelError(f"{where}: the pair head has non-finite values")
        return cls(left=a["pair.left"], right=a["pair.right"], start_weight=a["pair.start_weight"],
                   start_bias=float(a["pair.start_bias"].reshape(())), end_weight=a["pair.end_weight"],
                   end_bias=float(a["pair.end_bias"].reshape(())), gap=a["pair.gap"],
                   gap_start=a["pair.gap_start"], gap_end=a["pair.gap_end"],
                   empty=float(a["pair.empty"].reshape(())))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """float32 arrays under the names of :data:`PAIR_ARRAYS`."""
        values = (self.left, self.right, self.start_weight, self.start_bias, self.end_weight, self.end_bias,
                  self.gap, self.gap_start, self.gap_end, self.empty)
        return {name: np.asarray(v, dtype=np.float32) for name, v in zip(PAIR_ARRAYS, values, strict=True)}

    @property
    def rank(self) -> int:
        """Rank of the bilinear pair score."""
        return int(self.left.shape[0])


def bigram_potentials(head: PairHead, hidden: np.ndarray, unary: np.ndarray) -> np.ndarray:
    """The (n+2, n+2) bigram potentials of a sentence (see the module docstring).

    Parameters
    ----------
    head : PairHead
    hidden : numpy.ndarray
        (n, hidden) encoder states of the tokens' first pieces.
    unary : numpy.ndarray
        (n,) keep log-odds of the keep head.

    Returns
    -------
    numpy.ndarray
        float64 (n+2, n+2); entries with i >= j are 0 (never read).
    """
    h = np.asarray(hidden, dtype=np.float64)
    n = h.shape[0]
    B = np.zeros((n + 2, n + 2))
    pos = np.arange(n)
    # einsum, not BLAS: these products are tiny, and BLAS threads would compete with the encoder's
    left, right = np.einsum("kh,nh->nk", head.left, h), np.einsum("kh,nh->nk", head.right, h)
    pair = np.einsum("ik,jk->ij", left, right) / np.sqrt(head.rank)
    pair = pair + head.gap[gap_bucket(pos[None, :] - pos[:, None] - 1).clip(0)]
    B[1:n + 1, 1:n + 1] = np.triu(pair, 1)
    start, end = np.einsum("nh,h->n", h, head.start_weight), np.einsum("nh,h->n", h, head.end_weight)
    B[0, 1:n + 1] = start + head.start_bias + head.gap_start[gap_bucket(pos)]
    B[1:n + 1, n + 1] = end + head.end_bias + head.gap_end[gap_bucket(n - 1 - pos)]
    B[0, n + 1] = head.empty
    B += token_potentials(unary)
    return B
