"""What the kernel says of this machine's CPU (``/proc/cpuinfo``): its model name and its flags."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuInfo", "read_cpu_info"]


@dataclass(frozen=True)
class CpuInfo:
    """The first processor's ``model name`` and ``flags`` lines; None where there is no such line (or no
    readable ``/proc/cpuinfo``: macOS, Windows)."""

    model: str | None
    flags: frozenset[str] | None


def read_cpu_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> CpuInfo:
    """Read the CPU's model name and flags.

    Parameters
    ----------
    cpuinfo : Path
        The kernel's CPU description; its first ``model name`` and first ``flags`` lines are read.

    Returns
    -------
    CpuInfo
        The model name and the set of flags, each None where missing or unreadable.
    """
    model: str | None = None
    flags: frozenset[str] | None = None
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model is None:
                model = value.strip()
            elif key.strip() == "flags" and flags is None:
                flags = frozenset(value.split())
    except OSError:
        pass
    return CpuInfo(model, flags)
