"""JSONL input and output: the project corpus format and atomic writing.

A corpus line is ``{"id": ..., "doc": ... (optional), "text": "space-separated tokens",
"compressions": ["...", ...] (optional)}``; every compression is a deletion-only subsequence of ``text``
with the same tokenisation (see ``data/corpora/PROVENANCE.md``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dualdecomp.core.errors import InputError


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a JSONL file, one per non-blank line.

    Blank (whitespace-only) lines are skipped; lines end at ``\n`` only (a raw U+2028 inside a JSON string
    stays in its line); a UTF-8 byte-order mark before line 1 is accepted.

    Parameters
    ----------
    path : str or path-like
        The file (UTF-8).

    Yields
    ------
    dict
        One object per line, in file order.

    Raises
    ------
    InputError
        If the file is missing or unreadable, is not UTF-8, or a line is not valid JSON or not a JSON
        object; the message names ``path:line``.
    """
    for _, row in read_jsonl_numbered(path):
        yield row


def read_jsonl_numbered(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like :func:`read_jsonl`, but yield ``(line_number, object)`` pairs (1-based line numbers).

    Parameters
    ----------
    path : str or path-like
        The file (UTF-8).

    Yields
    ------
    tuple of (int, dict)
        The 1-based line number and the object on that line.

    Raises
    ------
    InputError
        As :func:`read_jsonl`.
    """
    name = os.fspath(path)
    try:
        handle = open(name, encoding="utf-8-sig")  # a byte-order mark before line 1 is accepted
    except OSError as exc:
        raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from exc
    with handle:
        lineno = 0
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{name}:{lineno}: invalid JSON: {exc.msg} "
                                     f"(column {exc.colno})") from exc
                except (ValueError, RecursionError) as exc:  # an integer of > 4,300 digits, too deep
                    raise InputError(f"{name}:{lineno}: invalid JSON: {exc or type(exc).__name__}") from None
                if not isinstance(row, dict):
                    raise InputError(f"{name}:{lineno}: expected a JSON object, got {type(row).__name__}")
                yield lineno, row
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}:{lineno + 1}: not valid UTF-8: {exc.reason}") from exc
        except OSError as exc:
            raise InputError(f"{name}: cannot read: {exc.strerror or exc}") from exc


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (JSON can carry lone surrogates that cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True)
class CorpusItem:
    """One sentence of a corpus in the project JSONL format.

    Attributes
    ----------
    id : str
        Identifier (an integer ``id`` is converted to str; a missing one becomes the line number).
    text : tuple of str
        The source tokens (non-empty).
    compressions : tuple of tuple of str
        The gold compressions (possibly none), each a token sequence, possibly empty.
    doc : str or None
        The document identifier, when known.
    spaces : tuple of bool or None
        For an item read from raw text: whether each token was followed by whitespace (to detokenise).
    """

    id: str
    text: tuple[str, ...]
    compressions: tuple[tuple[str, ...], ...] = field(default=())
    doc: str | None = None
    spaces: tuple[bool, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise InputError(f"corpus item id must be a str, got {type(self.id).__name__}")
        if not self.text:
            raise InputError(f"item {self.id!r}: empty text")
        for tok in self.text:
            if not isinstance(tok, str) or not tok or any(ch.isspace() for ch in tok):
                raise InputError(f"item {self.id!r}: invalid token {tok!r}")
        for part in (self.id, *self.text, *(t for c in self.compressions for t in c)):
            if not is_valid_unicode(part):
                raise InputError(f"item {self.id!r}: text with an unpaired surrogate (not valid Unicode)")

    @property
    def n(self) -> int:
        """Number of source tokens."""
        return len(self.text)


def _field_id(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{where}: 'id' must be a string or an integer, got {type(value).__name__}")
    return str(value)


def _is_subsequence(sub: Sequence[str], seq: Sequence[str]) -> bool:
    it = iter(seq)
    return all(tok in it for tok in sub)


def corpus_item_from_row(row: Mapping[str, Any], default_id: str, where: str,
                         check_subsequence: bool = True) -> CorpusItem:
    """Validate one decoded JSONL object and build a :class:`CorpusItem`.

    Parameters
    ----------
    row : mapping
        The decoded line.
    default_id : str
        Identifier to use when ``row`` has no ``id``.
    where : str
        Location used in error messages (e.g. ``"corpus.jsonl:12"``).
    check_subsequence : bool
        Check that each compression is a subsequence of the text.

    Returns
    -------
    CorpusItem

    Raises
    ------
    InputError
        On a missing or invalid field.
    """
    sid = _field_id(row["id"], where) if "id" in row and row["id"] is not None else default_id
    text = row.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: 'text' must be a non-empty string")
    tokens = tuple(text.split())
    raw = row.get("compressions", [])
    if raw is None:
        raw = []
    if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
        raise InputError(f"{where}: 'compressions' must be a list of strings")
    comps = tuple(tuple(c.split()) for c in raw)
    if check_subsequence:
        for r, comp in enumerate(comps):
            if not _is_subsequence(comp, tokens):
                raise InputError(f"{where}: compression {r} of item {sid!r} is not a deletion-only "
                                 "subsequence of its text")
    doc = row.get("doc")
    if doc is not None:
        if isinstance(doc, bool) or not isinstance(doc, str | int):
            raise InputError(f"{where}: 'doc' must be a string")
        doc = str(doc)
    return CorpusItem(id=sid, text=tokens, compressions=comps, doc=doc)


def read_corpus(path: str | os.PathLike[str]) -> list[CorpusItem]:
    """Read a corpus in the project JSONL format.

    Parameters
    ----------
    path : str or path-like
        The JSONL file.

    Returns
    -------
    list of CorpusItem
        In file order.

    Raises
    ------
    InputError
        On an unreadable file, invalid JSON, a missing or ill-typed field, a compression that is not a
        subsequence of its text, or a duplicate id (messages name ``path:line``).
    """
    name = os.fspath(path)
    items: list[CorpusItem] = []
    seen: dict[str, int] = {}
    for lineno, row in read_jsonl_numbered(name):
        where = f"{name}:{lineno}"
        item = corpus_item_from_row(row, default_id=str(lineno), where=where)
        if item.id in seen:
            raise InputError(f"{where}: duplicate id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = lineno
        items.append(item)
    return items


def read_corpora(paths: Sequence[str | os.PathLike[str]], limit: int | None = None) -> list[list[CorpusItem]]:
    """Read several corpora (:func:`read_corpus`), keeping the first ``limit`` items of each."""
    out = []
    for path in paths:
        items = read_corpus(path)
        out.append(items[:limit] if limit else items)
    return out


def write_jsonl_atomic(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows as JSONL atomically (temporary file in the same directory, then ``os.replace``).

    Either the whole file is written or ``path`` is left untouched.

    Parameters
    ----------
    path : str or path-like
        Destination file.
    rows : iterable of mappings
        JSON-serialisable objects, one per line (written UTF-8, non-ASCII kept as is).

    Raises
    ------
    InputError
        If the directory is not writable or a row is not JSON-serialisable.
    """
    write_lines_atomic(path, (json.dumps(row, ensure_ascii=False) for row in rows))


def write_lines_atomic(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Write text lines (each without its newline) atomically, like :func:`write_jsonl_atomic`."""
    dest = Path(path)
    directory = dest.parent if str(dest.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"{dest}: cannot write: {exc.strerror or exc}") from exc
    try:
        try:
            mode = dest.stat().st_mode & 0o777
        except OSError:
            mode = 0o644
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
                handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, TypeError | ValueError):
            raise InputError(f"{dest}: cannot serialise row as JSON: {exc}") from exc
        if isinstance(exc, OSError):
            raise InputError(f"{dest}: cannot write: {exc.strerror or exc}") from exc
        raise
