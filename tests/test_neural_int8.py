"""The int8 encoder graph (backend ``onnx-int8``): its weights are the stored int8 rows, it computes what a
numpy emulation of ``DynamicQuantizeMatMul`` computes (uint8 activations per tensor, int8 weights per
column, int32 sums), and its scores stay within a stated distance of the float32 encoder's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import read_npz, write_manifest
from dualdecomp.models.neural import store
from dualdecomp.models.neural.encoder import (
    Encoder,
    EncoderLayer,
    Int8Matrix,
    encoder_parts,
    gelu,
    layer_names,
)
from dualdecomp.models.neural.onnx_encoder import (
    OnnxEncoder,
    encoder_graph,
    onnx_available,
    quantise_columns,
    signed_weights_exact,
)
from dualdecomp.models.neural.store import load_neural_model, quantise_rows
from tests.neural_tiny import tiny_config, tiny_params, write_tiny_scorer

pytestmark = pytest.mark.skipif(not onnx_available(), reason="onnx/onnxruntime not installed")

SENTENCE = "The council plans on Tuesday to consider 12 elections , xyzzy .".split()
TOLERANCE = 0.3
"""Stated bound on |int8 - float32| of a hidden state of the tiny encoder (layer-normed states of order 1,
weights of scale 0.5: the activation codes cost about 1/255 of each product's input range per layer;
the largest gap seen over 300 random sequences is 0.15)."""
EXACT = 1e-5
"""|onnxruntime int8 - numpy emulation| when every activation code agrees (float32 rounding only). Now and
then a value on a rounding half gets the neighbouring code in one of them and the gap grows to about 1e-2
(in 1 of 300 random sequences), so the test asks most sequences, not all, to agree this closely."""


def _layer_norm(x, norm, eps):
    gamma, beta = norm
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps) * gamma + beta


def float_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return x @ w + b


def int8_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``DynamicQuantizeMatMul`` by its definition: x as uint8 with the ONNX dynamic quantisation rule
    (range widened to hold 0, scale = range / 255, zero point and codes rounded half to even), w as int8 per
    column (:func:`quantise_columns`), exact integer products, then both scales and the bias."""
    q, w_scale = quantise_columns(w)
    lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zero = float(np.clip(np.rint(-lo / scale), 0, 255))
    codes = np.clip(np.rint(x / scale) + zero, 0, 255)
    sums = (codes.astype(np.int64) - int(zero)) @ q.astype(np.int64)
    return (sums * (scale * w_scale.astype(np.float64)) + b).astype(np.float32)


def reference(encoder: Encoder, ids: np.ndarray, linear=float_linear) -> np.ndarray:
    """The encoder's forward pass with ``linear`` for every dense layer (the numpy encoder's code)."""
    cfg = encoder.config
    t, heads = len(ids), cfg.num_attention_heads
    dh = cfg.hidden_size // heads
    x = _layer_norm(encoder.word_table[ids] + encoder.position_table[:t] + encoder.segment0,
                    encoder.embed_norm, cfg.layer_norm_eps)
    for layer in encoder.layers:
        qkv = linear(x, layer.qkv_w, layer.qkv_b)
        q, k, v = (qkv[:, j * cfg.hidden_size:(j + 1) * cfg.hidden_size].reshape(t, heads, dh)
                   .transpose(1, 0, 2) for j in range(3))
        scores = (q @ k.transpose(0, 2, 1)) / math.sqrt(dh)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(t, cfg.hidden_size)
        x = _layer_norm(linear(context, layer.out_w, layer.out_b) + x, layer.norm1, cfg.layer_norm_eps)
        hidden = gelu(linear(x, layer.ff_in_w, layer.ff_in_b))
        x = _layer_norm(linear(hidden, layer.ff_out_w, layer.ff_out_b) + x, layer.norm2, cfg.layer_norm_eps)
    return x


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("neural_int8")
    config, params, _, _ = write_tiny_scorer(d, seed=3, quantise=True)
    write_manifest(d)  # the files as they are now (the helper removes its tokenizer source after writing)
    return d, config, params


@pytest.fixture(scope="module")
def encoders(tiny):
    d = tiny[0]
    numpy_encoder = load_neural_model(d, backend="numpy").encoder
    return numpy_encoder, OnnxEncoder(numpy_encoder, threads=1, int8=True)


def test_the_reference_is_the_numpy_encoder(encoders) -> None:
    enc = encoders[0]
    ids = np.random.default_rng(0).integers(0, enc.config.vocab_size, 9)
    assert np.abs(reference(enc, ids) - enc(ids)).max() < 1e-5


