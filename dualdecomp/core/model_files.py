"""Model-file I/O shared by every model kind: atomic writes, JSON specs and sparse weight vectors.

Models are directories of JSON and ``.npz`` files (never pickle). Every write goes to a temporary file
beside the target and is renamed over it, so a model file is either the old or the new one; every read
validates and raises :class:`~dualdecomp.core.errors.ModelError` with the file name and what is wrong.

**Checksums.** Every save path ends with :func:`write_manifest`: ``MANIFEST.json`` in the model directory
holds the sha256 of each of its files (recursively, except subdirectories that hold their own manifest:
they are model directories of their own). Every loader of a model directory starts with
:func:`verify_directory`: every file its manifest lists is checked (present, a regular file, its sha256)
before any is read, so a corrupted, truncated or deleted file gets one ModelError "checksum mismatch:
FILE (MANIFEST.json says sha256 ..., file has ...)" (or "missing"), never the error of a parser (numpy's
"Bad CRC-32") first. The loaders also call :func:`verify_file` on each file they read (a file loaded
from a directory that was not verified first: a grammar, an LM). Hashes are cached per process, keyed on
the file's (path, size, mtime, ctime, inode): a second load of the same files hashes nothing. A file no
manifest lists (a model directory written by an older version, or a file added by hand) is read
unchecked.

A model directory without ``MANIFEST.json`` still loads; :func:`note_if_unchecked` says so on stderr,
once per process and directory.

**Opening.** Every file read from a model directory goes through :func:`open_model_file` (or
:func:`read_model_bytes`, :func:`read_json`, :func:`read_npz`; :func:`check_model_path` for a file that
third-party code opens by its path: KenLM): it must be a regular file (not a device, FIFO, socket or
directory) no larger than the cap of its kind (:data:`JSON_FILE`, :data:`ARRAY_FILE`, :data:`LM_FILE`),
or :class:`~dualdecomp.core.errors.ModelError` names it. Symbolic links: the model directory itself, and
every directory above it, may be a symlink (``--model current`` → ``models/v3``); a file the tool reads
*in* it may not (``O_NOFOLLOW``), nor may a path a configuration names (:func:`path_inside`, which also
keeps that path inside the model directory). A file named on the command line (``--lm FILE``) may be a
symlink (``follow_symlinks=True``); it is checked the same way otherwise.

**Size limits.** Compressed model files are decompressed with a cap (:func:`read_gzip_capped`,
:func:`check_npz_size`), so a small "decompression bomb" is refused instead of filling the memory.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

import numpy as np

from dualdecomp.core.errors import ModelError

__all__ = ["ARRAY_FILE", "JSON_FILE", "LM_FILE", "MANIFEST", "MAX_DECOMPRESSED_BYTES", "FileLimit",
           "atomic_directory", "atomic_write_bytes", "cached_sha256", "check_model_path",
           "check_npz_size", "file_sha256", "note_if_unchecked",
           "open_model_file", "path_inside", "read_gzip_capped", "read_json", "read_model_bytes", "read_npz",
           "read_sparse_weights", "verify_directory", "verify_file", "verify_files", "write_json",
           "write_manifest", "write_sparse_weights"]

MANIFEST = "MANIFEST.json"
"""The checksum manifest of a model directory."""

MANIFEST_FORMAT = "dualdecomp-manifest"

MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
"""Largest decompressed size accepted for one compressed model file (the shipped T3 grammar: 37 MB)."""

_MANIFEST_LEVELS = 3  # how many directories up verify_file looks for the manifest covering a file

_MIB = 1024 * 1024


@dataclass(frozen=True)
class FileLimit:
    """The size cap of one kind of model file (:func:`open_model_file`)."""

    kind: str
    """What the file is, for the message ("JSON model file")."""
    max_bytes: int
    """Largest size accepted on disk."""


JSON_FILE = FileLimit("JSON model file", 32 * _MIB)
"""Specs, configurations, manifests, tokenizers, the lineariser's tag table: the largest shipped is 0.47 MB
(``neural/tokenizer.json``; the word-order ``model.json``: 0.45 MB)."""

ARRAY_FILE = FileLimit("array or grammar file", MAX_DECOMPRESSED_BYTES)
"""``.npz`` weights and T3 grammars, as stored (compressed or not; their decompressed size has the same
cap): the largest shipped is 22.3 MB (``neural_mpnet/weights.npz``, the first of the MPNet scorer's six)."""

LM_FILE = FileLimit("KenLM file", 64 * 1024 * _MIB)
"""KenLM language models (binary or ARPA), 64 GiB: the largest shipped is 22.4 MB (the word-order
model's ``lm_beam.binary``), but a user's LM given with ``--lm`` may be a large web-scale model (KenLM
binaries of tens of GB exist; KenLM maps or reads them whole, so the machine's memory is the real bound).
The cap refuses what cannot be a language model (a sparse file of absurd size) before KenLM touches it."""

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NOTED_UNCHECKED: set[Path] = set()  # model directories already reported unchecked in this process
_HASHES: dict[tuple, str] = {}  # (real path, size, mtime, ctime, inode, device) -> sha256, this process


def _not_regular(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


def open_model_file(path: str | os.PathLike[str], limit: FileLimit, *,
                    follow_symlinks: bool = False) -> BinaryIO:
    """Open a model file for reading: a regular file, not a symlink, within ``limit``.

    The file is opened non-blocking (a FIFO is refused, never waited on) and checked on the open handle
    (``fstat``), so what is checked is what is read.

    Parameters
    ----------
    path : path
        The file.
    limit : FileLimit
        The cap of its kind (:data:`JSON_FILE`, :data:`ARRAY_FILE`, :data:`LM_FILE`).
    follow_symlinks : bool
        Accept a symlink in the last component (a file named on the command line, not one found in a
        model directory).

    Returns
    -------
    binary file
        Open at its start; the caller closes it.

    Raises
    ------
    FileNotFoundError
        When it does not exist (the caller words the message).
    ModelError
        A symlink, a device, FIFO, socket or directory, a file over ``limit.max_bytes``, or one that
        cannot be opened; the message names the file.
    """
    name = os.fspath(path)
    nofollow = 0 if follow_symlinks else _NOFOLLOW
    try:
        if not follow_symlinks and not _NOFOLLOW and os.path.islink(name):  # no O_NOFOLLOW (Windows)
            raise OSError(errno.ELOOP, "symbolic link")
        fd = os.open(name, _FLAGS | nofollow)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if not follow_symlinks and (exc.errno == errno.ELOOP or os.path.islink(name)):
            raise ModelError(f"{name}: is a symbolic link (refused: a file in a model directory must be a "
                             "regular file, not a link)") from None
        raise ModelError(f"{name}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{name}: is {_not_regular(st.st_mode)}, not a regular file (refused as a "
                             f"{limit.kind})")
        if st.st_size > limit.max_bytes:
            raise ModelError(f"{name}: {st.st_size} bytes, over the {_size(limit.max_bytes)} limit of a "
                             f"{limit.kind}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _size(n: int) -> str:
    return f"{n // _MIB} MiB" if n % _MIB == 0 else f"{n} bytes"


def read_model_bytes(path: str | os.PathLike[str], limit: FileLimit, *,
                     follow_symlinks: bool = False) -> bytes:
    """The content of a model file, opened by :func:`open_model_file` and read up to its cap.

    Raises
    ------
    FileNotFoundError
        When it does not exist.
    ModelError
        As :func:`open_model_file`; also a file that grew past the cap while it was read.
    """
    with open_model_file(path, limit, follow_symlinks=follow_symlinks) as fh:
        data = fh.read(limit.max_bytes + 1)
    if len(data) > limit.max_bytes:
        raise ModelError(f"{os.fspath(path)}: over the {_size(limit.max_bytes)} limit of a {limit.kind}")
    return data


def check_model_path(path: str | os.PathLike[str], limit: FileLimit, *, follow_symlinks: bool = False) -> int:
    """Check a file that third-party code will open by its path (KenLM): :func:`open_model_file`'s
    checks, without reading it. Returns its size.

    Raises
    ------
    FileNotFoundError
        When it does not exist.
    ModelError
        As :func:`open_model_file`.
    """
    with open_model_file(path, limit, follow_symlinks=follow_symlinks) as fh:
        return os.fstat(fh.fileno()).st_size


def path_inside(directory: Path, rel: object, where: str | os.PathLike[str]) -> Path:
    """The (resolved) path that a model file names relative to its model directory, checked.

    Parameters
    ----------
    directory : Path
        The model directory (it may be reached through a symlink).
    rel : object
        The relative path the file ``where`` gives (a component's ``path``, an LM file name).
    where : path
        The file that names it, for the message.

    Raises
    ------
    ModelError
        Naming ``where`` and ``rel``: not a string, or a path that leads outside the model directory;
        naming the path and ``where``: a symbolic link.
    """
    if not isinstance(rel, str) or "\0" in rel:
        raise ModelError(f"{os.fspath(where)}: path {rel!r} must be a file name relative to the model "
                         "directory")
    target = directory / rel
    if Path(rel) != Path(".") and os.path.islink(target):
        raise ModelError(f"{target}: is a symbolic link (refused: a file or directory that a model names, "
                         f"here {os.fspath(where)}, must not be a link)")
    root = directory.resolve()
    resolved = target.resolve()
    if resolved != root and root not in resolved.parents:
        raise ModelError(f"{os.fspath(where)}: path {rel!r} must lie inside the model directory {directory}")
    return resolved


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


def read_json(path: Path, missing: str = "missing", limit: FileLimit = JSON_FILE) -> Any:
    """Read a JSON model file (:func:`read_model_bytes`); ``missing`` completes the message when it does
    not exist.

    Raises
    ------
    ModelError
        Missing, refused by :func:`open_model_file`, unreadable, or not valid UTF-8 JSON.
    """
    try:
        return json.loads(read_model_bytes(path, limit).decode("utf-8"))
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
    arrays = read_npz(path)
    if "indices" not in arrays or "values" not in arrays:
        raise ModelError(f"{path}: corrupted or not a weights file (no indices and values arrays)")
    indices, values = arrays["indices"], arrays["values"]
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


def read_npz(path: Path, missing: str = "missing") -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` model file (never pickle), opened by :func:`open_model_file`
    (:data:`ARRAY_FILE`) with its declared decompressed size capped (:func:`check_npz_size`).

    Raises
    ------
    ModelError
        Missing (``missing`` completes the message), refused, too large, corrupted or not an ``.npz``.
    """
    try:
        fh = open_model_file(path, ARRAY_FILE)
    except FileNotFoundError as exc:
        raise ModelError(f"{path}: {missing}") from exc
    with fh:
        check_npz_size(path, handle=fh)
        fh.seek(0)
        try:
            with np.load(fh, allow_pickle=False) as npz:
                return {k: np.asarray(npz[k]) for k in npz.files}
        except (OSError, ValueError, KeyError, AttributeError, TypeError, zipfile.BadZipFile, EOFError,
                zlib.error, RecursionError) as exc:  # zlib.error: corrupted deflate data
            raise ModelError(f"{path}: corrupted or not an .npz weights file ({type(exc).__name__}: "
                             f"{exc})") from None


# ----------------------------------------------------------------------------------------------------
# checksum manifests
# ----------------------------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's content, read in blocks."""
    with path.open("rb") as fh:
        return _sha256_of(fh)


def _sha256_of(fh: BinaryIO) -> str:
    """The sha256 (hex) of what is left to read in an open binary file, read in blocks."""
    digest = hashlib.sha256()
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


@contextmanager
def atomic_directory(target: str | os.PathLike[str], manifest: bool = True) -> Iterator[Path]:
    """Write a model directory all at once: what the block writes goes into a new temporary sibling folder
    (``.NAME.XXXXXX``, hidden), renamed to ``target`` when the block ends.

    When the block raises (a failed save, Ctrl-C), the temporary folder is removed and ``target`` is left
    as it was: no failure leaves half a model. A new ``target`` is the renamed folder. An existing
    ``target`` keeps what the block did not write (other models in its subfolders, its configurations:
    ``train --out data/default_model`` must not remove ``dependency/``): once everything is written, each
    file and folder of the temporary folder replaces its namesake in ``target`` by a rename (a folder:
    moved aside, the new one renamed in, the old one removed), and ``target``'s manifest is rewritten.
    A ``target`` that is a symbolic link to a directory is written where it points.

    Parameters
    ----------
    target : path
        The model directory to write (its parent is created if needed).
    manifest : bool
        Write ``MANIFEST.json`` (:func:`write_manifest`) into the folder before the rename (default).

    Yields
    ------
    Path
        The temporary folder to write into (empty).

    Examples
    --------
    >>> with atomic_directory(out) as work:  # doctest: +SKIP
    ...     save_model(model, work)
    """
    out = Path(target)
    if out.is_symlink() and out.is_dir():
        out = out.resolve()
    if os.path.lexists(out) and not out.is_dir():
        raise ModelError(f"{out}: exists and is not a directory (a model directory is written there)")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield work
        if not os.path.lexists(out):
            if manifest:
                write_manifest(work)
            work.chmod(0o777 & ~_umask())  # mkdtemp makes it 0700; a model folder gets the usual mode
            os.rename(work, out)
            return
        for entry in sorted(work.iterdir()):
            _replace_entry(entry, out / entry.name)
        work.rmdir()
        if manifest:
            write_manifest(out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _replace_entry(new: Path, dest: Path) -> None:
    """Rename the file or folder ``new`` to ``dest``, replacing what is there (a folder is moved aside
    first, and put back if the rename fails)."""
    if new.is_dir() and not new.is_symlink():
        new.chmod(0o777 & ~_umask())
    if not os.path.lexists(dest):
        os.rename(new, dest)
    elif dest.is_dir() and not dest.is_symlink():
        aside = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old.", dir=dest.parent))
        os.rename(dest, aside / dest.name)
        try:
            os.rename(new, dest)
        except BaseException:
            os.rename(aside / dest.name, dest)
            raise
        finally:
            shutil.rmtree(aside, ignore_errors=True)
    elif new.is_dir():
        dest.unlink()
        os.rename(new, dest)
    else:
        os.replace(new, dest)


def _read_manifest(path: Path) -> dict[str, str]:
    doc = read_json(path)
    files = doc.get("sha256") if isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT else None
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) and len(v) == 64
                                              and _relative(k) for k, v in files.items()):
        raise ModelError(f"{path}: not a dualdecomp checksum manifest")
    return files


def _relative(name: str) -> bool:
    """A manifest entry: a relative POSIX path inside the directory (no ``..``, not absolute, no NUL)."""
    parts = name.split("/")
    return "\0" not in name and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def verify_files(*paths: str | os.PathLike[str]) -> None:
    """:func:`verify_file` on each path."""
    for p in paths:
        verify_file(p)


def _stat_key(st: os.stat_result, path: Path) -> tuple:
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def cached_sha256(path: Path, limit: FileLimit | None = None) -> str:
    """:func:`file_sha256`, remembered for this process while the file's (path, size, mtime, ctime, inode)
    stay the same (any write changes its ctime), so a model loaded twice is hashed once.

    With ``limit`` the file is opened by :func:`open_model_file` (a regular file, not a link, within the
    cap: its ModelError otherwise) and the key is taken from the open handle.
    """
    with open_model_file(path, limit) if limit is not None else Path(path).open("rb") as fh:
        key = _stat_key(os.fstat(fh.fileno()), path)
        digest = _HASHES.get(key)
        if digest is None:
            digest = _sha256_of(fh)
            if _stat_key(os.fstat(fh.fileno()), path) == key:  # not changed while it was read
                _HASHES[key] = digest
    return digest


def _limit_of(name: str) -> FileLimit:
    """The size cap a listed file is opened with, by its name (the cap its loader applies)."""
    lower = name.lower()
    if lower.endswith((".json", ".md", ".txt")):
        return JSON_FILE
    if lower.endswith((".npz", ".bin", ".json.gz")):
        return ARRAY_FILE
    return LM_FILE  # KenLM files (.binary, .arpa) and anything else: the largest cap


def _mismatch(path: str | os.PathLike[str], manifest: Path, expected: str, actual: str) -> ModelError:
    return ModelError(f"checksum mismatch: {os.fspath(path)} ({manifest} says sha256 {expected}, file has "
                      f"{actual}): the file is corrupted or was changed after the model was saved")


def verify_directory(directory: str | os.PathLike[str], *, note: bool = True) -> None:
    """Check every file a model directory's ``MANIFEST.json`` lists, before any of them is read.

    Each listed file must exist and have the listed sha256; it is opened by :func:`open_model_file`
    (a regular file, not a symlink, within the cap of its kind: its own message otherwise). Hashes are
    cached (:func:`cached_sha256`). Subdirectories with their own manifest are checked when their own
    loader runs. Without a manifest nothing is checked and, with ``note``, :func:`note_if_unchecked`
    says so.

    Parameters
    ----------
    directory : path
        The model directory; a path that is not a directory passes (the loader reports it).
    note : bool
        Call :func:`note_if_unchecked` when there is no manifest (default).

    Raises
    ------
    ModelError
        "checksum mismatch: FILE (MANIFEST says sha256 ..., file has ...)", a listed file that is missing,
        one :func:`open_model_file` refuses, or a malformed manifest; the message names the file.
    """
    d = Path(directory)
    if not d.is_dir():
        return
    manifest = d / MANIFEST
    if not os.path.lexists(manifest):
        if note:
            note_if_unchecked(d)
        return
    for rel, expected in sorted(_read_manifest(manifest).items()):
        p = d / rel
        try:
            actual = cached_sha256(p, _limit_of(rel))
        except FileNotFoundError:
            raise ModelError(f"checksum mismatch: {p} is missing ({manifest} lists it with sha256 "
                             f"{expected}): the model directory is incomplete") from None
        if actual != expected:
            raise _mismatch(p, manifest, expected, actual)


def verify_file(path: str | os.PathLike[str]) -> None:
    """Check a model file against the nearest ``MANIFEST.json`` (its directory or up to two above).

    A missing file, or one that no manifest lists, passes (the caller reports a missing file). A file
    :func:`verify_directory` checked is not hashed again (:func:`cached_sha256`).

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
        if os.path.lexists(manifest):  # a symlink or a device there is refused, not skipped
            expected = _read_manifest(manifest).get(p.relative_to(d).as_posix())
            if expected is None:
                return
            actual = cached_sha256(p)
            if actual != expected:
                raise _mismatch(path, manifest, expected, actual)
            return
        if d.parent == d:
            return
        d = d.parent


def note_if_unchecked(directory: str | os.PathLike[str]) -> None:
    """Say on stderr, in one line, that a model directory has no ``MANIFEST.json`` (its files load
    unchecked); once per process for a directory and the directories below it.

    Every save path writes the manifest, so a directory without one was written by an older version or
    by hand, or lost it. Loading goes on.
    """
    d = Path(os.path.realpath(directory))
    if os.path.lexists(d / MANIFEST) or any(n == d or n in d.parents for n in _NOTED_UNCHECKED):
        return
    _NOTED_UNCHECKED.add(d)
    print(f"dualdecomp: note: {os.fspath(directory)} has no {MANIFEST} (no checksum manifest): the model is "
          "loaded unchecked", file=sys.stderr)


# ----------------------------------------------------------------------------------------------------
# decompression limits
# ----------------------------------------------------------------------------------------------------


def read_gzip_capped(path: Path, limit: int = MAX_DECOMPRESSED_BYTES) -> bytes:
    """Decompress a gzip model file by streaming, refusing more than ``limit`` decompressed bytes.

    The file is opened by :func:`open_model_file` (:data:`ARRAY_FILE`).

    Raises
    ------
    FileNotFoundError
        When the file does not exist (the caller words the message).
    ModelError
        Refused by :func:`open_model_file`, corrupted gzip data, or a decompressed size over ``limit`` (a
        decompression bomb).
    """
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip header
    parts: list[bytes] = []
    size = 0
    try:
        with open_model_file(path, ARRAY_FILE) as fh:
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


def check_npz_size(path: Path, limit: int = MAX_DECOMPRESSED_BYTES, handle: BinaryIO | None = None) -> None:
    """Refuse an ``.npz`` whose members declare more than ``limit`` decompressed bytes in all.

    ``zipfile`` never inflates a member past its declared size, so the declared sizes bound the memory.
    A missing file or one that is not a zip passes (``numpy.load`` reports it). ``handle``: the file
    already open (:func:`read_npz`), read instead of ``path`` (which names it in the message).

    Raises
    ------
    ModelError
        When the declared sizes exceed ``limit``.
    """
    try:
        with zipfile.ZipFile(handle if handle is not None else path) as zf:
            total = sum(info.file_size for info in zf.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return
    if total > limit:
        raise ModelError(f"{path}: decompresses to {total} bytes, more than the {limit} allowed")
