"""Guided learning by iterative parameter mixing on a Dask LocalCluster of 2 worker processes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dualdecomp.app.cli import main
from dualdecomp.app.cluster import cluster_client
from dualdecomp.models.ordering.paper.model import load_model, new_model
from dualdecomp.models.ordering.paper.parallel_training import MixingTrainer
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.train_run import RunConfig, train_model
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer
from tests.ordering_oracles import FIXTURES, example

SENTENCES = [
    example("the cat sat", [2, 3, 0], "DT NN VBD"),
    example("the dog ran home", [2, 3, 0, 3], "DT NN VBD RB"),
    example("a cat ran", [2, 3, 0], "DT NN VBD"),
    example("the dog sat home", [2, 3, 0, 3], "DT NN VBD RB"),
    example("a dog ran", [2, 3, 0], "DT NN VBD"),
]
CONFIG = TrainConfig(chart_size=16, max_expansions=200, seed=1)


@pytest.fixture(scope="module")
def client():
    with cluster_client(workers=2) as c:
        yield c


def test_one_shard_is_the_single_process_trainer_exactly(client):
    serial = new_model(SENTENCES, hash_bits=14)
    trainer = Trainer(serial, CONFIG)
    mixed = new_model(SENTENCES, hash_bits=14)
    mixing = MixingTrainer(mixed, CONFIG, client, shards=1)
    for epoch in range(3):
        expected = trainer.epoch(SENTENCES, epoch)
        got = mixing.epoch(SENTENCES, epoch)
        assert got == {**expected, "shards": 1}
        assert np.array_equal(mixed.weights, serial.weights)
        assert np.array_equal(mixing.averaged(), trainer.averaged())


def test_two_shards_mix_the_shards_trainers(client):
    model = new_model(SENTENCES, hash_bits=14)
    mixing = MixingTrainer(model, CONFIG, client, shards=2)
    # the same epochs by hand: each shard's single-process trainer, restarted from the mean of the shards'
    # weights with its averaging accumulator shifted so that its average is kept across the jump
    shards = [SENTENCES[0::2], SENTENCES[1::2]]
    trainers = [Trainer(new_model(SENTENCES, hash_bits=14), TrainConfig(chart_size=16, max_expansions=200,
                                                                        seed=1 + s)) for s in range(2)]
    mixed = trainers[0].model.weights.copy()
    for epoch in range(3):
        stats = mixing.epoch(SENTENCES, epoch)
        updates = 0
        for tr, shard in zip(trainers, shards, strict=True):
            tr.accumulated += tr.step * (mixed - tr.model.weights)
            tr.model.weights[:] = mixed
            updates += tr.epoch(shard, epoch)["updates"]
        mixed = (trainers[0].model.weights + trainers[1].model.weights) / 2
        averaged = (trainers[0].averaged() + trainers[1].averaged()) / 2
        assert stats["shards"] == 2 and stats["sentences"] == len(SENTENCES)
        assert stats["updates"] == updates
        assert np.allclose(model.weights, mixed, atol=1e-12)
        assert np.allclose(mixing.averaged(), averaged, atol=1e-12)


def test_parameter_mixing_learns_the_training_orders(client):
    model, meta = train_model(SENTENCES, SENTENCES, RunConfig(epochs=8, hash_bits=14, dev_sentences=5,
                                                              dev_expansions=500, train=CONFIG),
                              trainer=lambda m, c: MixingTrainer(m, c, client, shards=2))
    assert meta["training"]["trainer"].startswith("iterative parameter mixing over 2 shards")
    search = SearchConfig(chart_size=16, timeout=None, max_expansions=500)
    right = sum(best_first(model, ex.as_input(seed=3), search).words == ex.words for ex in SENTENCES)
    assert right >= 4


def test_bad_settings(client):
    with pytest.raises(ValueError, match="shards"):
        MixingTrainer(new_model(SENTENCES, hash_bits=14), CONFIG, client, shards=0)
    with pytest.raises(ValueError, match="mixing"):
        MixingTrainer(new_model(SENTENCES, hash_bits=14), CONFIG, client, shards=2, mixing="median")


def test_cli_train_on_a_scheduler(client, tmp_path, capsys):
    train = tmp_path / "train.conllu"
    text = (FIXTURES / "tiny.conllu").read_text().split("\n\n")
    train.write_text("\n\n".join(text[:2]) + "\n\n")
    out = tmp_path / "model"
    assert main(["order", "train", "--train", str(train), "--dev", str(train), "--out", str(out),
                 "--epochs", "2", "--hash-bits", "12", "--dev-expansions", "200", "--quiet",
                 "--scheduler", client.scheduler.address, "--shards", "2"]) == 0
    assert load_model(out).meta["training"]["trainer"].startswith("iterative parameter mixing over 2 shards")
    epochs = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith('{"epoch"')]
    assert [e["shards"] for e in epochs] == [2, 2]


@pytest.mark.parametrize(("argv", "message"), [(["--workers", "0"], "--workers and --shards must be >= 1"),
                                               (["--shards", "2"], "--shards needs --workers"),
                                               (["--workers", "2", "--shards", "0"], "must be >= 1")])
def test_cli_bad_parallel_settings(tmp_path, argv, message, capsys):
    train = tmp_path / "train.conllu"
    train.write_text((FIXTURES / "tiny.conllu").read_text())
    assert main(["order", "train", "--train", str(train), "--dev", str(train), "--out", str(tmp_path / "m"),
                 "--quiet", *argv]) == 2
    assert message in capsys.readouterr().err
