"""Factored sibling scores (``SiblingScores``): the chart computes S[h, s, m] on the fly, exactly as dense."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.dependency.features import dependency_features
from dualdecomp.solvers.dependency.siblings import SiblingScores
from dualdecomp.solvers.dependency.solver import Dependency, count_derivations, hyperedges, parse, solve

SETTINGS = dict(max_examples=200, deadline=None, derandomize=True)


def _values(rng: np.random.Generator, size: int, p_inf: float, integer: bool) -> np.ndarray:
    v = rng.integers(-3, 4, size).astype(np.float64) if integer else rng.normal(size=size)
    v[rng.random(size) < p_inf] = -np.inf
    return v


def _random_factored(rng: np.random.Generator, n: int, K: int, p_inf: float, integer: bool) -> SiblingScores:
    """K templates with random small tables and random (head, sibling) / (head, modifier) addresses."""
    N = n + 1
    sizes = rng.integers(1, 6, size=(K, 2))  # per template: a (hs part) x b (md part) grid
    tables, hs, md, offset = [], [], [], 0
    for a, b in sizes:
        tables.append(_values(rng, int(a * b), p_inf, integer))
        hs.append(offset + rng.integers(0, a, (N, N)) * b)
        md.append(rng.integers(0, b, (N, N)))
        offset += int(a * b)
    dtype = rng.choice([np.int32, np.int64])
    return SiblingScores(np.concatenate(tables), np.array(hs, dtype=dtype), np.array(md, dtype=dtype))


def _reference_dense(S: SiblingScores) -> np.ndarray:
    """The dense tensor from the definition, by explicit loops (independent of ``dense()``)."""
    N = S.n + 1
    out = np.empty((N, N, N))
    for h in range(N):
        for s in range(N):
            for m in range(N):
                total = 0.0
                for k in range(S.hs.shape[0]):
                    total += S.table[S.hs[k, h, s] + S.md[k, h, m]]
                out[h, s, m] = total
    return out


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 8), K=st.integers(1, 3),
       p_inf=st.sampled_from([0.0, 0.1, 0.3]), integer=st.booleans(), bigram=st.booleans())
def test_factored_equals_dense(seed, n, K, p_inf, integer, bigram) -> None:
    """Same optimum, score (exactly), tree, derivation count, best_given and ILP weights as the dense S."""
    rng = np.random.default_rng(seed)
    S = _random_factored(rng, n, K, p_inf, integer)
    D = _reference_dense(S)
    assert np.array_equal(S.dense(), D)
    A = _values(rng, (n + 1) ** 2, p_inf / 2, integer).reshape(n + 1, n + 1)
    B = _values(rng, (n + 2) ** 2, 0.0, integer).reshape(n + 2, n + 2) if bigram else None
    u = _values(rng, n, p_inf / 2, integer)
    lam = float(rng.normal())
    got = want = None
    try:
        want = solve(A, B, D, u, lam)
    except Exception as exc:  # noqa: BLE001 - the same exception type must come from both forms
        with pytest.raises(type(exc)):
            solve(A, B, S, u, lam)
    else:
        got = solve(A, B, S, u, lam)
        assert got.score == want.score
        assert np.array_equal(got.heads, want.heads) and np.array_equal(got.keep, want.keep)
    assert count_derivations(A, B, S, u, lam) == count_derivations(A, B, D, u, lam)
    keep = rng.random(n) < 0.5
    assert Dependency(A, B, S).best_given(keep) == Dependency(A, B, D).best_given(keep)
    if n <= 4:
        P = np.where(np.triu(np.ones((n + 1, n + 1))) > 0, 0.0, -np.inf)
        assert hyperedges(A, S, P, prune=False) == hyperedges(A, D, P, prune=False)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12))
def test_model_potentials_equal_the_dense_tensor(seed, n) -> None:
    """The dependency model's factored S holds exactly the numbers of the dense construction it replaces."""
    rng = np.random.default_rng(seed)
    pos = ["NOUN", "VERB", "ADP", "PUNCT", "DET", "CCONJ"]
    s = Sentence(tokens=tuple(f"w{rng.integers(0, 4)}" for _ in range(n)),
                 pos=tuple(pos[i] for i in rng.integers(0, len(pos), n)),
                 tags=tuple(f"T{i}" for i in rng.integers(0, 4, n)),
                 heads=tuple([0] + [int(rng.integers(0, k)) for k in range(2, n + 1)]),
                 labels=tuple(f"l{i}" for i in rng.integers(0, 3, n)))
    w = rng.normal(size=1 << 12)
    w[0] = 0.0
    f = dependency_features(s, hash_bits=12, second_order=True)
    A, S = f.potentials(w)
    assert isinstance(S, SiblingScores) and S.n == n
    # the dense tensor as the model built it before: per template weights[grid] at hs[h, s] + md[h, m]
    D = sum(w[t.grid].ravel()[t.hs[:, :, None] + t.md[:, None, :]] for t in f.siblings)
    assert np.array_equal(S.dense(), D)
    u = rng.normal(size=n)
    assert solve(A, S=S, u=u).score == solve(A, S=D, u=u).score
    assert parse(A, S).score == parse(A, D).score


