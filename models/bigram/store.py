"""Saving and loading models: a directory with ``model.json`` and ``weights.npz`` (never pickle).

``model.json`` holds the format name and version, the model kind, the feature settings, the file name of
the KenLM model (relative to the directory, or null) and the training metadata. ``weights.npz`` holds the
non-zero weights as ``indices`` (int64) and ``values`` (float64). Everything is validated on load and any
problem is a :class:`~dualdecomp.core.errors.ModelError` with a clear message.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import (
    path_inside,
    read_json,
    read_sparse_weights,
    verify_directory,
    verify_files,
    write_json,
    write_manifest,
    write_sparse_weights,
)
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.bigram.features import DROP_TEMPLATES, PAIR_TEMPLATES, REAL_TEMPLATES
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.lm import load_lm

FORMAT = "dualdecomp-model"
VERSION = 1


def save_model(model: BigramModel, directory: str | os.PathLike[str], lm_file: str | None = None) -> Path:
    """Save a model to ``directory`` (created if needed), atomically file by file.

    Parameters
    ----------
    model : BigramModel
        The model.
    directory : path
        Target directory.
    lm_file : str, optional
        File name (relative to ``directory``) of the KenLM model the LM feature reads; required when the
        model has an LM. The LM file itself is not copied.

    Returns
    -------
    Path
        The directory.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    if model.lm is not None and not lm_file:
        raise ModelError("a model with an LM feature needs the LM file name (lm_file)")
    save_weights(out, model.weights)
    spec = {
        "format": FORMAT,
        "version": VERSION,
        "kind": "bigram",
        "hash_bits": model.hash_bits,
        "lexical": model.lexical,
        "lm": lm_file if model.lm is not None else None,
        "templates": {"pair": list(PAIR_TEMPLATES), "drop": list(DROP_TEMPLATES),
                      "real": list(REAL_TEMPLATES) if model.lm is not None else []},
        "meta": model.meta,
    }
    write_spec(out, spec)
    write_manifest(out)
    return out


def save_weights(directory: Path, weights: np.ndarray) -> None:
    """Write the non-zero weights as ``weights.npz`` (indices int64, values float64), atomically."""
    write_sparse_weights(directory / "weights.npz", weights)


def write_spec(directory: Path, spec: dict) -> None:
    """Write ``model.json`` (sorted keys, indented), atomically."""
    write_json(directory / "model.json", spec)


def read_spec(directory: Path, kind: str) -> dict:
    """Read ``model.json`` and validate what every model kind shares.

    Checks the format, the version, that the kind is ``kind``, ``hash_bits`` (an integer in [8, 26]),
    ``lexical`` (a bool) and ``meta`` (an object); the caller checks its kind's own fields.

    Raises
    ------
    ModelError
        With the file name and what is wrong.
    """
    path = directory / "model.json"
    if not directory.is_dir():
        raise ModelError(f"model directory not found: {directory}")
    verify_directory(directory)  # every listed file, before any is read
    spec = read_json(path, "missing (not a dualdecomp model directory)")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ModelError(f"{path}: not a dualdecomp model (format field missing or wrong)")
    if spec.get("version") != VERSION:
        raise ModelError(f"{path}: model format version {spec.get('version')!r} is not supported "
                         f"(this dualdecomp reads version {VERSION})")
    if spec.get("kind") != kind:
        raise ModelError(f"{path}: model kind {spec.get('kind')!r} is not a {kind} model")
    bits = spec.get("hash_bits")
    if not isinstance(bits, int) or isinstance(bits, bool) or not 8 <= bits <= 26:
        raise ModelError(f"{path}: hash_bits must be an integer in [8, 26]")
    if not isinstance(spec.get("lexical"), bool):
        raise ModelError(f"{path}: lexical must be true or false")
    if not isinstance(spec.get("meta", {}), dict):
        raise ModelError(f"{path}: meta must be an object")
    return spec


def _read_spec(directory: Path) -> dict:
    spec = read_spec(directory, "bigram")
    path = directory / "model.json"
    templates = spec.get("templates")
    expected = {"pair": list(PAIR_TEMPLATES), "drop": list(DROP_TEMPLATES)}
    if not isinstance(templates, dict) or any(templates.get(k) != v for k, v in expected.items()):
        raise ModelError(f"{path}: the model's feature templates differ from this dualdecomp's; "
                         "retrain the model with this version")
    if spec.get("lm") is not None and not isinstance(spec["lm"], str):
        raise ModelError(f"{path}: lm must be a file name or null")
    return spec


def read_weights(path: Path, size: int) -> np.ndarray:
    """Read and validate a sparse ``weights.npz`` into a dense vector of ``size`` (ModelError if bad)."""
    return read_sparse_weights(path, size)


def load_model(directory: str | os.PathLike[str] | None = None) -> BigramModel:
    """Load and validate a model directory (the embedded default model when None).

    Raises
    ------
    ModelError
        On a missing directory or file, invalid JSON, wrong format, version or schema, corrupted weights,
        or a missing or corrupted LM file.
    """
    d = Path(directory) if directory is not None else default_model_dir()
    spec = _read_spec(d)
    weights = read_weights(d / "weights.npz", 1 << spec["hash_bits"])
    lm = None
    if spec.get("lm"):
        lm = load_lm(path_inside(d, spec["lm"], d / "model.json"))
    verify_files(d / "model.json", d / "weights.npz")
    return BigramModel(weights=weights, hash_bits=spec["hash_bits"], lexical=spec["lexical"], lm=lm,
                       meta=spec.get("meta", {}))
