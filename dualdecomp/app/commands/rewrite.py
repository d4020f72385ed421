"""``dualdecomp rewrite``: rewrite raw text or a file (beyond deletion), printing or writing certificates."""

from __future__ import annotations

import argparse
import json
import math

from dualdecomp.app.commands.batch_command import (
    add_input_options,
    add_run_options,
    bound,
    resolve_input,
    run_file,
    visible,
)
from dualdecomp.app.commands.batch_command import input_format as resolved_input_format
from dualdecomp.app.limits import DEFAULT_MAX_TOKENS
from dualdecomp.core.errors import InputError

DESCRIPTION = (
    "Rewrite raw text (tokenised by spaCy, output detokenised) with the tree transducer of Cohn & "
    "Lapata (2008): words are kept, deleted, substituted, reordered or inserted. The rewrite is exact "
    "(certified: primal = dual, gap 0) unless --max-states prunes the chart (then APPROXIMATE, no bound). "
    "Budgets are exact too: --length N words, at most --chars N characters, or --ratio R of the source's "
    "characters. --joint NAME adds a compression configuration by dual decomposition (the T3+LM joint "
    "decoding of Yao et al. 2014). The embedded model is trained on ASSET (CC BY-NC 4.0: NON-COMMERCIAL "
    "use only) and TurkCorpus; see NOTICE.md.")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``rewrite`` on the CLI's subparsers."""
    p = subparsers.add_parser("rewrite", help="rewrite text or a file (beyond deletion, exact budgets)",
                              description=DESCRIPTION)
    add_input_options(p, verb="rewrite", noun="rewrite", jsonl="{id, text} per line, text raw")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--chars", type=int, metavar="N",
                        help="at most N characters of the detokenised rewrite, exactly")
    budget.add_argument("--ratio", type=float, metavar="R",
                        help="at most floor(R x the source's characters) characters, R > 0")
    budget.add_argument("--length", type=int, metavar="N", help="exactly N words in the rewrite")
    p.add_argument("--model", metavar="DIR",
                   help="rewriting model directory (default: the embedded model, non-commercial)")
    p.add_argument("--joint", metavar="NAME",
                   help="decode jointly by dual decomposition with compression configuration NAME ('config': "
                        "config.json, else configs/NAME.json of --joint-model); both must agree on the "
                        "kept source words; certified only when the engine proves it (Yao et al. 2014)")
    p.add_argument("--joint-model", metavar="DIR",
                   help="compression model directory of --joint (default: the embedded compression model)")
    p.add_argument("--max-states", type=int, metavar="N",
                   help="beam per chart table: faster, but a pruned rewrite is APPROXIMATE (default: the "
                        "model's setting; the embedded model's is exact)")
    p.add_argument("--lm-scale", type=float, metavar="X",
                   help="multiply the learnt LM weight by X >= 0 (default: the model's setting)")
    p.add_argument("--word-bias", type=float, metavar="Y",
                   help="add Y to the score per word written; > 0 favours longer rewrites (default: the "
                        "model's setting)")
    p.add_argument("--substitution-bias", type=float, metavar="Y",
                   help="add Y to the score per source word substituted; > 0 favours substitutions "
                        "(default: the model's setting)")
    p.add_argument("--insertion-bias", type=float, metavar="Y",
                   help="add Y to the score per word inserted; > 0 favours insertions (default: the "
                        "model's setting)")
    p.add_argument("--article-agreement", action=argparse.BooleanOptionalAction, default=None,
                   help="forbid 'a'/'an' before a word that takes the other article ('a epithet'), "
                        "unless the source has that bigram; the rewrite stays exact (default: the "
                        "model's setting)")
    p.add_argument("--paired-punctuation", action=argparse.BooleanOptionalAction, default=None,
                   help="keep both marks of every bracket or quotation pair of the source, or neither; "
                        "such a sentence is decoded by dual decomposition, certified when the engine "
                        "proves it (default: the model's setting)")
    p.add_argument("--keep-weight", type=float, metavar="MU",
                   help="weight >= 0 of the model's keep classifier: adds MU x each source word's "
                        "centred log-odds of being kept when it is written as itself; the rewrite stays "
                        "exact; 0 turns it off (default: the model's setting)")
    add_run_options(p, participle="rewritten", max_tokens_default=str(DEFAULT_MAX_TOKENS),
                    time_limit_note="the chart is not anytime: a sentence over it gets an error row",
                    cluster_verb="rewrite")
    p.set_defaults(func=run)
    return p


