"""The ILP decoder keeps the solvers' output off standard output: HiGHS's banner ("Running HiGHS ...",
written by highspy from C even with ``msg=False``) once went into the rows of ``compress --output -``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dualdecomp.engine.ilp import _solver_output_discarded

EXE = Path(sys.executable).parent / "dualdecomp"


@pytest.mark.parametrize("solver_config", ["mcdonald-dependency-lm-ilp"])
def test_ilp_rows_on_standard_output_are_only_rows(tmp_path, solver_config):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "The council said on Monday it would raise taxes ."})
                      + "\n", encoding="utf-8")
    done = subprocess.run([str(EXE), "compress", "--config", solver_config, "--input", str(source),
                           "--output", "-", "--deterministic", "--quiet"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["certified"] is True
    assert "HiGHS" not in done.stdout


def test_ilp_decode_restores_standard_output(capfd):
    with _solver_output_discarded():
        os.write(1, b"swallowed\n")  # what a solver's C code writes
    os.write(1, b"kept\n")
    assert capfd.readouterr().out == "kept\n"
