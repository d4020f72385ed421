"""The rewriting model's in-domain keep classifier (``dualdecomp.models.rewriting.keep_classifier``):
the learner against Newton's method, the per-hyperedge term against every derivation enumerated, the
chart's and the engine's certificates with the term (brute force and the ILP), the store (round trip,
the encoder's checksum) and the decode setting on every path (W3.3, the thirty-first rule)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualdecomp.ilp
from dualdecomp.app.cli import main
from dualdecomp.app.rewriter import Rewriter
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.data.locations import default_model_dir
from dualdecomp.engine.decode import decode as dd_decode
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.rewriting.decode_settings import DecodeSettings
from dualdecomp.models.rewriting.keep_classifier import (
    EMBEDDED_ENCODER,
    KEEP_FILE,
    KeepClassifier,
    KeepTraining,
    encoder_reference,
    fit_soft_logistic,
    keep_features,
    save_keep_classifier,
)
from dualdecomp.models.rewriting.model import hyperedge_scores, load_rewrite_decoder
from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings
from dualdecomp.solvers.paired import PairedTokens
from dualdecomp.solvers.rewriting import RewriteComponent, copied_token_lists, copied_tokens, decode
from tests.test_paired_punctuation import copied_by_matching
from tests.test_rewrite_cli import rewrite_model  # noqa: F401 - the session fixture (tiny model)
from tests.test_rewriting_component import instance, lm_of
from tests.test_rewriting_decode_settings import _model_dir
from tests.test_rewriting_model import _enumerate, _tree

ENCODER = default_model_dir() / "neural"


class _States:
    """A stand-in encoder: fixed random states for a sentence of ``n`` tokens."""

    def __init__(self, states: np.ndarray) -> None:
        self.states = states

    def hidden_states(self, words) -> np.ndarray:
        assert len(words) == len(self.states)
        return self.states


def _loss(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> float:
    p = 1.0 / (1.0 + np.exp(-(x @ w)))
    return float(np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p)) + l2 * np.sum(w[:-1] ** 2))


def _newton(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """The penalised soft-label logistic regression's minimum by Newton's method (the oracle)."""
    w = np.zeros(x.shape[1])
    pen = np.ones_like(w)
    pen[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        g = x.T @ (p - y) / len(y) + 2 * l2 * pen * w
        h = (x * (p * (1 - p))[:, None]).T @ x / len(y) + 2 * l2 * np.diag(pen)
        w -= np.linalg.solve(h, g)
    return w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_learner_reaches_the_penalised_optimum(seed):
    rng = np.random.default_rng(seed)
    x = np.hstack([rng.normal(size=(300, 4)), np.ones((300, 1))])
    y = 1.0 / (1.0 + np.exp(-(x @ rng.normal(size=5) + rng.normal(scale=0.5, size=300))))  # soft labels
    best = _newton(x, y, 1e-3)
    w = fit_soft_logistic(x, y, steps=3000, rate=0.02, l2=1e-3)
    assert _loss(x, y, w, 1e-3) - _loss(x, y, best, 1e-3) < 1e-6
    assert np.allclose(w, best, atol=2e-3)
    assert np.array_equal(fit_soft_logistic(x, y), fit_soft_logistic(x, y))  # deterministic


def test_the_learner_with_a_constant_alone_learns_the_mean_label():
    y = np.array([0.0, 0.25, 1.0, 0.75, 0.5, 1.0])
    w = fit_soft_logistic(np.ones((6, 1)), y, steps=4000, rate=0.01)
    assert math.isclose(1.0 / (1.0 + math.exp(-w[0])), y.mean(), abs_tol=1e-6)


def test_features_are_unit_states_and_a_constant():
    x = keep_features(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert x.dtype == np.float64 and np.allclose(x, [[0.6, 0.8, 1.0], [0.0, 0.0, 1.0]])


def _classifier(rng, n: int) -> KeepClassifier:
    return KeepClassifier(np.round(rng.normal(size=4), 3), _States(np.round(rng.normal(size=(n, 3)), 3)))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([0.5, 2.0, 40.0]))
def test_the_term_against_every_derivation(seed, with_lm, mu):
    """Per derivation, the hyperedge terms sum to the centred log-odds of exactly the tokens it writes as
    themselves (read by matching its rules again), each once; the chart with μ × the terms finds the best
    derivation by that sum (enumerated), and says it is certified."""
    rng, hg, scores, lm, _ = instance(seed, with_lm)
    keep = _classifier(rng, hg.n)
    z = keep_features(keep.encoder.states) @ keep.weights
    z -= z.mean()
    terms = keep.hyperedge_terms(hg)
    ptr, idx = copied_token_lists(hg)
    for e in range(hg.num_hyperedges):
        assert idx[ptr[e]:ptr[e + 1]].tolist() == copied_tokens(hg, e)
    best = -math.inf
    for edges, words in _enumerate(hg):
        copied = [k for e in edges for k in copied_by_matching(hg, e)]
        assert len(copied) == len(set(copied))
        assert math.isclose(sum(terms[e] for e in edges), sum(z[k] for k in copied), abs_tol=1e-9)
        best = max(best, float(sum(scores[e] for e in edges)) + lm_of(hg, lm, words) + mu * sum(z[copied]))
    der = decode(hg, scores + mu * terms, lm)
    assert der.certified and math.isclose(der.score, best, rel_tol=0, abs_tol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_term_in_the_engine_against_the_ilp_and_brute_force(seed):
    """The chart component with the term, alone against the ILP and with paired tokens (the paired
    punctuation's decode) against brute force: every certificate the engine gives is the optimum."""
    rng, hg, scores, _, _ = instance(seed, False)
    keep = _classifier(rng, hg.n)
    with_term = scores + 3.0 * keep.hyperedge_terms(hg)
    comp = RewriteComponent(hg, with_term)
    ref = dualdecomp.ilp.decode([comp])
    res = dd_decode([comp], max_iterations=300)
    assert ref.certified and math.isclose(res.primal, ref.primal, abs_tol=1e-6)
    if hg.n < 2:
        return
    pairs = [tuple(int(k) for k in rng.choice(hg.n, size=2, replace=False))]
    paired = PairedTokens(hg.n, pairs)
    best = -math.inf
    for edges, _ in _enumerate(hg):
        deleted = {int(k) for e in edges for k in hg.dropped(e).tolist()}
        keep_vec = np.array([k not in deleted for k in range(hg.n)])
        best = max(best, float(sum(with_term[e] for e in edges)) + paired.best_given(keep_vec))
    res = dd_decode([comp, paired], max_iterations=300)
    if math.isfinite(best):
        assert res.dual >= best - 1e-6
        if res.certified:
            assert math.isclose(res.primal, best, abs_tol=1e-6)


def _with_classifier(d, weight: float, rng=None):
    """Attach a keep classifier (random weights, the embedded encoder) to the model directory ``d``."""
    rng = rng or np.random.default_rng(0)
    hidden = load_neural_model(ENCODER).head_weight.shape[0]
    block = save_keep_classifier(d, KeepTraining(rng.normal(size=hidden + 1), {"test": True}), ENCODER)
    spec = json.loads((d / "model.json").read_text())
    spec["meta"]["keep_classifier"] = block
    spec["meta"].setdefault("decode", {})["keep_weight"] = weight
    (d / "model.json").write_text(json.dumps(spec))
    write_manifest(d)
    return d


def test_the_decoder_adds_the_term_and_loads_the_encoder_only_when_used(tmp_path):
    d = _with_classifier(_model_dir(tmp_path, {}), 5.0)
    spec = json.loads((d / "model.json").read_text())
    assert spec["meta"]["keep_classifier"]["encoder"] == EMBEDDED_ENCODER == encoder_reference(ENCODER)
    assert (d / KEEP_FILE).is_file()
    dec = load_rewrite_decoder(d)
    assert dec.settings == DecodeSettings(keep_weight=5.0) and dec.keep is not None
    hg = dec.hypergraph(_tree())
    base = hyperedge_scores(hg, dec.model.weights, dec.featuriser)
    states = load_neural_model(ENCODER).hidden_states(list(hg.words))
    z = keep_features(states) @ dec.keep.weights
    z -= z.mean()
    expected = base + 5.0 * np.array([z[copied_tokens(hg, e)].sum() for e in range(hg.num_hyperedges)])
    assert np.allclose(dec.hyperedge_scores(hg), expected, rtol=0, atol=1e-9)
    comp = dec.component(_tree())  # the engine's chart (joint and paired-punctuation decoding)
    assert np.array_equal(comp.hyperedge_scores, dec.hyperedge_scores(hg))
    off = load_rewrite_decoder(d, keep_weight=0.0)
    assert off.keep is None and np.array_equal(off.hyperedge_scores(hg), base)
    assert load_rewrite_decoder(d, keep_weight=20.0).settings.keep_weight == 20.0


def test_a_changed_encoder_or_a_missing_classifier_is_refused(tmp_path):
    d = _with_classifier(_model_dir(tmp_path / "a", {}), 5.0)
    spec = json.loads((d / "model.json").read_text())
    spec["meta"]["keep_classifier"]["encoder_sha256"] = "0" * 64
    (d / "model.json").write_text(json.dumps(spec))
    write_manifest(d)
    with pytest.raises(ModelError, match="rebuild the rewriting model"):
        load_rewrite_decoder(d)
    assert load_rewrite_decoder(d, keep_weight=0.0).keep is None  # not used: not read
    spec["meta"]["keep_classifier"]["encoder"] = str(tmp_path / "gone")
    (d / "model.json").write_text(json.dumps(spec))
    write_manifest(d)
    with pytest.raises(ModelError, match="encoder directory is missing"):
        load_rewrite_decoder(d)
    plain = _model_dir(tmp_path / "b", {})
    with pytest.raises(InputError, match="keep classifier"):
        load_rewrite_decoder(plain, keep_weight=1.0)
    bad = _model_dir(tmp_path / "c", {"decode": {"keep_weight": 2.0}})
    with pytest.raises(ModelError, match="keep_classifier"):
        load_rewrite_decoder(bad)
    with pytest.raises(InputError):
        DecodeSettings(keep_weight=-1.0)


def test_training_settings_need_an_encoder_for_a_keep_weight(tmp_path, capsys):
    with pytest.raises(InputError, match="keep-encoder"):
        RewriteTrainingSettings(data_dir="x", out_dir="y", cache_dir="z", keep_weight=3.0)
    code = main(["train", "--kind", "rewriting", "--quiet", "--data", str(tmp_path), "--out",
                 str(tmp_path / "m"), "--keep-weight", "3"])
    err = capsys.readouterr().err
    assert code != 0 and "--keep-encoder" in err and "Traceback" not in err


def test_the_rewriter_and_the_cli_take_the_keep_weight(rewrite_model, tmp_path, capsys):  # noqa: F811
    d = tmp_path / "model"
    shutil.copytree(rewrite_model, d)
    _with_classifier(d, 0.0)
    text = "Kim (a writer) purchased a car in the northern part of the town."
    plain = Rewriter(d)
    assert plain.decoder.keep is None
    strong = Rewriter(d, keep_weight=400.0)
    assert strong.decoder.settings.keep_weight == 400.0 and strong.fingerprint() != plain.fingerprint()
    out = strong.rewrite_text(text)  # brackets: the paired-punctuation engine with the term
    assert out.certified
    assert main(["rewrite", text, "--model", str(d), "--keep-weight", "400", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["rewrite"] == out.rewrite and row["certified"]
    assert main(["rewrite", "--model", str(rewrite_model), "--keep-weight", "1", text]) != 0
    err = capsys.readouterr().err
    assert "keep classifier" in err and "Traceback" not in err
    assert main(["rewrite", "--model", str(d), "--keep-weight", "-1", text]) != 0
    assert "keep_weight must be >= 0" in capsys.readouterr().err
