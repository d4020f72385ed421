"""Old spellings of renamed command-line options, still accepted but not shown in the help.

The project spells -ise (docs/glossary.md); options first published with an -ize spelling (``order
--no-linearizer``, ``--linearizer-states``) keep working under it: the old string is a hidden alias that
sets the same destination as the new option.
"""

from __future__ import annotations

import argparse


def add_old_spelling(parser: argparse.ArgumentParser, old: str, new: argparse.Action) -> None:
    """Accept the option string ``old`` as a hidden alias of the option ``new``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The parser that holds ``new``.
    old : str
        The old option string (e.g. ``"--no-linearizer"``); left out of the usage and the help.
    new : argparse.Action
        What ``parser.add_argument`` returned for the new spelling: a flag (``store_true``) or an option
        with one value.
    """
    options = {"dest": new.dest, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
    if new.nargs == 0:  # a flag: store_true / store_const
        options.update(action="store_const", const=new.const)
    else:
        options.update(type=new.type, nargs=new.nargs, choices=new.choices, metavar=new.metavar)
    parser.add_argument(old, **options)
