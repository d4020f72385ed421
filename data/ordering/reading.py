"""Reading ordering inputs and gold sentences from CoNLL-U (``conllu`` package) or JSONL.

CoNLL-U: multi-word token lines (``3-4``) and empty nodes (``5.1``) are skipped, so the words are the
syntactic words; comments are ignored except ``sent_id``. POS comes from XPOS (the PTB tags the paper
uses), a head from HEAD; ``_`` means "not given". As input, the word order of the file is ignored.

JSONL: one object per line, ``{"id": "...", "words": [...], "pos": [...], "heads": [...]}`` with ``pos``
and ``heads`` optional (``null`` entries mean "not given") and heads 1-based as in CoNLL-U (0 = root);
``"text": "w1 w2 ..."`` may replace ``words``. ``"units": [[3, 1], ...]`` (optional) lists ordered
units, each the 1-based numbers of its words in the order they must appear, contiguously (e.g. base NPs;
``OrderingInput.units``: the heads inside a unit must be given). CoNLL-U gold sentences also keep DEPREL,
from which ``dualdecomp.data.ordering.base_np`` derives base NPs.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import conllu

from dualdecomp.core.errors import InputError
from dualdecomp.data.line_reader import check_source, read_bounded_lines
from dualdecomp.data.ordering.inputs import ROOT, OrderingExample, OrderingInput

MAX_LINE_BYTES = 1 << 20
"""The longest input line read (1 MiB: a JSONL bag of about 100,000 words; a CoNLL-U word line is under
1 KiB). A longer line is not kept: its JSONL line or its CoNLL-U sentence block gets an error row."""

MAX_BLOCK_BYTES = 16 << 20
"""The longest CoNLL-U sentence block read (16 MiB: about 200,000 word lines). The rest of a longer block
is skipped without being kept, and the block gets an error row."""

_SKIPPED = "# dualdecomp-skipped: "  # the comment that stands for what was not read, inside its block


@dataclass(frozen=True)
class UnreadInput:
    """An input (a CoNLL-U sentence block or a JSONL line) that could not be read.

    Attributes
    ----------
    ident : str
        Its id: the sentence's ``sent_id`` or the record's ``id`` when they could be read, else
        ``FILE:N`` (the N-th sentence block, resp. line N).
    message : str
        Why it was not read (an ``InputError``'s message).
    """

    ident: str
    message: str


def _open(path: Path):
    """``path`` opened for reading in binary; a missing or unreadable file, a directory or a device that
    may never end (``/dev/zero``) is an ``InputError``."""
    try:
        handle = path.open("rb", buffering=0)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except OSError as exc:  # a directory, no permission
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        check_source(handle.fileno(), str(path), "input", streams=False)
    except BaseException:
        handle.close()
        raise
    return handle


def _bounded_text_lines(handle, path: Path) -> Iterator[str]:
    """The lines of a CoNLL-U file as text for ``conllu`` (undecodable bytes as lone surrogates), read with
    bounds: a line over :data:`MAX_LINE_BYTES` and the rest of a block over :data:`MAX_BLOCK_BYTES` are
    not kept; a comment line in their block says what was skipped (that block becomes an error row)."""
    block = 0
    skipping = False
    for raw in read_bounded_lines(handle, MAX_LINE_BYTES, where=str(path)):
        if raw.data is not None and not raw.data.strip():  # a blank line ends the block
            block, skipping = 0, False
            yield "\n"
            continue
        if skipping:
            continue
        if raw.data is None:
            yield f"{_SKIPPED}line {raw.number} has {raw.size} bytes, more than {MAX_LINE_BYTES} (not read)\n"
            continue
        block += raw.size + 1
        if block > MAX_BLOCK_BYTES:
            skipping = True
            yield (f"{_SKIPPED}the sentence block is longer than {MAX_BLOCK_BYTES} bytes at line "
                   f"{raw.number} (the rest of it not read)\n")
            continue
        yield raw.data.decode("utf-8", errors="surrogateescape") + "\n"


def _conllu_blocks(path: Path) -> Iterator[tuple[int, conllu.TokenList | UnreadInput]]:
    """Each sentence block of a CoNLL-U file, numbered from 1: parsed by the ``conllu`` package, or an
    ``UnreadInput`` when that block is not valid UTF-8 or not valid CoNLL-U (the other blocks are read).

    The blocks are those of ``conllu.parse_incr`` (``conllu.parser.parse_sentences``), each parsed with
    the columns of the file's ``# global.columns`` comment when an earlier block gave one.
    """
    columns = None
    with _open(path) as handle:
        for number, block in enumerate(conllu.parser.parse_sentences(_bounded_text_lines(handle, path)), 1):
            where = f"{path}: sentence block {number}"
            if _SKIPPED in block:
                reason = block[block.index(_SKIPPED) + len(_SKIPPED):].split("\n", 1)[0]
                yield number, UnreadInput(f"{path.name}:{number}", f"{where}: {reason}")
                continue
            try:
                block.encode("utf-8")
            except UnicodeEncodeError:  # undecodable bytes became lone surrogates
                yield number, UnreadInput(f"{path.name}:{number}", f"{where}: not valid UTF-8 text")
                continue
            try:
                sentence = next(iter(conllu.parse_incr(io.StringIO(block), fields=columns)))
            except (conllu.exceptions.ParseException, ValueError, LookupError, TypeError) as exc:
                # ValueError: e.g. an integer of more than 4,300 digits; IndexError: a line of tabs only
                message = str(exc) or type(exc).__name__
                yield number, UnreadInput(f"{path.name}:{number}", f"{where}: not valid CoNLL-U: {message}")
                continue
            if "global.columns" in sentence.metadata:
                columns = sentence.metadata["global.columns"].split()
            yield number, sentence


def _column(token, name: str, ident: str):
    """A token's field; an ``InputError`` naming it when the line has too few columns."""
    try:
        return token[name]
    except KeyError:
        raise InputError(f"sentence {ident}: word {token.get('id')} has no {name.upper()} column (too few "
                         "columns: a word line has 10, separated by tabs)") from None


def _fields(sentence: conllu.TokenList, number: int, path: Path):
    ident = str(sentence.metadata.get("sent_id", f"{path.name}:{number}"))
    tokens = [t for t in sentence if isinstance(_column(t, "id", ident), int)]  # not 3-4, not 5.1
    index = {t["id"]: k for k, t in enumerate(tokens)}
    words, pos, heads, rels = [], [], [], []
    for t in tokens:
        words.append(_column(t, "form", ident))
        rel = _column(t, "deprel", ident)
        rels.append(rel if rel not in (None, "_") else "")
        tag = _column(t, "xpos", ident)
        pos.append(tag if tag not in (None, "_") else None)
        h = _column(t, "head", ident)
        if h is None or h == "_":
            heads.append(None)
        elif h == 0:
            heads.append(ROOT)
        elif h in index:
            heads.append(index[h])
        else:
            raise InputError(f"sentence {ident}: head of word {t['id']} is out of range: {h}")
    return ident, tuple(words), tuple(pos), tuple(heads), tuple(rels)


def read_conllu_examples(path: str | Path, limit: int | None = None) -> list[OrderingExample]:
    """Gold sentences (order, XPOS, tree) from a CoNLL-U file.

    Parameters
    ----------
    path : str or Path
    limit : int, optional
        Read at most this many sentences.

    Returns
    -------
    list of OrderingExample

    Raises
    ------
    InputError
        Missing file, bad CoNLL-U (or not UTF-8), or a sentence without a complete tree and tags.
    """
    path = Path(path)
    out = []
    for number, sentence in _conllu_blocks(path):
        if isinstance(sentence, UnreadInput):
            raise InputError(sentence.message)
        ident, words, pos, heads, rels = _fields(sentence, number, path)
        if not words:
            continue
        out.append(OrderingExample(words, pos, heads, ident, rels))
        if limit is not None and len(out) >= limit:
            break
    return out


def iter_conllu_inputs(path: str | Path) -> Iterator[OrderingInput | UnreadInput]:
    """Ordering inputs from CoNLL-U, one per sentence block: words, with the POS and heads that are given
    (``_`` = not given), or an ``UnreadInput`` for a block that is not valid (the others are read).

    Raises
    ------
    InputError
        The file is missing or unreadable.
    """
    path = Path(path)
    for number, sentence in _conllu_blocks(path):
        if isinstance(sentence, UnreadInput):
            yield sentence
            continue
        ident = str(sentence.metadata.get("sent_id", f"{path.name}:{number}"))
        try:
            ident, words, pos, heads, _ = _fields(sentence, number, path)
            yield OrderingInput(words, pos, heads, ident)
        except InputError as exc:
            yield UnreadInput(ident, str(exc))


def read_conllu_inputs(path: str | Path) -> list[OrderingInput]:
    """Ordering inputs from CoNLL-U (:func:`iter_conllu_inputs`); the first bad sentence is an InputError."""
    return _all_read(iter_conllu_inputs(path))


def parse_jsonl_record(record: object, ident: str) -> OrderingInput:
    """One JSONL record as an ``OrderingInput`` (see the module docstring for the format)."""
    if not isinstance(record, dict):
        raise InputError(f"{ident}: a JSON object is expected")
    ident = str(record.get("id", ident))
    words = record.get("words")
    if words is None and isinstance(record.get("text"), str):
        words = record["text"].split()
    if not isinstance(words, list):
        raise InputError(f"{ident}: 'words' (a list) or 'text' (a string) is required")
    n = len(words)
    pos = record.get("pos") or [None] * n
    heads = record.get("heads") or [None] * n
    if not isinstance(pos, list) or not isinstance(heads, list):
        raise InputError(f"{ident}: 'pos' and 'heads' must be lists")
    if len(heads) != n or len(pos) != n:
        raise InputError(f"{ident}: {n} words but {len(pos)} POS tags and {len(heads)} heads")
    zero_based: list[int | None] = []
    for k, h in enumerate(heads):
        if h is None:
            zero_based.append(None)
        elif isinstance(h, bool) or not isinstance(h, int):
            raise InputError(f"sentence {ident}: head of word {k + 1} is not an integer: {h!r}")
        else:
            if h < 0 or h > n:
                raise InputError(f"sentence {ident}: head of word {k + 1} is out of range: {h} (n = {n})")
            zero_based.append(ROOT if h == 0 else h - 1)
    units = record.get("units") or []
    if not isinstance(units, list) or not all(isinstance(u, list) for u in units):
        raise InputError(f"sentence {ident}: 'units' must be a list of lists of word numbers")
    zero_units: list[tuple[int, ...]] = []
    for unit in units:
        for w in unit:
            if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= n:
                raise InputError(f"sentence {ident}: unit word {w!r} is not a word number 1..{n}")
        zero_units.append(tuple(w - 1 for w in unit))
    return OrderingInput(tuple(words), tuple(pos), tuple(zero_based), ident, tuple(zero_units))


def iter_jsonl_inputs(path: str | Path) -> Iterator[OrderingInput | UnreadInput]:
    """Ordering inputs from a JSONL file, one per non-blank line (lines end at ``\\n`` only), or an
    ``UnreadInput`` for a line that is not valid UTF-8, not JSON (an integer of more than 4,300 digits and
    nesting too deep included) or not a valid record (the other lines are read).

    Raises
    ------
    InputError
        The file is missing or unreadable.
    """
    path = Path(path)
    with _open(path) as handle:
        for raw_line in read_bounded_lines(handle, MAX_LINE_BYTES, where=str(path)):
            number, raw = raw_line.number, raw_line.data
            ident, where = f"{path.name}:{number}", f"{path}:{number}"
            if raw is None:
                yield UnreadInput(ident, f"{where}: a line of {raw_line.size} bytes is longer than "
                                         f"{MAX_LINE_BYTES} (not read)")
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield UnreadInput(ident, f"{where}: not valid UTF-8 ({exc.reason})")
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long integer, nesting
                yield UnreadInput(ident, f"{where}: not JSON: {getattr(exc, 'msg', None) or exc}")
                continue
            try:
                yield parse_jsonl_record(record, ident)
            except InputError as exc:
                named = isinstance(record, dict) and record.get("id") is not None
                yield UnreadInput(str(record["id"]) if named else ident, str(exc))


def read_jsonl_inputs(path: str | Path) -> list[OrderingInput]:
    """Ordering inputs from a JSONL file (:func:`iter_jsonl_inputs`); the first bad line is an InputError."""
    return _all_read(iter_jsonl_inputs(path))


def iter_inputs(path: str | Path) -> Iterator[OrderingInput | UnreadInput]:
    """Inputs from ``*.conllu`` or ``*.jsonl`` (by suffix), each an ``OrderingInput`` or, for a sentence
    block or line that cannot be read, an ``UnreadInput`` (:func:`iter_conllu_inputs`,
    :func:`iter_jsonl_inputs`).

    Raises
    ------
    InputError
        An unknown suffix, or a missing or unreadable file.
    """
    path = Path(path)
    if path.suffix == ".conllu":
        return iter_conllu_inputs(path)
    if path.suffix in (".jsonl", ".json"):
        return iter_jsonl_inputs(path)
    raise InputError(f"{path}: unknown input format (expected .conllu or .jsonl)")


def read_inputs(path: str | Path) -> list[OrderingInput]:
    """Inputs from ``*.conllu`` or ``*.jsonl`` (by suffix); the first bad one is an InputError."""
    return _all_read(iter_inputs(path))


def _all_read(items: Iterator[OrderingInput | UnreadInput]) -> list[OrderingInput]:
    out = []
    for item in items:
        if isinstance(item, UnreadInput):
            raise InputError(item.message)
        out.append(item)
    return out
