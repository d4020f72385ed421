"""Reading the CPU's model name and flags from the kernel's description, and what they tell."""

from __future__ import annotations

import pytest

from dualdecomp.core.cpu_info import CpuInfo, bfloat16_emulated, is_x86, read_cpu_info


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


def test_x86_names() -> None:
    assert is_x86("x86_64") and is_x86("AMD64") and is_x86("i686")
    assert not is_x86("aarch64") and not is_x86("arm64") and not is_x86("ppc64le")


@pytest.mark.parametrize("flags, machine, emulated", [
    ({"avx2", "fma"}, "x86_64", True),             # the AVX2-only AMD EPYC: no bfloat16 arithmetic
    ({"avx512f", "avx512_vnni"}, "x86_64", True),  # VNNI (int8) is not bfloat16
    ({"avx512f", "avx512_bf16"}, "x86_64", False),
    ({"avx2", "amx_bf16", "amx_tile"}, "x86_64", False),
    (None, "x86_64", False),                       # flags unknown: no claim
    ({"fp", "asimd"}, "aarch64", False),           # another architecture: no claim
])
def test_bfloat16_is_emulated_only_on_x86_without_its_flags(flags, machine, emulated) -> None:
    info = CpuInfo("cpu", None if flags is None else frozenset(flags))
    assert bfloat16_emulated(info, machine) is emulated
