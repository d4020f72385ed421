"""Giving freed heap memory back to the operating system."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from functools import cache


@cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl, Windows)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> bool:
    """Collect garbage and return the C heap's free pages to the OS (glibc's ``malloc_trim(0)``).

    Loading a large model frees many temporary arrays of a few MB each (below glibc's mmap threshold, so
    they come from the heap); without this the process keeps their pages resident: loading the MPNet
    scorer leaves about 700 MB of freed heap in the resident set. Cheap (milliseconds), safe to call at any
    time, a no-op where the C library has no ``malloc_trim``.

    Returns
    -------
    bool
        Whether ``malloc_trim`` ran and reported memory released.
    """
    gc.collect()
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
