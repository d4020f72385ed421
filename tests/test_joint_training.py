"""Joint perceptron training of McDonald + dependency with dual decomposition in the loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dualdecomp.core.errors import InputError
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.bigram.store import load_model
from dualdecomp.models.cotraining.training import (
    CotrainingConfig,
    CotrainingDecoder,
    cotrain,
    cotraining_vector,
    prepare_cotraining,
)
from dualdecomp.models.dependency.store import load_dependency_model
from dualdecomp.models.dependency.training import best_tree
from dualdecomp.models.perceptron import averaged_perceptron
from dualdecomp.solvers.bigram.solver import Bigram
from tests.oracles import dependency as brute


@pytest.fixture(scope="module")
def start_models():
    d = default_model_dir()
    return load_model(d), load_dependency_model(d / "dependency")


@pytest.fixture(scope="module")
def items(corpora, start_models):
    from dualdecomp.data.jsonl import read_corpus

    bigram, dependency = start_models
    return prepare_cotraining(read_corpus(corpora / "written.dev.jsonl")[:6], bigram, dependency)


def test_joint_vector_scores_equal_the_components(items, start_models) -> None:
    bigram, dependency = start_models
    nb = bigram.weights.size
    rng = np.random.default_rng(0)
    w = rng.normal(size=nb + dependency.weights.size)
    w[0] = w[nb] = 0.0  # padding features
    decoder = CotrainingDecoder(nb, None, CotrainingConfig(lm_weight=0.0))
    for it in items:
        comps, A, S = decoder.components(it, w)
        for _ in range(5):
            keep = rng.random(it.item.n) < 0.6
            heads = best_tree(A, S, keep)
            idx, val = cotraining_vector(it, keep, heads, nb)
            tree = brute.score(A, None, S, None, 0.0, keep, heads)  # the contract's definition
            expected = Bigram(comps[0].B).best_given(keep) + tree
            assert float(w[idx] @ val) == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_joint_decode_is_the_best_structure_of_the_length(items, start_models) -> None:
    bigram, dependency = start_models
    decoder = CotrainingDecoder(bigram.weights.size, None,
                                CotrainingConfig(lm_weight=0.0, max_iterations=500))
    w = np.concatenate((bigram.weights, dependency.weights))
    for it in items[:3]:
        g = it.golds[0]
        pred = decoder.decode(it, w, g.length)
        assert pred.keep.sum() == g.length
        assert ((pred.heads >= 0) == pred.keep).all()
        if pred.certified:  # no structure of that length scores more, e.g. the gold one
            gi, gv = cotraining_vector(it, g.keep, g.heads, bigram.weights.size)
            pi, pv = cotraining_vector(it, pred.keep, pred.heads, bigram.weights.size)
            assert w[pi] @ pv >= w[gi] @ gv - 1e-9


def test_warm_start_without_mistakes_keeps_the_initial_weights() -> None:
    init = np.arange(6, dtype=float)
    w, reports = averaged_perceptron([1, 2, 3], 6, lambda ex, w: None, lambda ex, p: False,
                                     lambda ex, p: (np.zeros(0, int), np.zeros(0)), epochs=2, initial=init)
    assert np.array_equal(w, init) and [r.mistakes for r in reports] == [0, 0]
    with pytest.raises(ValueError):
        averaged_perceptron([1], 6, lambda ex, w: None, lambda ex, p: False,
                            lambda ex, p: (np.zeros(0, int), np.zeros(0)), initial=np.zeros(5))


@pytest.mark.parametrize("tree", ["parse", "latent"])
def test_training_fits_a_small_training_set(corpora, start_models, tree) -> None:
    bigram, dependency = start_models
    f = str(corpora / "written.train.jsonl")
    config = CotrainingConfig(epochs=4, lm_weight=0.0, step=1.0, limit=8, tree=tree)
    result = cotrain(bigram, dependency, None, [f], [], config)
    mistakes = result.meta["mistakes_per_epoch"]
    assert len(mistakes) == 4 and mistakes[-1] < mistakes[0]
    assert result.bigram.weights.shape == bigram.weights.shape
    assert result.dependency.weights.shape == dependency.weights.shape
    assert not np.array_equal(result.bigram.weights, bigram.weights)


def test_bad_settings() -> None:
    with pytest.raises(InputError):
        CotrainingConfig(step=0.0)
    with pytest.raises(InputError):
        CotrainingConfig(lm_weight=-1.0)
    with pytest.raises(InputError):
        CotrainingConfig(epochs=0)
    with pytest.raises(InputError):
        CotrainingConfig(tree="oracle")


def test_cli_writes_a_usable_joint_configuration(corpora, tmp_path) -> None:
    from dualdecomp.app.cli import main
    from dualdecomp.app.compressor import Compressor

    out = tmp_path / "joint"
    dev = tmp_path / "written.dev.jsonl"  # the first 8 dev sentences
    dev.write_text("".join((corpora / "written.dev.jsonl").read_text().splitlines(keepends=True)[:8]))
    code = main(["train", "--kind", "joint", "--train", str(corpora / "written.train.jsonl"), "--dev",
                 str(dev), "--limit", "5", "--epochs", "1", "--lm", "none",
                 "--out", str(out), "--config-name", "mine", "--quiet"])
    assert code == 0
    spec = json.loads((out / "configs" / "mine.json").read_text())
    assert [c["kind"] for c in spec["components"]] == ["bigram", "dependency"]
    meta = json.loads((out / "joint" / "bigram" / "model.json").read_text())["meta"]["joint"]
    assert meta["best_epoch"] in (0, 1) and meta["dev_files"] == ["written.dev.jsonl"]
    tokens = "The council met on Tuesday to discuss the budget .".split()
    res = Compressor(out, "mine").compress_tokens(tokens, length=5)
    assert len(res.tokens) == 5
