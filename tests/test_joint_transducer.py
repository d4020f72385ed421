"""The ``transducer`` (T3) component kind of joint configurations: DD decoding against the exact ILP."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from dualdecomp.app.compressor import Compressor
from dualdecomp.core.errors import ModelError
from dualdecomp.models.configuration import ComponentSpec, JointConfig, JointModel, save_config
from dualdecomp.models.transducer.model import load_t3, source_tree
from dualdecomp.solvers.transducer.solver import Transducer


@pytest.fixture(scope="module")
def t3_model(corpora, tmp_path_factory):
    """A tiny T3 model: 20 broadcast sentences, one epoch, no LM."""
    from dualdecomp.app.commands.t3 import main

    out = tmp_path_factory.mktemp("t3") / "t3"
    assert main(["train", "--train", str(corpora / "broadcast.train.jsonl"), "--dev",
                 str(corpora / "broadcast.dev.jsonl"), "--out", str(out), "--limit", "20", "--epochs", "1",
                 "--lm", "none", "--hash-bits", "14", "--depth", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def joint_t3(tiny_model, t3_model, tmp_path_factory):
    d = tmp_path_factory.mktemp("joint_t3")
    shutil.copytree(tiny_model, d / "bigram")
    shutil.copytree(t3_model, d / "t3")
    comps = (ComponentSpec("bigram", "bigram", 1.0), ComponentSpec("transducer", "t3", 2.0))
    save_config(JointConfig("bigram+t3", comps, {"length_method": "exact", "max_iterations": 500}), d)
    (d / "configs").mkdir()
    ilp = JointConfig("ilp", comps, {"decoder": "ilp"})
    (d / "configs" / "ilp.json").write_text(json.dumps(ilp.to_json()))
    alone = JointConfig("t3", (ComponentSpec("transducer", "t3", 1.0),), {"length_method": "exact"})
    (d / "configs" / "t3.json").write_text(json.dumps(alone.to_json()))
    return d


def _short(parsed_dev, k: int = 4):
    _, sentences = parsed_dev
    short = [s for s in sentences if 4 <= s.n <= 12][:k]
    assert short
    return short


def test_transducer_component_is_weighted(joint_t3, parsed_dev) -> None:
    model = load_t3(joint_t3 / "t3")
    joint = JointModel(joint_t3)
    for s in _short(parsed_dev, 2):
        comps, note = joint.components(s)
        assert note is None
        transducer = comps[1]
        assert isinstance(transducer, Transducer) and transducer.n == s.n
        plain = model.transducer(source_tree(s))
        assert np.allclose(transducer.hyperedge_score, 2.0 * plain.hyperedge_score)
        sol = plain.solve()
        assert abs(transducer.best_given(sol.keep) - 2.0 * sol.score) <= 1e-9 * max(1.0, abs(sol.score))
        assert np.array_equal(model.component(s).hyperedge_score, plain.hyperedge_score)


def test_joint_t3_dd_certified_and_equal_to_ilp(joint_t3, parsed_dev) -> None:
    dd = Compressor(joint_t3)
    ilp = Compressor(joint_t3, "ilp")
    for s in _short(parsed_dev):
        for length in (None, max(1, s.n // 2)):
            a = dd.compress(s, length)
            b = ilp.compress(s, length)
            assert b.result.certified
            assert a.result.certified, (s.id, length, a.result.gap)
            assert abs(a.result.primal - b.result.primal) <= 1e-6 * max(1.0, abs(b.result.primal))
            if length is not None:
                assert int(a.keep.sum()) == length == int(b.keep.sum())
            comps, _ = dd.components(s)
            assert abs(sum(c.best_given(a.keep) for c in comps) - a.result.primal) <= 1e-9 * max(
                1.0, abs(a.result.primal))


def test_t3_alone_config_matches_chart(joint_t3, parsed_dev) -> None:
    model = load_t3(joint_t3 / "t3")
    comp = Compressor(joint_t3, "t3")
    s = _short(parsed_dev, 1)[0]
    length = max(1, s.n // 2)
    out = comp.compress(s, length)
    assert out.result.certified and int(out.keep.sum()) == length
    assert abs(out.result.primal - model.component(s).solve(length=length).score) <= 1e-6


def test_missing_t3_model_is_a_model_error(joint_t3, tmp_path) -> None:
    d = tmp_path / "j"
    shutil.copytree(joint_t3, d)
    shutil.rmtree(d / "t3")
    with pytest.raises(ModelError, match="T3 model"):
        Compressor(d)


def test_beam_decoder_is_approximate_and_never_beats_the_certified_dd(joint_t3, parsed_dev, tmp_path) -> None:
    from dualdecomp.data.locations import default_model_dir

    d = tmp_path / "t3lm"
    shutil.copytree(joint_t3 / "t3", d / "t3")
    shutil.copyfile(default_model_dir() / "lm.binary", d / "lm.binary")
    comps = (ComponentSpec("transducer", "t3", 1.0), ComponentSpec("lm", "lm.binary", 1.0))
    save_config(JointConfig("T3+LM (beam)", comps, {"decoder": "beam", "beam": 100}), d)
    save_config(JointConfig("T3+LM (DD)", comps, {"length_method": "exact", "max_iterations": 500}), d, "dd")
    beam, dd = Compressor(d), Compressor(d, "dd")
    for s in _short(parsed_dev):
        for length in (None, max(1, s.n // 2)):
            b, a = beam.compress(s, length), dd.compress(s, length)
            assert not b.result.certified and "APPROXIMATE" in b.result.notes[0]
            assert b.to_json()["dual"] is None
            if length is not None:
                assert int(b.keep.sum()) == length
            comps_s, _ = dd.components(s)  # the beam's score is the true objective of its output
            assert abs(sum(c.best_given(b.keep) for c in comps_s) - b.result.primal) <= 1e-6
            if a.result.certified:  # a feasible output never beats a proved optimum
                assert b.result.primal <= a.result.primal + 1e-6


def test_beam_decoder_needs_transducer_and_lm(joint_t3, tmp_path) -> None:
    d = tmp_path / "bad"
    shutil.copytree(joint_t3, d)
    comps = (ComponentSpec("bigram", "bigram", 1.0), ComponentSpec("transducer", "t3", 1.0))
    save_config(JointConfig("bad", comps, {"decoder": "beam"}), d)
    with pytest.raises(ModelError, match="beam decoder"):
        Compressor(d)
