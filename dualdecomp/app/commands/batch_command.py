"""What the batch commands (``compress``, ``rewrite``) share: their common options (declared once here),
where their input comes from, a file run with its progress bar, in one process or on Dask, ending with
its summary line, a TEXT split into sentences that goes on past a failed one, and how a row's text and
bounds are shown on the terminal."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable

from dualdecomp.core.errors import DualDecompError, InputError, SolverError


def add_input_options(p: argparse.ArgumentParser, *, verb: str, noun: str, jsonl: str,
                      text_note: str = "") -> None:
    """Add the options where a batch command's input comes from and where its output goes: TEXT,
    ``--input``, ``--input-format``, ``--output`` and ``--format``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    verb : str
        What the command does to a sentence ("compress").
    noun : str
        What it makes of one ("compression").
    jsonl : str
        A JSONL input line's fields ("{id, text} per line, text raw").
    text_note : str
        Added to ``--format text``'s help after "one NOUN per line".
    """
    p.add_argument("text", nargs="?",
                   help=f"raw text to {verb} (omit with --input; without either, lines piped into standard "
                        "input are read, as with --input -)")
    p.add_argument("--input", metavar="IN",
                   help=f"input file ('-': standard input): JSONL ({jsonl}) or plain text (one raw sentence "
                        "per line), see --input-format")
    p.add_argument("--input-format", choices=("auto", "jsonl", "text"), default="auto",
                   help="auto (default): .jsonl/.json or a first line starting with '{' is JSONL, .txt or "
                        "anything else is plain text (standard input and pipes: their first line decides)")
    p.add_argument("--output", metavar="OUT",
                   help="output file (written atomically, journal in OUT.partial; '-': standard output, row "
                        "by row); without it results are printed")
    p.add_argument("--format", choices=("jsonl", "text"), default="jsonl", dest="output_format",
                   help=f"output: jsonl (default: the {noun} with its certificate) or text (one {noun} per "
                        f"line{text_note}; an empty line for a line that failed)")


def add_run_options(p: argparse.ArgumentParser, *, participle: str, max_tokens_default: str,
                    time_limit_note: str, cluster_verb: str) -> None:
    """Add the options of how a batch command runs: ``--max-tokens``, ``--max-line-bytes``, ``--resume``,
    ``--on-error``, ``--time-limit``, ``--deterministic``, ``--batch-size``, ``--workers``,
    ``--scheduler``, ``--json`` and ``--quiet``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The command's parser.
    participle : str
        "compressed", "rewritten" (the longest sentence ...).
    max_tokens_default : str
        ``--max-tokens``'s default, in words.
    time_limit_note : str
        What happens when ``--time-limit`` runs out.
    cluster_verb : str
        What the Dask workers do ("decode").
    """
    p.add_argument("--max-tokens", type=int, default=None, metavar="N",
                   help=f"longest sentence {participle}; a longer line gets an error row (default: "
                        f"{max_tokens_default})")
    p.add_argument("--max-line-bytes", type=int, metavar="N",
                   help="longest input line read, in bytes (default: 64 KiB + 1 KiB per --max-tokens "
                        "token); a longer line gets an error row without being parsed or kept in memory")
    p.add_argument("--resume", action="store_true",
                   help="reuse the lines already done by an earlier (interrupted) run with the same --output")
    p.add_argument("--on-error", choices=("skip", "fail"), default="skip",
                   help="skip: write the error into that line's output and go on (default); fail: stop")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help=f"seconds per sentence (its parse included); {time_limit_note}")
    p.add_argument("--deterministic", action="store_true",
                   help="leave out the wall-clock 'seconds' field so identical runs give identical bytes")
    p.add_argument("--batch-size", type=int, default=64, metavar="K",
                   help="lines parsed together (and the granularity of progress)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help=f"{cluster_verb} on a local Dask cluster of N worker processes (N > 1; needs "
                        "--input)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"{cluster_verb} on an existing Dask cluster (e.g. tcp://host:8786; needs --input)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of text")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")


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


def run_pieces(pieces: list, row: Callable[[object], dict], emit: Callable[[dict], None],
               error_row: Callable[[object, DualDecompError], dict], command: str, on_error: str) -> int:
    """Process the sentences of one TEXT (``--split``) as a batch processes its lines: a sentence that
    fails gets its error row and the others go on (``on_error="fail"``: the first error stops the run);
    returns the exit code (0, or the highest of the failed sentences' errors, after a summary line on
    standard error like a batch's).

    Parameters
    ----------
    pieces : list
        The sentences.
    row : callable
        A sentence's output row; it may raise a :class:`~dualdecomp.core.errors.DualDecompError`.
    emit : callable
        Shows a row.
    error_row : callable
        The row of a sentence that failed with an error.
    command : str
        The command's name, for the summary line.
    on_error : str
        ``skip`` or ``fail`` (``--on-error``).
    """
    codes = []
    for piece in pieces:
        try:
            out = row(piece)
        except (DualDecompError, MemoryError) as exc:
            if on_error == "fail":
                raise
            if isinstance(exc, MemoryError):  # as a batch line: that sentence's error, not the run's end
                exc = SolverError("out of memory on this sentence")
            out = error_row(piece, exc)
            codes.append(exc.exit_code)
        emit(out)
    if codes:
        print(f"dualdecomp {command}: {len(codes)} of {len(pieces)} sentences failed (see their 'error' "
              "field)", file=sys.stderr)
        return max(codes) or 2
    return 0
