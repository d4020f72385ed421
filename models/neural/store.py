"""Saving and loading neural scorers: ``model.json``, ``weights.npz`` and ``tokenizer.json`` (never pickle).

``weights.npz`` (with ``weights-2.npz``, ... for a large encoder: :data:`SHARD_BYTES`) holds every
encoder parameter under its Hugging Face name and the head (``head.weight`` (hidden,), ``head.bias`` ())
and, when the scorer has one, the pair head (``pair.*``, float32,
:mod:`~dualdecomp.models.neural.pair_head`). With ``quantise=True`` each encoder matrix is stored as int8
rows with one float32 scale per row (``NAME`` int8 and ``NAME::scale``; symmetric, scale = max |row| / 127),
which divides the file by four; vectors and MPNet's relative-position bias (:data:`FLOAT32_MATRICES`) stay
float32. Loading dequantises to float32, except the transformer blocks' matrices for the int8 backend:
its graph takes their int8 rows as they are. ``model.json`` holds the format, the encoder sizes (and model
type), how words are normalised and the training record; ``MANIFEST.json`` the checksums.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.memory import release_freed_memory
from dualdecomp.core.model_files import (
    atomic_write_bytes,
    read_json,
    read_npz,
    verify_directory,
    verify_files,
    write_json,
    write_manifest,
)
from dualdecomp.models.neural.encoder import Encoder, EncoderConfig, encoder_parts
from dualdecomp.models.neural.model import NeuralScorer
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder, onnx_available
from dualdecomp.models.neural.pair_head import PairHead
from dualdecomp.models.neural.pieces import Pieces, specials_for

__all__ = ["BACKENDS", "FORMAT", "load_neural_model", "quantise_rows", "save_neural_model"]

FORMAT = "dualdecomp-neural"
VERSION = 1
SCALE_SUFFIX = "::scale"
BACKENDS = ("auto", "onnxruntime", "onnx-int8", "numpy")
BACKEND_VARIABLE = "DUALDECOMP_ENCODER"
FLOAT32_MATRICES = ("encoder.relative_attention_bias.weight",)
"""Matrices stored as float32 even with ``quantise=True``: MPNet's table of relative-position biases
(buckets × heads, a few hundred numbers) is added to the attention scores as it is."""


def quantise_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantisation of each row: ``matrix ≈ q * scale[:, None]``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        int8 ``q`` of the same shape and float32 ``scale`` (rows,); an all-zero row gets scale 1.
    """
    m = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(m).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(m / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


class _Dequantised(Mapping):
    """The stored arrays with each int8 matrix dequantised (float32 rows times their scale) when read, not
    kept: the encoder converts them one at a time, so the float32 copies of a large encoder (MPNet: 440 MB)
    are never all alive at once."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        self._arrays = arrays

    def __getitem__(self, name: str) -> np.ndarray:
        value = self._arrays[name]
        if value.dtype != np.int8:
            return value
        return value.astype(np.float32) * self._arrays[name + SCALE_SUFFIX].astype(np.float32)[:, None]

    def __contains__(self, name: object) -> bool:  # without dequantising (Mapping's would read the item)
        return name in self._arrays

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)


SHARD_BYTES = 24 * 1024 * 1024
"""The most array bytes one weights file holds: a large encoder (MPNet: 97 MB) is split over
``weights.npz``, ``weights-2.npz``, ... so that no file of the repository is large."""


def _shard_name(k: int) -> str:
    return "weights.npz" if k == 0 else f"weights-{k + 1}.npz"


def weight_files(directory: str | os.PathLike[str]) -> list[Path]:
    """A scorer's weight files in order: ``weights.npz`` (listed even when missing, so that whoever reads or
    checks the list reports it), then ``weights-2.npz``, ``weights-3.npz``, ... while they exist."""
    out = [Path(directory) / _shard_name(0)]
    while (Path(directory) / _shard_name(len(out))).is_file():
        out.append(Path(directory) / _shard_name(len(out)))
    return out


def _shards(arrays: Mapping[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """The arrays in order, cut into groups of at most :data:`SHARD_BYTES` (an array larger than that
    alone); the heads first, so ``weights.npz`` always holds them, then the arrays under 1 MiB."""
    names = sorted(arrays, key=lambda name: (not name.startswith(("head.", "pair.")),  # stable sort
                                             arrays[name].nbytes >= 1 << 20))
    shards: list[dict[str, np.ndarray]] = [{}]
    size = 0
    for name in names:
        if shards[-1] and size + arrays[name].nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][name] = arrays[name]
        size += arrays[name].nbytes
    return shards


def _read_weights(directory: Path) -> tuple[dict[str, np.ndarray], list[Path]]:
    """Every array of the scorer's weight files (:func:`weight_files`), and those files."""
    paths = weight_files(directory)
    arrays: dict[str, np.ndarray] = {}
    for path in paths:
        for name, value in read_npz(path).items():
            if name in arrays:
                raise ModelError(f"{path}: {name} is also in an earlier weights file")
            arrays[name] = value
    return arrays, paths


