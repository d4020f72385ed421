"""MPNet encoders (all-mpnet-base-v2's architecture) in the neural scorer: the relative-position buckets
against hand-worked values, a loop oracle and transformers; the numpy encoder against the loop oracle and
transformers' ``MPNetModel``; the onnxruntime graphs (float32 and int8) against numpy; saving and loading;
and the BERT files and configurations as they were. The transformers comparisons run where the ``train``
extra is installed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import read_npz, write_manifest
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.neural.encoder import (
    Encoder,
    EncoderConfig,
    layer_names,
    relative_attention_bias,
    relative_position_bucket,
)
from dualdecomp.models.neural.model import NeuralScorer
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder, encoder_graph, onnx_available
from dualdecomp.models.neural.pieces import BERT_SPECIALS, MPNET_SPECIALS, Pieces, specials_for
from dualdecomp.models.neural.store import load_neural_model
from tests.neural_tiny import (
    oracle_bucket,
    oracle_encoder,
    tiny_config,
    tiny_params,
    write_tiny_scorer,
    write_tiny_tokenizer,
)

needs_onnx = pytest.mark.skipif(not onnx_available(), reason="onnx/onnxruntime not installed")

SENTENCE = "The council plans on Tuesday to consider 12 elections , xyzzy .".split()
BIAS = "encoder.relative_attention_bias.weight"
ALL_MPNET_BASE_V2 = {
    "_name_or_path": "microsoft/mpnet-base", "architectures": ["MPNetForMaskedLM"],
    "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "model_type": "mpnet", "num_attention_heads": 12,
    "num_hidden_layers": 12, "pad_token_id": 1, "relative_attention_num_buckets": 32,
    "transformers_version": "4.8.2", "vocab_size": 30527}
"""all-mpnet-base-v2's ``config.json``."""
INT8_TOLERANCE = 0.3
"""Stated bound on |int8 - float32| of a hidden state of the tiny encoder (as tests/test_neural_int8.py:
layer-normed states of order 1, weights of scale 0.5)."""


@st.composite
def mpnet_configs(draw, longest: int = 40) -> EncoderConfig:
    """A small random MPNet configuration of 12 to ``longest`` positions."""
    heads = draw(st.integers(1, 3))
    return EncoderConfig(vocab_size=draw(st.integers(4, 40)), hidden_size=heads * draw(st.integers(2, 4)),
                         num_hidden_layers=draw(st.integers(1, 3)), num_attention_heads=heads,
                         intermediate_size=draw(st.integers(1, 12)),
                         max_position_embeddings=draw(st.integers(12, longest)), layer_norm_eps=1e-5,
                         model_type="mpnet", pad_token_id=1,
                         relative_attention_num_buckets=draw(st.sampled_from([32, 33, 40])))


def random_ids(config: EncoderConfig, t: int, seed: int) -> np.ndarray:
    """``t`` random piece ids: ``<s>`` (0), then any but the pad id 1 (transformers gives a pad piece the
    padding position)."""
    ids = np.random.default_rng(seed).integers(2, config.vocab_size, t)
    ids[0] = 0
    return ids


# ---- the relative-position buckets


def test_buckets_of_hand_worked_distances() -> None:
    # relative = key - query; keys after the query from bucket 16; 8 + floor(8 log(d / 8) / log 16) from 8 on
    cases = {0: 0, -1: 1, 1: 17, -7: 7, 7: 23, -8: 8, -11: 8, -12: 9, 12: 25, -16: 10, -32: 12, -64: 14,
             -127: 15, -128: 15, 128: 31, -5000: 15, 5000: 31}
    got = relative_position_bucket(np.array(list(cases)))
    assert got.dtype == np.int64 and got.tolist() == list(cases.values())
    assert [oracle_bucket(r) for r in cases] == list(cases.values())


def test_buckets_match_the_oracle_at_every_distance() -> None:
    relative = np.arange(-1100, 1101)
    assert relative_position_bucket(relative).tolist() == [oracle_bucket(int(r)) for r in relative]


