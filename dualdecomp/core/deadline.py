"""A per-sentence deadline passed down the pipeline (parsing, potentials, decoding)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from time import monotonic

from dualdecomp.core.errors import SolverError

__all__ = ["Deadline", "TimeLimitError"]


class TimeLimitError(SolverError):
    """The time limit ran out before any compression was found (exit 4, or that line's error row)."""


@dataclass(frozen=True)
class Deadline:
    """A point in ``time.monotonic()`` time after which the work on one sentence stops.

    Attributes
    ----------
    seconds : float or None
        The limit it was started with (None: no limit).
    end : float
        ``time.monotonic()`` at the deadline (``inf`` without a limit).
    """

    seconds: float | None
    end: float

    @classmethod
    def start(cls, seconds: float | None) -> Deadline:
        """A deadline ``seconds`` from now (never, when None)."""
        return cls(seconds, math.inf if seconds is None else monotonic() + float(seconds))

    def remaining(self) -> float | None:
        """Seconds left (None without a limit; may be <= 0)."""
        return None if self.seconds is None else self.end - monotonic()

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return monotonic() >= self.end

    def check(self, stage: str) -> None:
        """Raise :class:`TimeLimitError` naming ``stage`` when the deadline has passed.

        Parameters
        ----------
        stage : str
            What was being done, e.g. "parsing" or "computing the lm potentials".
        """
        if self.expired():
            raise TimeLimitError(f"the time limit of {self.seconds:g} s ran out while {stage}, before any "
                                 "compression was found")
