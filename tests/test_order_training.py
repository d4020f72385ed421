"""Guided learning, the scaled update, model files, evaluation with sacrebleu, and the order CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dualdecomp.app.cli import main
from dualdecomp.core.errors import ModelError
from dualdecomp.models.evaluation.ordering import evaluate, score
from dualdecomp.models.ordering.paper.model import load_model, new_model
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer
from tests.ordering_oracles import FIXTURES, example, random_model

SENTENCES = [
    example("the cat sat", [2, 3, 0], "DT NN VBD"),
    example("the dog ran home", [2, 3, 0, 3], "DT NN VBD RB"),
    example("a cat ran", [2, 3, 0], "DT NN VBD"),
    example("the dog sat home", [2, 3, 0, 3], "DT NN VBD RB"),
]


@pytest.mark.parametrize("learner", ["scaled-mira", "perceptron"])
def test_guided_learning_learns_the_training_orders(learner):
    model = new_model(SENTENCES, hash_bits=14)
    trainer = Trainer(model, TrainConfig(learner=learner, chart_size=16, max_expansions=200, seed=1))
    for epoch in range(8):
        trainer.epoch(SENTENCES, epoch)
    model.weights[:] = trainer.averaged()
    search = SearchConfig(chart_size=16, timeout=None, max_expansions=500)
    for ex in SENTENCES:
        out = best_first(model, ex.as_input(seed=3), search)
        assert out.words == ex.words


def test_scaled_mira_update_separates_by_a_margin_of_one():
    model = random_model(7)
    ctx = model.context(SENTENCES[0].identity_input())
    leaves = model.leaves(ctx)
    a = next(e for e in leaves if e.head == 0)
    b = next(e for e in leaves if e.head == 1)
    positive = model.attach(ctx, b, a, False)  # "the <- cat"
    negative = model.attach(ctx, a, b, True)  # "the -> cat"
    trainer = Trainer(model, TrainConfig(learner="scaled-mira"))
    assert trainer.update(positive, negative)
    w = model.weights
    margin = w[positive.phi].sum() / positive.size - w[negative.phi].sum() / negative.size
    assert margin == pytest.approx(1.0, abs=1e-9) or margin > 1.0


def test_save_and_load_round_trip(tmp_path):
    model = random_model(9, hash_bits=10)
    model.save(tmp_path, {"note": "test"})
    loaded = load_model(tmp_path)
    assert np.array_equal(loaded.weights, model.weights)
    assert loaded.tag_names == model.tag_names and loaded.word_tags == model.word_tags
    assert loaded.meta["note"] == "test"
    (tmp_path / "model.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ModelError):
        load_model(tmp_path)


def test_evaluation_uses_sacrebleu_against_the_original_order():
    examples = SENTENCES[:2]
    perfect, _ = evaluate(examples, lambda inp: _identity(inp, examples), "words")
    assert perfect.bleu == pytest.approx(100.0) and perfect.exact == 1.0 and perfect.recovered == 1.0


def _identity(inp, examples):
    from dualdecomp.data.ordering.result import OrderingResult

    ex = next(e for e in examples if sorted(e.words) == sorted(inp.words))
    return OrderingResult(order=tuple(range(len(ex))), words=ex.words, pos=ex.pos, heads=(0,) * len(ex),
                          complete=True, score=0.0, recovered=1.0, expansions=0, seconds=0.0)


def test_score_of_a_reversed_sentence_is_below_100():
    ex = SENTENCES[1]
    from dualdecomp.data.ordering.result import OrderingResult

    rev = OrderingResult(order=(3, 2, 1, 0), words=ex.words[::-1], pos=ex.pos[::-1], heads=(0, 1, 2, 3),
                         complete=True, score=0.0, recovered=1.0, expansions=0, seconds=0.0)
    assert score([ex], [rev], 1.0).bleu < 50 and score([ex], [rev], 1.0).exact == 0.0


def test_cli_orders_jsonl_and_conllu(tmp_path, capsys):
    model = random_model(1, hash_bits=10)
    model.save(tmp_path)
    assert main(["order", "--model", str(tmp_path), "--input", str(FIXTURES / "demo.jsonl"),
                 "--max-expansions", "300", "--exact", "--tree-beam", "0"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2
    bag = bag_words = sorted(["quickly", "the", "dog", "home", "ran", "."])
    assert set(lines[0]["words"]) <= set(bag)
    assert (sorted(lines[0]["words"]) == bag) == (lines[0]["recovered"] == 1.0)
    assert lines[0]["certified"] is False and lines[0]["method"].startswith("best-first")
    assert lines[1]["certified"] is True and lines[1]["method"] == "exact DP"
    assert main(["order", "--model", str(tmp_path), "--input", str(FIXTURES / "tiny.conllu"),
                 "--max-expansions", "200"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    # the tree beam DP (the default): a beam of 1 prunes the 5-word tree (approximate), a wide one
    # certifies, and --exact certifies first; the bag's best-first output is completed and re-ordered
    for options, method in ((["--tree-beam", "1"], "tree beam DP (approximate)"),
                            (["--tree-beam", "1000"], "exact DP"),
                            (["--tree-beam", "1", "--exact"], "exact DP")):
        assert main(["order", "--model", str(tmp_path), "--input", str(FIXTURES / "demo.jsonl"),
                     "--max-expansions", "5", *options]) == 0
        bag, tree = (json.loads(x) for x in capsys.readouterr().out.splitlines())
        assert tree["method"] == method and tree["complete"] and tree["certified"] == (method == "exact DP")
        assert bag["complete"] and sorted(bag["words"]) == bag_words
        assert bag["method"] == "best-first + tree beam DP (approximate)"


def test_cli_train_and_evaluate(tmp_path, capsys):
    train = tmp_path / "train.conllu"
    # the first two fixture sentences are complete trees
    text = (FIXTURES / "tiny.conllu").read_text().split("\n\n")
    train.write_text("\n\n".join(text[:2]) + "\n\n")
    out = tmp_path / "model"
    assert main(["order", "train", "--train", str(train), "--dev", str(train), "--out", str(out),
                 "--epochs", "2", "--hash-bits", "12", "--dev-expansions", "200", "--quiet"]) == 0
    assert (out / "weights.npz").exists()
    assert main(["order", "evaluate", "--model", str(out), "--data", str(train), "--conditions", "words",
                 "all", "--max-expansions", "200", "--quiet"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith('{"condition"')]
    assert [x["condition"] for x in lines] == ["words", "all"]
    assert all(0 <= x["bleu"] <= 100 for x in lines)
