"""Bounded line reading: a file or a stream read line by line, never more than one capped line in memory.

Lines end at ``\\n`` only (a raw U+2028, U+2029 or U+0085 stays in its line); a ``\\r`` before the ``\\n``
and a UTF-8 byte-order mark before line 1 are removed. A line longer than ``max_line_bytes`` is not kept:
the rest of it is read in chunks and dropped (its sha256 is computed as it streams by), and the reader
goes on with the next line. A "line" longer than ``max_skipped`` bytes (1 GiB by default, or the cap when
that is larger: a stream of zeros, a binary file) is not a line of text: reading stops with an
:class:`~dualdecomp.core.errors.InputError`.

:func:`open_lines` opens what is read: a regular file or a pipe/FIFO, and for an input also standard input,
a socket, a terminal or ``/dev/null``; another device (``/dev/zero``, ``/dev/urandom``, a disk) never
ends or is not text, and is refused before anything is read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from dualdecomp.core.errors import InputError

__all__ = ["MAX_SKIPPED_BYTES", "RawLine", "check_source", "open_lines", "read_bounded_lines",
           "standard_input_is_redirected"]

MAX_SKIPPED_BYTES = 1 << 30
"""The longest line whose excess is skipped (1 GiB); a longer one stops the reading."""

CHUNK_BYTES = 1 << 16
"""Bytes read at once (the reader holds at most one chunk and one capped line)."""

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class RawLine:
    """One line of a bounded read.

    Attributes
    ----------
    number : int
        1-based line number (blank lines count).
    data : bytes or None
        The line without its line end (and line 1 without a byte-order mark); None when it is longer
        than the cap (then it was not kept).
    size : int
        The line's length in bytes (without ``\\n``).
    sha256 : str
        Hex sha256 of ``data``; for a line over the cap, of all its bytes as read (computed streaming).
    """

    number: int
    data: bytes | None
    size: int
    sha256: str


class _Line:
    """The line being read: its pieces while it fits the cap, then only its size and a running hash."""

    def __init__(self, cap: int, max_skipped: int, where: str, number: int) -> None:
        self.cap, self.max_skipped, self.where, self.number = cap, max_skipped, where, number
        self.pieces: list[bytes] = []
        self.size = 0
        self.last = b""
        self.hasher: Any = None  # a running sha256 once the line is over the cap

    def add(self, piece: bytes) -> None:
        if not piece:
            return
        self.size += len(piece)
        self.last = piece[-1:]
        if self.size > self.max_skipped:
            raise InputError(f"{self.where}:{self.number}: more than {self.max_skipped} bytes without a line "
                             "break: not a text file with one item per line")
        if self.hasher is not None:
            self.hasher.update(piece)
            return
        self.pieces.append(piece)
        if self.size > self.cap + 1:  # over the cap even with a "\r" before its "\n": stop keeping it
            self.hasher = hashlib.sha256()
            for p in self.pieces:
                self.hasher.update(p)
            self.pieces = []

    def finish(self) -> RawLine:
        if self.hasher is None:
            data = b"".join(self.pieces)
            if self.number == 1 and data.startswith(_BOM):
                data = data[len(_BOM):]
            if data.endswith(b"\r"):
                data = data[:-1]
            if len(data) <= self.cap:
                return RawLine(self.number, data, len(data), hashlib.sha256(data).hexdigest())
            return RawLine(self.number, None, len(data), hashlib.sha256(data).hexdigest())
        size = self.size - (self.last == b"\r")
        return RawLine(self.number, None, size, self.hasher.hexdigest())


def read_bounded_lines(stream: BinaryIO, max_line_bytes: int, max_skipped: int = MAX_SKIPPED_BYTES,
                       where: str = "input") -> Iterator[RawLine]:
    """Yield the lines of a binary stream, each kept only up to ``max_line_bytes`` bytes.

    Parameters
    ----------
    stream : binary file object
        Read with ``read1`` when it has one (a buffered stream), else ``read``, ``CHUNK_BYTES`` at a time.
    max_line_bytes : int
        The longest line kept (bytes, without its line end); a longer one is yielded with ``data=None``.
    max_skipped : int
        The longest line skipped; a longer one raises (``max(max_skipped, max_line_bytes + 1)`` is used).
    where : str
        The name of the stream in messages.

    Yields
    ------
    RawLine

    Raises
    ------
    InputError
        A line longer than ``max_skipped`` bytes, or a read error.
    """
    if isinstance(max_line_bytes, bool) or not isinstance(max_line_bytes, int) or max_line_bytes < 1:
        raise InputError(f"--max-line-bytes must be a positive integer, got {max_line_bytes!r}")
    skipped = max(max_skipped, max_line_bytes + 1)
    read = getattr(stream, "read1", None) or stream.read
    line = _Line(max_line_bytes, skipped, where, 1)
    first = True
    while True:
        try:
            chunk = read(CHUNK_BYTES)
        except OSError as exc:
            raise InputError(f"cannot read {where}: {exc.strerror or exc}") from None
        if not chunk:
            break
        start = len(_BOM) if first and chunk.startswith(_BOM) else 0  # not counted against the cap
        first = False
        while (end := chunk.find(b"\n", start)) >= 0:
            line.add(chunk[start:end])
            yield line.finish()
            line = _Line(max_line_bytes, skipped, where, line.number + 1)
            start = end + 1
        line.add(chunk[start:])
    if line.size:
        yield line.finish()


def check_source(fd: int, name: str, what: str, streams: bool = True) -> None:
    """Refuse to read what is neither a regular file nor a pipe/FIFO (see the module docstring).

    Parameters
    ----------
    fd : int
        The open file descriptor.
    name : str
        Its name in messages.
    what : str
        What it is for, e.g. "input" or "length file".
    streams : bool
        Also accept a socket, a terminal and ``/dev/null`` (an input's standard input).

    Raises
    ------
    InputError
        A directory or another kind of device.
    """
    st = os.fstat(fd)
    mode = st.st_mode
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return
    if stat.S_ISDIR(mode):
        raise InputError(f"the {what} is a directory, not a file: {name}")
    if streams and (stat.S_ISSOCK(mode) or os.isatty(fd) or _is_null(st)):
        return
    accepted = "a regular file or a pipe" + (" (or a terminal, a socket, /dev/null)" if streams else "")
    raise InputError(f"the {what} {name} is a device, not a file: refusing to read it (it may never end); "
                     f"give {accepted}")


def standard_input_is_redirected() -> bool:
    """Whether standard input is a pipe, a FIFO or a regular file (``echo ... | dualdecomp compress``,
    ``< file``): what a command without a text argument reads. A terminal, ``/dev/null``, a socket, a
    closed standard input or one without a descriptor (a test's replacement) is not: the command asks for
    its input instead of waiting for lines that may never come."""
    stream = sys.stdin
    try:
        fd = stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _is_null(st: os.stat_result) -> bool:
    """Whether ``st`` is the null device."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and stat.S_ISCHR(null.st_mode) and st.st_rdev == null.st_rdev


@contextmanager
def open_lines(path: str | os.PathLike[str], what: str = "input", streams: bool = True) -> Iterator[BinaryIO]:
    """Open a file (``-``: standard input, when ``streams``) for :func:`read_bounded_lines`, after
    :func:`check_source`; a file opened here is closed on exit (standard input is left open).

    Raises
    ------
    InputError
        A missing or unreadable file, a directory, a device.
    """
    name = os.fspath(path)
    if streams and name == "-":
        stream = sys.stdin.buffer
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # a stream without a descriptor (e.g. in tests)
            fd = None
        if fd is not None:
            check_source(fd, "(standard input)", what, streams)
        yield stream
        return
    try:
        fh = open(name, "rb", buffering=0)  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise InputError(f"{what} not found: {name}") from None
    except IsADirectoryError:
        raise InputError(f"the {what} is a directory, not a file: {name}") from None
    except OSError as exc:
        raise InputError(f"cannot read the {what} {name}: {exc.strerror or exc}") from None
    with fh:
        check_source(fh.fileno(), name, what, streams)
        yield fh
