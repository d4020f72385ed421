"""What the batch commands (``compress``, ``rewrite``) share: where their input comes from, a file run with
its progress bar, in one process or on Dask, ending with its summary line, and how a row's text and
bounds are shown on the terminal."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable

from dualdecomp.core.errors import InputError


def bound(x: float | None, missing: str) -> str:
    """A bound for the terminal; ``missing`` (``-inf`` for a primal, ``+inf`` for a dual or gap) for None."""
    return missing if x is None else f"{x:.6g}"


def visible(text: str) -> str:
    """``text`` with control and format characters (terminal escapes, bidi overrides, NUL, lone surrogates)
    written as escapes, never sent raw to the terminal."""
    return "".join(ch if unicodedata.category(ch)[0] != "C" else ascii(ch)[1:-1] for ch in text)


def resolve_input(args: argparse.Namespace) -> None:
    """Read a redirected standard input when there is no TEXT (``echo TEXT | dualdecomp COMMAND``), and
    refuse what cannot run: both or neither of TEXT and ``--input``, ``--output`` without ``--input``,
    ``--workers``/``--scheduler`` without ``--input``."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.data.line_reader import standard_input_is_redirected

    if args.text is None and args.input is None and standard_input_is_redirected():
        args.input = "-"
    if (args.text is None) == (args.input is None):
        raise InputError("give either TEXT or --input FILE (or pipe lines into standard input)")
    if args.output and not args.input:
        raise InputError("--output needs --input")
    if args.workers < 1 or ((args.workers > 1 or args.scheduler) and not args.input):
        raise InputError("--workers must be >= 1, and --workers N > 1 or --scheduler needs --input")


def input_format(args: argparse.Namespace) -> str:
    """``--input-format``, ``auto`` resolved from a file's name or first line; standard input and pipes stay
    ``auto``: their first line decides as they are read."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.batch import detect_input_format

    if args.input_format == "auto":
        return detect_input_format(args.input) or "auto"
    return args.input_format


def run_file(args: argparse.Namespace, processor, options, emit: Callable[[dict], None], command: str,
             doing: str) -> int:
    """Run the batch of ``--input`` (one process, or Dask with ``--workers``/``--scheduler``) with a progress
    bar, print its summary (``dualdecomp COMMAND: ...``) and return the exit code."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.batch import run_batch
    from dualdecomp.core.progress import progress_factory

    # the batch gives the bar its total once the input is read; it is cleared before the summary
    with progress_factory(args.quiet or not args.output)(None, doing, unit="line") as bar:
        if args.workers > 1 or args.scheduler:
            # lazy: Dask is imported only for a distributed run
            from dualdecomp.app.cluster import cluster_client
            from dualdecomp.app.distributed import run_distributed_batch

            with cluster_client(args.workers, args.scheduler) as client:
                _, summary = run_distributed_batch(args.input, args.output, client, processor, options, bar,
                                                   None if args.output else emit)
        else:
            _, summary = run_batch(args.input, args.output, processor, options, bar,
                                   None if args.output else emit)
    if summary.failed:
        print(f"dualdecomp {command}: {summary.failed} of {summary.lines} lines failed (see their 'error' "
              "field)", file=sys.stderr)
        return summary.exit_code or 2
    if args.output and not args.quiet:
        reused = f", {summary.reused} reused from the earlier run" if summary.reused or args.resume else ""
        print(f"dualdecomp {command}: {summary.lines} lines, {summary.certified} certified{reused}, "
              f"written to {'standard output' if args.output == '-' else args.output}", file=sys.stderr)
    return 0
