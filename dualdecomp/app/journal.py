"""The batch journal ``OUT.partial``: what each finished row was computed from, locked, never followed.

Every record is one JSON line ``{"index", "line", "run", "row"}``: ``line`` is the sha256 of the input
line's bytes and ``run`` the fingerprint of the options and the model (:func:`run_fingerprint`), so a
resumed run reuses a row only when the same line was compressed with the same options by the same model.

The journal is opened with ``O_NOFOLLOW`` (a symlink planted at ``OUT.partial`` is refused, never written
through), with ``O_EXCL`` when it is new, refused when it has more than one hard link (after ``ln FILE
OUT.partial`` a run would truncate FILE), and held under an exclusive ``fcntl.flock`` for the whole run,
so two runs on one output cannot mix their rows: the second one stops with a clear error.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import file_sha256

__all__ = ["Journal", "journal_path", "line_hash", "model_fingerprint", "run_fingerprint"]


def journal_path(output: str | os.PathLike[str]) -> Path:
    """The journal of an output file: ``OUT.partial`` beside it."""
    out = Path(output)
    return out.with_name(out.name + ".partial")


def line_hash(raw: bytes) -> str:
    """The sha256 (hex) of one input line's bytes (without its newline)."""
    return hashlib.sha256(raw).hexdigest()


def model_fingerprint(directory: str | os.PathLike[str] | None, extra: Any = None) -> str:
    """The sha256 (hex) of a model directory: every file's relative path and content, in sorted order.

    Parameters
    ----------
    directory : path or None
        The model directory; None for a model given in memory (then only ``extra`` is hashed).
    extra : JSON-serialisable, optional
        Anything else that identifies the model (e.g. the configuration name, in-memory weights' hash).
    """
    h = hashlib.sha256()
    h.update(json.dumps(extra, sort_keys=True, default=str).encode("utf-8"))
    if directory is not None:
        root = Path(directory)
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for p in files:
            h.update(b"\0" + os.fsencode(p.relative_to(root) if p != root else p.name) + b"\0")
            h.update(file_sha256(p).encode("ascii"))
    return h.hexdigest()


def run_fingerprint(options: Mapping[str, Any], model: str) -> str:
    """The sha256 (hex) of the canonical JSON of ``options`` (sorted keys) and a model fingerprint."""
    text = json.dumps({"options": options, "model": model}, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class Journal:
    """An open, locked journal (use as a context manager; :meth:`close` releases the lock).

    Parameters
    ----------
    path : path
        The journal file (``OUT.partial``).
    resume : bool
        Keep the existing records (they are returned by :meth:`records`); otherwise start empty.

    Raises
    ------
    InputError
        When the path is a symlink, not a regular file or a file with several hard links, another run
        holds the lock, or it cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str], resume: bool) -> None:
        self.path = Path(path)
        self._fd = self._open_locked()
        try:
            self._old = self._read_all() if resume else b""
            self._cut_to_last_newline() if resume else os.ftruncate(self._fd, 0)
        except OSError as exc:
            self.close()
            raise InputError(f"{self.path}: cannot use the journal: {exc.strerror or exc}") from None

    def _open_locked(self) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        for _ in range(5):
            try:
                fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    fd = os.open(self.path, flags)
                except FileNotFoundError:
                    continue  # removed in between: create it
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise InputError(f"{self.path}: the journal is a symbolic link; refusing to follow "
                                         "it (remove it)") from None
                    raise InputError(f"{self.path}: cannot open the journal: {exc.strerror or exc}") from None
            except OSError as exc:
                raise InputError(f"{self.path}: cannot create the journal: {exc.strerror or exc}") from None
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                raise InputError(f"{self.path}: the journal is not a regular file; refusing to use it")
            if st.st_nlink > 1:  # a hard link: truncating or appending would change another file too
                os.close(fd)
                raise InputError(f"{self.path}: the journal has {st.st_nlink} hard links (the same file has "
                                 "another name); refusing to write through it: remove it (rm, which keeps "
                                 "the other names) or, to resume from it, replace it by a copy")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise InputError(f"{self.path}: another run is writing this output (its journal is locked); "
                                 "wait for it to finish") from None
            try:
                same = os.lstat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)  # the run that held it finished and removed it: take the new one
        raise InputError(f"{self.path}: the journal keeps changing; is another run using this output?")

    def _read_all(self) -> bytes:
        os.lseek(self._fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(self._fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)

    def _cut_to_last_newline(self) -> None:
        """Drop a last line cut by a kill or a full disk, so that new records start on their own line."""
        keep = self._old.rfind(b"\n") + 1
        if keep != len(self._old):
            os.ftruncate(self._fd, keep)
            self._old = self._old[:keep]

    def records(self) -> list[dict]:
        """The well-formed records of an earlier run (resume only); unreadable lines are skipped."""
        out = []
        for raw in self._old.split(b"\n"):
            try:
                rec = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):  # cut, not UTF-8, too deep, an over-long integer
                continue
            index = rec.get("index") if isinstance(rec, dict) else None
            if isinstance(rec, dict) and isinstance(rec.get("row"), dict) and isinstance(index, int) \
                    and not isinstance(index, bool):
                out.append(rec)
        return out

    def append(self, index: int, line: str, run: str, row: Mapping[str, Any]) -> None:
        """Append one record and fsync it.

        Raises
        ------
        InputError
            When it cannot be written (e.g. the disk is full); the records before it are kept.
        """
        data = (json.dumps({"index": index, "line": line, "run": run, "row": row}, ensure_ascii=False)
                + "\n").encode("utf-8")
        try:
            view = memoryview(data)
            while view:
                view = view[_write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot write the journal ({exc.strerror or exc}); the rows done "
                             "so far are kept: fix it and rerun with --resume") from None

    def remove(self) -> None:
        """Delete the journal file (while still holding the lock)."""
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Release the lock and close the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write(fd: int, data: memoryview) -> int:
    """``os.write`` (a seam for the full-disk test)."""
    return os.write(fd, data)
