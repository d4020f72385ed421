"""The trainer's compiled loops give the floats of their numpy definitions, so training is unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.ordering.paper.model import new_model
from dualdecomp.models.ordering.paper.train_run import RunConfig, eligible
from dualdecomp.models.ordering.paper.training import ReferenceTrainer, TrainConfig, Trainer
from dualdecomp.models.ordering.paper.training_kernel import (
    gathered_sums,
    gathered_sums_numpy,
    merged_step,
    merged_step_numpy,
)
from tests.ordering_oracles import EWT

VALUES = st.one_of(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
                   st.fractions(min_value=-3, max_value=3, max_denominator=50).map(float))


@settings(max_examples=200, deadline=None)
@given(weights=st.lists(VALUES, min_size=1, max_size=40),
       lengths=st.lists(st.integers(0, 400), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1))
def test_gathered_sums_are_numpys_sums_bit_for_bit(weights, lengths, seed):
    w = np.array(weights)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, w.size, size=sum(lengths)).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    compiled, reference = gathered_sums(w, indices, offsets), gathered_sums_numpy(w, indices, offsets)
    assert compiled.tolist() == reference.tolist()  # == on floats: bit for bit (no NaN here)


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 30), VALUES), min_size=0, max_size=300))
def test_merged_step_is_unique_and_bincount_bit_for_bit(pairs):
    indices = np.array([i for i, _ in pairs], dtype=np.int64)
    values = np.array([v for _, v in pairs], dtype=float)
    uniq, sums = merged_step(indices, values)
    ref_uniq, ref_sums = merged_step_numpy(indices, values)
    assert uniq.tolist() == ref_uniq.tolist()
    assert sums.tolist() == ref_sums.tolist()
    # and the definition itself: each index's values added from 0.0 in input order
    for k, i in enumerate(uniq.tolist()):
        total = 0.0
        for j, v in pairs:
            if j == i:
                total += v
        assert sums[k] == total


@pytest.mark.skipif(not (EWT / "en_ewt-ud-train.conllu").exists(), reason=f"EWT not available: {EWT}")
def test_compiled_trainer_trains_the_numpy_trainers_weights():
    train = read_conllu_examples(EWT / "en_ewt-ud-train.conllu", limit=160)
    config = RunConfig(max_length=20, train=TrainConfig(chart_size=32, max_expansions=300, seed=0))
    sentences = eligible(train, config)
    results = []
    for trainer_class in (Trainer, ReferenceTrainer):
        model = new_model(train, hash_bits=20)
        trainer = trainer_class(model, config.train)
        stats = [trainer.epoch(sentences, epoch) for epoch in (1, 2)]
        results.append((stats, model.weights.tobytes(), trainer.averaged().tobytes()))
    assert results[0][0][0]["updates"] > 1000  # the run updates (and rescores) often
    assert results[0] == results[1]
