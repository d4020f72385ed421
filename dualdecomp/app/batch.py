"""Batch compression of a JSONL file: per-line errors, an append-only journal, resume, atomic output.

Lines are processed in chunks (parsed together by spaCy). Every finished row is appended to the journal
``OUT.partial`` (flushed and fsynced), so a killed run loses at most the line in progress; ``resume=True``
reuses the rows of the journal (and of a previous complete ``OUT``) whose line number and id match the
input, and recomputes the rest. The output file itself is only ever written whole, by an atomic rename,
when every line is done; the journal is then removed. Rows are in input order; a line that cannot be
compressed gets an ``error`` field (``on_error="skip"``) or stops the run (``on_error="fail"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.app.length_request import LengthSpec
from dualdecomp.core.errors import DualDecompError, InputError
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import CorpusItem, corpus_item_from_row, write_jsonl_atomic
from dualdecomp.data.parsing import parse_tokens


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


@dataclass(frozen=True)
class BatchSummary:
    """What a batch run did."""

    lines: int
    failed: int
    certified: int
    reused: int


def journal_path(output: str | os.PathLike[str]) -> Path:
    """The journal of an output file: ``OUT.partial`` beside it."""
    out = Path(output)
    return out.with_name(out.name + ".partial")


def read_input(path: str | os.PathLike[str]) -> list[CorpusItem | dict]:
    """The non-blank lines of a JSONL input: a ``CorpusItem`` or an error row for each."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"input file not found: {p}") from None
    except IsADirectoryError:
        raise InputError(f"input is a directory, not a file: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {p}: {exc}") from None
    out: list[CorpusItem | dict] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        loc = f"{p}:{lineno}"
        obj = None
        try:
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                raise InputError(f"{loc}: invalid JSON ({getattr(exc, 'msg', exc)})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{loc}: a line must be a JSON object")
            out.append(corpus_item_from_row(obj, default_id=str(lineno), where=loc))
        except DualDecompError as exc:
            rid = obj.get("id") if isinstance(obj, dict) else None
            rid = rid if isinstance(rid, str | int) and not isinstance(rid, bool) else lineno
            out.append({"id": str(rid), "error": str(exc)})
    return out


def _previous_rows(output: Path, items: list[CorpusItem | dict]) -> dict[int, dict]:
    """Rows of an earlier run (journal, then complete output) that match the input line and id."""
    done: dict[int, dict] = {}
    ids = [it["id"] if isinstance(it, dict) else it.id for it in items]
    journal = journal_path(output)
    if journal.exists():
        for line in journal.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
                index, row = rec["index"], rec["row"]
            except (json.JSONDecodeError, KeyError, TypeError):
                continue  # a line cut by a kill
            if isinstance(index, int) and 0 <= index < len(ids) and isinstance(row, dict) \
                    and row.get("id") == ids[index] and "error" not in row:
                done[index] = row
    elif output.exists():
        for index, line in enumerate(output.read_text(encoding="utf-8", errors="replace").splitlines()):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if index < len(ids) and isinstance(row, dict) and row.get("id") == ids[index] \
                    and "error" not in row:
                done[index] = row
    return done


def compress_item(index: int, item: CorpusItem, sentence, compressor, options: BatchOptions) -> dict:
    """The output row of one input item (an ``error`` row when it cannot be compressed)."""
    spec = options.spec
    base = {"id": item.id, "text": " ".join(item.text)}
    try:
        if sentence is None:  # not parsed: over the compressor's size limit
            compressor.check_size(len(item.text))
        gold = None
        if spec.mode == "gold":
            gold = [int(keep_vector(item.text, c).sum()) for c in item.compressions]
        lengths = spec.for_sentence(sentence.n, index, gold)
        results = compressor.compress_lengths(sentence, lengths, options.chars, time_limit=options.time_limit)
    except DualDecompError as exc:
        return {**base, "error": str(exc)}
    except MemoryError:
        return {**base, "error": f"out of memory compressing this line ({len(item.text)} tokens)"}
    timing, trace = not options.deterministic, options.trace
    row = {**base, **results[0].to_json(timing=timing, trace=trace)}
    if spec.mode == "gold":
        row["references"] = [{"length": m, **c.to_json(timing=timing, trace=trace)}
                             for m, c in zip(lengths, results, strict=True)]
    return row


def run_batch(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None, compressor,
              options: BatchOptions, progress: Callable[[int], None] | None = None,
              emit: Callable[[dict], None] | None = None) -> tuple[list[dict], BatchSummary]:
    """Compress every line of a JSONL file.

    Parameters
    ----------
    input_path : path
        JSONL input.
    output_path : path or None
        JSONL output (journal + atomic write); None to only return (and ``emit``) the rows.
    compressor : dualdecomp.app.compressor.Compressor
        The model.
    options : BatchOptions
        Length request, character budget, resume, error policy, time limit, determinism, chunk size.
    progress : callable, optional
        Called with the number of lines finished.
    emit : callable, optional
        Called with each row as soon as it is final (in input order).

    Returns
    -------
    rows : list of dict
    summary : BatchSummary

    Raises
    ------
    InputError
        Unreadable input, a length file of the wrong size, or a failed line with ``on_error="fail"``.
    """
    if options.on_error not in ("skip", "fail"):
        raise InputError(f"--on-error must be skip or fail, not {options.on_error!r}")
    if options.batch_size < 1:
        raise InputError("the batch size must be >= 1")
    items = read_input(input_path)
    spec = options.spec
    if spec.mode == "file" and len(spec.lengths) != len(items):
        raise InputError(f"the length file has {len(spec.lengths)} lines but the input has {len(items)}")
    out = Path(output_path) if output_path is not None else None
    if out is not None and out.is_dir():
        raise InputError(f"output is a directory: {out}")
    done = _previous_rows(out, items) if (out is not None and options.resume) else {}
    journal = None
    if out is not None:
        try:
            journal = open(journal_path(out), "a" if options.resume else "w", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise InputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    rows: list[dict] = []
    try:
        for start in range(0, len(items), options.batch_size):
            chunk = list(enumerate(items[start:start + options.batch_size], start=start))
            todo = [(i, it) for i, it in chunk if i not in done and not isinstance(it, dict)
                    and len(it.text) <= getattr(compressor, "max_tokens", len(it.text))]
            parsed = parse_tokens([it.text for _, it in todo], ids=[it.id for _, it in todo])
            sentences = {i: s for (i, _), s in zip(todo, parsed, strict=True)}
            for i, it in chunk:
                if i in done:
                    row = done[i]
                elif isinstance(it, dict):
                    row = it
                else:
                    row = compress_item(i, it, sentences.get(i), compressor, options)
                if "error" in row and options.on_error == "fail":
                    where = f"the {len(rows)} lines done are kept in {journal_path(out)}; " if out else ""
                    raise InputError(f"line {i + 1} (id {row['id']}): {row['error']} ({where}fix the input "
                                     "and rerun with --resume)")
                if journal is not None and i not in done:
                    journal.write(json.dumps({"index": i, "row": row}, ensure_ascii=False) + "\n")
                    journal.flush()
                    os.fsync(journal.fileno())
                rows.append(row)
                if emit is not None:
                    emit(row)
                if progress is not None:
                    progress(1)
    finally:
        if journal is not None:
            journal.close()
    if out is not None:
        write_jsonl_atomic(out, rows)
        journal_path(out).unlink(missing_ok=True)
    failed = sum("error" in r for r in rows)
    certified = sum(bool(r.get("certified")) for r in rows)
    return rows, BatchSummary(len(rows), failed, certified, len(done))
