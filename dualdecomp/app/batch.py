"""Batch compression of a JSONL file: per-line errors, a checked journal, resume, safe atomic output.

Lines are processed in chunks (parsed together by spaCy; one by one under a time limit, so that each
line's parse counts against its own deadline). Every finished row is appended to the journal
``OUT.partial`` (flushed and fsynced, :mod:`dualdecomp.app.journal`) with the hash of its input line and
the fingerprint of the options and the model (:meth:`BatchOptions.row_options` lists the options), so a
killed run loses at most the line in progress and ``resume=True`` reuses exactly the rows computed from
the same line, options and model (an edited line, a changed ``--ratio`` or ``--max-tokens`` or another
model are recomputed). The output file itself is only ever written whole, by an atomic rename, when
every line is done; the journal is then removed. An output or journal that is a file the run reads (the
input, standard input, the length file, a model file), a symlinked or hard-linked journal and a second
run on the same output are refused; devices and FIFOs given as output are written directly
(:mod:`dualdecomp.app.output_paths`). Rows are in input order; a line that cannot be compressed gets an
``error`` field (``on_error="skip"``) or stops the run (``on_error="fail"``).

Input lines are read one at a time with a byte cap (``max_line_bytes``, :mod:`dualdecomp.data.line_reader`)
and split on ``\\n`` only (a raw U+2028, U+2029 or U+0085 inside a JSON string stays in its line); a UTF-8
byte-order mark before line 1 is ignored; a line over the cap (never kept whole in memory), not UTF-8 or
not valid JSON (including an integer of more than 4,300 digits or nesting too deep) becomes that line's
error row.

The batch is not tied to compression: it runs a *processor* (:class:`BatchProcessor`), which supplies each
parsed line's row. A :class:`~dualdecomp.app.compressor.Compressor` is one (its row:
:func:`dualdecomp.app.compression_rows.compression_row`), a
:class:`~dualdecomp.app.rewriter.Rewriter` another (``dualdecomp rewrite``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from dualdecomp.app.compression_rows import compression_row
from dualdecomp.app.journal import Journal, journal_path, line_hash, model_fingerprint, run_fingerprint
from dualdecomp.app.length_request import LengthSpec
from dualdecomp.app.limits import DEFAULT_MAX_TOKENS
from dualdecomp.app.output_paths import check_paths, clean_stale_temporaries, resolve_output
from dualdecomp.app.safe_text import safe_text
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import DualDecompError, InputError, Interrupted, SolverError
from dualdecomp.core.progress import set_progress_total
from dualdecomp.data.jsonl import CorpusItem, corpus_item_from_row, write_lines_atomic
from dualdecomp.data.line_reader import CHUNK_BYTES, RawLine, open_lines, read_bounded_lines
from dualdecomp.data.parsing import PIPELINES, load_pipeline, parse_tokens, tokenise_text

INPUT_FORMATS = ("jsonl", "text")
OUTPUT_FORMATS = ("jsonl", "text")

LINE_BYTES_BASE = 64 * 1024
"""The fixed part of the default ``--max-line-bytes`` (an id, field names, a few very long tokens)."""
LINE_BYTES_PER_TOKEN = 1024
"""The default ``--max-line-bytes`` per token of ``--max-tokens``: room for the text and 20 gold
compressions of a sentence of average 6-byte tokens with every character JSON-escaped as ``\\uXXXX``
(21 copies x 6 x 6 bytes = 756 bytes per token), so a line the compressor accepts is practically never
refused for its bytes. The longest line of the shipped corpora (``data/corpora``, ``../shared/data``: 5,172
bytes, a 42-token sentence with 18 references) is under the 64 KiB base alone (tested)."""

__all__ = ["BatchOptions", "BatchProcessor", "BatchSession", "BatchSummary", "compress_chunk",
           "default_max_line_bytes", "detect_input_format", "journal_path", "output_line", "process_chunk",
           "read_input", "read_input_lines", "run_batch", "safe_text"]


@dataclass(frozen=True)
class BatchOptions:
    """Options of a batch run (the CLI's)."""

    spec: LengthSpec = LengthSpec()
    chars: int | None = None
    resume: bool = False
    on_error: str = "skip"
    time_limit: float | None = None
    deterministic: bool = False
    batch_size: int = 64
    trace: bool = False
    input_format: str = "jsonl"
    split: bool = False
    output_format: str = "jsonl"
    max_line_bytes: int | None = None
    budget: tuple[str, float] | None = None

    def line_cap(self, max_tokens: int | None) -> int:
        """The effective ``--max-line-bytes``: the one given, else :func:`default_max_line_bytes`."""
        return default_max_line_bytes(max_tokens) if self.max_line_bytes is None else self.max_line_bytes

    def row_options(self, max_tokens: int | None = None) -> dict:
        """The options that change an output row (hashed into the journal's run fingerprint).

        Every ``compress`` option that can change a row: the length request (``--length``, ``--ratio``,
        ``--length-file``: its lengths, not its name), ``--chars``, ``--time-limit``, ``--deterministic``,
        ``--trace``, the input format (``--input-format``, resolved) and ``--split``, the effective
        ``--max-tokens`` (``max_tokens``: the compressor's) and the effective ``--max-line-bytes``.
        The model directory's files, ``--config``, and the versions of dualdecomp and of the spaCy pipeline
        are added by the batch (:func:`_run_fingerprint`); the input line's bytes by its hash.

        Left out because they cannot change a row: ``--format`` (rows are journalled as JSON and
        rendered when the output is written), ``--batch-size`` and ``--workers``/``--scheduler`` (a
        sentence's parse and compression do not depend on its chunk), ``--on-error`` (it stops a run,
        it never changes a row), ``--input``/``--output`` (paths), ``--json``, ``--quiet``, ``--resume``.

        A task's own ``budget`` (``dualdecomp rewrite``'s ``--chars``, ``--ratio`` or ``--length``) is added
        when set (a compression run has none, so its fingerprint is unchanged).
        """
        spec = {"mode": self.spec.mode, "value": self.spec.value, "lengths": self.spec.lengths}
        out = {"spec": spec, "chars": self.chars, "time_limit": self.time_limit,
               "deterministic": self.deterministic, "trace": self.trace, "input_format": self.input_format,
               "split": self.split, "max_tokens": max_tokens, "max_line_bytes": self.line_cap(max_tokens)}
        if self.budget is not None:
            out["budget"] = [self.budget[0], self.budget[1]]
        return out


class BatchProcessor(Protocol):
    """What a batch runs: the model of one task (compression, rewriting), loaded once.

    Attributes
    ----------
    max_tokens : int or None
        Longest sentence taken; a longer line is not parsed (its row comes from :meth:`batch_row` with
        ``sentence=None``, which calls :meth:`check_size` to raise the limit's error).
    directory : path or None
        The model directory (hashed into the run fingerprint; refused as an output). None: in memory.
    config_name : str or None
        A configuration of the model directory (part of the run fingerprint).

    Optional members (looked up with ``getattr``): ``raw_jsonl`` (bool: a JSONL line's ``text`` is raw text,
    tokenised by spaCy like a plain-text line, instead of pre-tokenised), ``fingerprint()`` (a
    JSON-serialisable dict of the processor's own settings that change a row, e.g. a beam size) and
    ``row_text(item)`` (the ``text`` field of the row of a line whose parse failed).
    """

    max_tokens: int | None
    directory: Path | None
    config_name: str | None

    def check_size(self, n: int) -> None:
        """Raise InputError when a sentence of ``n`` tokens is over the processor's limit."""

    def batch_row(self, index: int, item: CorpusItem, sentence: Any, options: BatchOptions,
                  deadline: Deadline | None) -> tuple[dict, int]:
        """The row of input item ``index`` (``sentence``: its parse, None when over ``max_tokens``) and
        its exit code (0, or the error's); ``deadline`` (when given) started before the parse."""


@dataclass(frozen=True)
class BatchSummary:
    """What a batch run did (``exit_code``: 0, or the highest exit code of the failed lines' errors)."""

    lines: int
    failed: int
    certified: int
    reused: int
    exit_code: int = 0


def _error_row(obj: object, lineno: int, message: str) -> dict:
    rid = obj.get("id") if isinstance(obj, dict) else None
    rid = rid if isinstance(rid, str | int) and not isinstance(rid, bool) else lineno
    try:
        rid = str(rid)
    except ValueError:  # an integer too long to convert
        rid = str(lineno)
    return {"id": safe_text(rid), "error": safe_text(message)}


def default_max_line_bytes(max_tokens: int | None) -> int:
    """The default ``--max-line-bytes``: ``LINE_BYTES_BASE`` + ``LINE_BYTES_PER_TOKEN`` per token of the
    effective ``--max-tokens`` (the shared default, 300, when the compressor has none): 364 KiB at 300."""
    tokens = DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
    return LINE_BYTES_BASE + LINE_BYTES_PER_TOKEN * tokens


def _too_long_row(lineno: int, loc: str, size: int, cap: int) -> dict:
    return _error_row(None, lineno, f"{loc}: a line of {size} bytes is longer than --max-line-bytes {cap} "
                                    "(not read): split it, or raise --max-line-bytes")


def read_lines(path: str | os.PathLike[str], input_format: str = "jsonl", split: bool = False,
               max_line_bytes: int | None = None, raw_jsonl: bool = False
               ) -> list[tuple[CorpusItem | dict, str]]:
    """The non-blank lines of an input (``-``: standard input): a ``CorpusItem`` or an error row for each,
    with the sha256 of the line's bytes.

    ``input_format="jsonl"``: one JSON object per line (the shared format, pre-tokenised ``text``).
    ``"text"``: one raw sentence per line, tokenised by spaCy (ids are line numbers); with ``split``
    every line is a paragraph split into sentences (ids ``LINE.K``, one item per sentence). ``"auto"``:
    :func:`detect_input_format` for a file, and for standard input or a pipe the first line read (JSONL
    when it starts with ``{``; see :func:`read_input_lines`). With ``raw_jsonl`` a JSONL line's ``text`` is
    raw text, tokenised by spaCy (its spacing kept), as in the rewriting corpus.

    The input is read line by line (:func:`dualdecomp.data.line_reader.read_bounded_lines`): a line of more
    than ``max_line_bytes`` bytes (default :func:`default_max_line_bytes` of 300 tokens) is neither kept,
    parsed as JSON nor tokenised: it becomes its error row (id: its line number). A device other than
    ``/dev/null`` or a terminal is refused, and so is a "line" of more than 1 GiB (InputError).
    """
    return read_input_lines(path, input_format, split, max_line_bytes, raw_jsonl)[0]


def read_input_lines(path: str | os.PathLike[str], input_format: str = "jsonl", split: bool = False,
                     max_line_bytes: int | None = None, raw_jsonl: bool = False
                     ) -> tuple[list[tuple[CorpusItem | dict, str]], str]:
    """:func:`read_lines` and the input format it used (``"auto"`` resolved).

    With ``"auto"`` a stream (standard input, a pipe) is read once: its format is that of its first line
    with text (a line that is not blank, fits ``max_line_bytes`` and is UTF-8; the lines before it are
    error rows in either format), ``jsonl`` when it starts with ``{`` (after spaces), else ``text``; an
    input without such a line is ``text`` with ``split``, else ``jsonl``.

    Raises
    ------
    InputError
        An unknown format, ``split`` with JSONL input, and as :func:`read_lines`.
    """
    if input_format not in (*INPUT_FORMATS, "auto"):
        raise InputError(f"the input format must be one of {', '.join(INPUT_FORMATS)} or auto, not "
                         f"{input_format!r}")
    fmt = detect_input_format(path) if input_format == "auto" else input_format
    _check_split(fmt, split)
    cap = default_max_line_bytes(None) if max_line_bytes is None else max_line_bytes
    name = "(standard input)" if str(path) == "-" else str(path)
    out: list[tuple[CorpusItem | dict, str]] = []
    with open_lines(path, "input") as stream:
        for line in read_bounded_lines(stream, cap, where=name):
            if fmt is None and (fmt := _line_format(line)) is not None:
                _check_split(fmt, split)
            out.extend(_line_items(line, f"{name}:{line.number}", cap, fmt or "jsonl", split, raw_jsonl))
    return out, fmt or ("text" if split else "jsonl")


def _check_split(input_format: str | None, split: bool) -> None:
    if split and input_format == "jsonl":
        raise InputError("--split needs plain-text input (--input-format text)")


def _line_format(line: RawLine) -> str | None:
    """The input format a stream's line shows (``jsonl``: it starts with ``{``), None when it shows none
    (blank, over the cap, not UTF-8)."""
    if line.data is None:
        return None
    try:
        text = line.data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    return "jsonl" if text.startswith("{") else "text"


def _line_items(line: RawLine, loc: str, cap: int, input_format: str, split: bool,
                raw_jsonl: bool = False) -> list[tuple[CorpusItem | dict, str]]:
    """The items of one input line (none for a blank line), each with its line's hash."""
    lineno, raw = line.number, line.data
    if raw is None:
        return [(_too_long_row(lineno, loc, line.size, cap), line.sha256)]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [(_error_row(None, lineno, f"{loc}: not valid UTF-8 ({exc.reason})"), line.sha256)]
    if not text.strip():
        return []
    if input_format == "text":
        return _text_items(text, raw, lineno, loc, split)
    obj = None
    try:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long integer, nesting
            msg = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
            raise InputError(f"{loc}: invalid JSON ({msg})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{loc}: a line must be a JSON object")
        item = corpus_item_from_row(obj, default_id=str(lineno), where=loc)
        if raw_jsonl:
            pieces = tokenise_text(obj["text"], False)
            if len(pieces) != 1:
                raise InputError(f"{loc}: no tokens in 'text'")
            (toks, spaces), = pieces
            item = dataclasses.replace(item, text=toks, spaces=spaces)
    except DualDecompError as exc:
        return [(_error_row(obj, lineno, str(exc)), line.sha256)]
    return [(item, line.sha256)]


def _text_items(line: str, raw: bytes, lineno: int, loc: str,
                split: bool) -> list[tuple[CorpusItem | dict, str]]:
    """The items of one plain-text line (one, or one per sentence with ``split``)."""
    try:
        pieces = tokenise_text(line, split)
        if split:
            return [(CorpusItem(f"{lineno}.{k}", toks, spaces=spaces), line_hash(raw + b"\0%d" % k))
                    for k, (toks, spaces) in enumerate(pieces, start=1)]
        if len(pieces) != 1:
            raise InputError("no tokens in this line")
        (toks, spaces), = pieces
        return [(CorpusItem(str(lineno), toks, spaces=spaces), line_hash(raw))]
    except DualDecompError as exc:
        return [(_error_row(None, lineno, f"{loc}: {exc}"), line_hash(raw))]


def detect_input_format(path: str | os.PathLike[str]) -> str | None:
    """``jsonl`` for a ``.jsonl``/``.json`` file, ``text`` for ``.txt``; otherwise ``jsonl`` when the first
    non-blank byte of a regular file's first 64 KiB is ``{``, else ``text``. None for standard input
    (``-``), a pipe or a device: they are not read here (their reader would lose what was read), their
    first line decides as they are read (:func:`read_input_lines` with ``"auto"``)."""
    name = str(path)
    if name == "-":
        return None
    if name.endswith((".jsonl", ".json", ".jsonl.partial")):
        return "jsonl"
    if name.endswith(".txt"):
        return "text"
    try:  # a FIFO is never opened here (its reader would take its first bytes)
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb", buffering=0) as fh:
            head = fh.read(CHUNK_BYTES)
    except OSError:
        return "jsonl"  # read_lines reports the unreadable input
    stripped = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if stripped:
        return "jsonl" if stripped.startswith(b"{") else "text"
    return "jsonl"


def read_input(path: str | os.PathLike[str], max_line_bytes: int | None = None) -> list[CorpusItem | dict]:
    """The non-blank lines of a JSONL input: a ``CorpusItem`` or an error row for each."""
    return [item for item, _ in read_lines(path, max_line_bytes=max_line_bytes)]


def _versions() -> dict[str, str | None]:
    """The versions of dualdecomp and of the spaCy pipeline that parses (without loading spaCy)."""
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    pipeline = next((f"{name} {v}" for name in PIPELINES if (v := version(name)) is not None), None)
    return {"dualdecomp": version("dualdecomp"), "spacy": version("spacy"), "pipeline": pipeline}


def _run_fingerprint(compressor, options: BatchOptions) -> str:
    directory = getattr(compressor, "directory", None)
    # the decode options come from the model directory's configuration files, which are hashed
    extra = {"config": getattr(compressor, "config_name", None), "versions": _versions()}
    own = getattr(compressor, "fingerprint", None)
    if own is not None:  # a processor's own settings (absent for a Compressor: its fingerprint unchanged)
        extra["processor"] = own()
    if directory is None and getattr(compressor, "model", None) is not None:  # a model given in memory
        model = compressor.model
        extra["weights"] = line_hash(model.weights.tobytes())
        extra["model"] = {"hash_bits": model.hash_bits, "lexical": model.lexical, "meta": model.meta,
                          "lm": getattr(model.lm, "path", None) if model.lm is not None else None}
    return run_fingerprint(options.row_options(getattr(compressor, "max_tokens", None)),
                           model_fingerprint(directory, extra))


def _reusable(journal: Journal, hashes: list[str], ids: list[str], run: str) -> dict[int, dict]:
    """The journal's rows computed from the same line, options and model (never error rows)."""
    done: dict[int, dict] = {}
    for rec in journal.records():
        index, row = rec["index"], rec["row"]
        if 0 <= index < len(hashes) and rec.get("line") == hashes[index] and rec.get("run") == run \
                and row.get("id") == ids[index] and "error" not in row:
            done[index] = row
    return done


class BatchSession:
    """The set-up and the end of a batch run, shared by the single-process and the Dask runners.

    Opening one checks the options and the paths, reads the input lines (with their hashes), opens and
    locks the journal, computes the run fingerprint and, with ``resume``, the reusable rows (``done``).
    :meth:`record` journals (or writes directly) a finished row; :meth:`finish` writes the output whole,
    atomically, and removes the journal; :meth:`close` releases everything (use as a context manager).
    """

    def __init__(self, input_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None,
                 compressor, options: BatchOptions, emit: Callable[[dict], None] | None = None) -> None:
        if options.on_error not in ("skip", "fail"):
            raise InputError(f"--on-error must be skip or fail, not {options.on_error!r}")
        if options.batch_size < 1:
            raise InputError("the batch size must be >= 1")
        if output_path is not None and str(output_path) == "-":
            if options.resume:
                raise InputError("--resume needs an --output that is a regular file, not - (standard output)")
            output_path = None
            emit = _stdout_writer(emit, options.output_format)
        if output_path is not None:
            check_paths(input_path, output_path, length_file=options.spec.path,
                        model_dir=getattr(compressor, "directory", None))
        self.emit = emit
        self.output_format = options.output_format
        if self.output_format not in OUTPUT_FORMATS:
            raise InputError(f"the output format must be one of {', '.join(OUTPUT_FORMATS)}")
        cap = options.line_cap(getattr(compressor, "max_tokens", None))
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise InputError(f"--max-line-bytes must be a positive integer, got {cap!r}")
        lines, input_format = read_input_lines(input_path, options.input_format, options.split, cap,
                                               bool(getattr(compressor, "raw_jsonl", False)))
        options = dataclasses.replace(options, input_format=input_format)  # "auto" resolved
        self.input_format = input_format
        self.items = [item for item, _ in lines]
        self.hashes = [h for _, h in lines]
        spec = options.spec
        if spec.mode == "file" and len(spec.lengths) != len(self.items):
            raise InputError(f"the length file has {len(spec.lengths)} lines but the input has "
                             f"{len(self.items)}")
        self.target = resolve_output(output_path) if output_path is not None else None
        if options.resume and (self.target is None or not self.target.regular):
            raise InputError("--resume needs an --output that is a regular file")
        regular = self.target is not None and self.target.regular
        self.journal = Journal(journal_path(self.target.path), options.resume) if regular else None
        self.direct = None
        self.run, self.done = "", {}
        self.recorded = 0
        try:
            if self.journal is not None:
                clean_stale_temporaries(self.target.target)
                self.run = _run_fingerprint(compressor, options)
                ids = [it["id"] if isinstance(it, dict) else it.id for it in self.items]
                self.done = _reusable(self.journal, self.hashes, ids, self.run) if options.resume else {}
            elif self.target is not None:
                try:
                    self.direct = open(self.target.target, "w", encoding="utf-8")  # noqa: SIM115
                except OSError as exc:
                    raise InputError(f"{self.target.path}: cannot write: {exc.strerror or exc}") from None
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> BatchSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def record(self, index: int, row: dict) -> None:
        """Keep a finished row: journal it (unless reused) or write it to a direct output."""
        if self.journal is not None and index not in self.done:
            self.journal.append(index, self.hashes[index], self.run, row)
        self.recorded += 1
        if self.direct is not None:
            try:
                self.direct.write(output_line(row, self.output_format) + "\n")
                self.direct.flush()
            except OSError as exc:
                raise InputError(f"cannot write the output: {exc.strerror or exc}") from None

    def interrupted(self) -> KeyboardInterrupt:
        """The Ctrl-C of a run: with a journal, what it keeps and how to go on."""
        if self.journal is None:
            return KeyboardInterrupt()
        return Interrupted(f"the {self.recorded} lines done are kept in {self.journal.path}; run the same "
                           "command with --resume to go on from there")

    def failure(self, index: int, row: dict, done: int, code: int) -> InputError:
        """The error that stops a run at a failed line (``on_error="fail"``)."""
        where = f"the {done} lines done are kept in {self.journal.path}; " if self.journal else ""
        err = InputError(f"line {index + 1} (id {row['id']!r}): {row['error']} ({where}fix the input "
                         "and rerun with --resume)")
        err.exit_code = max(code, InputError.exit_code)
        return err

    def finish(self, rows: list[dict], codes: list[int]) -> BatchSummary:
        """Write the output whole (atomic rename) and remove the journal; the run's summary."""
        if self.journal is not None:
            write_lines_atomic(self.target.target, (output_line(row, self.output_format) for row in rows))
            self.journal.remove()
        failed = sum("error" in r for r in rows)
        certified = sum(bool(r.get("certified")) for r in rows)
        return BatchSummary(len(rows), failed, certified, len(self.done), max(codes, default=0))

    def close(self) -> None:
        """Release the journal's lock and close a direct output."""
        if self.journal is not None:
            self.journal.close()
        if self.direct is not None:
            try:
                self.direct.close()
            except OSError:
                pass


def run_batch(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None, compressor,
              options: BatchOptions, progress: Callable[[int], None] | None = None,
              emit: Callable[[dict], None] | None = None) -> tuple[list[dict], BatchSummary]:
    """Compress every line of a JSONL file.

    Parameters
    ----------
    input_path : path
        JSONL input (``-``: standard input).
    output_path : path or None
        JSONL output (journal + atomic write for a regular file; a device or FIFO is written directly;
        ``-``: standard output, row by row); None to only return (and ``emit``) the rows.
    compressor : dualdecomp.app.compressor.Compressor
        The model.
    options : BatchOptions
        Length request, character budget, resume, error policy, time limit, determinism, chunk size.
    progress : callable, optional
        Called with the number of lines finished; given the number of lines once the input is read when
        it takes one (a :class:`~dualdecomp.core.progress.ProgressBar`: a percentage and an ETA).
    emit : callable, optional
        Called with each row as soon as it is final (in input order).

    Returns
    -------
    rows : list of dict
    summary : BatchSummary

    Raises
    ------
    InputError
        Unreadable input, an output that is the input or its journal, a journal that is a symlink or
        locked by another run, a journal that cannot be written (full disk), a length file of the wrong
        size, or a failed line with ``on_error="fail"``.
    """
    with BatchSession(input_path, output_path, compressor, options, emit) as session:
        set_progress_total(progress, len(session.items))
        try:
            rows, codes = _process(session, compressor, options, progress)
        except KeyboardInterrupt:
            raise session.interrupted() from None
        return rows, session.finish(rows, codes)


def output_line(row: dict, output_format: str) -> str:
    """One output line: the JSON row, or (``text``) the compression or rewrite as text (an empty line for
    a line that failed, so that output line k stays input item k)."""
    if output_format == "jsonl":
        return json.dumps(row, ensure_ascii=False)
    if "error" in row:
        return ""
    if "rewrite" in row:
        return row["rewrite"]
    return row.get("output", row.get("compression", ""))


def _stdout_writer(emit: Callable[[dict], None] | None, output_format: str) -> Callable[[dict], None]:
    """Write each row as one line on standard output (``--output -``), then call ``emit``."""

    def write(row: dict) -> None:
        sys.stdout.write(output_line(row, output_format) + "\n")
        sys.stdout.flush()
        if emit is not None:
            emit(row)

    return write


def parse_chunk(todo: list[tuple[int, CorpusItem]]) -> tuple[dict[int, object], dict[int, str]]:
    """Parse a chunk's items together; on a ``MemoryError`` parse them one by one, and an item that still
    runs out of memory gets an error message instead of a sentence (its line's error row, not the batch's
    end). Raw-text items keep their original spacing.

    Returns
    -------
    sentences : dict
        Item index → parsed ``Sentence``.
    unparsed : dict
        Item index → error message.
    """
    def parse(part):
        parsed = parse_tokens([it.text for _, it in part], ids=[it.id for _, it in part])
        return {i: s if it.spaces is None else dataclasses.replace(s, spaces=it.spaces)
                for (i, it), s in zip(part, parsed, strict=True)}

    try:
        return parse(todo), {}
    except MemoryError:
        sentences, unparsed = {}, {}
        for i, it in todo:
            try:
                sentences.update(parse([(i, it)]))
            except MemoryError:
                unparsed[i] = f"out of memory parsing this line ({len(it.text)} tokens)"
        return sentences, unparsed


def process_chunk(chunk: list[tuple[int, CorpusItem]], compressor,
                  options: BatchOptions) -> dict[int, tuple[dict, int]]:
    """Parse a chunk of items and give each its row (the processor's ``batch_row``; for a processor
    without one, a compressor, :func:`~dualdecomp.app.compression_rows.compression_row`): item index →
    (output row, exit code).

    Without a time limit the chunk is parsed together (spaCy's batches: the fastest). With
    ``options.time_limit`` each item is parsed on its own after its deadline starts, so its parse counts
    against its own limit (spaCy's loading, once per process, does not): an item whose parse alone uses it
    up gets its error row (the time-limit error, exit code 4) and no other item pays for it (a sentence's
    parse does not depend on its chunk, so the rows are the same). Items over the compressor's
    ``max_tokens`` are not parsed (their row says so); an item whose parse runs out of memory gets an
    error row (:func:`parse_chunk`). The single-process and the Dask runners both decode through this
    function (``compress_chunk`` is its older name).
    """
    limit = getattr(compressor, "max_tokens", None)
    todo = [(i, it) for i, it in chunk if limit is None or len(it.text) <= limit]  # longer: not parsed
    out = {}
    if options.time_limit is None:
        sentences, unparsed = parse_chunk(todo)
        for i, it in chunk:
            out[i] = _parsed_row(i, it, sentences.get(i), unparsed.get(i), compressor, options, None)
        return out
    parse = {i for i, _ in todo}
    if parse:
        load_pipeline()  # loading spaCy (once per process) is not a line's parse
    for i, it in chunk:
        deadline = Deadline.start(options.time_limit)
        sentences, unparsed = parse_chunk([(i, it)]) if i in parse else ({}, {})
        out[i] = _parsed_row(i, it, sentences.get(i), unparsed.get(i), compressor, options, deadline)
    return out


compress_chunk = process_chunk


def _parsed_row(i: int, it: CorpusItem, sentence, unparsed: str | None, processor, options: BatchOptions,
                deadline: Deadline | None) -> tuple[dict, int]:
    """The row of an item after its parse (``unparsed``: the parse's error message)."""
    if unparsed is not None:
        row_text = getattr(processor, "row_text", None)
        text = row_text(it) if row_text is not None else " ".join(it.text)
        return {"id": it.id, "text": text, "error": unparsed}, SolverError.exit_code
    batch_row = getattr(processor, "batch_row", None)
    if batch_row is None:  # a compressor
        return compression_row(i, it, sentence, processor, options, deadline)
    return batch_row(i, it, sentence, options, deadline)


def _process(session: BatchSession, compressor, options: BatchOptions, progress):
    """Compress the lines not reused, recording each row; returns the rows and the error codes."""
    items, done = session.items, session.done
    rows: list[dict] = []
    codes: list[int] = []
    for start in range(0, len(items), options.batch_size):
        chunk = list(enumerate(items[start:start + options.batch_size], start=start))
        computed = process_chunk([(i, it) for i, it in chunk if i not in done and not isinstance(it, dict)],
                                  compressor, options)
        for i, it in chunk:
            code = 0
            if i in done:
                row = done[i]
            elif isinstance(it, dict):
                row, code = it, InputError.exit_code
            else:
                row, code = computed[i]
            if "error" in row and options.on_error == "fail":
                raise session.failure(i, row, len(rows), code)
            session.record(i, row)
            rows.append(row)
            if code:
                codes.append(code)
            if session.emit is not None:
                session.emit(row)
            if progress is not None:
                progress(1)
    return rows, codes
