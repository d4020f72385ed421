"""The machine a benchmark ran on, for the benchmark's output (not a benchmark itself).

A neural configuration's time depends less on the clock than on the processor's int8 and bfloat16
instructions: the default's MPNet encoder runs an int8 graph, about three times as fast as float32 where
the cores have VNNI or AMX and barely faster where they have only AVX2. So the timing benchmarks print
this first, as one JSON line: the date, the CPU's model name, the number of cores, the memory and which of
those instruction sets the CPU reports (``/proc/cpuinfo`` flags; an empty list where it cannot be read).

``python benchmarks/machine.py`` prints that line.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.core.cpu_info import read_cpu_info

#: The /proc/cpuinfo flags that decide how fast an encoder runs (vector width, int8 and bfloat16 dots).
MATRIX_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16")


@dataclass(frozen=True)
class Machine:
    """What a timing was measured on."""

    date: str
    cpu: str
    cores: int
    memory_gib: float
    instructions: tuple[str, ...]

    def summary(self) -> str:
        """One line: ``date, CPU, N cores, M GiB`` (the form the model files' ``measured`` fields use)."""
        return f"{self.date}, {self.cpu}, {self.cores} cores, {self.memory_gib:.0f} GiB"

    def as_json(self) -> dict:
        """The JSON line the timing benchmarks print first."""
        return {"machine": self.summary(), "instructions": list(self.instructions)}


def this_machine(cpuinfo: Path = Path("/proc/cpuinfo")) -> Machine:
    """Describe the machine this process runs on.

    Parameters
    ----------
    cpuinfo : Path
        The kernel's CPU description (its first ``model name`` and ``flags`` lines are read).

    Returns
    -------
    Machine
        Today's date, the CPU's model name ("unknown CPU" where unreadable), ``os.cpu_count()``, the
        physical memory and the members of ``MATRIX_FLAGS`` the CPU reports, in that order.
    """
    info = read_cpu_info(cpuinfo)
    flags = info.flags or frozenset()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return Machine(date=datetime.date.today().isoformat(), cpu=info.model or "unknown CPU",
                   cores=os.cpu_count() or 1, memory_gib=memory,
                   instructions=tuple(f for f in MATRIX_FLAGS if f in flags))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    print(json.dumps(this_machine().as_json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
