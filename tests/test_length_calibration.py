"""Free-length calibration: the bisection, and the per-token bias of joint configurations."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from dualdecomp.core.errors import ModelError
from dualdecomp.engine.decode import decode
from dualdecomp.models.configuration import JointModel, parse_config, with_length_bias
from dualdecomp.models.length_bias.calibration import calibrate_length_bias
from dualdecomp.models.rate_bisection import bisect_rate
from dualdecomp.solvers.bigram.solver import Bigram
from dualdecomp.solvers.dependency.solver import Dependency
from dualdecomp.solvers.ngram.solver import Trigram


@pytest.mark.parametrize("increasing", [True, False])
def test_bisect_rate_finds_the_crossing(increasing) -> None:
    def rate(c: float) -> float:
        return np.tanh((c - 37.0) if increasing else (37.0 - c))

    c = bisect_rate(rate, 0.25, increasing=increasing, iterations=40)
    assert rate(c) == pytest.approx(0.25, abs=1e-6)


def _components(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [Bigram(rng.normal(size=(n + 2, n + 2))), Dependency(rng.normal(size=(n + 1, n + 1))),
            Trigram(rng.normal(size=(n + 2, n + 2, n + 2)))]


@pytest.mark.parametrize("seed", range(5))
def test_bias_changes_no_fixed_length_result_and_moves_free_length(seed) -> None:
    comps = _components(7, seed)
    for length in (2, 5):
        a = decode(comps, length=length, max_iterations=500, length_method="exact")
        b = decode(with_length_bias(comps, 3.0), length=length, max_iterations=500, length_method="exact")
        if a.certified and b.certified:
            assert np.array_equal(a.keep, b.keep)
            assert b.primal - a.primal == pytest.approx(3.0 * (length + 1), abs=1e-6)
    lengths = [decode(with_length_bias(comps, c), max_iterations=500).length for c in (-50.0, 0.0, 50.0)]
    assert lengths[0] == 0 and lengths[2] == 7 and lengths[0] <= lengths[1] <= lengths[2]
    dep_only = with_length_bias(comps[1:], 2.0)  # no bigram: the bias goes on the arcs (2 per token)
    keep = np.array([1, 0, 1, 1, 0, 0, 1], dtype=bool)
    assert dep_only[0].best_given(keep) - comps[1].best_given(keep) == pytest.approx(2.0 * 4)


def test_length_bias_in_configurations() -> None:
    base = {"format": "dualdecomp-config", "version": 1, "components": [{"kind": "lm", "path": "x"}]}
    assert parse_config(base).length_bias == 0.0
    with pytest.raises(ModelError, match="length_bias needs"):
        parse_config({**base, "length_bias": 1.0})
    with pytest.raises(ModelError, match="finite"):
        parse_config({**base, "components": [{"kind": "bigram", "path": "."}], "length_bias": "big"})
    cfg = parse_config({**base, "components": [{"kind": "bigram", "path": "."}], "length_bias": -0.5})
    assert cfg.length_bias == -0.5 and cfg.to_json()["length_bias"] == -0.5


def test_calibrated_joint_rate_matches_the_references(tiny_model, corpora, tmp_path) -> None:
    d = tmp_path / "joint"
    shutil.copytree(tiny_model, d)
    spec = {"format": "dualdecomp-config", "version": 1, "name": "bigram",
            "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], "decode": {}}
    (d / "config.json").write_text(json.dumps(spec))
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join((corpora / "written.dev.jsonl").read_text().splitlines(keepends=True)[:12]))
    bias = calibrate_length_bias(d, None, [dev], iterations=12)
    spec["length_bias"] = bias
    (d / "config.json").write_text(json.dumps(spec))
    from dualdecomp.data.jsonl import read_corpus
    from dualdecomp.data.parsing import parse_tokens

    items = read_corpus(dev)
    joint = JointModel(d)
    sentences = parse_tokens([it.text for it in items])
    rate = np.mean([decode(joint.components(s)[0]).length / s.n for s in sentences])
    target = np.mean([np.mean([len(c) / it.n for c in it.compressions]) for it in items])
    assert abs(rate - target) < 0.05


def test_train_kind_length_bias_is_the_calibration_written(tiny_model, corpora, tmp_path, capsys) -> None:
    """``dualdecomp train --kind length-bias`` (make neural-lengths) finds calibrate_length_bias's bias,
    prints it and, with --write, stores it in the named configuration (MANIFEST.json rewritten: the model
    loads)."""
    from dualdecomp.app.cli import main
    from dualdecomp.core.model_files import read_json

    d = tmp_path / "m"
    shutil.copytree(tiny_model, d)
    spec = {"format": "dualdecomp-config", "version": 1, "name": "bigram",
            "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], "decode": {}}
    (d / "configs").mkdir()
    (d / "configs" / "plain.json").write_text(json.dumps(spec))
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join((corpora / "written.dev.jsonl").read_text().splitlines(keepends=True)[:8]))
    bias = calibrate_length_bias(d, "plain", [dev], iterations=6)
    args = ["train", "--kind", "length-bias", "--model", str(d), "--config", "plain", "--dev", str(dev),
            "--iterations", "6", "--quiet"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"config": "plain", "length_bias": round(bias, 6), "written": None}
    assert "length_bias" not in read_json(d / "configs" / "plain.json")
    assert main([*args, "--write"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == str(d / "configs" / "plain.json")
    assert read_json(d / "configs" / "plain.json")["length_bias"] == round(bias, 6) != 0
    assert JointModel(d, "plain").config.length_bias == round(bias, 6)
    assert main([*args[:-1], "--iterations", "0"]) == 2