def test_columns_quantise_like_stored_rows() -> None:
    m = np.random.default_rng(1).normal(size=(20, 50)).astype(np.float32)
    m[:, 7] = 0.0
    q, scale = quantise_columns(m)
    rows, row_scale = quantise_rows(m.T)
    assert np.array_equal(q, rows.T) and np.array_equal(scale, row_scale) and scale[7] == 1.0


def test_int8_graph_weights_are_the_stored_int8_rows(tiny) -> None:
    d, config, _ = tiny
    stored = read_npz(d / "weights.npz")
    _, weights = encoder_graph(load_neural_model(d, backend="numpy").encoder, int8=True, unsigned=False)
    name = "encoder.layer.1.intermediate.dense.weight"  # (i, h) rows = the graph's (h, i) columns
    assert np.array_equal(weights["l1.ff_in.wq"], stored[name].T)
    wide = "encoder.layer.0.output.dense.weight"
    assert np.array_equal(weights["l0.ff_out.wq"], stored[wide].T)
    parts = [stored[f"encoder.layer.0.attention.self.{p}.weight"] for p in ("query", "key", "value")]
    assert np.array_equal(weights["l0.qkv.wq"], np.concatenate(parts).T)
    _, unsigned = encoder_graph(load_neural_model(d, backend="numpy").encoder, int8=True, unsigned=True)
    assert unsigned["l1.ff_in.wq"].dtype == np.uint8  # the same integers, shifted by the zero point 128
    assert np.array_equal(unsigned["l1.ff_in.wq"].astype(np.int16) - 128, stored[name].T)


def _agreeing(fast, enc: Encoder, sequences: list[np.ndarray]) -> float:
    """The share of sequences on which ``fast`` equals the int8 emulation of ``enc`` to :data:`EXACT`."""
    return float(np.mean([np.abs(fast(ids) - reference(enc, ids, int8_linear)).max() < EXACT
                          for ids in sequences]))


def _sequences(enc: Encoder, count: int = 40) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [rng.integers(0, enc.config.vocab_size, int(rng.integers(1, 33))) for _ in range(count)]


def test_int8_encoder_computes_the_int8_emulation(encoders) -> None:
    enc, fast = encoders
    assert _agreeing(fast, enc, _sequences(enc)) >= 0.9


def test_the_weights_are_unsigned_where_signed_ones_would_saturate() -> None:
    """By default the graph takes uint8 weights exactly where int8 ones would not sum exactly."""
    enc = Encoder(tiny_config(40), tiny_params(tiny_config(40), 0))
    _, weights = encoder_graph(enc, int8=True)
    assert (weights["l0.qkv.wq"].dtype == np.int8) == signed_weights_exact()


def test_int8_weights_at_full_scale_sum_exactly(encoders) -> None:
    """Every weight at ±127 (adjacent products of large activation codes overflow 16 bits): the uint8
    weights compute the int8 emulation on every CPU; int8 weights do where :func:`signed_weights_exact`
    says so, and on a CPU where it says not (AVX2 without VNNI), they are far from it."""
    enc, _ = encoders
    full = enc
    for k, layer in enumerate(enc.layers):
        signs = {name: np.where(getattr(layer, name) < 0, -0.5, 0.5).astype(np.float32)
                 for name in ("qkv_w", "out_w", "ff_in_w", "ff_out_w")}
        full = _with_layer(full, k, **signs)
    sequences = _sequences(full)
    assert _agreeing(OnnxEncoder(full, threads=1, int8=True, unsigned=True), full, sequences) >= 0.9
    signed = _agreeing(OnnxEncoder(full, threads=1, int8=True, unsigned=False), full, sequences)
    assert signed >= 0.9 if signed_weights_exact() else signed < 0.5


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), t=st.integers(1, 32))
def test_int8_encoder_is_within_the_bound_of_float32(encoders, seed, t) -> None:
    enc, fast = encoders
    ids = np.random.default_rng(seed).integers(0, enc.config.vocab_size, t)
    out = fast(ids)
    assert out.dtype == np.float32 and out.shape == (t, enc.config.hidden_size)
    assert np.abs(out - enc(ids)).max() < TOLERANCE


def test_int8_moves_the_states(encoders) -> None:
    """The int8 graph is not the float32 one under another name: its states differ, by more than float32
    rounding (the float32 graph is within 1e-5)."""
    enc, fast = encoders
    ids = np.random.default_rng(5).integers(0, enc.config.vocab_size, 32)
    assert np.abs(fast(ids) - enc(ids)).max() > 1e-3


