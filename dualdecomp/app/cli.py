"""The ``dualdecomp`` command line: compress | rewrite | train | evaluate | lm | t3 | plot.

Errors raised on purpose (``dualdecomp.core.errors``) are printed as one line on stderr with the exit codes of
docs/architecture.md §3: 2 bad input, 3 model or data missing, 4 solver failure; never a traceback. The only
exit codes are 0, 2, 3, 4 and 130 (Ctrl-C, also while the commands are imported); an unexpected exception
(a bug) is reported as an internal error with code 4.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from dualdecomp.core.errors import DualDecompError, interrupted_message


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``)."""
    try:
        return metadata.version("dualdecomp")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.commands import compress, evaluate, lm, order, plot, rewrite, t3, train
    from dualdecomp.app.commands.deferred_parser import DeferredParser

    parser = argparse.ArgumentParser(
        prog="dualdecomp",
        description="Constrained sentence compression by Lagrangian relaxation, with certificates.")
    parser.add_argument("--version", action="version", version=f"dualdecomp {_version()}")
    # a command's options may come from a kind imported only when that command runs
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=DeferredParser)
    sub.required = True
    for module in (compress, rewrite, train, evaluate, lm, t3, order, plot):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (also used as the console entry point)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    except KeyboardInterrupt as exc:
        print(interrupted_message(exc), file=sys.stderr)
        return 130
    try:
        return int(args.func(args) or 0)
    except DualDecompError as exc:
        print(f"dualdecomp {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print(interrupted_message(exc), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        print(f"dualdecomp {args.command}: error: out of memory", file=sys.stderr)
        return 4
    except Exception as exc:  # a bug: one clear line, the traceback only with DUALDECOMP_DEBUG=1
        if os.environ.get("DUALDECOMP_DEBUG"):
            raise
        print(f"dualdecomp {args.command}: internal error ({type(exc).__name__}: {exc}); please report it "
              "(set DUALDECOMP_DEBUG=1 for the traceback)", file=sys.stderr)
        return 4


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