def save_neural_model(directory: str | os.PathLike[str], config: EncoderConfig,
                      params: Mapping[str, np.ndarray], head_weight: np.ndarray, head_bias: float,
                      tokenizer: str | os.PathLike[str], meta: Mapping[str, Any] | None = None,
                      quantise: bool = True, pair: PairHead | None = None) -> Path:
    """Write a neural scorer to ``directory`` (created if needed), file by file atomically.

    Parameters
    ----------
    directory : path
        Target directory.
    config : EncoderConfig
        The encoder's sizes.
    params : mapping
        Every encoder parameter (Hugging Face names; extra ones are not saved).
    head_weight, head_bias : numpy.ndarray, float
        The keep head: ``logit = h · head_weight + head_bias`` on a word's first piece.
    tokenizer : path
        The encoder's ``tokenizer.json`` (copied).
    meta : mapping, optional
        Training record (JSON-ready).
    quantise : bool
        Store matrices (but :data:`FLOAT32_MATRICES`) as int8 rows (see the module docstring).
    pair : PairHead, optional
        The pair head (:mod:`~dualdecomp.models.neural.pair_head`), stored as float32.

    Returns
    -------
    Path
        The directory.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {}
    for name in config.parameter_shapes():
        value = np.asarray(params[name], dtype=np.float32)
        if quantise and value.ndim == 2 and name not in FLOAT32_MATRICES:
            arrays[name], arrays[name + SCALE_SUFFIX] = quantise_rows(value)
        else:
            arrays[name] = value
    arrays["head.weight"] = np.asarray(head_weight, dtype=np.float32).reshape(config.hidden_size)
    arrays["head.bias"] = np.asarray(head_bias, dtype=np.float32).reshape(())
    if pair is not None:
        arrays.update(pair.to_arrays())
    shards = _shards(arrays)
    for k, shard in enumerate(shards):
        atomic_write_bytes(out / _shard_name(k), lambda fh, shard=shard: np.savez_compressed(fh, **shard))
    for stale in weight_files(out)[len(shards):]:  # from an earlier, larger save into the same directory
        stale.unlink()
    tok_bytes = Path(tokenizer).read_bytes()
    atomic_write_bytes(out / "tokenizer.json", lambda fh: fh.write(tok_bytes))
    spec = {"format": FORMAT, "version": VERSION, "kind": "neural", "encoder": config.to_dict(),
            "normalisation": "a token with a digit becomes ##; the tokenizer lowercases",
            "quantized": bool(quantise), "meta": dict(meta or {})}  # a file-format key: old spelling kept
    write_json(out / "model.json", spec)
    write_manifest(out)
    return out


def load_neural_model(path: str | os.PathLike[str], backend: str | None = None,
                      unary_scale: float = 1.0) -> NeuralScorer:
    """Load a neural scorer directory written by :func:`save_neural_model`.

    Parameters
    ----------
    path : path
        The directory (or a file in it).
    backend : {"auto", "onnxruntime", "onnx-int8", "numpy"}, optional
        Who runs the encoder: onnxruntime (:class:`~dualdecomp.models.neural.onnx_encoder.OnnxEncoder`,
        the faster), numpy (:class:`~dualdecomp.models.neural.encoder.Encoder`, the reference), or
        ``"auto"``: onnxruntime when ``onnx`` and ``onnxruntime`` import, else numpy. These give the same
        scores up to float32 rounding. ``"onnx-int8"``: onnxruntime's int8 graph (int8 weights, activations
        quantised at run time; faster on VNNI cores, scores moved slightly; never chosen by ``"auto"``).
        By default the environment variable ``DUALDECOMP_ENCODER``, else ``"auto"`` (so the CLI and
        configurations can choose too).
    unary_scale : float, default 1
        For a scorer with a pair head: its keep log-odds enter the bigram potentials times this
        (:attr:`NeuralScorer.unary_scale`; a configuration's ``"options": {"unary_scale": 1.5}``).

    Raises
    ------
    ModelError
        Missing or malformed files, a checksum mismatch, wrong shapes, an unknown backend (or
        ``"onnxruntime"`` where it does not import), a ``unary_scale`` that is not a finite number >= 0 or
        is not 1 for a scorer without a pair head.
    """
    if isinstance(unary_scale, bool) or not isinstance(unary_scale, int | float) \
            or not np.isfinite(unary_scale) or unary_scale < 0:
        raise ModelError(f"unary_scale must be a finite number >= 0, not {unary_scale!r}")
    if backend is None:
        backend = os.environ.get(BACKEND_VARIABLE, "").strip() or "auto"
    if backend not in BACKENDS:
        raise ModelError(f"unknown encoder backend {backend!r} (argument or {BACKEND_VARIABLE}); "
                         f"choose from {', '.join(BACKENDS)}")
    if backend in ("onnxruntime", "onnx-int8") and not onnx_available():
        raise ModelError(f"the {backend} encoder backend needs the onnx and onnxruntime packages")
    directory = Path(path)
    if directory.is_file():
        directory = directory.parent
    verify_directory(directory)  # every listed file, before any is read
    spec = read_json(directory / "model.json")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ModelError(f"{directory / 'model.json'}: not a {FORMAT} file")
    if spec.get("version") != VERSION:
        raise ModelError(f"{directory / 'model.json'}: unsupported version {spec.get('version')!r}")
    if not isinstance(spec.get("encoder"), dict):
        raise ModelError(f"{directory / 'model.json'}: 'encoder' must be an object")
    config = EncoderConfig.from_dict(spec["encoder"])
    arrays, paths = _read_weights(directory)
    weights_path = paths[0]
    for name in config.parameter_shapes():
        if name not in arrays:
            raise ModelError(f"{weights_path}: missing {name}")
        value, scale = arrays[name], arrays.get(name + SCALE_SUFFIX)
        if value.dtype == np.int8 and (scale is None or value.ndim != 2 or scale.shape != (value.shape[0],)):
            raise ModelError(f"{weights_path}: {name} is int8 without a matching row scale")
    params = _Dequantised(arrays)
    head_w, head_b = arrays.get("head.weight"), arrays.get("head.bias")
    if head_w is None or head_b is None or head_w.shape != (config.hidden_size,) or head_b.size != 1:
        raise ModelError(f"{weights_path}: missing or malformed head.weight / head.bias")
    encoder: Encoder | OnnxEncoder
    if backend == "onnx-int8":  # the stored int8 rows go to the graph as they are: no float32 matrices
        quantised = {name: (value, arrays[name + SCALE_SUFFIX]) for name, value in arrays.items()
                     if value.dtype == np.int8}
        encoder = OnnxEncoder(encoder_parts(config, params, quantised=quantised), int8=True)
        del quantised  # the graph holds transposed copies
    else:
        encoder = Encoder(config, params)
        if backend == "onnxruntime" or (backend == "auto" and onnx_available()):
            encoder = OnnxEncoder(encoder)
    pieces = Pieces(directory / "tokenizer.json", config.max_pieces, specials=specials_for(config.model_type))
    if pieces.vocab_size != config.vocab_size:
        raise ModelError(f"{directory}: the tokenizer has {pieces.vocab_size} pieces, the encoder "
                         f"{config.vocab_size}")
    pair = PairHead.from_arrays(arrays, config.hidden_size, str(weights_path))
    if pair is None and unary_scale != 1:
        raise ModelError(f"{directory}: unary_scale needs a scorer with a pair head (a chain model)")
    verify_files(directory / "model.json", *paths, directory / "tokenizer.json")
    scorer = NeuralScorer(encoder, pieces, head_w.astype(np.float32), float(head_b.reshape(())),
                          meta=spec.get("meta", {}), pair=pair, unary_scale=float(unary_scale))
    del arrays, params, encoder
    release_freed_memory()  # the dequantised and graph-building temporaries
    return scorer


