"""The command line: compress (text and JSONL, every length mode), train, errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dualdecomp.app.cli import main


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_compress_text(tiny_model, capsys) -> None:
    code = main(["compress", "--model", str(tiny_model), "--json", "--length", "4",
                 "The quick brown fox, it seems, jumped over the lazy dog."])
    assert code == 0
    row = json.loads(capsys.readouterr().out)
    assert sum(row["keep"]) == 4
    assert row["certified"] is True and row["gap"] == 0
    assert len(row["compression"].split()) == 4
    # detokenised output keeps the original spacing rules: no space before a kept comma
    assert " ," not in row["output"]


def test_compress_file_with_length_file(tiny_model, corpora, tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    lines = (corpora / "broadcast.dev.jsonl").read_text().splitlines()[:12]
    src.write_text("\n".join(lines) + "\n")
    lengths = [min(5 + i, len(json.loads(ln)["text"].split())) for i, ln in enumerate(lines)]
    lf = tmp_path / "lengths.txt"
    lf.write_text("\n".join(map(str, lengths)) + "\n")
    out = tmp_path / "out.jsonl"
    code = main(["compress", "--model", str(tiny_model), "--input", str(src), "--output", str(out),
                 "--length-file", str(lf), "--quiet"])
    assert code == 0
    rows = _rows(out)
    assert len(rows) == len(lines)
    for row, line, m in zip(rows, lines, lengths, strict=True):
        item = json.loads(line)
        toks = item["text"].split()
        assert row["id"] == item["id"]
        kept = [t for t, k in zip(toks, row["keep"], strict=True) if k]
        assert kept == row["compression"].split()
        assert len(kept) == m
        for key in ("primal", "dual", "gap", "certified", "seconds"):
            assert key in row
        assert row["certified"] and row["dual"] >= row["primal"]


def test_impossible_length_is_a_per_line_error(tiny_model, tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "text": "one two three"}\n{"id": "b", "text": "one two three four five"}\n'
                   'not json\n{"id": "d"}\n')
    out = tmp_path / "out.jsonl"
    code = main(["compress", "--model", str(tiny_model), "--input", str(src), "--output", str(out),
                 "--length", "4", "--quiet"])
    assert code == 2
    rows = _rows(out)
    assert [r["id"] for r in rows] == ["a", "b", "3", "d"]
    assert "exceeds" in rows[0]["error"]
    assert sum(rows[1]["keep"]) == 4
    assert "invalid JSON" in rows[2]["error"]
    assert "text" in rows[3]["error"]


def test_gold_and_ratio_modes(tiny_model, corpora, tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join((corpora / "broadcast.dev.jsonl").read_text().splitlines()[:4]) + "\n")
    out = tmp_path / "gold.jsonl"
    assert main(["compress", "--model", str(tiny_model), "--input", str(src), "--output", str(out),
                 "--length", "gold", "--quiet"]) == 0
    for row, line in zip(_rows(out), src.read_text().splitlines(), strict=True):
        refs = json.loads(line)["compressions"]
        assert len(row["references"]) == len(refs)
        for r, ref in zip(row["references"], refs, strict=True):
            assert sum(r["keep"]) == len(ref.split()) == r["length"]
    out2 = tmp_path / "ratio.jsonl"
    assert main(["compress", "--model", str(tiny_model), "--input", str(src), "--output", str(out2),
                 "--ratio", "0.5", "--quiet"]) == 0
    for row in _rows(out2):
        n = len(row["keep"])
        assert sum(row["keep"]) == max(1, int(0.5 * n + 0.5))
    # evaluate reads what compress wrote
    assert main(["evaluate", "--input", str(src), "--output", str(out)]) == 0


@pytest.mark.parametrize("argv, code", [
    (["compress"], 2),
    (["compress", "   "], 2),
    (["compress", "--length", "-1", "a b c"], 2),
    (["compress", "--ratio", "1.5", "a b c"], 2),
    (["compress", "--ratio", "0.5", "--length", "3", "a b c"], 2),
    (["compress", "--input", "/nonexistent.jsonl"], 2),
    (["compress", "--model", "/nonexistent-model", "a b c"], 3),
    (["frobnicate"], 2),
])
def test_bad_input_exit_codes(argv, code, capsys) -> None:
    assert main(argv) == code
    assert "Traceback" not in capsys.readouterr().err


def test_corrupted_model_is_a_model_error(tiny_model, tmp_path, capsys) -> None:
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(tiny_model, bad)
    (bad / "weights.npz").write_bytes(b"garbage")
    assert main(["compress", "--model", str(bad), "a b c"]) == 3
    assert "corrupted" in capsys.readouterr().err
    (bad / "model.json").write_text("{")
    assert main(["compress", "--model", str(bad), "a b c"]) == 3


def test_console_script_runs_without_traceback(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "dualdecomp.app.cli", "compress", "--length", "99", "a b"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "exceeds" in proc.stderr


def test_trace_in_file_output(tiny_model, corpora, tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join((corpora / "written.dev.jsonl").read_text().splitlines()[:3]) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["compress", "--model", str(tiny_model), "--input", str(src), "--output", str(out), "--trace",
                 "--length", "gold", "--quiet"]) == 0
    for row in _rows(out):
        assert row["trace"] and {"iteration", "dual", "primal", "step", "disagreements", "lam"} <= set(
            row["trace"][0])
        assert all("trace" in r for r in row["references"])


def test_train_dependency_model_cli(corpora, tmp_path) -> None:
    from dualdecomp.models.dependency.store import load_dependency_model

    out = tmp_path / "dep"
    assert main(["train", "--kind", "dependency", "--train", str(corpora / "written.train.jsonl"), "--dev",
                 str(corpora / "written.dev.jsonl"), "--limit", "30", "--epochs", "1", "--hash-bits", "16",
                 "--length-mode", "gold", "--out", str(out), "--quiet"]) == 0
    model = load_dependency_model(out)
    assert model.hash_bits == 16 and not model.second_order
