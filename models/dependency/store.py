"""Saving and loading dependency models: a directory with ``model.json`` and ``weights.npz``.

The layout and checks are those of :mod:`dualdecomp.models.bigram.store` (same format name and version, kind
``"dependency"``, the same atomic writes and weight-file validation): ``model.json`` holds the format,
version, kind, feature settings (``hash_bits``, ``lexical``, ``second_order``), the feature template
names and the training metadata; ``weights.npz`` holds the non-zero weights as ``indices`` (int64) and
``values`` (float64). Never pickle. Every problem on load is a :class:`~dualdecomp.core.errors.ModelError`.
"""

from __future__ import annotations

import os
from pathlib import Path

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import verify_directory, verify_files, write_manifest
from dualdecomp.models.bigram import FORMAT, VERSION, read_spec, read_weights, save_weights, write_spec
from dualdecomp.models.dependency.features import ARC_TEMPLATES, KEEP_TEMPLATES, SIBLING_TEMPLATES
from dualdecomp.models.dependency.model import DependencyModel

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
    save_weights(out, model.weights)
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
    write_spec(out, spec)
    write_manifest(out)
    return out


def _read_spec(directory: Path) -> dict:
    spec = read_spec(directory, KIND)
    path = directory / "model.json"
    if not isinstance(spec.get("second_order"), bool):
        raise ModelError(f"{path}: second_order must be true or false")
    if spec.get("templates") != _templates(spec["second_order"]):
        raise ModelError(f"{path}: the model's feature templates differ from this dualdecomp's; "
                         "retrain the model with this version")
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
    verify_directory(d, note=False)  # every listed file, before any is read
    spec = _read_spec(d)
    weights = read_weights(d / "weights.npz", 1 << spec["hash_bits"])
    verify_files(d / "model.json", d / "weights.npz")
    return DependencyModel(weights=weights, hash_bits=spec["hash_bits"], second_order=spec["second_order"],
                           lexical=spec["lexical"], meta=spec.get("meta", {}))
