"""Iterative parameter mixing on a Dask LocalCluster of 2 worker processes (W2.4)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dualdecomp.app.cli import main
from dualdecomp.app.cluster import cluster_client
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.models.bigram.distributed_training import ParameterMixing
from dualdecomp.models.bigram.perceptron import BigramSteps, TrainingExample, train_perceptron
from dualdecomp.models.bigram.training import prepare
from dualdecomp.models.parameter_mixing import mixing_weights
from dualdecomp.models.perceptron import averaged_perceptron

BITS = 14


@pytest.fixture(scope="module")
def client():
    with cluster_client(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def examples(corpora):
    parsed = prepare(read_corpus(corpora / "written.train.jsonl")[:24], hash_bits=BITS)
    return [TrainingExample(p.features, g) for p in parsed for g in p.golds]


@pytest.mark.parametrize("length_mode", ["free", "gold"])
def test_one_shard_is_the_single_process_perceptron_exactly(client, examples, length_mode):
    scores = iter([0.3, 0.5, 0.4])  # a dev score per epoch: the selection must pick epoch 2 in both
    seen_single, seen_mixed = [], []

    def on_epoch_single(epoch, avg):
        seen_single.append(avg.copy())
        return [0.3, 0.5, 0.4][epoch - 1]

    def on_epoch_mixed(epoch, avg):
        seen_mixed.append(avg.copy())
        return next(scores)

    w1, r1 = train_perceptron(examples, BITS, epochs=3, seed=7, length_mode=length_mode,
                              on_epoch=on_epoch_single)
    w2, r2 = ParameterMixing(client, shards=1)(examples, BITS, epochs=3, seed=7, length_mode=length_mode,
                                               on_epoch=on_epoch_mixed)
    assert np.array_equal(w1, w2)
    assert r1 == r2 and r1[0].mistakes > 0
    assert all(np.array_equal(a, b) for a, b in zip(seen_single, seen_mixed, strict=True))
    assert np.array_equal(w2, seen_mixed[1])


def test_two_shards_mix_the_shards_perceptrons(client, examples):
    """One epoch of two shards = the mean of each shard's own one-epoch averaged perceptron."""
    steps = BigramSteps("free")
    shard_avgs = [averaged_perceptron(examples[s::2], 1 << BITS, steps.decode, steps.mistaken,
                                      steps.difference, epochs=1, seed=3 + s)[0] for s in range(2)]
    w, reports = ParameterMixing(client, shards=2)(examples, BITS, epochs=1, seed=3)
    np.testing.assert_allclose(w, 0.5 * shard_avgs[0] + 0.5 * shard_avgs[1], rtol=0, atol=1e-12)
    assert reports[0].examples == len(examples)
    again, _ = ParameterMixing(client, shards=2)(examples, BITS, epochs=1, seed=3)
    assert np.array_equal(w, again)  # reproducible


def test_mixing_weights():
    assert mixing_weights([3, 1], "uniform") == [0.5, 0.5]
    assert mixing_weights([3, 1], "mistakes") == [0.75, 0.25]
    assert mixing_weights([0, 0], "mistakes") == [0.5, 0.5]
    with pytest.raises(ValueError):
        ParameterMixing(None, shards=0)
    with pytest.raises(ValueError):
        ParameterMixing(None, shards=2, mixing="median")


def test_train_cli_on_a_scheduler_writes_the_same_model_files(client, corpora, tmp_path):
    common = ["train", "--train", str(corpora / "written.train.jsonl"), "--dev",
              str(corpora / "written.dev.jsonl"), "--limit", "20", "--epochs", "2", "--lm", "none",
              "--hash-bits", str(BITS), "--quiet"]
    assert main([*common, "--out", str(tmp_path / "single")]) == 0
    assert main([*common, "--out", str(tmp_path / "mixed"), "--scheduler", client.scheduler.address,
                 "--shards", "1"]) == 0
    single = json.loads((tmp_path / "single" / "model.json").read_text())
    mixed = json.loads((tmp_path / "mixed" / "model.json").read_text())
    assert sorted(p.name for p in (tmp_path / "single").iterdir()) == \
        sorted(p.name for p in (tmp_path / "mixed").iterdir())
    assert "iterative parameter mixing over 1 shards" in mixed["meta"]["trainer"]
    for key in ("mistakes_per_epoch", "best_epoch", "dev_bigram_f1_gold_length", "length_bias"):
        assert single["meta"][key] == mixed["meta"][key]
    # one shard: the same weights as the single-process perceptron
    with np.load(tmp_path / "single" / "weights.npz") as a, np.load(tmp_path / "mixed" / "weights.npz") as b:
        assert a.files == b.files and all(np.array_equal(a[f], b[f]) for f in a.files)
    assert main([*common, "--out", str(tmp_path / "x"), "--kind", "dependency", "--workers", "2"]) == 2
    assert main([*common, "--out", str(tmp_path / "x"), "--shards", "2"]) == 2