def _human(row: dict) -> str:
    rid = visible(str(row["id"]))
    if "error" in row:
        return f"[{rid}] error: {visible(row['error'])}"
    ops = ", ".join(f"{k} {v}" for k, v in row["operations"].items())
    timing = f", {1000 * row['seconds']:.1f} ms" if "seconds" in row else ""
    cert = "yes" if row["certified"] else "no"
    return (f"[{rid}] {visible(row['rewrite'])}\n"
            f"    primal={bound(row['primal'], '-inf')} dual={bound(row['dual'], '+inf')} "
            f"gap={bound(row['gap'], '+inf')} certified={cert}  ({row['method']}; {ops}{timing})")


def _budget(args: argparse.Namespace) -> tuple[str, float] | None:
    """The budget as (kind, value), checked."""
    if args.chars is not None:
        if args.chars < 0:
            raise InputError("--chars must be >= 0")
        return ("chars", args.chars)
    if args.ratio is not None:
        if not (math.isfinite(args.ratio) and args.ratio > 0):
            raise InputError("--ratio must be a finite number > 0")
        return ("ratio", args.ratio)
    if args.length is not None:
        if args.length < 0:
            raise InputError("--length must be >= 0")
        return ("words", args.length)
    return None


def _rewrite_text(args: argparse.Namespace, rewriter, budget) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.deadline import Deadline
    from dualdecomp.data.parsing import parse_text
    from dualdecomp.solvers.rewriting import Budget

    if not args.text.strip():
        raise InputError("empty text: nothing to rewrite")
    deadline = Deadline.start(args.time_limit)  # covers parsing too
    sentence = parse_text(args.text)
    result = rewriter.rewrite_sentence(sentence, None if budget is None else Budget(*budget),
                                       deadline if args.time_limit is not None else None)
    row = {"id": sentence.id, **result.to_json(timing=not args.deterministic)}
    if args.output_format == "text" and not args.json:
        print(row["rewrite"])
    else:
        print(json.dumps(row, ensure_ascii=False) if args.json else _human(row))
    return 0


def _rewrite_file(args: argparse.Namespace, rewriter, budget) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.batch import BatchOptions

    input_format = resolved_input_format(args)
    options = BatchOptions(budget=budget, resume=args.resume, on_error=args.on_error,
                           time_limit=args.time_limit, deterministic=args.deterministic,
                           batch_size=args.batch_size, input_format=input_format,
                           output_format=args.output_format, max_line_bytes=args.max_line_bytes)

    def emit(row: dict) -> None:
        print(json.dumps(row, ensure_ascii=False) if args.json else _human(row), flush=True)

    return run_file(args, rewriter, options, emit, "rewrite", "rewriting")


def run(args: argparse.Namespace) -> int:
    """Rewrite text or a file; returns the exit code."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.output_paths import check_paths
    from dualdecomp.app.rewriter import Rewriter
    from dualdecomp.data.locations import default_model_dir, rewrite_model_dir

    resolve_input(args)
    if args.resume and not args.output:
        raise InputError("--resume needs --output")
    budget = _budget(args)
    if args.time_limit is not None and not args.time_limit > 0:
        raise InputError("--time-limit must be positive")
    if args.max_line_bytes is not None and args.max_line_bytes < 1:
        raise InputError("--max-line-bytes must be positive")
    if args.batch_size < 1:
        raise InputError("--batch-size must be >= 1")
    if args.max_states is not None and args.max_states < 1:
        raise InputError("--max-states must be >= 1")
    if args.joint_model is not None and args.joint is None:
        raise InputError("--joint-model needs --joint NAME")
    if args.output:  # before the model loads: refuse at once
        check_paths(args.input, args.output,
                    model_dir=args.model if args.model is not None else rewrite_model_dir())
        if args.joint is not None:  # the compression model's files are read and hashed too
            check_paths(args.input, args.output,
                        model_dir=args.joint_model if args.joint_model is not None else default_model_dir())
    rewriter = Rewriter(args.model, max_states=args.max_states, max_tokens=args.max_tokens, joint=args.joint,
                        joint_model=args.joint_model, lm_scale=args.lm_scale, word_bias=args.word_bias,
                        substitution_bias=args.substitution_bias, insertion_bias=args.insertion_bias,
                        article_agreement=args.article_agreement,
                        paired_punctuation=args.paired_punctuation, keep_weight=args.keep_weight)
    if args.text is not None:
        return _rewrite_text(args, rewriter, budget)
    return _rewrite_file(args, rewriter, budget)
