"""``dualdecomp compress``: compress raw text or a JSONL file, printing or writing certificates."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dualdecomp.errors import DualDecompError, InputError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``compress`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "compress", help="compress text or a JSONL file",
        description="Compress raw text (tokenised by spaCy, output detokenised) or a JSONL file in the "
                    "shared format (pre-tokenised `text`, never re-tokenised). Every compression comes with "
                    "its certificate: primal, dual, gap, certified.")
    p.add_argument("text", nargs="?", help="raw text to compress (omit with --input)")
    p.add_argument("--input", metavar="IN.jsonl", help="JSONL input: {id, text, compressions?} per line")
    p.add_argument("--output", metavar="OUT.jsonl",
                   help="JSONL output (written atomically); without it results are printed")
    p.add_argument("--length", metavar="N|gold|ratio:R|file:PATH",
                   help="exact number of kept tokens, or gold (each reference's length), ratio:R, file:PATH")
    p.add_argument("--ratio", type=float, metavar="R", help="keep round(R·n) tokens, 0 < R <= 1")
    p.add_argument("--length-file", metavar="PATH", help="one length per line, aligned with the input lines")
    p.add_argument("--model", metavar="DIR", help="model directory (default: the embedded default model)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run)
    return p


def _human(row: dict) -> str:
    if "error" in row:
        return f"[{row['id']}] error: {row['error']}"
    lines = [f"[{row['id']}] {row.get('output', row['compression'])}"]
    for r in [row, *row.get("references", [])[1:]]:
        kept = sum(r["keep"])
        cert = "yes" if r["certified"] else "no"
        lines.append(f"    primal={_fmt(r['primal'])} dual={_fmt(r['dual'])} gap={_fmt(r['gap'])} "
                     f"certified={cert}  ({kept} of {len(r['keep'])} tokens, {1000 * r['seconds']:.1f} ms)")
    return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "-inf" if x is None else f"{x:.6g}"


def _compress_text(args: argparse.Namespace, compressor) -> int:
    from dualdecomp.lengths import parse_length

    spec = parse_length(args.length, args.ratio, args.length_file)
    if spec.mode == "gold":
        raise InputError("--length gold needs --input with gold compressions")
    from data.parsing import parse_text

    sentence = parse_text(args.text)
    length = spec.for_sentence(sentence.n, 0)[0]
    comp = compressor.compress(sentence, length)
    row = {"id": sentence.id, "text": args.text, "output": comp.text, **comp.to_json()}
    print(json.dumps(row, ensure_ascii=False) if args.json else _human(row))
    return 0


def compress_rows(lines: list[str], spec, compressor, where: str, progress=None) -> list[dict]:
    """Compress the JSONL lines of an input file; a bad line gives an ``error`` row, never an exception.

    Parameters
    ----------
    lines : list of str
        The raw input lines (blank lines are skipped but keep their line numbers).
    spec : dualdecomp.lengths.LengthSpec
        The length request.
    compressor : dualdecomp.compressor.Compressor
        The model.
    where : str
        File name for messages.
    progress : callable, optional
        Called with 1 after each line.

    Returns
    -------
    list of dict
        One output row per non-blank input line, in order.
    """
    from data.jsonl import corpus_item_from_row
    from data.parsing import parse_tokens

    items: list[tuple[int, object]] = []  # (index among non-blank lines, CorpusItem or error row)
    index = 0
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        loc = f"{where}:{lineno}"
        obj = None
        try:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{loc}: invalid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{loc}: a line must be a JSON object")
            items.append((index, corpus_item_from_row(obj, default_id=str(lineno), where=loc)))
        except DualDecompError as exc:
            rid = obj.get("id") if isinstance(obj, dict) and isinstance(obj.get("id"), str | int) else lineno
            items.append((index, {"id": str(rid), "error": str(exc)}))
        index += 1
    good = [(i, it) for i, it in items if not isinstance(it, dict)]
    parsed = parse_tokens([it.text for _, it in good], ids=[it.id for _, it in good])
    sentences = dict(zip((i for i, _ in good), parsed, strict=True))
    rows = []
    for i, it in items:
        if isinstance(it, dict):
            rows.append(it)
        else:
            rows.append(_compress_item(i, it, sentences[i], spec, compressor))
        if progress is not None:
            progress(1)
    return rows


def _compress_item(index: int, item, sentence, spec, compressor) -> dict:
    from data.alignment import keep_vector

    base = {"id": item.id, "text": " ".join(item.text)}
    try:
        gold = None
        if spec.mode == "gold":
            gold = [int(keep_vector(item.text, c).sum()) for c in item.compressions]
        lengths = spec.for_sentence(sentence.n, index, gold)
        results = [compressor.compress(sentence, m) for m in lengths]
    except DualDecompError as exc:
        return {**base, "error": str(exc)}
    row = {**base, **results[0].to_json()}
    if spec.mode == "gold":
        row["references"] = [{"length": m, **c.to_json()} for m, c in zip(lengths, results, strict=True)]
    return row


def _compress_file(args: argparse.Namespace, compressor) -> int:
    from data.jsonl import write_jsonl_atomic
    from dualdecomp.lengths import parse_length
    from dualdecomp.progress import progress_factory

    spec = parse_length(args.length, args.ratio, args.length_file)
    path = Path(args.input)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"input file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    nonblank = sum(1 for ln in lines if ln.strip())
    if spec.mode == "file" and len(spec.lengths) != nonblank:
        raise InputError(f"the length file has {len(spec.lengths)} lines but the input has {nonblank}")
    bar = progress_factory(args.quiet or not args.output)(nonblank, "compressing")
    rows = compress_rows(lines, spec, compressor, str(path), bar)
    if args.output:
        write_jsonl_atomic(args.output, rows)
    else:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False) if args.json else _human(row))
    failed = sum("error" in r for r in rows)
    if failed:
        print(f"dualdecomp compress: {failed} of {len(rows)} lines failed (see their 'error' field)",
              file=sys.stderr)
        return 2
    if args.output and not args.quiet:
        certified = sum(bool(r.get("certified")) for r in rows)
        print(f"dualdecomp compress: {len(rows)} lines, {certified} certified, written to {args.output}",
              file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Compress text or a file; returns the exit code."""
    from dualdecomp.compressor import Compressor

    if (args.text is None) == (args.input is None):
        raise InputError("give either TEXT or --input FILE")
    if args.output and not args.input:
        raise InputError("--output needs --input")
    compressor = Compressor(args.model)
    return _compress_text(args, compressor) if args.text is not None else _compress_file(args, compressor)
