"""Stable feature hashing: strings → 64-bit atoms, (template, atoms) → weight indices.

Python's ``hash`` is salted per process, so atoms come from BLAKE2b; combining atoms into a feature index
is 64-bit mixing (wrap-around arithmetic) in a numba ufunc, identical on every machine.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np
from numba import vectorize

_P1 = np.uint64(0x9E3779B97F4A7C15)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0xFF51AFD7ED558CCD)
_S29 = np.uint64(29)
_S32 = np.uint64(32)


@lru_cache(maxsize=1 << 18)
def atom(text: str) -> int:
    """A stable 64-bit integer for a string."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def atoms(texts) -> np.ndarray:
    """Atoms of several strings as a uint64 array."""
    return np.fromiter((atom(t) for t in texts), dtype=np.uint64, count=len(texts))


@vectorize(["int64(uint64, uint64, uint64, uint64)"], cache=True)
def _hash_index(a, b, salt, size):  # pragma: no cover - compiled
    """One fused pass of :func:`feature_index`'s mixing (uint64 wrap-around arithmetic)."""
    h = a * _P1
    h ^= b * _P2 + salt
    h ^= h >> _S29
    h *= _P4
    h ^= h >> _S32
    return np.int64(h % size) + 1


_HASH_UFUNC = _hash_index.ufunc  # the compiled numpy ufunc itself: no dispatcher on every call
_MASK64 = (1 << 64) - 1


def feature_index(template: int, a: np.ndarray, b: np.ndarray | int = 0, hash_bits: int = 22) -> np.ndarray:
    """Hash (template, a, b) into ``[1, 2**hash_bits)`` (index 0 is reserved for padding).

    ``h = (a·P1) ^ (b·P2 + (template+1)·P3)``, then ``h ^= h >> 29; h *= P4; h ^= h >> 32`` and the index
    ``h mod (2**hash_bits - 1) + 1``, all in 64-bit wrap-around arithmetic, computed by one numba ufunc
    (a single pass over the broadcast arrays, no temporaries).

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
    salt = np.uint64(((template + 1) * int(_P3)) & _MASK64)
    size = np.uint64((1 << hash_bits) - 1)
    return _HASH_UFUNC(np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64), salt, size)


def named_features(triples, template_ids, hash_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash named features: (template, value, weight) triples → (indices int64, values float64).

    Each value's atom is hashed with its template's number (``template_ids[template]``), as the rule
    features of the tree-transducer models are.

    Parameters
    ----------
    triples : sequence of (str, str, float)
    template_ids : mapping of str to int
    hash_bits : int
        log2 of the weight-vector size.

    Returns
    -------
    (numpy.ndarray of int64, numpy.ndarray of float64)
    """
    tmpl = np.array([template_ids[t] for t, _, _ in triples], dtype=np.uint64)
    a = np.array([atom(v) for _, v, _ in triples], dtype=np.uint64)
    idx = feature_index(0, a, tmpl * np.uint64(0x9E3779B1) + np.uint64(7), hash_bits)
    return idx, np.array([w for _, _, w in triples], dtype=np.float64)
