"""A compact binary container of named numpy arrays: memory-mapped, checksummed (grammar files).

Layout (little-endian)::

    bytes 0..7    magic  b"DDARRAY1"
    bytes 8..39   sha256 of every byte from offset 40 to the end of the file
    bytes 40..47  header length H (uint64)
    bytes 48..    header: UTF-8 JSON {"format", "version", "meta", "arrays": {name: [dtype, shape, offset]}}
                  (+ "compression": "zlib" and "payload_bytes" for a compressed payload)
    ...           zero padding to a multiple of 64, then the payload: each array's bytes at its offset
                  (relative to the payload start, 64-aligned), C order; or, compressed, the zlib stream
                  of that payload

:func:`read_array_file` maps the file read-only (``mmap``), checks the sha256 (so a flipped byte anywhere
after the digest, header or payload, is a :class:`~dualdecomp.core.errors.ModelError` naming the file),
and returns the arrays as read-only views of the mapping: nothing is copied, pages are read on use and
shared between processes. A compressed file (``write_array_file(..., compress=True)``: small enough to
ship in the repository) is inflated once on load instead, into private memory (capped at the limit's
size): the arrays are then views of that copy, not of the mapping. Only plain numeric dtypes are
accepted (never objects, never pickle).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import ARRAY_FILE, FileLimit, atomic_write_bytes, open_model_file

__all__ = ["MAGIC", "ArrayFile", "is_array_file", "read_array_file", "write_array_file"]

MAGIC = b"DDARRAY1"
_DIGEST_AT, _HLEN_AT, _HEADER_AT = 8, 40, 48
_ALIGN = 64
_DTYPES = frozenset({"|u1", "|i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f4", "<f8"})


@dataclass(frozen=True)
class ArrayFile:
    """The content of an array file.

    Attributes
    ----------
    format : str
        The ``format`` name the writer gave.
    version : int
    meta : dict
        The writer's JSON metadata.
    arrays : dict of str to numpy.ndarray
        Read-only views of the memory mapping (of the inflated payload when ``compressed``).
    compressed : bool
        Whether the payload was stored zlib-compressed.
    """

    format: str
    version: int
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    compressed: bool = False


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def write_array_file(path: str | os.PathLike[str], format: str, version: int, meta: Mapping[str, Any],
                     arrays: Mapping[str, np.ndarray], compress: bool = False) -> Path:
    """Write named arrays and JSON metadata into one array file, atomically (module docstring).

    The same input always gives the same bytes (with ``compress``: under the same zlib version).

    Parameters
    ----------
    path : path
    format, version : str, int
        Stored in the header; :func:`read_array_file` checks them.
    meta : mapping
        JSON metadata.
    arrays : mapping of str to numpy.ndarray
        Plain numeric arrays.
    compress : bool
        Store the payload as one zlib stream (level 9): a smaller file, inflated once on load instead of
        memory-mapped.

    Returns
    -------
    Path
    """
    out = Path(path)
    table: dict[str, list[Any]] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        dtype = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        a = a.astype(dtype, copy=False)
        if dtype.str not in _DTYPES:
            raise ValueError(f"array {name!r}: dtype {dtype} not storable")
        data = a.tobytes()
        table[name] = [dtype.str, list(a.shape), offset]
        blobs.append(data + b"\0" * _pad(len(data)))
        offset += len(data) + _pad(len(data))
    doc: dict[str, Any] = {"format": format, "version": version, "meta": dict(meta), "arrays": table}
    payload = b"".join(blobs)
    if compress:
        doc["compression"], doc["payload_bytes"] = "zlib", len(payload)
        payload = zlib.compress(payload, 9)
    header = json.dumps(doc, sort_keys=True, ensure_ascii=False).encode("utf-8")
    head = struct.pack("<Q", len(header)) + header
    head += b"\0" * _pad(_HLEN_AT + len(head))
    body = head + payload
    digest = hashlib.sha256(body).digest()
    atomic_write_bytes(out, lambda fh: (fh.write(MAGIC), fh.write(digest), fh.write(body)))
    return out


def is_array_file(path: str | os.PathLike[str], limit: FileLimit = ARRAY_FILE) -> bool:
    """Whether a file starts with the array-file magic (False when it is missing or shorter)."""
    try:
        with open_model_file(path, limit) as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except FileNotFoundError:
        return False


def read_array_file(path: str | os.PathLike[str], format: str, version: int,
                    limit: FileLimit = ARRAY_FILE) -> ArrayFile:
    """Map and check an array file written by :func:`write_array_file`.

    Parameters
    ----------
    path : path
    format, version : str, int
        What the file must be (its header's ``format`` and ``version``).
    limit : FileLimit
        The size cap (:func:`~dualdecomp.core.model_files.open_model_file`).

    Raises
    ------
    ModelError
        Missing, refused, truncated, bad magic, checksum mismatch, wrong format or version, a malformed
        array table, or a compressed payload that does not inflate to its stated size (or to more than
        the limit's size); the message names the file.
    """
    name = os.fspath(path)
    try:
        fh = open_model_file(path, limit)
    except FileNotFoundError as exc:
        raise ModelError(f"{name}: file not found") from exc
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < _HEADER_AT:
            raise ModelError(f"{name}: truncated ({size} bytes): not a dualdecomp array file")
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise ModelError(f"{name}: cannot map the file ({exc})") from None
    view = memoryview(mm)
    if bytes(view[:_DIGEST_AT]) != MAGIC:
        raise ModelError(f"{name}: not a dualdecomp array file (bad magic)")
    if hashlib.sha256(view[_HLEN_AT:]).digest() != bytes(view[_DIGEST_AT:_HLEN_AT]):
        raise ModelError(f"{name}: checksum mismatch (the file is corrupted or was changed after it was "
                         "written)")
    (hlen,) = struct.unpack("<Q", view[_HLEN_AT:_HEADER_AT])
    if _HEADER_AT + hlen > size:
        raise ModelError(f"{name}: header runs past the end of the file")
    try:
        doc = json.loads(bytes(view[_HEADER_AT:_HEADER_AT + hlen]).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ModelError(f"{name}: bad header ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != format:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise ModelError(f"{name}: not a {format} file (format {found!r})")
    if doc.get("version") != version:
        raise ModelError(f"{name}: {format} version {doc.get('version')!r} not supported "
                         f"(expected {version})")
    meta, table = doc.get("meta"), doc.get("arrays")
    if not isinstance(meta, dict) or not isinstance(table, dict):
        raise ModelError(f"{name}: header lacks meta or arrays")
    start = _HEADER_AT + hlen
    start += _pad(start)
    compression = doc.get("compression")
    buffer: Any = mm
    if compression is not None:
        buffer = _inflate(name, doc, view[start:], limit)
        view.release()
        mm.close()  # the arrays are views of the inflated copy
        start, size = 0, len(buffer)
    arrays: dict[str, np.ndarray] = {}
    for key, spec in table.items():
        try:
            dt, shape, off = spec
            dtype = np.dtype(dt)
            if dt not in _DTYPES or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise ValueError("bad dtype or shape")
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            if not isinstance(off, int) or off < 0 or start + off + count * dtype.itemsize > size:
                raise ValueError("array runs past the end of the file")
            arr = np.frombuffer(buffer, dtype=dtype, count=count, offset=start + off).reshape(shape)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{name}: bad array {key!r} ({exc})") from None
        arrays[key] = arr
    return ArrayFile(format, version, meta, arrays, compression is not None)


def _inflate(name: str, doc: dict[str, Any], data: memoryview, limit: FileLimit) -> bytes:
    """The payload of a compressed array file (the caller checked the checksum)."""
    if doc.get("compression") != "zlib":
        raise ModelError(f"{name}: compression {doc.get('compression')!r} not supported (expected 'zlib')")
    expected = doc.get("payload_bytes")
    if not isinstance(expected, int) or isinstance(expected, bool) or not 0 <= expected <= limit.max_bytes:
        raise ModelError(f"{name}: bad payload size {expected!r} (at most {limit.max_bytes} bytes)")
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, expected + 1)
    except zlib.error as exc:
        raise ModelError(f"{name}: corrupted compressed payload ({exc})") from None
    finally:
        data.release()
    if len(out) != expected or not inflater.eof:
        raise ModelError(f"{name}: the compressed payload does not inflate to its stated {expected} bytes")
    return out
