"""Progress bars (tqdm) that are shown only on a terminal and never with ``--quiet``."""

from __future__ import annotations

import sys
from collections.abc import Callable

from tqdm import tqdm


def progress_factory(quiet: bool = False) -> Callable[[int, str], Callable[[int], None]]:
    """Return ``make(total, description) -> update(k)``; bars are disabled off a TTY or when quiet."""

    disable = quiet or not sys.stderr.isatty()

    def make(total: int, description: str) -> Callable[[int], None]:
        bar = tqdm(total=total, desc=description, disable=disable, leave=False, file=sys.stderr)
        return bar.update

    return make
