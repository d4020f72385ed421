"""Feature hashing: the numba ufunc against the formula in Python integers (mod 2**64), and stability."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dualdecomp.core.hashing import atom, atoms, feature_index

MASK = (1 << 64) - 1
P1, P2, P3, P4 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xFF51AFD7ED558CCD
U64 = st.integers(0, MASK)


def reference(template: int, a: int, b: int, hash_bits: int) -> int:
    h = (a * P1) & MASK
    h ^= (b * P2 + (template + 1) * P3) & MASK
    h ^= h >> 29
    h = (h * P4) & MASK
    h ^= h >> 32
    return h % ((1 << hash_bits) - 1) + 1


@given(st.lists(st.tuples(U64, U64), min_size=1, max_size=20), st.integers(0, 40),
       st.sampled_from([8, 22, 63]))
def test_feature_index_equals_the_formula(pairs, template, hash_bits) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.uint64)
    b = np.array([p[1] for p in pairs], dtype=np.uint64)
    out = feature_index(template, a, b, hash_bits)
    assert out.dtype == np.int64
    assert out.tolist() == [reference(template, x, y, hash_bits) for x, y in pairs]
    assert all(1 <= v < 1 << hash_bits for v in out.tolist())


def test_broadcasting_and_scalars() -> None:
    a = np.arange(1, 13, dtype=np.uint64).reshape(3, 4)
    b = np.array([5, 6, 7, 8], dtype=np.uint64)
    out = feature_index(2, a, b)
    assert out.shape == (3, 4)
    assert out[2, 1] == reference(2, 10, 6, 22)
    assert feature_index(2, a).tolist() == [[reference(2, int(x), 0, 22) for x in row] for row in a]
    assert int(feature_index(4, np.uint64(9), 3)) == reference(4, 9, 3, 22)


def test_atoms_are_stable_across_runs() -> None:
    # BLAKE2b, not Python's salted hash: the same atoms in every process (a saved model's indices)
    assert atom("dog") == int.from_bytes(hashlib.blake2b(b"dog", digest_size=8).digest(), "little")
    assert atoms(["dog", "cat"]).tolist() == [atom("dog"), atom("cat")]
