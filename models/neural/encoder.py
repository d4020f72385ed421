"""A BERT-architecture transformer encoder in numpy (inference only, no training framework).

The forward pass of a post-layer-norm BERT encoder (Devlin et al. 2019) — the architecture of
all-MiniLM-L6-v2 — computed with numpy float32 over weights named as in the Hugging Face checkpoints
(``embeddings.word_embeddings.weight``, ``encoder.layer.{i}.attention.self.query.weight``, ...), so a
checkpoint fine-tuned with the optional ``train`` extra (PyTorch + transformers) is read without
conversion. One sequence at a time (no padding): a compression decodes one sentence.

The GELU is the exact one, ``x Φ(x)`` with the error function (as Hugging Face's ``"gelu"``), evaluated
by a numba ufunc.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass
from typing import Any

import numpy as np
from numba import vectorize

from dualdecomp.core.errors import ModelError

__all__ = ["Encoder", "EncoderConfig", "EncoderLayer", "checked_ids", "gelu"]


@vectorize(["float32(float32)", "float64(float64)"], cache=True)
def gelu(x):  # pragma: no cover - compiled
    """Exact GELU, ``x Φ(x) = x (1 + erf(x / √2)) / 2`` (elementwise)."""
    return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))


@dataclass(frozen=True)
class EncoderConfig:
    """Sizes of a BERT encoder (the fields of a Hugging Face ``config.json`` that inference needs).

    Attributes
    ----------
    vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size : int
        Word-piece vocabulary, model width, layers, attention heads, feed-forward width.
    max_position_embeddings, type_vocab_size : int
        Longest sequence (word pieces, with [CLS] and [SEP]) and number of segment types.
    layer_norm_eps : float
        Layer-norm epsilon.
    """

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> EncoderConfig:
        """Read the sizes from a mapping (a Hugging Face ``config.json``; other keys are ignored).

        Raises
        ------
        ModelError
            A size missing, not a positive integer, or a width not divisible by the heads.
        """
        values: dict[str, Any] = {}
        for name, field in cls.__dataclass_fields__.items():
            if name not in spec:
                if field.default is not MISSING:
                    continue
                raise ModelError(f"encoder config: missing {name!r}")
            value = spec[name]
            if name == "layer_norm_eps":
                if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < 1:
                    raise ModelError(f"encoder config: {name} must be a number in (0, 1), got {value!r}")
                values[name] = float(value)
            else:
                if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= 10**6:
                    raise ModelError(f"encoder config: {name} must be a positive integer, got {value!r}")
                values[name] = value
        config = cls(**values)
        if config.hidden_size % config.num_attention_heads:
            raise ModelError("encoder config: hidden_size must be divisible by num_attention_heads")
        if spec.get("hidden_act", "gelu") != "gelu":
            raise ModelError(f"encoder config: hidden_act must be 'gelu', not {spec['hidden_act']!r}")
        return config

    def to_dict(self) -> dict[str, Any]:
        """The sizes as a JSON-ready mapping (with ``hidden_act``: always the exact GELU)."""
        return {**asdict(self), "hidden_act": "gelu", "model_type": "bert"}

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The name and shape of every parameter the forward pass reads (Hugging Face names)."""
        h, i = self.hidden_size, self.intermediate_size
        shapes: dict[str, tuple[int, ...]] = {
            "embeddings.word_embeddings.weight": (self.vocab_size, h),
            "embeddings.position_embeddings.weight": (self.max_position_embeddings, h),
            "embeddings.token_type_embeddings.weight": (self.type_vocab_size, h),
            "embeddings.LayerNorm.weight": (h,),
            "embeddings.LayerNorm.bias": (h,),
        }
        for k in range(self.num_hidden_layers):
            p = f"encoder.layer.{k}."
            for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                         "attention.output.dense"):
                shapes[p + part + ".weight"] = (h, h)
                shapes[p + part + ".bias"] = (h,)
            shapes[p + "intermediate.dense.weight"] = (i, h)
            shapes[p + "intermediate.dense.bias"] = (i,)
            shapes[p + "output.dense.weight"] = (h, i)
            shapes[p + "output.dense.bias"] = (h,)
            for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
                shapes[p + norm + ".weight"] = (h,)
                shapes[p + norm + ".bias"] = (h,)
        return shapes


def checked_ids(ids: np.ndarray, config: EncoderConfig) -> np.ndarray:
    """``ids`` as int64 after checking it is one sequence the encoder can read.

    Raises
    ------
    ValueError
        Not 1-D, empty or longer than ``max_position_embeddings``, or an id outside the vocabulary.
    """
    ids = np.asarray(ids, dtype=np.int64)
    t = ids.shape[0] if ids.ndim else 0
    if ids.ndim != 1 or not 1 <= t <= config.max_position_embeddings:
        raise ValueError(f"ids must be 1-D with 1..{config.max_position_embeddings} pieces, got {ids.shape}")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError("word-piece id out of the vocabulary")
    return ids


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma + beta


