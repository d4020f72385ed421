"""Training batches of the neural scorer (models/neural/batching.py): every sentence once, similar lengths
together, padding; and the seeded samples of the training files (models/neural/examples.py)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.models.neural.batching import length_batches, padded_batch, split_by_pieces
from dualdecomp.models.neural.examples import Example, sample_examples, sample_indices


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=400), st.integers(1, 9), st.integers(0, 3))
def test_every_sentence_once_sorted_within_batches(lengths, batch_size, seed) -> None:
    batches = length_batches(lengths, batch_size, np.random.default_rng(seed))
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert all(1 <= len(b) <= batch_size for b in batches)
    assert all(np.all(np.diff([lengths[i] for i in b]) >= 0) for b in batches)
    again = length_batches(lengths, batch_size, np.random.default_rng(seed))
    assert all(np.array_equal(a, b) for a, b in zip(batches, again, strict=True))


def test_batches_come_from_pools_of_fifty_sorted_by_length() -> None:
    lengths = list(range(200, 0, -1))  # 200 sentences, batches of 2: two pools of 100 sentences
    rng = np.random.default_rng(7)
    order = np.random.default_rng(7).permutation(200)
    batches = length_batches(lengths, 2, rng)
    pools = [sorted(order[:100], key=lambda i: lengths[i]), sorted(order[100:], key=lambda i: lengths[i])]
    expected = {tuple(p[b:b + 2]) for p in pools for b in range(0, 100, 2)}
    assert {tuple(b.tolist()) for b in batches} == expected


def test_padded_batch_pads_with_the_given_piece() -> None:
    ids = [np.array([5, 6, 7]), np.array([5, 8, 9, 10, 7])]
    first = [np.array([1]), np.array([1, 3])]
    target = [np.array([1.0], dtype=np.float32), np.array([0.0, 0.5], dtype=np.float32)]
    out_ids, mask, out_first, out_target, wmask = padded_batch(ids, first, target, np.array([1, 0]), pad=1)
    assert out_ids.tolist() == [[5, 8, 9, 10, 7], [5, 6, 7, 1, 1]]
    assert mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]
    assert out_first.tolist() == [[1, 3], [1, 0]] and wmask.tolist() == [[1, 1], [1, 0]]
    assert out_target.tolist() == [[0.0, 0.5], [1.0, 0.0]]
    assert out_ids.dtype == np.int64 and out_target.dtype == np.float32
    assert padded_batch(ids, first, target, np.array([0, 1]))[0][0].tolist() == [5, 6, 7, 0, 0]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=40), st.integers(-1, 200))
def test_micro_batches_cover_the_batch_within_the_budget(lengths, budget) -> None:
    batch = np.arange(len(lengths))[::-1].copy()
    parts = split_by_pieces(batch, lengths, budget)
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(lengths)))
    if budget <= 0:
        assert len(parts) == 1 and parts[0] is batch
        return
    for part in parts:
        assert len(part) >= 1
        assert len(part) == 1 or len(part) * max(lengths[i] for i in part) <= budget
    # greedy: a micro-batch closes only when the next sentence would not fit it
    for left, right in zip(parts, parts[1:], strict=False):
        assert (len(left) + 1) * max(lengths[i] for i in [*left, right[0]]) > budget


def test_micro_batches_take_the_shortest_first() -> None:
    parts = split_by_pieces(np.array([3, 0, 2, 1]), [10, 30, 20, 100], 60)
    assert [p.tolist() for p in parts] == [[0, 2], [1], [3]]


def test_samples_are_a_seeded_sorted_subset() -> None:
    examples = [Example(("w",), np.array([float(i % 2)]), f"s{i}") for i in range(50)]
    chosen = sample_indices(50, 20, 3)
    assert len(set(chosen.tolist())) == 20 and np.all(np.diff(chosen) > 0) and chosen.max() < 50
    assert np.array_equal(chosen, sample_indices(50, 20, 3))
    assert not np.array_equal(chosen, sample_indices(50, 20, 4))
    assert sample_examples(examples, 20, 3) == [examples[i] for i in chosen]
    assert np.array_equal(sample_indices(50, None, 3), np.arange(50))
    assert np.array_equal(sample_indices(50, 80, 3), np.arange(50))
