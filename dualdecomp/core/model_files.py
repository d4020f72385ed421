"""Model-file I/O shared by every model kind: atomic writes, JSON specs and sparse weight vectors.

Models are directories of JSON and ``.npz`` files (never pickle). Every write goes to a temporary file
beside the target and is renamed over it, so a model file is either the old or the new one; every read
validates and raises :class:`~dualdecomp.core.errors.ModelError` with the file name and what is wrong.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from dualdecomp.core.errors import ModelError

__all__ = ["atomic_write_bytes", "read_json", "read_sparse_weights", "write_json", "write_sparse_weights"]


def atomic_write_bytes(path: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Write a file atomically: ``write(handle)`` into a temporary file beside it, then rename.

    Parameters
    ----------
    path : Path
        The target file.
    write : callable
        Writes the content into the binary handle it is given.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON with sorted keys, atomically."""
    text = json.dumps(obj, indent=2, sort_keys=True) + "\n"
    atomic_write_bytes(path, lambda fh: fh.write(text.encode("utf-8")))


def read_json(path: Path, missing: str = "missing") -> Any:
    """Read a JSON file; ``missing`` completes the message when it does not exist (ModelError)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: {missing}") from exc
    except (OSError, ValueError, RecursionError) as exc:  # also: too deep, an integer of > 4,300 digits
        raise ModelError(f"{path}: unreadable or not valid JSON ({exc})") from None


def write_sparse_weights(path: Path, weights: np.ndarray) -> None:
    """Write the non-zero weights as an ``.npz`` (``indices`` int64, ``values`` float64), atomically."""
    nz = np.flatnonzero(weights)
    atomic_write_bytes(path, lambda fh: np.savez_compressed(
        fh, indices=nz.astype(np.int64), values=weights[nz].astype(np.float64)))


def read_sparse_weights(path: Path, size: int) -> np.ndarray:
    """Read and validate a sparse weights ``.npz`` into a dense vector of ``size`` (index 0 is padding).

    Raises
    ------
    ModelError
        Missing or corrupted file, malformed arrays, an index out of range or a non-finite weight.
    """
    try:
        with np.load(path, allow_pickle=False) as npz:
            indices = np.asarray(npz["indices"])
            values = np.asarray(npz["values"])
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: missing") from exc
    except (OSError, ValueError, KeyError, AttributeError, TypeError, zipfile.BadZipFile, EOFError,
            zlib.error, RecursionError) as exc:  # zlib.error: corrupted deflate data
        raise ModelError(f"{path}: corrupted or not a weights file ({type(exc).__name__}: {exc})") from None
    if indices.ndim != 1 or values.shape != indices.shape:
        raise ModelError(f"{path}: indices and values must be 1-d arrays of the same length")
    if not np.issubdtype(indices.dtype, np.integer) or not np.issubdtype(values.dtype, np.floating):
        raise ModelError(f"{path}: indices must be integers and values floats")
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise ModelError(f"{path}: weight index out of range for 2**hash_bits = {size}")
    if not np.all(np.isfinite(values)):
        raise ModelError(f"{path}: weights contain NaN or infinity")
    weights = np.zeros(size)
    weights[indices] = values
    weights[0] = 0.0
    return weights