def _with_layer(enc: Encoder, k: int, **changes: np.ndarray) -> Encoder:
    """A copy of ``enc`` whose layer ``k`` has the given parameters replaced."""
    wrong = Encoder.__new__(Encoder)
    wrong.__dict__.update(enc.__dict__)
    layers = list(enc.layers)
    layers[k] = EncoderLayer(**{**layers[k].__dict__, **changes})
    wrong.layers = tuple(layers)
    return wrong


def test_a_wrong_int8_graph_fails_the_comparisons(encoders) -> None:
    """Two feed-forward columns swapped (states moved by about as much as int8 moves them) fail the
    emulation; a feed-forward output of the wrong sign fails the float32 bound as well."""
    enc, _ = encoders
    ff_in = enc.layers[1].ff_in_w.copy()
    ff_in[:, [0, 1]] = ff_in[:, [1, 0]]
    swapped = OnnxEncoder(_with_layer(enc, 1, ff_in_w=ff_in), threads=1, int8=True)
    assert _agreeing(swapped, enc, _sequences(enc)) < 0.1
    negated = OnnxEncoder(_with_layer(enc, 1, ff_out_w=-enc.layers[1].ff_out_w), threads=1, int8=True)
    assert max(np.abs(negated(ids) - enc(ids)).max() for ids in _sequences(enc, 5)) > TOLERANCE


def test_backend_onnx_int8_scores_within_the_bound(tiny, monkeypatch) -> None:
    d = tiny[0]
    exact = load_neural_model(d, backend="numpy")
    int8 = load_neural_model(d, backend="onnx-int8")
    assert isinstance(int8.encoder, OnnxEncoder) and int8.encoder.int8
    gap = np.abs(int8.keep_logits(SENTENCE) - exact.keep_logits(SENTENCE)).max()
    assert 0 < gap < TOLERANCE * np.abs(exact.head_weight).sum()  # |Δlogit| <= |Δh|_max * |w|_1
    monkeypatch.setenv("DUALDECOMP_ENCODER", "onnx-int8")
    assert load_neural_model(d).encoder.int8
    monkeypatch.delenv("DUALDECOMP_ENCODER")
    assert not load_neural_model(d).encoder.int8  # never the default


def test_the_int8_backend_takes_the_stored_rows_without_float32_matrices(tiny, monkeypatch) -> None:
    """Loaded with the int8 backend, the graph gets the stored int8 rows and scales as they are: the very
    initializers (hence bitwise the very states) of quantising the float32 encoder's matrices again, and
    the loader never asks for a float32 copy of a block matrix."""
    d, config, _ = tiny
    numpy_encoder = load_neural_model(d, backend="numpy").encoder
    via_float = OnnxEncoder(numpy_encoder, threads=1, int8=True)
    asked: list[str] = []
    read = store._Dequantised.__getitem__
    monkeypatch.setattr(store._Dequantised, "__getitem__",
                        lambda self, name: asked.append(name) or read(self, name))
    direct = load_neural_model(d, backend="onnx-int8").encoder
    blocks = {name + ".weight" for k in range(config.num_hidden_layers)
              for part, name in layer_names(config.model_type, k).items() if not part.startswith("norm")}
    assert asked and "embeddings.word_embeddings.weight" in asked and not blocks & set(asked)
    assert direct._weights.keys() == via_float._weights.keys()
    assert all(np.array_equal(direct._weights[k], via_float._weights[k]) for k in direct._weights)
    for ids in _sequences(numpy_encoder, 10):
        assert np.array_equal(direct(ids), via_float(ids))


@pytest.mark.parametrize("change, message", [
    (lambda q, s: (q, np.where(np.arange(s.size) == 2, np.nan, s).astype(np.float32)), "finite and positive"),
    (lambda q, s: (q, -s), "finite and positive"),
    (lambda q, s: (q.astype(np.int16), s), "not int8"),
    (lambda q, s: (q[:, :-1], s), "not int8"),
    (lambda q, s: (q, s[:-1]), "not int8"),
])
def test_bad_int8_rows_are_a_model_error(change, message) -> None:
    config = tiny_config(40)
    params = tiny_params(config, seed=3)
    name = layer_names(config.model_type, 1)["ff_in"] + ".weight"
    parts = encoder_parts(config, params, quantised={name: quantise_rows(params[name])})
    assert isinstance(parts.layers[1].ff_in_w, Int8Matrix)
    assert not isinstance(parts.layers[0].ff_in_w, Int8Matrix)
    with pytest.raises(ModelError, match=f"{name} .*{message}"):
        encoder_parts(config, params, quantised={name: change(*quantise_rows(params[name]))})
