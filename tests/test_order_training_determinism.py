"""Guided learning gives the same weights on every machine: no sum whose order depends on the CPU.

The update's squared norm was a BLAS dot product, whose summation order is that of the kernel OpenBLAS
picks for the processor: the same command trained different models on two machines. The norm is now
correctly rounded (``squared_norm``); training with the processor's own kernels and with the oldest of
each library (OpenBLAS, numba, numpy) gives identical files.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.models.ordering.paper.training import squared_norm
from tests.ordering_oracles import EWT

# Terms of mixed magnitudes, like the update's differences of 1/size scaled features.
TERMS = st.lists(st.one_of(st.fractions(min_value=-9, max_value=9, max_denominator=40).map(float),
                           st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)),
                 min_size=0, max_size=300)


@settings(max_examples=300, deadline=None)
@given(values=TERMS, seed=st.integers(0, 2**32 - 1))
def test_squared_norm_is_correctly_rounded_in_any_order(values, seed):
    array = np.array(values, dtype=float)
    exact = float(sum((Fraction(float(v * v)) for v in array), Fraction(0)))
    assert squared_norm(array) == exact
    shuffled = np.random.default_rng(seed).permutation(array)
    assert squared_norm(shuffled) == exact


def _openblas_dynamic_arch() -> bool:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return "openblas" in blas.get("name", "") and "DYNAMIC_ARCH" in blas.get("openblas configuration", "")


def _numpy_dispatch_targets() -> str:
    """numpy's SIMD targets above its baseline that this processor runs (to switch them off)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # a private module: without it numpy keeps its targets
        return ""
    return " ".join(t for t in __cpu_dispatch__ if __cpu_features__.get(t))


def _train(out: Path, portable: bool) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "NUMBA_CPU_NAME", "NPY_DISABLE_CPU_FEATURES")}
    if portable:  # the oldest kernels of each library, as on another machine
        env.update(OPENBLAS_CORETYPE="Prescott", NUMBA_CPU_NAME="generic",
                   NPY_DISABLE_CPU_FEATURES=_numpy_dispatch_targets())
    args = ["order", "train", "--train", str(EWT / "en_ewt-ud-train.conllu"),
            "--dev", str(EWT / "en_ewt-ud-dev.conllu"), "--max-length", "20", "--max-sentences", "400",
            "--train-chart-size", "32", "--train-expansions", "300", "--dev-sentences", "2",
            "--dev-expansions", "50", "--epochs", "1", "--seed", "0", "--quiet", "--out", str(out)]
    code = f"from dualdecomp.app.cli import main; raise SystemExit(main({args!r}))"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)


@pytest.mark.skipif(not (EWT / "en_ewt-ud-train.conllu").exists(), reason=f"EWT not available: {EWT}")
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or not _openblas_dynamic_arch(),
                    reason="needs numpy's OpenBLAS with kernels chosen at run time (x86-64)")
def test_training_does_not_depend_on_the_processor(tmp_path: Path) -> None:
    # The processor's own kernels against the oldest of each library: OpenBLAS's Prescott (SSE2) kernels,
    # numba compiled for a generic x86-64, numpy without its SIMD targets.
    _train(tmp_path / "native", portable=False)
    _train(tmp_path / "portable", portable=True)
    native, portable = (tmp_path / d / "weights.npz" for d in ("native", "portable"))
    assert native.read_bytes() == portable.read_bytes()
