"""Fine-tuning the neural scorer (only with the optional ``train`` extra: PyTorch + transformers).

A tiny randomly initialised BERT of the shipped architecture, saved in the Hugging Face format with a
tiny word-piece tokenizer, is fine-tuned on a handful of sentences; the exported model must load with
the numpy encoder, and the numpy and onnxruntime encoders must compute what transformers computes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from dualdecomp.core.cpu_info import bfloat16_emulated  # noqa: E402
from dualdecomp.models.neural.encoder import Encoder, EncoderConfig  # noqa: E402
from dualdecomp.models.neural.examples import Example  # noqa: E402
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder  # noqa: E402
from dualdecomp.models.neural.store import load_neural_model  # noqa: E402
from dualdecomp.models.neural.training import TrainingSettings, fine_tune  # noqa: E402
from dualdecomp.models.neural.training_settings import autocast_warning  # noqa: E402
from tests.neural_tiny import WORDS  # noqa: E402
from tests.neural_tiny_base import write_tiny_base  # noqa: E402


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    return write_tiny_base(tmp_path_factory.mktemp("base"))


def test_encoders_compute_what_transformers_computes(tiny_base) -> None:
    model = transformers.BertModel.from_pretrained(str(tiny_base), add_pooling_layer=False).eval()
    config = EncoderConfig.from_dict(json.loads((tiny_base / "config.json").read_text()))
    enc = Encoder(config, {k: v.numpy() for k, v in model.state_dict().items()})
    ids = np.array([2, 7, 9, 11, 5, 3])
    with torch.no_grad():
        ref = model(input_ids=torch.tensor(ids[None])).last_hidden_state[0].numpy()
    assert np.abs(enc(ids) - ref).max() < 1e-4
    assert np.abs(OnnxEncoder(enc, threads=1)(ids) - ref).max() < 1e-4


def test_fine_tune_lowers_the_loss_and_exports_a_loadable_model(tiny_base, tmp_path) -> None:
    rng = np.random.default_rng(0)
    train = []
    for _ in range(24):
        words = tuple(WORDS[i] for i in rng.integers(0, len(WORDS), 6))
        train.append(Example(words, np.array([1.0 if w in ("council", "plans", "election") else 0.0
                                              for w in words]), "toy"))
    settings = TrainingSettings(epochs=6, batch_size=8, learning_rate=5e-3, head_learning_rate=5e-2,
                                eval_every=3, max_minutes=5, freeze_embeddings=False)
    record = fine_tune(tiny_base, train, train[:8], tmp_path / "out", settings, log=lambda s: None)
    curve = json.loads((tmp_path / "out" / "curve.json").read_text())
    assert record["steps"] == 18 and curve[-1]["step"] == 18
    assert curve[-1]["dev_loss"] < curve[0]["dev_loss"]
    scorer = load_neural_model(tmp_path / "out")
    logits = scorer.keep_logits(["the", "council", "plans", "to", "election", "."])
    assert logits.shape == (6,) and np.isfinite(logits).all()
    assert scorer.meta["train_sentences"] == 24


def test_step_budget_stops_training_and_reruns_reproduce_the_model(tiny_base, tmp_path) -> None:
    rng = np.random.default_rng(1)
    train = [Example(tuple(WORDS[i] for i in rng.integers(0, len(WORDS), 5)),
                     rng.integers(0, 2, 5).astype(float), "toy") for _ in range(24)]
    settings = TrainingSettings(epochs=6, batch_size=8, learning_rate=5e-3, eval_every=2, max_minutes=5,
                                max_steps=4, threads=1)
    runs = []
    for name in ("a", "b"):
        record = fine_tune(tiny_base, train, train[:8], tmp_path / name, settings, log=lambda s: None)
        assert record["steps"] == 4 and record["stopped_by"] == "step budget"
        runs.append(load_neural_model(tmp_path / name))
    sentence = ["the", "council", "plans", "an", "election", "."]
    np.testing.assert_array_equal(runs[0].keep_logits(sentence), runs[1].keep_logits(sentence))


def test_chain_nll_is_the_log_likelihood_of_the_enumerated_chain_model() -> None:
    import itertools

    from dualdecomp.models.neural.pair_head import bigram_potentials
    from dualdecomp.models.neural.training import _PairHead, chain_nll

    torch.manual_seed(3)
    head = _PairHead(6, 3)
    for p in head.parameters():
        torch.nn.init.normal_(p)
    lengths = np.array([5, 3, 1])
    picked, unary = torch.randn(3, 5, 6), torch.randn(3, 5)
    gold = np.zeros((3, 5))
    gold[0, [0, 2, 3]] = 1
    gold[1, [2]] = 1  # sentence 2 keeps nothing: the empty compression
    expected = 0.0
    exported = head.export()
    for b, n in enumerate(lengths):
        B = bigram_potentials(exported, picked[b, :n].numpy().astype(np.float64), unary[b, :n].numpy())
        scores = []
        for keep in itertools.product([0, 1], repeat=int(n)):
            seq = [0] + [k + 1 for k in range(n) if keep[k]] + [n + 1]
            scores.append(sum(B[i, j] for i, j in itertools.pairwise(seq)))
        gold_keep = tuple(int(x) for x in gold[b, :n])
        gold_index = list(itertools.product([0, 1], repeat=int(n))).index(gold_keep)
        expected += float(np.logaddexp.reduce(scores)) - scores[gold_index]
    with torch.no_grad():
        value = float(chain_nll(head, picked, unary, gold, lengths))
    assert abs(value - expected) <= 1e-4 * max(1.0, abs(expected))


def test_fine_tune_with_a_pair_head_exports_a_bigram_scorer(tiny_base, tmp_path) -> None:
    rng = np.random.default_rng(2)
    train = [Example(tuple(WORDS[i] for i in rng.integers(0, len(WORDS), 6)),
                     rng.integers(0, 2, 6).astype(float), "toy") for _ in range(16)]
    settings = TrainingSettings(epochs=4, batch_size=8, learning_rate=5e-3, head_learning_rate=5e-2,
                                eval_every=2, max_minutes=5, pair_rank=4, threads=1)
    fine_tune(tiny_base, train, train[:8], tmp_path / "out", settings, log=lambda s: None)
    curve = json.loads((tmp_path / "out" / "curve.json").read_text())
    assert curve[-1]["dev_chain_loss"] < curve[0]["dev_chain_loss"]
    scorer = load_neural_model(tmp_path / "out")
    assert scorer.pair is not None and scorer.pair.rank == 4
    B = scorer.bigram_potentials(["the", "council", "plans", "an", "election", "."])
    assert B.shape == (8, 8) and np.isfinite(B).all()


def _toy(seed: int, n: int, words: int = 6) -> list[Example]:
    rng = np.random.default_rng(seed)
    return [Example(tuple(WORDS[i] for i in rng.integers(0, len(WORDS), words)),
                    rng.integers(0, 2, words).astype(float), "toy") for _ in range(n)]


@pytest.mark.parametrize("autocast", ["none", "bfloat16"])
def test_a_fine_tuned_mpnet_exports_what_transformers_computes(tmp_path, autocast) -> None:
    base = write_tiny_base(tmp_path / "base", model_type="mpnet")
    train = _toy(3, 16)
    settings = TrainingSettings(epochs=3, batch_size=8, learning_rate=5e-3, head_learning_rate=5e-2,
                                eval_every=2, max_minutes=5, threads=1, freeze_embeddings=False,
                                autocast=autocast)
    logs: list[str] = []
    record = fine_tune(base, train, train[:8], tmp_path / "out", settings, log=logs.append)
    assert record["steps"] == 6 and record["settings"].get("autocast", "none") == autocast
    # bfloat16 on a CPU that emulates it is warned of, once, before training
    warned = [s for s in logs if s.startswith("warning: --autocast bfloat16")]
    assert warned == ([autocast_warning(settings)] if autocast_warning(settings) else [])
    assert len(warned) == (autocast == "bfloat16" and bfloat16_emulated())
    scorer = load_neural_model(tmp_path / "out", backend="numpy")
    assert scorer.encoder.config.model_type == "mpnet"
    # transformers' MPNetModel over the exported (dequantised) weights, the head on each word's first piece
    with np.load(tmp_path / "out" / "weights.npz") as z:
        arrays = {k: z[k] for k in z.files}
    state = {}
    for name, value in arrays.items():
        if name.endswith("::scale") or name.startswith(("head.", "pair.")):
            continue
        scale = arrays.get(name + "::scale")
        state[name] = torch.from_numpy(value.astype(np.float32) * scale[:, None] if scale is not None
                                       else value.astype(np.float32))
    model = transformers.MPNetModel(transformers.MPNetConfig.from_pretrained(str(base)),
                                    add_pooling_layer=False).eval()
    model.load_state_dict(state, strict=True)
    words = ["the", "council", "plans", "an", "election", "on", "tuesday", "."]
    window = scorer.pieces.windows(words)[0]
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor(window.ids[None])).last_hidden_state[0].numpy()
    expected = hidden[window.first] @ arrays["head.weight"] + arrays["head.bias"]
    for backend in ("numpy", "onnxruntime"):
        got = load_neural_model(tmp_path / "out", backend=backend).keep_logits(words)
        assert np.abs(got - expected).max() < 1e-4, backend


def test_micro_batches_make_the_whole_batch_step(tmp_path) -> None:
    base = write_tiny_base(tmp_path / "base", dropout=0.0)  # no dropout: the same forward passes
    train = _toy(4, 8, words=5) + _toy(5, 8, words=7)
    runs = {}
    for budget in (0, 18):
        settings = TrainingSettings(epochs=2, batch_size=16, learning_rate=5e-3, eval_every=1,
                                    max_minutes=5, threads=1, freeze_embeddings=False,
                                    max_batch_pieces=budget)
        fine_tune(base, train, train[:8], tmp_path / str(budget), settings, log=lambda s: None)
        curve = json.loads((tmp_path / str(budget) / "curve.json").read_text())
        runs[budget] = (curve, load_neural_model(tmp_path / str(budget), backend="numpy"))
    (whole, whole_scorer), (micro, micro_scorer) = runs[0], runs[18]
    assert len(whole) == len(micro) == 2
    for a, b in zip(whole, micro, strict=True):
        assert abs(a["train_loss"] - b["train_loss"]) < 1e-5 and abs(a["dev_loss"] - b["dev_loss"]) < 1e-5
    sentence = ["the", "council", "plans", "an", "election", "."]
    np.testing.assert_allclose(micro_scorer.keep_logits(sentence), whole_scorer.keep_logits(sentence),
                               atol=1e-3)