def test_buckets_match_transformers() -> None:
    torch = pytest.importorskip("torch")
    mpnet = pytest.importorskip("transformers.models.mpnet.modeling_mpnet")
    relative = np.arange(-3000, 3001)
    for buckets, distance in ((32, 128), (64, 128), (16, 64), (8, 32), (32, 20)):
        expected = mpnet.MPNetEncoder.relative_position_bucket(
            torch.from_numpy(relative), num_buckets=buckets, max_distance=distance).numpy()
        assert np.array_equal(relative_position_bucket(relative, buckets, distance), expected)
    assert [oracle_bucket(int(r)) for r in relative] == relative_position_bucket(relative).tolist()


def test_attention_bias_reads_the_table_by_bucket() -> None:
    table = np.random.default_rng(0).normal(size=(33, 3)).astype(np.float32)
    bias = relative_attention_bias(table, 40)
    assert bias.dtype == np.float32 and bias.shape == (3, 40, 40)
    for i in range(40):
        for j in range(40):
            assert np.array_equal(bias[:, i, j], table[oracle_bucket(j - i)])


# ---- the numpy encoder


@settings(max_examples=15)
@given(config=mpnet_configs(), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_numpy_encoder_matches_the_loop_oracle(config, seed, data) -> None:
    params = tiny_params(config, seed)
    t = data.draw(st.integers(1, config.max_pieces))
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, t)
    out = Encoder(config, params)(ids)
    assert out.dtype == np.float32 and out.shape == (t, config.hidden_size)
    assert np.abs(out - oracle_encoder(config, params, list(ids))).max() < 1e-5


def _transformers_model(config: EncoderConfig, params: dict[str, np.ndarray]):
    """transformers' ``MPNetModel`` of ``config`` (no dropout) holding ``params``; its config must read back
    as ``config`` and its state_dict hold exactly :meth:`EncoderConfig.parameter_shapes`."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    hf = transformers.MPNetConfig(**{k: v for k, v in config.to_dict().items() if k != "model_type"},
                                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    assert EncoderConfig.from_dict(hf.to_dict()) == config  # how the training code reads its config
    model = transformers.MPNetModel(hf, add_pooling_layer=False).eval()
    assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == config.parameter_shapes()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in params.items()}, strict=True)
    return model


@settings(max_examples=10)
@given(config=mpnet_configs(longest=150), seed=st.integers(0, 2**32 - 1))
def test_numpy_encoder_matches_transformers(config, seed) -> None:
    torch = pytest.importorskip("torch")
    params = tiny_params(config, seed)
    model = _transformers_model(config, params)
    encoder = Encoder(config, params)
    for t in sorted({1, 2, 9, config.max_pieces}):
        ids = random_ids(config, t, seed)
        with torch.no_grad():
            expected = model(torch.from_numpy(ids)[None]).last_hidden_state[0].numpy()
        assert np.abs(encoder(ids) - expected).max() < 1e-5


def test_numpy_encoder_refuses_inputs_beyond_its_window() -> None:
    sizes = {"vocab_size": 20, "hidden_size": 4, "num_hidden_layers": 1, "num_attention_heads": 2,
             "intermediate_size": 4, "max_position_embeddings": 14}
    config = EncoderConfig.from_dict({**ALL_MPNET_BASE_V2, **sizes})
    encoder = Encoder(config, tiny_params(config, 0))
    assert config.max_pieces == 12 and encoder.position_table.shape == (12, 4)
    encoder(np.zeros(12, np.int64))
    with pytest.raises(ValueError, match="1..12"):
        encoder(np.zeros(13, np.int64))


# ---- onnxruntime


@needs_onnx
@settings(max_examples=20)
@given(config=mpnet_configs(longest=200), seed=st.integers(0, 2**32 - 1))
def test_onnxruntime_float32_matches_numpy(config, seed) -> None:
    encoder = Encoder(config, tiny_params(config, seed))
    fast = OnnxEncoder(encoder, threads=1)
    rng = np.random.default_rng(seed)
    for t in sorted({1, 2, int(rng.integers(1, config.max_pieces + 1)), config.max_pieces}):
        ids = rng.integers(0, config.vocab_size, t)
        out = fast(ids)
        assert out.dtype == np.float32 and out.shape == (t, config.hidden_size)
        assert np.abs(out - encoder(ids)).max() < 1e-5
    with pytest.raises(ValueError):
        fast(np.zeros(config.max_pieces + 1, np.int64))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny MPNet scorers saved as float32 and as int8 rows (one seed)."""
    root = tmp_path_factory.mktemp("mpnet")
    config, params, head_w, head_b = write_tiny_scorer(root / "f", seed=7, model_type="mpnet")
    write_tiny_scorer(root / "q", seed=7, quantise=True, model_type="mpnet")
    return root, config, params, head_w, head_b


