"""Progress bars (tqdm) that are shown only on a terminal and never with ``--quiet``."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tqdm import tqdm

__all__ = ["ProgressBar", "progress_factory", "set_progress_total"]


class ProgressBar:
    """A tqdm bar on stderr used as an update callback.

    ``bar(k)`` counts ``k`` more items done; :meth:`set_total` gives the number of items once it is known
    (a batch knows it after reading its input), and from then on the bar shows a percentage and an ETA;
    :meth:`close` (or the end of a ``with`` block) clears the bar's line, so that what is printed next (a
    summary) starts at the beginning of a line of its own.

    Parameters
    ----------
    total : int or None
        The number of items, None while unknown (the bar then counts without a percentage).
    description : str
        The bar's label.
    disable : bool
        Draw nothing (off a terminal, ``--quiet``).
    unit : str
        What is counted (``line``: ``lines/s``).
    """

    def __init__(self, total: int | None, description: str, disable: bool, unit: str = "it") -> None:
        self._bar = tqdm(total=total, desc=description, disable=disable, leave=False, file=sys.stderr,
                         unit=unit)
        self.count = 0
        """The items counted so far (also when the bar is disabled)."""
        self.total = total
        """The number of items, None while unknown."""

    def __call__(self, k: int = 1) -> None:
        """Count ``k`` more items done."""
        self.count += k
        self._bar.update(k)

    def set_total(self, total: int) -> None:
        """Give the number of items (a percentage and an ETA from now on)."""
        self.total = total
        self._bar.total = total
        self._bar.refresh()

    def close(self) -> None:
        """End the bar: its line is cleared (idempotent)."""
        self._bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_factory(quiet: bool = False) -> Callable[..., ProgressBar]:
    """Return ``make(total, description, unit="it") -> ProgressBar`` (an update callback ``bar(k)``); bars
    are disabled off a TTY or when quiet."""

    disable = quiet or not sys.stderr.isatty()

    def make(total: int | None, description: str, unit: str = "it") -> ProgressBar:
        return ProgressBar(total, description, disable, unit)

    return make


def set_progress_total(progress: Callable[[int], None] | None, total: int) -> None:
    """Tell ``progress`` (an update callback) the number of items when it can take it (a
    :class:`ProgressBar`'s :meth:`~ProgressBar.set_total`); any other callback is left as it is."""
    set_total = getattr(progress, "set_total", None)
    if set_total is not None:
        set_total(total)
