"""Stable feature hashing: strings → 64-bit atoms, (template, atoms) → weight indices.

Python's ``hash`` is salted per process, so atoms come from BLAKE2b; combining atoms into a feature index
is vectorised 64-bit mixing in numpy (wrap-around arithmetic), identical on every machine.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0xFF51AFD7ED558CCD)


@lru_cache(maxsize=1 << 18)
def atom(text: str) -> int:
    """A stable 64-bit integer for a string."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def atoms(texts) -> np.ndarray:
    """Atoms of several strings as a uint64 array."""
    return np.fromiter((atom(t) for t in texts), dtype=np.uint64, count=len(texts))


def feature_index(template: int, a: np.ndarray, b: np.ndarray | int = 0, hash_bits: int = 22) -> np.ndarray:
    """Hash (template, a, b) into ``[1, 2**hash_bits)`` (index 0 is reserved for padding).

    Parameters
    ----------
    template : int
        Template number (distinguishes feature families).
    a, b : numpy.ndarray of uint64 (or scalars)
        The atoms of the feature's parts; broadcast together.
    hash_bits : int
        log2 of the weight-vector size.

    Returns
    -------
    numpy.ndarray of int64
    """
    with np.errstate(over="ignore"):
        h = np.asarray(a, dtype=np.uint64) * _P1
        h ^= np.asarray(b, dtype=np.uint64) * _P2 + np.uint64(template + 1) * _P3
        h ^= h >> np.uint64(29)
        h *= _P4
        h ^= h >> np.uint64(32)
    size = np.uint64((1 << hash_bits) - 1)
    idx = (h % size).astype(np.int64) + 1
    return idx
