"""evaluate --table: every system on every dev file at gold length, one markdown table."""

from __future__ import annotations

import json

import numpy as np

from dualdecomp import decode
from dualdecomp.app.cli import main
from dualdecomp.solvers.dependency.solver import Dependency


def test_table_command(tiny_model, corpora, tmp_path, capsys) -> None:
    spec = {"dev": [str(corpora / "written.dev.jsonl")], "length": "gold", "default": "tiny",
            "systems": [{"name": "tiny", "model": str(tiny_model), "limit": 6},
                        {"name": "tiny again", "model": str(tiny_model), "limit": 4}]}
    path = tmp_path / "table.json"
    path.write_text(json.dumps(spec))
    assert main(["evaluate", "--table", str(path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("| dev set | system | CR | token F1 | bigram F1 | GR-F1 | ROUGE-L |")
    assert len(out) == 4
    assert "**tiny** (default)" in out[2] and "written.dev (first 6)" in out[2]
    assert "100.0" in out[2]  # certified %


def test_table_bad_spec(tmp_path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"dev": []}')
    assert main(["evaluate", "--table", str(path)]) == 2
    assert main(["evaluate", "--input", "x.jsonl"]) == 2


def test_auto_length_method_without_exact_components() -> None:
    rng = np.random.default_rng(0)
    A = rng.normal(size=(7, 7))
    result = decode([Dependency(A)], length=3, length_method="auto")
    assert int(result.keep.sum()) == 3
