"""The neural scorer's pair head: a chain model over kept tokens, decoded as an exact bigram component
(and the ``to_ilp`` of both neural components, unary and bigram, against enumeration).

The potentials are checked against the formula of :mod:`dualdecomp.models.neural.pair_head` written
pair by pair; the component's ``solve`` (free and fixed length), ``best_given`` and ``to_ilp`` against
brute-force enumeration of every compression.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.models.neural.pair_head import PAIR_ARRAYS, bigram_potentials, gap_bucket
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.registry import get_kind
from dualdecomp.solvers.bigram import Bigram, token_potentials
from tests.neural_tiny import WORDS, assert_solves_exactly, tiny_pair_head, write_tiny_scorer
from tests.sequence_cases import ilp_argmax


def _bucket(g: int) -> int:
    return g if g <= 4 else 5 if g <= 7 else 6 if g <= 15 else 7


def chain_score(head, hidden: np.ndarray, unary: np.ndarray, kept: list[int]) -> float:
    """The chain model's score of one compression, term by term (the module docstring's formula)."""
    n = len(unary)
    if not kept:
        return head.empty
    total = sum(unary[k] for k in kept)
    j = kept[0]
    total += hidden[j] @ head.start_weight + head.start_bias + head.gap_start[_bucket(j)]
    i = kept[-1]
    total += hidden[i] @ head.end_weight + head.end_bias + head.gap_end[_bucket(n - 1 - i)]
    for a, b in itertools.pairwise(kept):
        total += (head.left @ hidden[a]) @ (head.right @ hidden[b]) / math.sqrt(head.rank)
        total += head.gap[_bucket(b - a - 1)]
    return float(total)


def test_gap_buckets() -> None:
    assert [int(gap_bucket(g)) for g in range(20)] == [_bucket(g) for g in range(20)]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_potentials_score_every_compression_by_the_formula(n, rank, seed) -> None:
    rng = np.random.default_rng(seed)
    head = tiny_pair_head(5, rank, seed)
    hidden, unary = rng.normal(size=(n, 5)), rng.normal(size=n)
    comp = Bigram(bigram_potentials(head, hidden, unary))
    for mask in range(2 ** n):
        keep = np.array([mask >> k & 1 for k in range(n)], dtype=bool)
        expected = chain_score(head, hidden, unary, list(np.flatnonzero(keep)))
        assert abs(comp.best_given(keep) - expected) <= 1e-9 * max(1.0, abs(expected))


@pytest.fixture(scope="module")
def pair_scorer(tmp_path_factory):
    d = tmp_path_factory.mktemp("pair")
    write_tiny_scorer(d, seed=5, pair_rank=3)
    return load_neural_model(d)


def _brute(comp, u: np.ndarray, n: int) -> dict[int, float]:
    """Best score (component + u·keep) per number of kept tokens, by enumeration."""
    best: dict[int, float] = {}
    for mask in range(2 ** n):
        keep = np.array([mask >> k & 1 for k in range(n)], dtype=bool)
        value = comp.best_given(keep) + float(u[keep].sum())
        best[int(keep.sum())] = max(best.get(int(keep.sum()), -np.inf), value)
    return best


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), st.floats(0.1, 3.0),
       st.integers(0, 2**31 - 1))
def test_pair_component_equals_brute_force(pair_scorer, words, weight, seed) -> None:
    comp = get_kind("neural").weighted(pair_scorer.bigram_potentials(words), weight)
    assert isinstance(comp, Bigram)
    u = np.random.default_rng(seed).normal(size=len(words))
    by_length = _brute(comp, u, len(words))
    for length in (None, len(words) // 2):
        best = max(by_length.values()) if length is None else by_length[length]
        assert_solves_exactly(comp, u, length, best)


@pytest.fixture(scope="module")
def unary_scorer(tmp_path_factory):
    d = tmp_path_factory.mktemp("unary")
    write_tiny_scorer(d, seed=5)
    return load_neural_model(d)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("pair", [False, True])
def test_neural_component_to_ilp_equals_brute_force(unary_scorer, pair_scorer, pair, seed) -> None:
    rng = np.random.default_rng(seed)
    words = [WORDS[i] for i in rng.integers(0, len(WORDS), 6)]
    potentials = pair_scorer.bigram_potentials(words) if pair else unary_scorer.keep_logits(words)
    comp = get_kind("neural").weighted(potentials, 0.7)
    u = rng.normal(size=len(words))
    by_length = _brute(comp, u, len(words))
    for length in (None, 3):
        _, value = ilp_argmax([comp], len(words), u, length)
        best = max(by_length.values()) if length is None else by_length[length]
        assert abs(value - best) <= 1e-6


def test_round_trip_keeps_the_pair_head(tmp_path) -> None:
    write_tiny_scorer(tmp_path / "m", seed=2, pair_rank=2)
    scorer = load_neural_model(tmp_path / "m", backend="numpy")
    words = ["the", "council", "plans", "an", "election", "."]
    hidden = scorer.hidden_states(words)
    unary = scorer.keep_logits(words)
    expected = bigram_potentials(tiny_pair_head(8, 2, 4), hidden, unary)
    np.testing.assert_allclose(scorer.bigram_potentials(words), expected, rtol=1e-12, atol=1e-12)
    assert scorer.pair is not None and scorer.pair.rank == 2
    assert get_kind("neural").weighted(expected, 1.0).B.shape == (8, 8)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.integers(0, 2**31 - 1))
def test_token_potentials_give_each_kept_token_its_score(n, seed) -> None:
    u = np.random.default_rng(seed).normal(size=n)
    comp = Bigram(token_potentials(u))
    for mask in range(2 ** n):
        keep = np.array([mask >> k & 1 for k in range(n)], dtype=bool)
        assert abs(comp.best_given(keep) - float(u[keep].sum())) <= 1e-12


def test_unary_scale_weighs_the_keep_head_in_one_encoder_pass(tmp_path) -> None:
    """A chain model loaded with unary_scale s has the bigram potentials of its pair head and s × its keep
    log-odds, bit for bit, from the same hidden states; s = 1 is the model as trained."""
    write_tiny_scorer(tmp_path / "m", seed=2, pair_rank=2)
    words = ["the", "council", "plans", "an", "election", "."]
    plain = load_neural_model(tmp_path / "m", backend="numpy")
    scaled = load_neural_model(tmp_path / "m", backend="numpy", unary_scale=2.5)
    hidden, unary = plain.hidden_states(words), plain.keep_logits(words)
    assert np.array_equal(plain.bigram_potentials(words), bigram_potentials(plain.pair, hidden, unary))
    expected = bigram_potentials(plain.pair, hidden, 2.5 * unary)
    assert np.array_equal(scaled.bigram_potentials(words), expected)
    pair_only = bigram_potentials(plain.pair, hidden, np.zeros(len(words)))
    np.testing.assert_allclose(expected, pair_only + 2.5 * token_potentials(unary), rtol=1e-12, atol=1e-12)
    assert not np.allclose(expected, plain.bigram_potentials(words))


@pytest.mark.parametrize("scale", [-1.0, float("nan"), float("inf"), True, "2"])
def test_a_bad_unary_scale_is_a_model_error(tmp_path, scale) -> None:
    write_tiny_scorer(tmp_path / "m", seed=2, pair_rank=2)
    with pytest.raises(ModelError, match="unary_scale must be a finite number"):
        load_neural_model(tmp_path / "m", backend="numpy", unary_scale=scale)


def test_unary_scale_without_a_pair_head_is_a_model_error(tmp_path) -> None:
    write_tiny_scorer(tmp_path / "m", seed=2)
    with pytest.raises(ModelError, match="needs a scorer with a pair head"):
        load_neural_model(tmp_path / "m", backend="numpy", unary_scale=2.0)
    assert load_neural_model(tmp_path / "m", backend="numpy", unary_scale=1.0).pair is None


def test_incomplete_pair_head_is_a_model_error(tmp_path) -> None:
    d = tmp_path / "m"
    write_tiny_scorer(d, seed=2, pair_rank=2)
    arrays = dict(np.load(d / "weights.npz"))
    del arrays[PAIR_ARRAYS[3]]
    np.savez(d / "weights.npz", **arrays)
    write_manifest(d)  # checksums match: the pair head's own check must catch it
    with pytest.raises(ModelError, match="incomplete pair head"):
        load_neural_model(d)


def test_pair_head_with_wrong_shapes_is_a_model_error(tmp_path) -> None:
    d = tmp_path / "m"
    write_tiny_scorer(d, seed=2, pair_rank=2)
    arrays = dict(np.load(d / "weights.npz"))
    arrays["pair.gap"] = np.zeros(3, np.float32)
    np.savez(d / "weights.npz", **arrays)
    write_manifest(d)
    with pytest.raises(ModelError, match="pair.gap has shape"):
        load_neural_model(d)
