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
