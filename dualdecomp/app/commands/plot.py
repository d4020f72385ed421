"""``dualdecomp plot``: draw the convergence of one decode from a ``compress --trace`` JSONL file."""

from __future__ import annotations

import argparse
import sys

from dualdecomp.app.commands.help_format import ParagraphHelpFormatter

DESCRIPTION = """\
Draw one decode's convergence from TRACE.jsonl, the output of dualdecomp compress --trace --json (or
of --trace --output): the dual bound and the best primal per iteration, the gap dual - primal on a log
axis with the iteration where it closed (the certificate), and the length multiplier lambda during its
bisection (a third panel, only when the trace has one). Drawn off-screen (matplotlib Agg). Values
that are NaN, infinite or beyond +-1e100 are left out (one line on stderr says which); a bad trace entry
(an iteration that is not an integer from 0 to 2^53, a value that is not a number) is exit 2.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``plot`` on the CLI's subparsers.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The command's parser (``func`` is set to :func:`run`).
    """
    p = subparsers.add_parser("plot", help="draw a decode's convergence (dual, primal, gap, lambda)",
                              description=DESCRIPTION, formatter_class=ParagraphHelpFormatter)
    p.add_argument("trace", metavar="TRACE.jsonl", help="output of dualdecomp compress --trace --json")
    p.add_argument("--output", "-o", metavar="CONV.png", required=True,
                   help="picture to write (.png, .pdf or .svg)")
    p.add_argument("--id", metavar="ID", default=None,
                   help="the line to draw (ID#L for the reference of length L of a --length gold line); "
                        "default: the first line with a trace")
    p.add_argument("--title", default=None, help="figure title")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Draw the picture; returns the exit code (errors are raised as ``InputError``)."""
    # lazy: matplotlib is slow to import and only this command and `evaluate --curve` need it
    from dualdecomp.app.plots import plot_convergence, read_trace, undrawn_values

    trace = read_trace(args.trace, args.id)
    out = plot_convergence(trace, args.output, args.title)
    left_out = undrawn_values(trace)
    if left_out:
        print(f"dualdecomp plot: {left_out}", file=sys.stderr)
    last = trace.steps[-1]
    print(f"dualdecomp plot: {len(trace.steps)} iterations of {trace.id!r} (final dual {last.get('dual')}, "
          f"primal {last.get('primal')}) drawn to {out}", file=sys.stderr)
    return 0
