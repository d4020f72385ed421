"""Reading the CPU's model name and flags from the kernel's description."""

from __future__ import annotations

from dualdecomp.core.cpu_info import CpuInfo, read_cpu_info


def test_the_first_processors_model_and_flags(tmp_path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 sse\n\n"
                    "processor\t: 1\nmodel name\t: Other\nflags\t\t: avx512f\n")
    assert read_cpu_info(info) == CpuInfo("Test CPU 9000", frozenset({"fpu", "avx2", "sse"}))


def test_missing_lines_and_files_read_as_none(tmp_path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Arm thing\n")
    assert read_cpu_info(info) == CpuInfo("Arm thing", None)
    assert read_cpu_info(tmp_path / "absent") == CpuInfo(None, None)
