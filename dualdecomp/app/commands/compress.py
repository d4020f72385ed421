"""``dualdecomp compress``: compress raw text or a JSONL file, printing or writing certificates."""

from __future__ import annotations

import argparse
import json

from dualdecomp.app.commands.batch_command import (
    add_input_options,
    add_run_options,
    bound,
    resolve_input,
    run_file,
    run_pieces,
    visible,
)
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
    add_input_options(p, verb="compress", noun="compression", jsonl="{id, text, compressions?} per line, "
                      "pre-tokenised", text_note=", detokenised for plain-text input")
    p.add_argument("--split", action="store_true",
                   help="plain-text input or TEXT: split each line (a paragraph) into sentences with spaCy "
                        "and compress each sentence (ids LINE.K; for TEXT 1, 2, ...; a sentence that fails "
                        "gets an error row and the others go on)")
    p.add_argument("--length", metavar="N|gold|ratio:R|file:PATH",
                   help="exact number of kept tokens, or gold (each reference's length), ratio:R, file:PATH")
    p.add_argument("--ratio", type=float, metavar="R", help="keep round(R·n) tokens, 0 < R <= 1")
    p.add_argument("--length-file", metavar="PATH", help="one length per line, aligned with the input lines")
    p.add_argument("--chars", type=int, metavar="N",
                   help="keep at most N characters (one space between kept tokens counted), exactly")
    p.add_argument("--model", metavar="DIR", help="model directory (default: the embedded default model)")
    p.add_argument("--config", metavar="NAME",
                   help="another configuration of the model directory (configs/NAME.json), e.g. t3-lm; "
                        "slow: mcdonald-dependency-lm-ilp (the exact ILP: 3.0 s on a 15-token sentence, "
                        "the others 0.01-0.7 s)")
    p.add_argument("--component", action="append", metavar="MODULE:FUNCTION", dest="components",
                   help="add your own component: a factory f(sentence) -> component, imported from MODULE "
                        "(this runs your code; repeatable; docs/components/your-own.md)")
    p.add_argument("--trace", action="store_true",
                   help="add the decoder's per-iteration trace (dual, primal, step, disagreements, lambda) "
                        "to every JSON row as 'trace'")
    add_run_options(p, participle="compressed",
                    max_tokens_default="the configuration's measured limit, where it would pass 2 GB or "
                                       f"60 s; {DEFAULT_MAX_TOKENS} for a model without one",
                    time_limit_note="when they run out the best compression so far is returned with its gap",
                    cluster_verb="decode")
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
    from dualdecomp.app.safe_text import safe_text
    from dualdecomp.core.deadline import Deadline
    from dualdecomp.data.parsing import parse_text

    if spec.mode == "gold":
        raise InputError("--length gold needs --input with gold compressions")
    if args.split:  # each sentence with its own time limit, after the split's parse; a failure is its row
        def row(indexed) -> dict:
            index, sentence = indexed
            return _row(args, compressor, spec, sentence, _source_text(sentence), index,
                        Deadline.start(args.time_limit))

        def error_row(indexed, exc) -> dict:
            sentence = indexed[1]
            return {"id": sentence.id, "text": _source_text(sentence), "error": safe_text(str(exc))}

        return run_pieces(list(enumerate(split_sentences(args.text))), row, lambda r: _emit(args, r),
                          error_row, "compress", args.on_error)
    deadline = Deadline.start(args.time_limit)  # covers parsing too
    sentence = parse_text(args.text)
    if args.time_limit is not None:
        deadline.check("parsing")
    _emit(args, _row(args, compressor, spec, sentence, args.text, 0, deadline))
    return 0


def _source_text(sentence) -> str:
    """A split sentence's own text, with its original spacing."""
    return "".join(t + (" " if sp else "") for t, sp in zip(sentence.tokens, sentence.spaces, strict=True)
                   ).rstrip()


def _row(args: argparse.Namespace, compressor, spec, sentence, text: str, index: int, deadline) -> dict:
    length = spec.for_sentence(sentence.n, index)[0]
    comp = compressor.compress(sentence, length, args.chars, deadline=deadline)
    return {"id": sentence.id, "text": text, "output": comp.text,
            **comp.to_json(timing=not args.deterministic, trace=args.trace)}


def _emit(args: argparse.Namespace, row: dict) -> None:
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

    return run_file(args, compressor, options, lambda row: _emit(args, row), "compress", "compressing")


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
