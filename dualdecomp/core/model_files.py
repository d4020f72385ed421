"""Model-file I/O shared by every model kind: atomic writes, JSON specs and sparse weight vectors.

Models are directories of JSON and ``.npz`` files (never pickle). Every write goes to a temporary file
beside the target and is renamed over it, so a model file is either the old or the new one; every read
validates and raises :class:`~dualdecomp.core.errors.ModelError` with the file name and what is wrong.

**Checksums.** Every save path ends with :func:`write_manifest`: ``MANIFEST.json`` in the model directory
holds the sha256 of each of its files (recursively, except subdirectories that hold their own manifest:
they are model directories of their own). Every load path calls :func:`verify_file` on each file it
read, after validating its content (a malformed file gets the specific message; a well-formed but
altered one, e.g. a flipped byte in a table of numbers, gets ModelError "checksum mismatch"). A file no
manifest lists (a model directory written by an older version, or a file added by hand) is read
unchecked.

**Size limits.** Compressed model files are decompressed with a cap (:func:`read_gzip_capped`,
:func:`check_npz_size`), so a small "decompression bomb" is refused instead of filling the memory.
"""

from __future__ import annotations

import hashlib
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

__all__ = ["MANIFEST", "MAX_DECOMPRESSED_BYTES", "atomic_write_bytes", "check_npz_size", "file_sha256",
           "read_gzip_capped", "read_json", "read_sparse_weights", "verify_file", "verify_files",
           "write_json", "write_manifest", "write_sparse_weights"]

MANIFEST = "MANIFEST.json"
"""The checksum manifest of a model directory."""

MANIFEST_FORMAT = "dualdecomp-manifest"

MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
"""Largest decompressed size accepted for one compressed model file (the shipped T3 grammar: 37 MB)."""

_MANIFEST_LEVELS = 3  # how many directories up verify_file looks for the manifest covering a file


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
    """Read a JSON file; ``missing`` completes the message when it does not exist (ModelError).

    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: {missing}") from exc
    except (OSError, ValueError, RecursionError) as exc:  # also: too deep, an integer of > 4,300 digits
        raise ModelError(f"{path}: unreadable or not valid JSON ({exc})") from None


def write_sparse_weights(path: Path, weights: np.ndarray, dtype: type = np.float64) -> None:
    """Write the non-zero weights as an ``.npz`` (``indices`` int64, ``values`` of ``dtype``), atomically."""
    nz = np.flatnonzero(weights)
    atomic_write_bytes(path, lambda fh: np.savez_compressed(
        fh, indices=nz.astype(np.int64), values=weights[nz].astype(dtype)))


def read_sparse_weights(path: Path, size: int) -> np.ndarray:
    """Read and validate a sparse weights ``.npz`` into a dense vector of ``size`` (index 0 is padding).

    Raises
    ------
    ModelError
        Missing or corrupted file, malformed arrays, an index out of range or a non-finite weight.
    """
    check_npz_size(path)
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


# ----------------------------------------------------------------------------------------------------
# checksum manifests
# ----------------------------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's content, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _covered_files(directory: Path) -> list[Path]:
    """The files a directory's manifest covers: every regular file below it, except hidden files, the
    manifests themselves and subdirectories holding their own manifest."""
    out = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(".") or entry.name == MANIFEST:
            continue
        if entry.is_dir():
            if not (entry / MANIFEST).is_file():
                out.extend(_covered_files(entry))
        elif entry.is_file():
            out.append(entry)
    return out


def write_manifest(directory: str | os.PathLike[str]) -> Path:
    """Write ``MANIFEST.json`` into a model directory: the sha256 of every file it covers, atomically.

    Parameters
    ----------
    directory : path
        The model directory (every save path calls this last).

    Returns
    -------
    Path
        The manifest file.
    """
    d = Path(directory)
    files = {p.relative_to(d).as_posix(): file_sha256(p) for p in _covered_files(d)}
    path = d / MANIFEST
    write_json(path, {"format": MANIFEST_FORMAT, "version": 1, "sha256": files})
    return path


def _read_manifest(path: Path) -> dict[str, str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelError(f"{path}: unreadable or not valid JSON ({exc})") from exc
    files = doc.get("sha256") if isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) and len(v) == 64
                                              for k, v in files.items()):
        raise ModelError(f"{path}: not a dualdecomp checksum manifest")
    return files


def verify_files(*paths: str | os.PathLike[str]) -> None:
    """:func:`verify_file` on each path."""
    for p in paths:
        verify_file(p)


def verify_file(path: str | os.PathLike[str]) -> None:
    """Check a model file against the nearest ``MANIFEST.json`` (its directory or up to two above).

    A missing file, or one that no manifest lists, passes (the caller reports a missing file).

    Raises
    ------
    ModelError
        "checksum mismatch" when the file's sha256 differs from the manifest's; a malformed manifest.
    """
    p = Path(path)
    if not p.is_file():
        return
    p = p.absolute()
    d = p.parent
    for _ in range(_MANIFEST_LEVELS):
        manifest = d / MANIFEST
        if manifest.is_file():
            expected = _read_manifest(manifest).get(p.relative_to(d).as_posix())
            if expected is None:
                return
            if file_sha256(p) != expected:
                raise ModelError(f"{path}: checksum mismatch with {manifest} (the file is corrupted or was "
                                 "changed after the model was saved)")
            return
        if d.parent == d:
            return
        d = d.parent


# ----------------------------------------------------------------------------------------------------
# decompression limits
# ----------------------------------------------------------------------------------------------------


def read_gzip_capped(path: Path, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a gzip file by streaming, refusing more than ``limit`` decompressed bytes.

    Raises
    ------
    FileNotFoundError
        When the file does not exist (the caller words the message).
    ModelError
        Corrupted gzip data, or a decompressed size over ``limit`` (a decompression bomb).
    """
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip header
    parts: list[bytes] = []
    size = 0
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 16), b""):
                data = block
                while data:
                    out = inflater.decompress(data, limit + 1 - size)
                    size += len(out)
                    parts.append(out)
                    if size > limit:
                        raise ModelError(f"{path}: decompresses to more than {limit} bytes (refused: a "
                                         "decompression bomb or not a model file)")
                    data = inflater.unconsumed_tail
                    if inflater.eof:
                        break
                if inflater.eof:
                    break
    except zlib.error as exc:
        raise ModelError(f"{path}: corrupted gzip data ({exc})") from exc
    if not inflater.eof:
        raise ModelError(f"{path}: truncated gzip data")
    return b"".join(parts)


def check_npz_size(path: Path, limit: int = MAX_DECOMPRESSED_BYTES) -> None:
    """Refuse an ``.npz`` whose members declare more than ``limit`` decompressed bytes in all.

    ``zipfile`` never inflates a member past its declared size, so the declared sizes bound the memory.
    A missing file or one that is not a zip passes (``numpy.load`` reports it).

    Raises
    ------
    ModelError
        When the declared sizes exceed ``limit``.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            total = sum(info.file_size for info in zf.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return
    if total > limit:
        raise ModelError(f"{path}: decompresses to {total} bytes, more than the {limit} allowed")