def test_from_dense_does_not_copy_and_is_read_only() -> None:
    D = np.random.default_rng(0).normal(size=(4, 4, 4))
    S = SiblingScores.from_dense(D)
    assert np.shares_memory(S.table, D) and not S.table.flags.writeable
    assert S[1, 2, 3] == D[1, 2, 3] and np.array_equal(S.dense(), D)
    assert S.nbytes < D.nbytes + 2 * 16 * 8 + 1


@pytest.mark.parametrize("table, hs, md, message", [
    (np.zeros(4), np.zeros((1, 2, 2), np.int64), np.full((1, 2, 2), 4, np.int64), "outside the table"),
    (np.array([0.0, np.nan]), np.zeros((1, 2, 2), np.int64), np.zeros((1, 2, 2), np.int64), "NaN"),
    (np.array([0.0, np.inf]), np.zeros((1, 2, 2), np.int64), np.zeros((1, 2, 2), np.int64), r"\+inf"),
    (np.zeros(4), np.zeros((1, 2, 2), np.float64), np.zeros((1, 2, 2), np.int64), "int32 or int64"),
    (np.zeros(4), np.zeros((1, 2, 2), np.int64), np.zeros((1, 3, 3), np.int64), "shape"),
    (np.zeros(4), -np.ones((1, 2, 2), np.int64), np.zeros((1, 2, 2), np.int64), "negative"),
])
def test_invalid_factored_scores(table, hs, md, message) -> None:
    with pytest.raises(InputError, match=message):
        SiblingScores(table, hs, md)


def test_wrong_number_of_tokens() -> None:
    S = SiblingScores.from_dense(np.zeros((3, 3, 3)))
    with pytest.raises(InputError, match="for 2 tokens, expected 3"):
        solve(np.zeros((4, 4)), S=S)


def test_memory_is_quadratic_for_the_model() -> None:
    """At 200 tokens the model's factored S is a few MB where the dense tensor would be 64 MB."""
    n = 200
    s = Sentence(tokens=tuple(f"w{k % 7}" for k in range(n)), pos=tuple(("NOUN", "VERB", "DET")[k % 3]
                 for k in range(n)), tags=tuple(f"T{k % 5}" for k in range(n)),
                 heads=tuple([0] + [k for k in range(1, n)]), labels=tuple(f"l{k % 4}" for k in range(n)))
    f = dependency_features(s, hash_bits=12, second_order=True)
    _, S = f.potentials(np.random.default_rng(0).normal(size=1 << 12))
    dense_bytes = 8 * (n + 1) ** 3
    assert S.nbytes <= 2 * 3 * 4 * (n + 1) ** 2 + 8 * 10_000
    assert S.nbytes * 20 < dense_bytes


def test_scaled_is_the_weighted_dense_tensor() -> None:
    """A component weight multiplies each sum, exactly as it multiplied the dense tensor."""
    rng = np.random.default_rng(5)
    S = _random_factored(rng, 5, 3, 0.2, integer=False)
    D = _reference_dense(S)
    A = rng.normal(size=(6, 6))
    assert np.array_equal(S.scaled(0.1).dense(), 0.1 * D)
    assert solve(0.1 * A, S=S.scaled(0.1)).score == solve(0.1 * A, S=0.1 * D).score
    with pytest.raises(InputError, match="scale"):
        S.scaled(-1.0)
    with pytest.raises(InputError, match="scale"):
        S.scaled(float("nan"))


def test_abs_bound_covers_every_finite_entry() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        S = _random_factored(rng, 4, 3, 0.2, integer=False).scaled(float(rng.uniform(0.1, 3)))
        D = S.dense()
        assert np.abs(D[np.isfinite(D)]).max(initial=0.0) <= S.abs_bound()
