"""release_freed_memory gives the freed heap back to the OS (glibc), and is a safe no-op elsewhere."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dualdecomp.core.memory import _malloc_trim

# In a fresh process whose malloc is set so that the freed blocks stay on the heap and resident: 2 MB
# blocks below the mmap threshold, and no automatic trimming of the heap's top (otherwise whether they
# stay depends on where the small pins land, which depends on the process's earlier allocations).
_CHILD = r"""
import ctypes, ctypes.util, re, sys
import numpy as np
from dualdecomp.core.memory import release_freed_memory

libc = ctypes.CDLL(ctypes.util.find_library("c"))
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
assert libc.mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1

def rss():
    return int(re.search(r"VmRSS:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024

blocks, pins = [], []
for _ in range(150):  # 2 MB arrays on the heap, each followed by a small pinned allocation
    blocks.append(np.ones(2 << 20, dtype=np.uint8))
    pins.append(np.ones(4096, dtype=np.uint8))
del blocks  # freed, but still resident: the heap is not trimmed by itself
before = rss()
trimmed = release_freed_memory()
print(trimmed, round(before), round(rss()), len(pins))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or _malloc_trim() is None, reason="glibc only")
def test_freed_heap_arrays_leave_the_resident_set() -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=True).stdout
    trimmed, before, after, pins = out.split()
    assert trimmed == "True" and pins == "150"
    assert int(before) > 300 and int(before) - int(after) > 250, out  # of the 300 MB freed


def test_without_malloc_trim_it_is_a_no_op(monkeypatch) -> None:
    import dualdecomp.core.memory as memory

    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    assert memory.release_freed_memory() is False