@needs_onnx
@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), t=st.integers(1, 30))
def test_int8_graph_is_within_the_bound_of_float32(tiny, seed, t) -> None:
    encoder = load_neural_model(tiny[0] / "q", backend="numpy").encoder
    ids = np.random.default_rng(seed).integers(0, encoder.config.vocab_size, t)
    out = OnnxEncoder(encoder, threads=1, int8=True)(ids)
    assert out.dtype == np.float32 and out.shape == (t, encoder.config.hidden_size)
    assert np.abs(out - encoder(ids)).max() < INT8_TOLERANCE


@needs_onnx
def test_int8_graph_moves_the_states_but_not_the_bias(tiny) -> None:
    encoder = load_neural_model(tiny[0] / "q", backend="numpy").encoder
    ids = np.random.default_rng(5).integers(0, encoder.config.vocab_size, 30)
    assert np.abs(OnnxEncoder(encoder, threads=1, int8=True)(ids) - encoder(ids)).max() > 1e-3
    _, weights = encoder_graph(encoder, int8=True)
    assert np.array_equal(weights["attention_bias"], encoder.attention_bias)


# ---- saving and loading


def test_round_trip_keeps_the_architecture_and_the_bias_in_float32(tiny) -> None:
    root, config, params, head_w, head_b = tiny
    for folder in ("f", "q"):
        spec = json.loads((root / folder / "model.json").read_text())["encoder"]
        assert spec["model_type"] == "mpnet" and spec["pad_token_id"] == 1 and "type_vocab_size" not in spec
        assert EncoderConfig.from_dict(spec) == config
        stored = read_npz(root / folder / "weights.npz")
        assert stored[BIAS].dtype == np.float32 and np.array_equal(stored[BIAS], params[BIAS])
        assert BIAS + "::scale" not in stored
        matrix = "encoder.layer.0.attention.attn.q.weight"
        assert stored[matrix].dtype == (np.int8 if folder == "q" else np.float32)
        loaded = load_neural_model(root / folder, backend="numpy")
        assert loaded.encoder.config == config
        assert np.array_equal(loaded.encoder.attention_bias, relative_attention_bias(params[BIAS], 30))
    direct = NeuralScorer(Encoder(config, params), Pieces(root / "f" / "tokenizer.json", config.max_pieces,
                                                          specials=MPNET_SPECIALS), head_w, head_b)
    assert np.array_equal(load_neural_model(root / "f", backend="numpy").keep_logits(SENTENCE),
                          direct.keep_logits(SENTENCE))


def test_loaded_pieces_use_the_mpnet_specials_and_window(tiny) -> None:
    pieces = load_neural_model(tiny[0] / "f", backend="numpy").pieces
    assert (pieces.cls_id, pieces.sep_id, pieces.unk_id) == (0, 2, 3) and pieces.max_pieces == 30
    words = SENTENCE * 4
    windows = pieces.windows(words)
    assert len(windows) > 1 and sum(len(w.first) for w in windows) == len(words)
    for w in windows:
        assert w.ids[0] == 0 and w.ids[-1] == 2 and len(w.ids) <= 30 and 1 not in w.ids
    assert pieces.word_pieces(["<unk>"]) == [[3]]


@needs_onnx
@pytest.mark.parametrize("folder", ["f", "q"])
def test_backends_give_the_same_keep_logits(tiny, folder) -> None:
    d = tiny[0] / folder
    by_numpy = load_neural_model(d, backend="numpy")
    by_ort = load_neural_model(d, backend="onnxruntime")
    assert isinstance(by_ort.encoder, OnnxEncoder)
    for words in (SENTENCE, SENTENCE * 4, ["tuesday"]):
        assert np.abs(by_ort.keep_logits(words) - by_numpy.keep_logits(words)).max() < 1e-5
    int8 = load_neural_model(d, backend="onnx-int8").keep_logits(SENTENCE)
    assert np.abs(int8 - by_numpy.keep_logits(SENTENCE)).max() < np.abs(tiny[3]).sum() * INT8_TOLERANCE


