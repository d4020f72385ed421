"""Every benchmark script starts (its imports resolve from a fresh process, outside the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_help(script, tmp_path):
    out = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "usage" in out.stdout.lower()


def test_neural_speed_compares_the_encoders_in_one_run(tmp_path):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "neural_speed.py"
    out = subprocess.run([sys.executable, str(script), "--limit", "2", "--configs", "neural",
                          "--numpy-encoder", "neural"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["config"] for r in rows] == ["mcdonald-dependency-lm", "neural", "neural [numpy encoder]"]
    assert rows[0]["ratio_to_old_default"] == 1.0
    assert all(r["sentences"] == 2 and r["median_ms"] > 0 and r["certified"] == 1.0 for r in rows)
