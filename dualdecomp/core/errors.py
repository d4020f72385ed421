"""The one error hierarchy of dualdecomp.

The CLI maps each class to a message on stderr and an exit code (docs/architecture.md §3):
``InputError`` → 2, ``ModelError`` → 3, ``SolverError`` → 4.
"""

from __future__ import annotations


class DualDecompError(Exception):
    """Base class of every error dualdecomp raises on purpose."""

    exit_code = 1


class InputError(DualDecompError, ValueError):
    """The user's input (text, file, option) is invalid."""

    exit_code = 2


class ModelError(DualDecompError):
    """A model, grammar, LM or data file is missing, unreadable or invalid."""

    exit_code = 3


class SolverError(DualDecompError):
    """A solver failed or was asked for something it cannot do."""

    exit_code = 4


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that stopped a batch: ``note`` says what was kept and how to go on (the CLI prints it)."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def interrupted_message(exc: BaseException) -> str:
    """The CLI's one line for a Ctrl-C: ``dualdecomp: interrupted`` and, for a batch, its note."""
    note = getattr(exc, "note", "")
    return f"dualdecomp: interrupted: {note}" if note else "dualdecomp: interrupted"
