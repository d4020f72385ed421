"""A tiny randomly initialised neural scorer (BERT, the shipped architecture, or MPNet) for tests, and a
loop oracle."""

from __future__ import annotations

import math
import string
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from dualdecomp.core.model_files import write_manifest
from dualdecomp.models.neural.encoder import EncoderConfig
from dualdecomp.models.neural.pair_head import GAP_BUCKETS, PairHead
from dualdecomp.models.neural.store import save_neural_model

WORDS = ["the", "council", "plans", "to", "consider", "its", "election", "on", "tuesday", "."]


def write_tiny_tokenizer(path: Path, model_type: str = "bert") -> int:
    """A BERT-style word-piece tokenizer (lowercasing) over letters, some words and punctuation; for
    ``model_type="mpnet"`` the same pieces after MPNet's ``<s>``, ``<pad>``, ``</s>``, ``<unk>`` (ids 0 to
    3, as in all-mpnet-base-v2). Returns the vocabulary size."""
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "#", ",", *WORDS[:-1], "."]
    pieces += list(string.ascii_lowercase) + ["##" + c for c in string.ascii_lowercase]
    if model_type == "mpnet":
        pieces = ["<s>", "<pad>", "</s>", "<unk>", *pieces]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.save(str(path))
    return len(vocab)


def tiny_params(config: EncoderConfig, seed: int) -> dict[str, np.ndarray]:
    """Random parameters of every encoder weight (layer norms near identity)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in config.parameter_shapes().items():
        if name.endswith("LayerNorm.weight"):
            params[name] = 1.0 + 0.1 * rng.normal(size=shape)
        else:
            params[name] = 0.5 * rng.normal(size=shape)
    return {k: v.astype(np.float32) for k, v in params.items()}


def tiny_pair_head(hidden: int, rank: int, seed: int) -> PairHead:
    """A random pair head (float32-representable values, as stored)."""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.normal(size=shape).astype(np.float32).astype(np.float64)

    return PairHead(left=r(rank, hidden), right=r(rank, hidden), start_weight=r(hidden),
                    start_bias=float(r(1)[0]), end_weight=r(hidden), end_bias=float(r(1)[0]),
                    gap=r(GAP_BUCKETS), gap_start=r(GAP_BUCKETS), gap_end=r(GAP_BUCKETS),
                    empty=float(r(1)[0]))


def tiny_config(vocab: int, max_positions: int = 32, model_type: str = "bert") -> EncoderConfig:
    """The tiny scorer's sizes (MPNet: its pad id 1 and epsilon 1e-5; its window is ``max_positions - 2``)."""
    sizes = {"vocab_size": vocab, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 16, "max_position_embeddings": max_positions}
    if model_type == "mpnet":
        return EncoderConfig(**sizes, layer_norm_eps=1e-5, model_type="mpnet", pad_token_id=1)
    return EncoderConfig(**sizes)


