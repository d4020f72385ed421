"""An argument parser whose options are added when it is used: a command whose options come from a
component kind (``train --kind K``, ``t3 train``, ``lm build``) imports that kind only when it runs, so
``dualdecomp --help`` and the other commands stay fast."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

__all__ = ["DeferredParser", "Prepare", "defer"]

Prepare = Callable[[argparse.ArgumentParser, list[str]], None]
"""``prepare(parser, args)``: add the options that depend on the command line ``args``."""


class DeferredParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` with :meth:`defer`: ``prepare(parser, args)`` runs once, just
    before the parser parses its arguments (``args``: the command line it was given) or formats its help.
    The CLI makes every subcommand's parser one (``add_subparsers(parser_class=DeferredParser)``).

    An argument the subcommand does not know is reported by the subcommand's parser itself, with its own
    usage line (``usage: dualdecomp compress ...``); argparse would hand it back to the top-level parser,
    whose message shows only ``usage: dualdecomp [-h] [--version] COMMAND ...``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._prepare: Prepare | None = None

    def defer(self, prepare: Prepare) -> None:
        """Run ``prepare(self, args)`` before the first parse (or help)."""
        self._prepare = prepare

    def _run_prepare(self, args: Sequence[str]) -> None:
        if self._prepare is not None:
            prepare, self._prepare = self._prepare, None
            prepare(self, list(args))

    def parse_known_args(self, args=None, namespace=None):
        """Prepare, then :meth:`argparse.ArgumentParser.parse_known_args`; an argument left unrecognised
        is this parser's usage error (see the class docstring)."""
        self._run_prepare(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognised arguments: {' '.join(extras)}")
        return parsed, extras

    def format_help(self) -> str:
        """Prepare (with no arguments: the defaults), then the help."""
        self._run_prepare([])
        return super().format_help()


def defer(parser: argparse.ArgumentParser, prepare: Prepare) -> None:
    """``parser.defer(prepare)`` on a :class:`DeferredParser`; on another parser, ``prepare(parser, [])``
    at once (the options of the defaults)."""
    if isinstance(parser, DeferredParser):
        parser.defer(prepare)
    else:
        prepare(parser, [])
