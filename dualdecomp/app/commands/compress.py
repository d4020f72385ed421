"""``dualdecomp compress``: compress raw text or a JSONL file, printing or writing certificates."""

from __future__ import annotations

import argparse
import json

from dualdecomp.app.commands.batch_command import bound, resolve_input, run_file, visible
from dualdecomp.app.commands.batch_command import input_format as resolved_input_format
from dualdecomp.app.limits import DEFAULT_MAX_TOKENS
from dualdecomp.core.errors import InputError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``compress`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "compress", help="compress text or a JSONL file",
        description="Compress raw text (tokenised by spaCy, output detokenised) or a JSONL file in the "
                    "shared format (pre-tokenised 'text', never re-tokenised). Every compression comes with "
                    "its certificate: primal, dual, gap, certified.")
    p.add_argument("text", nargs="?",
                   help="raw text to compress (omit with --input; without either, lines piped into standard "
                        "input are read, as with --input -)")
    p.add_argument("--input", metavar="IN",
                   help="input file ('-': standard input): JSONL ({id, text, compressions?} per line, "
                        "pre-tokenised) or plain text (one raw sentence per line), see --input-format")
    p.add_argument("--input-format", choices=("auto", "jsonl", "text"), default="auto",
                   help="auto (default): .jsonl/.json or a first line starting with '{' is JSONL, .txt or "
                        "anything else is plain text (standard input and pipes: their first line decides)")
    p.add_argument("--split", action="store_true",
                   help="plain-text input or TEXT: split each line (a paragraph) into sentences with spaCy "
                        "and compress each sentence (ids LINE.K; for TEXT 1, 2, ...)")
    p.add_argument("--output", metavar="OUT",
                   help="output file (written atomically, journal in OUT.partial; '-': standard output, row "
                        "by row); without it results are printed")
    p.add_argument("--format", choices=("jsonl", "text"), default="jsonl", dest="output_format",
                   help="output: jsonl (default: the compression with its certificate) or text (one "
                        "compression per line, detokenised for plain-text input; an empty line for a "
                        "line that failed)")
    p.add_argument("--length", metavar="N|gold|ratio:R|file:PATH",
                   help="exact number of kept tokens, or gold (each reference's length), ratio:R, file:PATH")
    p.add_argument("--ratio", type=float, metavar="R", help="keep round(R·n) tokens, 0 < R <= 1")
    p.add_argument("--length-file", metavar="PATH", help="one length per line, aligned with the input lines")
    p.add_argument("--chars", type=int, metavar="N",
                   help="keep at most N characters (one space between kept tokens counted), exactly")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help="longest sentence compressed; a longer line gets an error row (default: the "
                        "configuration's measured limit, where it would pass 2 GB or 60 s; "
                        f"{DEFAULT_MAX_TOKENS} for a model without one)")
    p.add_argument("--max-line-bytes", type=int, metavar="N",
                   help="longest input line read, in bytes (default: 64 KiB + 1 KiB per --max-tokens "
                        "token); a longer line gets an error row without being parsed or kept in memory")
    p.add_argument("--model", metavar="DIR", help="model directory (default: the embedded default model)")
    p.add_argument("--config", metavar="NAME",
                   help="another configuration of the model directory (configs/NAME.json), e.g. t3-lm; "
                        "slow: mcdonald-dependency-lm-ilp (the exact ILP: 3.0 s on a 15-token sentence, "
                        "the others 0.01-0.7 s)")
    p.add_argument("--component", action="append", metavar="MODULE:FUNCTION", dest="components",
                   help="add your own component: a factory f(sentence) -> component, imported from MODULE "
                        "(this runs your code; repeatable; docs/components/your-own.md)")
    p.add_argument("--resume", action="store_true",
                   help="reuse the lines already done by an earlier (interrupted) run with the same --output")
    p.add_argument("--on-error", choices=("skip", "fail"), default="skip",
                   help="skip: write the error into that line's output and go on (default); fail: stop")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="seconds per sentence (its parse included); when they run out the best compression "
                        "so far is returned with its gap")
    p.add_argument("--deterministic", action="store_true",
                   help="leave out the wall-clock 'seconds' field so identical runs give identical bytes")
    p.add_argument("--batch-size", type=int, default=64, metavar="K",
                   help="lines parsed together (and the granularity of progress)")
    p.add_argument("--trace", action="store_true",
                   help="add the decoder's per-iteration trace (dual, primal, step, disagreements, lambda) "
                        "to every JSON row as 'trace'")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="decode on a local Dask cluster of N worker processes (N > 1; needs --input)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="decode on an existing Dask cluster (e.g. tcp://host:8786; needs --input)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(func=run)
    return p


def _human(row: dict) -> str:
    rid = visible(str(row["id"]))
    if "error" in row:
        return f"[{rid}] error: {visible(row['error'])}"
    lines = [f"[{rid}] {visible(row.get('output', row['compression']))}"]
    for r in [row, *row.get("references", [])[1:]]:
        kept = sum(r["keep"])
        cert = "yes" if r["certified"] else "no"
        timing = f", {1000 * r['seconds']:.1f} ms" if "seconds" in r else ""
        lines.append(f"    primal={bound(r['primal'], '-inf')} dual={bound(r['dual'], '+inf')} "
                     f"gap={bound(r['gap'], '+inf')} "
                     f"certified={cert}  ({kept} of {len(r['keep'])} tokens{timing})")
    return "\n".join(lines)


def _compress_text(args: argparse.Namespace, compressor, spec) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.compressor import split_sentences
    from dualdecomp.core.deadline import Deadline
    from dualdecomp.data.parsing import parse_text

    if spec.mode == "gold":
        raise InputError("--length gold needs --input with gold compressions")
    if args.split:  # each sentence with its own time limit, after the split's parse
        for index, sentence in enumerate(split_sentences(args.text)):
            _print_row(args, compressor, spec, sentence, _source_text(sentence), index,
                       Deadline.start(args.time_limit))
        return 0
    deadline = Deadline.start(args.time_limit)  # covers parsing too
    sentence = parse_text(args.text)
    if args.time_limit is not None:
        deadline.check("parsing")
    _print_row(args, compressor, spec, sentence, args.text, 0, deadline)
    return 0


def _source_text(sentence) -> str:
    """A split sentence's own text, with its original spacing."""
    return "".join(t + (" " if sp else "") for t, sp in zip(sentence.tokens, sentence.spaces, strict=True)
                   ).rstrip()


def _print_row(args: argparse.Namespace, compressor, spec, sentence, text: str, index: int, deadline) -> None:
    length = spec.for_sentence(sentence.n, index)[0]
    comp = compressor.compress(sentence, length, args.chars, deadline=deadline)
    row = {"id": sentence.id, "text": text, "output": comp.text,
           **comp.to_json(timing=not args.deterministic, trace=args.trace)}
    print(json.dumps(row, ensure_ascii=False) if args.json else _human(row), flush=True)


def _compress_file(args: argparse.Namespace, compressor, spec) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.batch import BatchOptions

    input_format = resolved_input_format(args)
    if args.split and input_format == "jsonl":
        raise InputError("--split needs plain-text input (--input-format text)")
    options = BatchOptions(spec=spec, chars=args.chars, resume=args.resume, on_error=args.on_error,
                           time_limit=args.time_limit, deterministic=args.deterministic,
                           batch_size=args.batch_size, trace=args.trace, input_format=input_format,
                           split=args.split, output_format=args.output_format,
                           max_line_bytes=args.max_line_bytes)
    if args.resume and not args.output:
        raise InputError("--resume needs --output")

    def emit(row: dict) -> None:
        print(json.dumps(row, ensure_ascii=False) if args.json else _human(row), flush=True)

    return run_file(args, compressor, options, emit, "compress", "compressing")


def run(args: argparse.Namespace) -> int:
    """Compress text or a file; returns the exit code."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.compressor import Compressor
    from dualdecomp.app.length_request import parse_length
    from dualdecomp.app.output_paths import check_paths
    from dualdecomp.data.locations import default_model_dir

    resolve_input(args)
    spec = parse_length(args.length, args.ratio, args.length_file)
    if args.chars is not None and (args.chars < 0 or spec.mode != "free"):
        raise InputError("--chars must be >= 0 and cannot be combined with a length")
    if args.time_limit is not None and not args.time_limit > 0:
        raise InputError("--time-limit must be positive")
    if args.max_line_bytes is not None and args.max_line_bytes < 1:
        raise InputError("--max-line-bytes must be positive")
    if args.output:  # before the model loads: refuse at once
        check_paths(args.input, args.output, length_file=spec.path,
                    model_dir=args.model if args.model is not None else default_model_dir())
    compressor = Compressor(args.model, args.config, max_tokens=args.max_tokens,
                            extra_components=args.components)
    if args.text is not None:
        return _compress_text(args, compressor, spec)
    return _compress_file(args, compressor, spec)