@dataclass(frozen=True)
class EncoderLayer:
    """One transformer block's parameters, laid out for ``x @ W`` (the fused query/key/value matrix
    ``qkv_w`` is (h, 3h), queries first)."""

    qkv_w: np.ndarray  # (h, 3h): x @ qkv_w
    qkv_b: np.ndarray
    out_w: np.ndarray  # (h, h)
    out_b: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    ff_in_w: np.ndarray  # (h, i)
    ff_in_b: np.ndarray
    ff_out_w: np.ndarray  # (i, h)
    ff_out_b: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


class Encoder:
    """The encoder's forward pass over a dict of float parameters (Hugging Face names).

    Parameters
    ----------
    config : EncoderConfig
        The sizes.
    params : mapping of str to numpy.ndarray
        Every parameter of :meth:`EncoderConfig.parameter_shapes` (others, such as a pooler, are ignored).

    Attributes
    ----------
    word_table, position_table : numpy.ndarray
        float32 (vocab, h) and (max positions, h) embeddings.
    segment0 : numpy.ndarray
        float32 (h,): the embedding of segment 0 (every input is one segment).
    embed_norm : tuple of numpy.ndarray
        The embedding layer norm's gamma and beta.
    layers : tuple of EncoderLayer
        The transformer blocks (read by :mod:`~dualdecomp.models.neural.onnx_encoder` too).

    Raises
    ------
    ModelError
        A parameter missing, of the wrong shape, or not finite.
    """

    def __init__(self, config: EncoderConfig, params: Mapping[str, np.ndarray]) -> None:
        self.config = config
        p: dict[str, np.ndarray] = {}
        for name, shape in config.parameter_shapes().items():
            if name not in params:
                raise ModelError(f"encoder weights: missing {name}")
            arr = np.asarray(params[name], dtype=np.float32)
            if arr.shape != shape:
                raise ModelError(f"encoder weights: {name} has shape {arr.shape}, expected {shape}")
            if not np.isfinite(arr).all():
                raise ModelError(f"encoder weights: {name} has non-finite values")
            p[name] = arr
        self.word_table = p["embeddings.word_embeddings.weight"]
        self.position_table = p["embeddings.position_embeddings.weight"]
        self.segment0 = p["embeddings.token_type_embeddings.weight"][0]
        self.embed_norm = (p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"])
        layers = []
        for k in range(config.num_hidden_layers):
            q = f"encoder.layer.{k}."
            att = q + "attention.self."
            qkv_w = np.concatenate([p[att + s + ".weight"] for s in ("query", "key", "value")], axis=0)
            qkv_b = np.concatenate([p[att + s + ".bias"] for s in ("query", "key", "value")])
            layers.append(EncoderLayer(
                qkv_w=np.ascontiguousarray(qkv_w.T), qkv_b=qkv_b,
                out_w=np.ascontiguousarray(p[q + "attention.output.dense.weight"].T),
                out_b=p[q + "attention.output.dense.bias"],
                norm1=(p[q + "attention.output.LayerNorm.weight"], p[q + "attention.output.LayerNorm.bias"]),
                ff_in_w=np.ascontiguousarray(p[q + "intermediate.dense.weight"].T),
                ff_in_b=p[q + "intermediate.dense.bias"],
                ff_out_w=np.ascontiguousarray(p[q + "output.dense.weight"].T),
                ff_out_b=p[q + "output.dense.bias"],
                norm2=(p[q + "output.LayerNorm.weight"], p[q + "output.LayerNorm.bias"]),
            ))
        self.layers = tuple(layers)

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """The last layer's hidden states of one sequence of word-piece ids.

        Parameters
        ----------
        ids : numpy.ndarray
            int (T,) word-piece ids, [CLS] and [SEP] included; 1 <= T <= max_position_embeddings.

        Returns
        -------
        numpy.ndarray
            float32 (T, hidden_size).
        """
        ids = checked_ids(ids, self.config)
        cfg = self.config
        t = ids.shape[0]
        eps = cfg.layer_norm_eps
        heads = cfg.num_attention_heads
        dh = cfg.hidden_size // heads
        scale = np.float32(1.0 / math.sqrt(dh))
        x = self.word_table[ids] + self.position_table[:t] + self.segment0
        x = _layer_norm(x, *self.embed_norm, eps)
        for layer in self.layers:
            qkv = x @ layer.qkv_w + layer.qkv_b  # (t, 3h)
            q, k, v = (qkv[:, j * cfg.hidden_size:(j + 1) * cfg.hidden_size].reshape(t, heads, dh)
                       .transpose(1, 0, 2) for j in range(3))
            scores = (q @ k.transpose(0, 2, 1)) * scale  # (heads, t, t)
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(t, cfg.hidden_size)
            x = _layer_norm(context @ layer.out_w + layer.out_b + x, *layer.norm1, eps)
            hidden = gelu(x @ layer.ff_in_w + layer.ff_in_b)
            x = _layer_norm(hidden @ layer.ff_out_w + layer.ff_out_b + x, *layer.norm2, eps)
        return x