def write_tiny_scorer(directory: Path, seed: int = 0, quantise: bool = False, max_positions: int = 32,
                      pair_rank: int = 0,
                      model_type: str = "bert") -> tuple[EncoderConfig, dict, np.ndarray, float]:
    """Write a tiny random scorer of ``model_type`` ("bert" or "mpnet") to ``directory`` (with a random pair
    head of ``pair_rank`` > 0); return its config, parameters and head."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = write_tiny_tokenizer(directory / "tok.json", model_type)
    config = tiny_config(vocab, max_positions, model_type)
    params = tiny_params(config, seed)
    rng = np.random.default_rng(seed + 1)
    head_w, head_b = rng.normal(size=8).astype(np.float32), float(rng.normal())
    pair = tiny_pair_head(8, pair_rank, seed + 2) if pair_rank else None
    save_neural_model(directory, config, params, head_w, head_b, directory / "tok.json",
                      meta={"test": True}, quantise=quantise, pair=pair)
    (directory / "tok.json").unlink()
    write_manifest(directory)  # the source tokenizer is gone: the folder's manifest lists what is left
    return config, params, head_w, head_b


ORACLE_NAMES = {
    "bert": ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
             "attention.output.LayerNorm"),
    "mpnet": ("attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o",
              "attention.LayerNorm"),
}
"""Each model type's names of a block's query, key, value, attention output and its layer norm."""


def oracle_bucket(relative: int) -> int:
    """MPNet's relative-position bucket of key position minus query position, by T5's definition (32
    buckets, distances from 128 in the last): keys after the query in buckets 16 to 31; distances below 8
    exact; larger ones in ``8 + floor(log(d / 8) / log 16 * 8)``, at most 15."""
    offset = 16 if relative > 0 else 0
    distance = abs(relative)
    if distance < 8:
        return offset + distance
    return offset + min(15, 8 + int(math.log(distance / 8) / math.log(16) * 8))


def oracle_encoder(config: EncoderConfig, params: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """The BERT or MPNet forward pass written position by position and head by head, in float64."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    h, heads = config.hidden_size, config.num_attention_heads
    dh = h // heads
    mpnet = config.model_type == "mpnet"
    query, key, value, attended, attended_norm = ORACLE_NAMES[config.model_type]

    def norm(v, name):
        mu = sum(v) / len(v)
        var = sum((x - mu) ** 2 for x in v) / len(v)
        scaled = np.array([(x - mu) / math.sqrt(var + config.layer_norm_eps) for x in v])
        return scaled * p[name + ".weight"] + p[name + ".bias"]

    def dense(v, name):
        return p[name + ".weight"] @ v + p[name + ".bias"]

    def embedding(t, i):
        if mpnet:  # positions from pad + 1, no segment
            return (p["embeddings.word_embeddings.weight"][i]
                    + p["embeddings.position_embeddings.weight"][config.pad_token_id + 1 + t])
        return (p["embeddings.word_embeddings.weight"][i] + p["embeddings.position_embeddings.weight"][t]
                + p["embeddings.token_type_embeddings.weight"][0])

    def bias(t, s, head):
        return p["encoder.relative_attention_bias.weight"][oracle_bucket(s - t)][head] if mpnet else 0.0

    x = [norm(embedding(t, i), "embeddings.LayerNorm") for t, i in enumerate(ids)]
    for layer in range(config.num_hidden_layers):
        pre = f"encoder.layer.{layer}."
        q = [dense(v, pre + query) for v in x]
        k = [dense(v, pre + key) for v in x]
        val = [dense(v, pre + value) for v in x]
        new = []
        for t in range(len(x)):
            ctx = np.zeros(h)
            for head in range(heads):
                sl = slice(head * dh, (head + 1) * dh)
                logits = [float(q[t][sl] @ k[s][sl]) / math.sqrt(dh) + bias(t, s, head)
                          for s in range(len(x))]
                top = max(logits)
                weights = [math.exp(a - top) for a in logits]
                total = sum(weights)
                for s in range(len(x)):
                    ctx[sl] += weights[s] / total * val[s][sl]
            a = norm(dense(ctx, pre + attended) + x[t], pre + attended_norm)
            inner = dense(a, pre + "intermediate.dense")
            inner = np.array([0.5 * z * (1 + math.erf(z / math.sqrt(2))) for z in inner])
            new.append(norm(dense(inner, pre + "output.dense") + a, pre + "output.LayerNorm"))
        x = new
    return np.array(x)


def assert_solves_exactly(comp, u: np.ndarray, length: int | None, best: float) -> None:
    """``comp.solve(u, length)`` reaches ``best`` (the oracle's optimum), and ``best_given`` of its keep
    agrees (1e-9 relative)."""
    sol = comp.solve(u, length=length)
    tol = 1e-9 * max(1.0, abs(best))
    assert abs(sol.score - best) <= tol
    assert abs(comp.best_given(sol.keep) + float(u[sol.keep].sum()) - best) <= tol