# ---- configurations, tokenizers, BERT as before


def test_config_of_all_mpnet_base_v2() -> None:
    config = EncoderConfig.from_dict(ALL_MPNET_BASE_V2)
    assert (config.model_type, config.pad_token_id, config.relative_attention_num_buckets) == ("mpnet", 1, 32)
    assert config.max_pieces == 512 and config.layer_norm_eps == 1e-5
    assert EncoderConfig.from_dict(config.to_dict()) == config
    shapes = config.parameter_shapes()
    assert len(shapes) == 4 + 16 * 12 + 1 and shapes[BIAS] == (32, 12)
    assert shapes["embeddings.position_embeddings.weight"] == (514, 768)
    assert not any("token_type" in name for name in shapes)


def test_bert_configs_read_and_write_as_before() -> None:
    spec = json.loads((default_model_dir() / "neural" / "model.json").read_text())["encoder"]
    config = EncoderConfig.from_dict(spec)
    assert config.model_type == "bert" and config.max_pieces == config.max_position_embeddings == 512
    assert config.to_dict() == spec  # the stored model.json (and its checksum) would be written unchanged
    hf_bert = {**spec, "pad_token_id": 0, "type_vocab_size": 2, "architectures": ["BertModel"]}
    assert EncoderConfig.from_dict(hf_bert) == config
    stored = read_npz(default_model_dir() / "neural" / "weights.npz")
    assert set(config.parameter_shapes()) == {k for k in stored if k.startswith(("embeddings.", "encoder."))
                                              and not k.endswith("::scale")}
    assert specials_for("bert") == BERT_SPECIALS and specials_for("mpnet") == MPNET_SPECIALS


@pytest.mark.parametrize(("change", "message"), [
    ({"model_type": "roberta"}, "model_type must be one of bert, mpnet, not 'roberta'"),
    ({"model_type": None}, "model_type"),
    ({"pad_token_id": 0}, "pad_token_id must be 1"),
    ({"pad_token_id": -1}, "pad_token_id must be a non-negative integer"),
    ({"relative_attention_num_buckets": 16}, "at least 32"),
    ({"relative_attention_num_buckets": 0}, "positive integer"),
    ({"max_position_embeddings": 2}, "must exceed pad_token_id"),
])
def test_bad_configs_are_refused(change, message) -> None:
    with pytest.raises(ModelError, match=message):
        EncoderConfig.from_dict({**ALL_MPNET_BASE_V2, **change})


def test_unknown_model_types_have_no_specials() -> None:
    with pytest.raises(ModelError, match="model type 'roberta'"):
        specials_for("roberta")


def test_tiny_tokenizers(tmp_path) -> None:
    bert = write_tiny_tokenizer(tmp_path / "bert.json")
    mpnet = write_tiny_tokenizer(tmp_path / "mpnet.json", model_type="mpnet")
    assert mpnet == bert + 4
    p = Pieces(tmp_path / "mpnet.json", 30, specials=specials_for("mpnet"))
    b = Pieces(tmp_path / "bert.json", 32)
    assert (p.cls_id, p.sep_id, p.unk_id) == (0, 2, 3) and (b.cls_id, b.sep_id, b.unk_id) == (2, 3, 1)
    assert [[i - 4 for i in w] for w in p.word_pieces(SENTENCE)] == b.word_pieces(SENTENCE)


