"""A BERT- or MPNet-architecture transformer encoder in numpy (inference only, no training framework).

The forward pass of a post-layer-norm BERT encoder (Devlin et al. 2019) — the architecture of
all-MiniLM-L6-v2 — computed with numpy float32 over weights named as in the Hugging Face checkpoints
(``embeddings.word_embeddings.weight``, ``encoder.layer.{i}.attention.self.query.weight``, ...), so a
checkpoint fine-tuned with the optional ``train`` extra (PyTorch + transformers) is read without
conversion. One sequence at a time (no padding): a compression decodes one sentence.

MPNet (Song et al. 2020; all-mpnet-base-v2, transformers' ``MPNetModel``) is the same block under other
parameter names (``encoder.layer.{i}.attention.attn.q.weight``, ...) with three differences: no segment
embedding, positions numbered from ``pad_token_id + 1``, and a relative-position bias (T5's bidirectional
buckets, :func:`relative_position_bucket`) computed once per sequence and added to every layer's scaled
attention scores before the softmax.

The GELU is the exact one, ``x Φ(x)`` with the error function (as Hugging Face's ``"gelu"``), evaluated
by a numba ufunc.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

import numpy as np
from numba import vectorize

from dualdecomp.core.errors import ModelError

__all__ = ["MODEL_TYPES", "Encoder", "EncoderConfig", "EncoderLayer", "EncoderParts", "Int8Matrix",
           "checked_ids", "encoder_parts", "gelu", "layer_names", "relative_attention_bias",
           "relative_position_bucket"]

MODEL_TYPES = ("bert", "mpnet")
"""The architectures the encoder runs (Hugging Face ``model_type``)."""

UNREAD = {"bert": ("pad_token_id", "relative_attention_num_buckets"), "mpnet": ("type_vocab_size",)}
"""The fields a model type does not use: :meth:`EncoderConfig.from_dict` leaves them at their defaults and
:meth:`EncoderConfig.to_dict` does not write them (so a BERT ``model.json`` reads and writes as before)."""

LAYER_PARTS = {
    "bert": {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
             "out": "attention.output.dense", "norm1": "attention.output.LayerNorm",
             "ff_in": "intermediate.dense", "ff_out": "output.dense", "norm2": "output.LayerNorm"},
    "mpnet": {"query": "attention.attn.q", "key": "attention.attn.k", "value": "attention.attn.v",
              "out": "attention.attn.o", "norm1": "attention.LayerNorm",
              "ff_in": "intermediate.dense", "ff_out": "output.dense", "norm2": "output.LayerNorm"},
}
"""The Hugging Face name, within ``encoder.layer.{i}.``, of each part of a transformer block."""

MPNET_BUCKETS = 32
"""The relative-position buckets MPNet reads: transformers' ``MPNetEncoder.compute_position_bias`` uses
32 whatever ``relative_attention_num_buckets`` says (that only sizes the table)."""


@vectorize(["float32(float32)", "float64(float64)"], cache=True)
def gelu(x):  # pragma: no cover - compiled
    """Exact GELU, ``x Φ(x) = x (1 + erf(x / √2)) / 2`` (elementwise)."""
    return 0.5 * x * (1.0 + math.erf(x * 0.7071067811865476))


@dataclass(frozen=True)
class EncoderConfig:
    """Sizes of a BERT or MPNet encoder (the fields of a Hugging Face ``config.json`` that inference needs).

    Attributes
    ----------
    vocab_size, hidden_size, num_hidden_layers, num_attention_heads, intermediate_size : int
        Word-piece vocabulary, model width, layers, attention heads, feed-forward width.
    max_position_embeddings, type_vocab_size : int
        Rows of the position table and number of segment types (BERT only).
    layer_norm_eps : float
        Layer-norm epsilon.
    model_type : {"bert", "mpnet"}
        The architecture.
    pad_token_id : int
        MPNet only: positions are numbered from ``pad_token_id + 1`` (transformers numbers them from 2
        whatever the config says, so :meth:`from_dict` asks for 1).
    relative_attention_num_buckets : int
        MPNet only: rows of the relative-position bias table (at least :data:`MPNET_BUCKETS`, the ones
        read).
    """

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    model_type: str = "bert"
    pad_token_id: int = 0
    relative_attention_num_buckets: int = 32

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> EncoderConfig:
        """Read the sizes from a mapping (a Hugging Face ``config.json``; other keys are ignored).

        ``model_type`` defaults to ``"bert"``; the fields the model type does not use (:data:`UNREAD`) are
        not read.

        Raises
        ------
        ModelError
            An unknown model type, a size missing, not a positive integer, or a width not divisible by the
            heads; for MPNet a ``pad_token_id`` other than 1, fewer than :data:`MPNET_BUCKETS` buckets, or
            no room for a position.
        """
        model_type = spec.get("model_type", "bert")
        if model_type not in MODEL_TYPES:
            raise ModelError(f"encoder config: model_type must be one of {', '.join(MODEL_TYPES)}, "
                             f"not {model_type!r}")
        values: dict[str, Any] = {"model_type": model_type}
        for name, field in cls.__dataclass_fields__.items():
            if name == "model_type" or name in UNREAD[model_type]:
                continue
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
                low, kind = (0, "non-negative") if name == "pad_token_id" else (1, "positive")
                if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 10**6:
                    raise ModelError(f"encoder config: {name} must be a {kind} integer, got {value!r}")
                values[name] = value
        config = cls(**values)
        if config.hidden_size % config.num_attention_heads:
            raise ModelError("encoder config: hidden_size must be divisible by num_attention_heads")
        if spec.get("hidden_act", "gelu") != "gelu":
            raise ModelError(f"encoder config: hidden_act must be 'gelu', not {spec['hidden_act']!r}")
        if model_type == "mpnet":
            if config.pad_token_id != 1:
                raise ModelError("encoder config: an MPNet pad_token_id must be 1 (transformers numbers "
                                 f"MPNet positions from 2), got {config.pad_token_id}")
            if config.relative_attention_num_buckets < MPNET_BUCKETS:
                raise ModelError(f"encoder config: relative_attention_num_buckets must be at least "
                                 f"{MPNET_BUCKETS}, got {config.relative_attention_num_buckets}")
            if config.max_pieces < 1:
                raise ModelError("encoder config: max_position_embeddings must exceed pad_token_id + 1")
        return config

    def to_dict(self) -> dict[str, Any]:
        """The sizes as a JSON-ready mapping (with ``hidden_act``: always the exact GELU; without the fields
        the model type does not use)."""
        unused = ("model_type", *UNREAD[self.model_type])
        sizes = {k: v for k, v in asdict(self).items() if k not in unused}
        return {**sizes, "hidden_act": "gelu", "model_type": self.model_type}

    @property
    def max_pieces(self) -> int:
        """The longest input (pieces, start and end pieces included): BERT numbers positions from 0, MPNet
        from ``pad_token_id + 1``."""
        if self.model_type == "mpnet":
            return self.max_position_embeddings - self.pad_token_id - 1
        return self.max_position_embeddings

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """The name and shape of every parameter the forward pass reads (Hugging Face names)."""
        h, i = self.hidden_size, self.intermediate_size
        shapes: dict[str, tuple[int, ...]] = {
            "embeddings.word_embeddings.weight": (self.vocab_size, h),
            "embeddings.position_embeddings.weight": (self.max_position_embeddings, h),
        }
        if self.model_type == "bert":
            shapes["embeddings.token_type_embeddings.weight"] = (self.type_vocab_size, h)
        shapes["embeddings.LayerNorm.weight"] = (h,)
        shapes["embeddings.LayerNorm.bias"] = (h,)
        for k in range(self.num_hidden_layers):
            name = layer_names(self.model_type, k)
            for part in ("query", "key", "value", "out"):
                shapes[name[part] + ".weight"] = (h, h)
                shapes[name[part] + ".bias"] = (h,)
            shapes[name["ff_in"] + ".weight"] = (i, h)
            shapes[name["ff_in"] + ".bias"] = (i,)
            shapes[name["ff_out"] + ".weight"] = (h, i)
            shapes[name["ff_out"] + ".bias"] = (h,)
            for norm in ("norm1", "norm2"):
                shapes[name[norm] + ".weight"] = (h,)
                shapes[name[norm] + ".bias"] = (h,)
        if self.model_type == "mpnet":
            shapes["encoder.relative_attention_bias.weight"] = (self.relative_attention_num_buckets,
                                                                self.num_attention_heads)
        return shapes


def layer_names(model_type: str, k: int) -> dict[str, str]:
    """The Hugging Face name (without ``.weight`` or ``.bias``) of each part of block ``k`` of a
    ``model_type`` encoder (:data:`LAYER_PARTS`)."""
    return {part: f"encoder.layer.{k}.{suffix}" for part, suffix in LAYER_PARTS[model_type].items()}


def checked_ids(ids: np.ndarray, config: EncoderConfig) -> np.ndarray:
    """``ids`` as int64 after checking it is one sequence the encoder can read.

    Raises
    ------
    ValueError
        Not 1-D, empty or longer than :attr:`EncoderConfig.max_pieces`, or an id outside the vocabulary.
    """
    ids = np.asarray(ids, dtype=np.int64)
    t = ids.shape[0] if ids.ndim else 0
    if ids.ndim != 1 or not 1 <= t <= config.max_pieces:
        raise ValueError(f"ids must be 1-D with 1..{config.max_pieces} pieces, got {ids.shape}")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError("word-piece id out of the vocabulary")
    return ids


def relative_position_bucket(relative: np.ndarray, num_buckets: int = MPNET_BUCKETS,
                             max_distance: int = 128) -> np.ndarray:
    """T5's bidirectional bucket of each relative position, as transformers' MPNet computes it.

    Half of the buckets hold keys at or before the query, the other half keys after it. In each half a
    distance below ``num_buckets // 4`` has a bucket of its own; larger distances share buckets whose
    widths grow geometrically up to ``max_distance``, and every farther one falls in the half's last bucket.
    The logarithm is taken in float32, as transformers does (``MPNetEncoder.relative_position_bucket``).

    Parameters
    ----------
    relative : numpy.ndarray
        int: key position minus query position.
    num_buckets, max_distance : int
        Buckets (``num_buckets // 4`` at least 1) and the distance from which all share the last bucket.

    Returns
    -------
    numpy.ndarray
        int64 of the same shape, in ``[0, num_buckets)``.
    """
    behind = -np.asarray(relative, dtype=np.int64)  # query position minus key position
    half = num_buckets // 2
    exact = half // 2
    distance = np.abs(behind)
    ratio = np.maximum(distance, exact).astype(np.float32) / np.float32(exact)  # >= 1: no log(0)
    steps = np.log(ratio) / np.float32(math.log(max_distance / exact)) * np.float32(half - exact)
    far = np.minimum(exact + steps.astype(np.int64), half - 1)
    return np.where(behind < 0, half, 0) + np.where(distance < exact, distance, far)


def relative_attention_bias(table: np.ndarray, length: int) -> np.ndarray:
    """MPNet's attention bias of a sequence: ``bias[h, i, j] = table[bucket(j - i), h]``.

    Parameters
    ----------
    table : numpy.ndarray
        float (buckets, heads): ``encoder.relative_attention_bias.weight``.
    length : int
        Pieces in the sequence.

    Returns
    -------
    numpy.ndarray
        float32 (heads, length, length), added to the scaled scores of query i for key j.
    """
    positions = np.arange(length)
    buckets = relative_position_bucket(positions[None, :] - positions[:, None])
    return np.ascontiguousarray(np.asarray(table, dtype=np.float32)[buckets].transpose(2, 0, 1))


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * gamma + beta


@dataclass(frozen=True)
class Int8Matrix:
    """A matrix of ``x @ W`` kept as int8 columns with one float32 scale per column (``W ≈ values *
    scale``): a stored model's int8 rows (:mod:`~dualdecomp.models.neural.store`), transposed, read by the
    int8 ONNX graph as they are. The numpy forward pass cannot run it (:meth:`dequantised` can)."""

    values: np.ndarray  # int8 (in, out)
    scale: np.ndarray  # float32 (out,)

    def dequantised(self) -> np.ndarray:
        """The float32 matrix ``values * scale``."""
        return self.values.astype(np.float32) * self.scale[None, :]


@dataclass(frozen=True)
class EncoderLayer:
    """One transformer block's parameters, laid out for ``x @ W`` (the fused query/key/value matrix
    ``qkv_w`` is (h, 3h), queries first). A matrix is float32, or an :class:`Int8Matrix` in the parts read
    for the int8 graph (:func:`encoder_parts` with ``quantised``)."""

    qkv_w: np.ndarray | Int8Matrix  # (h, 3h): x @ qkv_w
    qkv_b: np.ndarray
    out_w: np.ndarray | Int8Matrix  # (h, h)
    out_b: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    ff_in_w: np.ndarray | Int8Matrix  # (h, i)
    ff_in_b: np.ndarray
    ff_out_w: np.ndarray | Int8Matrix  # (i, h)
    ff_out_b: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


@dataclass(eq=False)
class EncoderParts:
    """The parameters the forward pass reads, laid out for it (:func:`encoder_parts`; compared by
    identity).

    Attributes
    ----------
    config : EncoderConfig
        The sizes.
    word_table : numpy.ndarray
        float32 (vocab, h) embeddings.
    position_table : numpy.ndarray
        float32 (max_pieces, h): the embedding of each position of the input, from its first piece (for
        MPNet the rows from ``pad_token_id + 1`` of the stored table, a view).
    segment0 : numpy.ndarray or None
        float32 (h,): the embedding of segment 0 (every input is one segment); None for MPNet.
    embed_norm : tuple of numpy.ndarray
        The embedding layer norm's gamma and beta.
    attention_bias : numpy.ndarray or None
        float32 (heads, max_pieces, max_pieces): MPNet's relative-position bias of the longest input
        (:func:`relative_attention_bias`), whose top-left (heads, T, T) corner every layer of a T-piece
        input adds to its scaled scores; None for BERT.
    layers : tuple of EncoderLayer
        The transformer blocks (read by :mod:`~dualdecomp.models.neural.onnx_encoder` too).
    """

    config: EncoderConfig
    word_table: np.ndarray
    position_table: np.ndarray
    segment0: np.ndarray | None
    embed_norm: tuple[np.ndarray, np.ndarray]
    attention_bias: np.ndarray | None
    layers: tuple[EncoderLayer, ...]


def encoder_parts(config: EncoderConfig, params: Mapping[str, np.ndarray],
                  quantised: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None) -> EncoderParts:
    """Read, check and lay out an encoder's parameters.

    Each parameter is read, converted to float32 and checked when it is used, so a mapping that
    dequantises on access (the stored model's) never has every float32 matrix alive at once beside the
    transposed copies.

    Parameters
    ----------
    config : EncoderConfig
        The sizes.
    params : mapping of str to numpy.ndarray
        Every parameter of :meth:`EncoderConfig.parameter_shapes` (others, such as a pooler, are ignored).
    quantised : mapping of str to (numpy.ndarray, numpy.ndarray), optional
        For the int8 graph: a block matrix's int8 rows (out, in) and their float32 scales (out,), by
        Hugging Face name. A fused matrix all of whose parts are here becomes an :class:`Int8Matrix` of
        these very numbers, and ``params`` is not read for those parts (no float32 copy is made).

    Raises
    ------
    ModelError
        A parameter missing, of the wrong shape, or not finite (a scale: not finite or not positive).
    """
    shapes = config.parameter_shapes()
    quantised = quantised or {}
    missing = next((name for name in shapes if name not in params and name not in quantised), None)
    if missing is not None:
        raise ModelError(f"encoder weights: missing {missing}")

    def p(name: str) -> np.ndarray:
        arr = np.asarray(params[name], dtype=np.float32)
        if arr.shape != shapes[name]:
            raise ModelError(f"encoder weights: {name} has shape {arr.shape}, expected {shapes[name]}")
        if not np.isfinite(arr).all():
            raise ModelError(f"encoder weights: {name} has non-finite values")
        return arr

    def int8_rows(name: str) -> tuple[np.ndarray, np.ndarray]:
        values, scale = quantised[name]
        if values.dtype != np.int8 or values.shape != shapes[name] or scale.shape != (values.shape[0],):
            raise ModelError(f"encoder weights: {name} is not int8 {shapes[name]} with a scale per row")
        scale = np.asarray(scale, dtype=np.float32)
        if not (np.isfinite(scale).all() and (scale > 0).all()):
            raise ModelError(f"encoder weights: {name} has scales that are not finite and positive")
        return values, scale

    def matrix(names: list[str]) -> np.ndarray | Int8Matrix:
        """The ``x @ W`` matrix of these parts' (out, in) matrices stacked: their transpose."""
        if all(name in quantised for name in names):
            rows = [int8_rows(name) for name in names]
            return Int8Matrix(np.ascontiguousarray(np.concatenate([v for v, _ in rows]).T),
                              np.concatenate([s for _, s in rows]))
        return np.ascontiguousarray(np.concatenate([p(name) for name in names]).T)

    mpnet = config.model_type == "mpnet"
    first_position = config.pad_token_id + 1 if mpnet else 0
    layers = []
    for k in range(config.num_hidden_layers):
        names = layer_names(config.model_type, k)
        w = {part: names[part] + ".weight" for part in names}
        b = {part: p(name + ".bias") for part, name in names.items()}
        layers.append(EncoderLayer(
            qkv_w=matrix([w["query"], w["key"], w["value"]]),
            qkv_b=np.concatenate([b["query"], b["key"], b["value"]]),
            out_w=matrix([w["out"]]), out_b=b["out"], norm1=(p(w["norm1"]), b["norm1"]),
            ff_in_w=matrix([w["ff_in"]]), ff_in_b=b["ff_in"],
            ff_out_w=matrix([w["ff_out"]]), ff_out_b=b["ff_out"],
            norm2=(p(w["norm2"]), b["norm2"]),
        ))
    return EncoderParts(
        config=config,
        word_table=p("embeddings.word_embeddings.weight"),
        position_table=p("embeddings.position_embeddings.weight")[first_position:],
        segment0=None if mpnet else p("embeddings.token_type_embeddings.weight")[0],
        embed_norm=(p("embeddings.LayerNorm.weight"), p("embeddings.LayerNorm.bias")),
        attention_bias=(relative_attention_bias(p("encoder.relative_attention_bias.weight"),
                                                config.max_pieces) if mpnet else None),
        layers=tuple(layers),
    )


class Encoder(EncoderParts):
    """The encoder's forward pass over a dict of float parameters (Hugging Face names): the
    :class:`EncoderParts` of :func:`encoder_parts`, all float32, and a numpy forward pass.

    Parameters
    ----------
    config, params
        As :func:`encoder_parts` takes them.

    Raises
    ------
    ModelError
        A parameter missing, of the wrong shape, or not finite.
    """

    def __init__(self, config: EncoderConfig, params: Mapping[str, np.ndarray]) -> None:
        parts = encoder_parts(config, params)
        super().__init__(**{field.name: getattr(parts, field.name) for field in fields(EncoderParts)})

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """The last layer's hidden states of one sequence of word-piece ids.

        Parameters
        ----------
        ids : numpy.ndarray
            int (T,) word-piece ids, start and end pieces included; 1 <= T <= ``config.max_pieces``.

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
        x = self.word_table[ids] + self.position_table[:t]
        if self.segment0 is not None:
            x += self.segment0
        x = _layer_norm(x, *self.embed_norm, eps)
        bias = None if self.attention_bias is None else self.attention_bias[:, :t, :t]
        for layer in self.layers:
            qkv = x @ layer.qkv_w + layer.qkv_b  # (t, 3h)
            q, k, v = (qkv[:, j * cfg.hidden_size:(j + 1) * cfg.hidden_size].reshape(t, heads, dh)
                       .transpose(1, 0, 2) for j in range(3))
            scores = (q @ k.transpose(0, 2, 1)) * scale  # (heads, t, t)
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(t, cfg.hidden_size)
            x = _layer_norm(context @ layer.out_w + layer.out_b + x, *layer.norm1, eps)
            hidden = gelu(x @ layer.ff_in_w + layer.ff_in_b)
            x = _layer_norm(hidden @ layer.ff_out_w + layer.ff_out_b + x, *layer.norm2, eps)
        return x
