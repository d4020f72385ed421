"""``dualdecomp evaluate``: score a system output file against a gold corpus (docs/architecture.md §4)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from dualdecomp.app.commands.help_format import ParagraphHelpFormatter
from dualdecomp.core.errors import InputError

if TYPE_CHECKING:
    # lazy: for the annotation only (the measures load numpy and the ordering evaluation)
    from dualdecomp.app.evaluation import EvaluationReport

DESCRIPTION = """\
Score the compressions in SYSTEM.jsonl (the output of dualdecomp compress) against the references
of GOLD.jsonl, matched by id: compression rate, token F1, bigram F1 (boundary-padded), GR-F1 (spaCy
dependency triples), ROUGE-1/2/L. Scores are macro-averaged over sentences and, with several
references, averaged over references. A system run with --length gold is scored reference by
reference at each reference's length. Lines carrying an 'error' field are counted as failed and excluded from
the averages.

With --curve, instead: compress GOLD.jsonl with every --system at every ratio of --ratios (each
sentence to exactly round(R*n) tokens), score each run, and draw quality (token F1, bigram F1)
against compression rate, one line per system, into the picture given by --output (e.g. curve.png).

With --task rewrite, instead: score the rewrites in --predictions (JSONL rows with id and rewrite,
as dualdecomp rewrite writes; rows of dualdecomp compress are read by their output or compression
field) against each reference set of --references separately, matched by id (a missing or extra id
is an error): corpus SARI and its add/keep/delete parts (13a tokens, lowercased, pooled counts as
EASSE), sacrebleu BLEU against all references of a set (13a tokens, case-sensitive), the share of
characters kept, the mean number of words and the share of outputs identical to their source.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``evaluate`` command on an argparse subparsers object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The command's parser (``func`` is set to :func:`run`).
    """
    parser = subparsers.add_parser(
        "evaluate", help="score system compressions against gold references",
        description=DESCRIPTION, formatter_class=ParagraphHelpFormatter)
    parser.add_argument("--task", choices=("compress", "rewrite"), default="compress",
                        help="compress (default): score compressions; rewrite: score rewrites (below)")
    parser.add_argument("--input", "-i", metavar="GOLD.jsonl",
                        help="gold corpus (JSONL with text and compressions)")
    parser.add_argument("--output", "-o", metavar="SYSTEM.jsonl",
                        help="system output of dualdecomp compress to score")
    parser.add_argument("--table", metavar="SPEC.json",
                        help="instead: run every system of SPEC.json on its dev files at gold length and "
                             "print one markdown table (SPEC.json: see docs/models.md, 'Other trained "
                             "components', e.g. benchmarks/table.json)")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the report as one JSON object")
    fmt.add_argument("--markdown", action="store_true", help="print the report as a markdown table")
    parser.add_argument("--name", default=None,
                        help="system name in the markdown row (default: the system file name)")
    curve = parser.add_argument_group("curve (--curve)")
    curve.add_argument("--curve", action="store_true",
                       help="draw quality against compression rate over --ratios into --output (a .png)")
    curve.add_argument("--system", action="append", metavar="CONFIG", default=None,
                       help="a configuration of --model (configs/CONFIG.json; 'default' for config.json); "
                            "repeat for one line each (default: the model's configuration)")
    curve.add_argument("--model", metavar="DIR", default=None,
                       help="model directory of the systems (default: the embedded default model)")
    curve.add_argument("--ratios", metavar="R,R,...", default=None,
                       help="length ratios of the sweep (default: 0.3,0.4,0.5,0.6,0.7,0.8)")
    curve.add_argument("--limit", type=int, metavar="N", default=None,
                       help="use only the first N sentences of GOLD.jsonl")
    parser.add_argument("--allow-missing", action="store_true",
                        help="evaluate even if some gold sentences have no output line (counted as missing)")
    rewrite = parser.add_argument_group("rewriting (--task rewrite)")
    rewrite.add_argument("--predictions", metavar="FILE",
                         help="system rewrites: JSONL rows with id and rewrite (or output / compression)")
    rewrite.add_argument("--references", metavar="FILE", default=None,
                         help="rewriting corpus: JSONL rows with id, text and references by set "
                              "(default: ../shared/data/rewriting/dev.jsonl beside the checkout)")
    rewrite.add_argument("--sets", metavar="SET,SET", default=None,
                         help="reference sets to score against, each separately (default: asset,turkcorpus)")
    rewrite.add_argument("--format", choices=("text", "json"), default=None,
                         help="text (default): a plain-text report; json: one JSON object")
    parser.set_defaults(func=run)
    return parser


def format_report(report: EvaluationReport) -> str:
    """Human-readable multi-line rendering: one metric per line, as percentages with one decimal.

    Parameters
    ----------
    report : EvaluationReport

    Returns
    -------
    str
    """
    rows = [(label, f"{100 * getattr(report, name):5.1f}") for name, label in report.LABELS.items()]
    rows.append(("reference CR", f"{100 * report.reference_cr:5.1f}"))
    rows.append(("sentences", str(report.n)))
    rows.append(("failed", str(report.failed)))
    if report.missing:
        rows.append(("missing", str(report.missing)))
    rows.append(("lengths", report.mode))
    if report.certified is not None:
        rows.append(("certified", f"{100 * report.certified:5.1f} %"))
    if report.mean_seconds is not None:
        rows.append(("seconds/sentence", f"{report.mean_seconds:.3g}"))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value}" for label, value in rows)


def run(args: argparse.Namespace) -> int:
    """Run ``dualdecomp evaluate``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (``input``, ``output``, ``json``, ``markdown``, ``name``, ``allow_missing``).

    Returns
    -------
    int
        0 on success (errors are raised as ``InputError`` / ``ModelError`` for the CLI to map).
    """
    if getattr(args, "task", "compress") == "rewrite":
        return run_rewrite(args)
    for option in ("predictions", "references", "sets", "format"):
        if getattr(args, option, None) is not None:
            raise InputError(f"--{option} is an option of --task rewrite")
    if getattr(args, "table", None):
        # lazy: keeps `dualdecomp --help` and the other commands fast
        from dualdecomp.app.table import markdown_table, read_table_spec, run_table

        if args.input or args.output:
            raise InputError("--table replaces --input/--output")
        spec = read_table_spec(args.table)
        rows = run_table(spec, log=lambda msg: print(msg, file=sys.stderr))
        print(markdown_table(rows, spec.default))
        return 0
    if getattr(args, "curve", False):
        return run_curve_command(args)
    if not args.input or not args.output:
        raise InputError("evaluate needs --input GOLD.jsonl and --output SYSTEM.jsonl (or --table SPEC.json)")
    # lazy: keeps `dualdecomp --help` and the other commands fast (numpy, the evaluation measures)
    from dualdecomp.app.evaluation import EvaluationReport, evaluate_files

    report = evaluate_files(args.input, args.output, allow_missing=getattr(args, "allow_missing", False),
                            progress=sys.stderr.isatty())
    if getattr(args, "json", False):
        print(json.dumps(report.to_dict(), sort_keys=True))
    elif getattr(args, "markdown", False):
        name = getattr(args, "name", None) or args.output
        print(EvaluationReport.markdown_header())
        print(report.to_markdown_row(str(name)))
    else:
        print(format_report(report))
    return 0


def run_rewrite(args: argparse.Namespace) -> int:
    """``dualdecomp evaluate --task rewrite``: score a prediction file per reference set and print the
    report (plain text, or one JSON object with ``--format json``).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (``predictions``, ``references``, ``sets``, ``format``).

    Returns
    -------
    int
        0 on success (bad input raises ``InputError``: exit 2).
    """
    compress_only = {"input": "--input", "output": "--output", "table": "--table", "curve": "--curve",
                     "system": "--system", "model": "--model", "ratios": "--ratios", "limit": "--limit",
                     "json": "--json", "markdown": "--markdown", "name": "--name",
                     "allow_missing": "--allow-missing"}
    given = [flag for dest, flag in compress_only.items() if getattr(args, dest, None) not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)}: not an option of --task rewrite (use --predictions, "
                         "--references, --sets, --format)")
    if not args.predictions:
        raise InputError("evaluate --task rewrite needs --predictions FILE")
    # lazy: keeps `dualdecomp --help` and the other commands fast (sacrebleu, the measures)
    from dualdecomp.app.rewriting_evaluation import (
        default_references_path,
        evaluate_rewrite_files,
        format_rewrite_report,
        parse_sets,
    )

    references = args.references if args.references is not None else default_references_path()
    report = evaluate_rewrite_files(args.predictions, references, parse_sets(args.sets))
    if args.format == "json":
        print(json.dumps(report.to_dict(), sort_keys=True))
    else:
        print(format_rewrite_report(report))
    return 0


def run_curve_command(args: argparse.Namespace) -> int:
    """``dualdecomp evaluate --curve``: sweep the ratios, print one JSON line per point (with --json) or a
    summary line per point on stderr, and draw the picture.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (``input``, ``output``, ``system``, ``model``, ``ratios``, ``limit``, ``json``).

    Returns
    -------
    int
        0 on success.
    """
    # lazy: matplotlib and the compressor are slow to import and only --curve needs them
    from dualdecomp.app.curve import CurveSystem, parse_ratios, run_curve
    from dualdecomp.app.plots import plot_curve

    if not args.input or not args.output:
        raise InputError("evaluate --curve needs --input GOLD.jsonl and --output CURVE.png")
    ratios = parse_ratios(args.ratios)
    names = args.system or ["default"]
    systems = [CurveSystem(args.model, None if name == "default" else name) for name in names]
    points = run_curve(args.input, systems, ratios, args.limit,
                       log=None if args.json else (lambda msg: print(msg, file=sys.stderr)))
    if args.json:
        for p in points:
            print(json.dumps(p.to_json(), sort_keys=True))
    out = plot_curve(points, args.output)
    print(f"dualdecomp evaluate: {len(points)} points ({len(systems)} systems x {len(ratios)} ratios) "
          f"drawn to {out}", file=sys.stderr)
    return 0