@pytest.mark.parametrize("model_type", ["bert", "mpnet"])
def test_the_encoder_reads_its_parameters_one_at_a_time(model_type) -> None:
    """A mapping that builds each parameter when read (the stored model's dequantisation) never has more
    than two layers' matrices alive at once beside the embedding tables (the encoder keeps transposed
    copies; the previous layer's are let go while the next one's are read), and the encoder it gives
    computes what the dict gives."""
    import dataclasses
    import gc
    import weakref
    from collections.abc import Mapping

    config = dataclasses.replace(tiny_config(40, model_type=model_type), num_hidden_layers=5)
    params = tiny_params(config, seed=3)
    alive: list = []
    most = [0]

    class Built(Mapping):
        def __getitem__(self, name):
            gc.collect()
            alive[:] = [ref for ref in alive if ref() is not None]
            most[0] = max(most[0], len(alive))
            value = params[name].copy()
            if value.ndim == 2:  # the matrices: the biases and norms are kept as they are
                alive.append(weakref.ref(value))
            return value

        def __iter__(self):
            return iter(params)

        def __len__(self):
            return len(params)

    lazy = Encoder(config, Built())
    shapes = config.parameter_shapes()
    per_layer = sum(len(shapes[name + ".weight"]) == 2 for name in layer_names(model_type, 0).values())
    tables = sum(len(shape) == 2 for shape in shapes.values()) - config.num_hidden_layers * per_layer
    assert most[0] <= tables + 2 * per_layer, (most[0], tables, per_layer)  # all five: tables + 30
    ids = np.array([1, 5, 7, 9, 2])
    assert np.array_equal(lazy(ids), Encoder(config, params)(ids))


def test_a_non_finite_or_misshapen_parameter_is_a_model_error() -> None:
    config = tiny_config(40, model_type="mpnet")
    params = tiny_params(config, seed=3)
    name = next(n for n in params if n.endswith("intermediate.dense.weight"))
    with pytest.raises(ModelError, match=f"{name} has non-finite values"):
        Encoder(config, {**params, name: np.full_like(params[name], np.nan)})
    with pytest.raises(ModelError, match=f"{name} has shape"):
        Encoder(config, {**params, name: params[name][:, :-1]})
    with pytest.raises(ModelError, match=f"missing {name}"):
        Encoder(config, {k: v for k, v in params.items() if k != name})


def test_a_large_scorer_is_split_over_weight_files(tmp_path, monkeypatch) -> None:
    """Above SHARD_BYTES the arrays go to weights.npz, weights-2.npz, ...; loading joins them (same
    scores, every file checked), a smaller re-save removes the files it no longer needs, and a name in
    two files is refused."""
    import dualdecomp.models.neural.store as store

    write_tiny_scorer(tmp_path / "one", seed=4, quantise=True, pair_rank=3, model_type="mpnet")
    monkeypatch.setattr(store, "SHARD_BYTES", 600)
    write_tiny_scorer(tmp_path / "many", seed=4, quantise=True, pair_rank=3, model_type="mpnet")
    files = store.weight_files(tmp_path / "many")
    assert len(files) > 3 and [f.name for f in files[:2]] == ["weights.npz", "weights-2.npz"]
    assert {"head.weight", "head.bias"} <= set(read_npz(files[0]))
    one, many = (load_neural_model(tmp_path / d, backend="numpy") for d in ("one", "many"))
    assert np.array_equal(one.keep_logits(SENTENCE), many.keep_logits(SENTENCE))
    assert np.array_equal(one.bigram_potentials(SENTENCE), many.bigram_potentials(SENTENCE))
    last = files[-1].read_bytes()
    files[-1].write_bytes(last[:-8])  # a damaged later file fails its checksum like weights.npz
    with pytest.raises(ModelError):
        load_neural_model(tmp_path / "many", backend="numpy")
    files[-1].write_bytes(last)
    duplicate = read_npz(files[1])
    np.savez(files[2], **duplicate)
    write_manifest(tmp_path / "many")
    with pytest.raises(ModelError, match="also in an earlier weights file"):
        load_neural_model(tmp_path / "many", backend="numpy")
    monkeypatch.setattr(store, "SHARD_BYTES", 1 << 30)
    write_tiny_scorer(tmp_path / "many", seed=4, quantise=True, pair_rank=3, model_type="mpnet")
    assert store.weight_files(tmp_path / "many") == [tmp_path / "many" / "weights.npz"]
    assert np.array_equal(load_neural_model(tmp_path / "many", backend="numpy").keep_logits(SENTENCE),
                          one.keep_logits(SENTENCE))
