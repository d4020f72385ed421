"""Saving and loading dependency models: a directory with ``model.json`` and ``weights.npz``.

The layout and checks are those of :mod:`models.store` (same format name and version, kind
``"dependency"``, the same atomic writes and weight-file validation): ``model.json`` holds the format,
version, kind, feature settings (``hash_bits``, ``lexical``, ``second_order``), the feature template
names and the training metadata; ``weights.npz`` holds the non-zero weights as ``indices`` (int64) and
``values`` (float64). Never pickle. Every problem on load is a :class:`~dualdecomp.errors.ModelError`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from dualdecomp.errors import ModelError
from models.dependency_features import ARC_TEMPLATES, KEEP_TEMPLATES, SIBLING_TEMPLATES
from models.dependency_model import DependencyModel
from models.store import FORMAT, VERSION, _atomic_write_bytes, _read_weights

KIND = "dependency"


def _templates(second_order: bool) -> dict[str, list[str]]:
    return {"arc": list(ARC_TEMPLATES), "keep": list(KEEP_TEMPLATES),
            "sibling": list(SIBLING_TEMPLATES) if second_order else []}


def save_dependency_model(model: DependencyModel, directory: str | os.PathLike[str]) -> Path:
    """Save a dependency model to ``directory`` (created if needed), atomically file by file.

    Parameters
    ----------
    model : DependencyModel
        The model.
    directory : path
        Target directory.

    Returns
    -------
    Path
        The directory.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    nz = np.flatnonzero(model.weights)
    _atomic_write_bytes(out / "weights.npz", lambda fh: np.savez_compressed(
        fh, indices=nz.astype(np.int64), values=model.weights[nz].astype(np.float64)))
    spec = {
        "format": FORMAT,
        "version": VERSION,
        "kind": KIND,
        "hash_bits": model.hash_bits,
        "lexical": model.lexical,
        "second_order": model.second_order,
        "templates": _templates(model.second_order),
        "meta": model.meta,
    }
    text = json.dumps(spec, indent=2, sort_keys=True) + "\n"
    _atomic_write_bytes(out / "model.json", lambda fh: fh.write(text.encode("utf-8")))
    return out


def _read_spec(directory: Path) -> dict:
    path = directory / "model.json"
    if not directory.is_dir():
        raise ModelError(f"model directory not found: {directory}")
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: missing (not a dualdecomp model directory)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{path}: unreadable or not valid JSON ({exc})") from exc
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ModelError(f"{path}: not a dualdecomp model (format field missing or wrong)")
    if spec.get("version") != VERSION:
        raise ModelError(f"{path}: model format version {spec.get('version')!r} is not supported "
                         f"(this dualdecomp reads version {VERSION})")
    if spec.get("kind") != KIND:
        raise ModelError(f"{path}: model kind {spec.get('kind')!r} is not a dependency model")
    bits = spec.get("hash_bits")
    if not isinstance(bits, int) or isinstance(bits, bool) or not 8 <= bits <= 26:
        raise ModelError(f"{path}: hash_bits must be an integer in [8, 26]")
    for key in ("lexical", "second_order"):
        if not isinstance(spec.get(key), bool):
            raise ModelError(f"{path}: {key} must be true or false")
    if spec.get("templates") != _templates(spec["second_order"]):
        raise ModelError(f"{path}: the model's feature templates differ from this dualdecomp's; "
                         "retrain the model with this version")
    if not isinstance(spec.get("meta", {}), dict):
        raise ModelError(f"{path}: meta must be an object")
    return spec


def load_dependency_model(directory: str | os.PathLike[str]) -> DependencyModel:
    """Load and validate a dependency model directory.

    Parameters
    ----------
    directory : path
        A directory written by :func:`save_dependency_model`.

    Returns
    -------
    DependencyModel

    Raises
    ------
    ModelError
        On a missing directory or file, invalid JSON, wrong format, version, kind or schema, or corrupted
        weights (out-of-range indices, NaN or infinite values, not an npz file).
    """
    d = Path(directory)
    spec = _read_spec(d)
    weights = _read_weights(d / "weights.npz", 1 << spec["hash_bits"])
    return DependencyModel(weights=weights, hash_bits=spec["hash_bits"], second_order=spec["second_order"],
                           lexical=spec["lexical"], meta=spec.get("meta", {}))
