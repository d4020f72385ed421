"""The warning ``dualdecomp train --kind neural --autocast bfloat16`` gives on a CPU that only emulates
bfloat16 (there a step of all-mpnet-base-v2 took about 33 times as long as in float32)."""

from __future__ import annotations

from dualdecomp.core.cpu_info import CpuInfo
from dualdecomp.models.neural.training_settings import TrainingSettings, autocast_warning

AVX2 = CpuInfo("AMD EPYC", frozenset({"avx2", "fma"}))
AMX = CpuInfo("Intel Xeon", frozenset({"avx2", "avx512_bf16", "amx_bf16"}))


def test_bfloat16_on_a_cpu_that_emulates_it_is_warned_of() -> None:
    warning = autocast_warning(TrainingSettings(autocast="bfloat16"), AVX2, "x86_64")
    assert warning is not None and warning.startswith("warning: --autocast bfloat16")
    assert "emulated" in warning and "--autocast none" in warning


def test_no_warning_in_float32_or_with_native_bfloat16_or_unknown_flags() -> None:
    assert autocast_warning(TrainingSettings(), AVX2, "x86_64") is None
    assert autocast_warning(TrainingSettings(autocast="bfloat16"), AMX, "x86_64") is None
    assert autocast_warning(TrainingSettings(autocast="bfloat16"), CpuInfo(None, None), "x86_64") is None
    assert autocast_warning(TrainingSettings(autocast="bfloat16"), AVX2, "aarch64") is None
