"""``compress --split TEXT`` goes on past a failing sentence like a batch (an error row, a summary, a non-zero
exit at the end), and ``compress``/``rewrite`` declare their shared options once (issue W3.4)."""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

import pytest

from dualdecomp.app.cli import main

ROOT = Path(__file__).resolve().parents[1]
# three sentences: 6, 13 and 4 tokens
TEXT = ("The minister spoke on Monday. Taxes will rise sharply next year in every region of the country. "
        "They agreed quickly.")
SHARED = ("--input", "--input-format", "--output", "--format", "--max-tokens", "--max-line-bytes", "--resume",
          "--on-error", "--time-limit", "--deterministic", "--batch-size", "--workers", "--scheduler",
          "--json", "--quiet")


def _rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _split(model: Path, capsys, *extra: str) -> tuple[int, list[dict], str]:
    code = main(["compress", "--model", str(model), "--split", "--json", "--deterministic", *extra, TEXT])
    out, err = capsys.readouterr()
    return code, _rows(out), err


def test_a_sentence_over_max_tokens_gets_an_error_row_and_the_others_go_on(tiny_model, capsys):
    code, rows, err = _split(tiny_model, capsys, "--max-tokens", "8")
    assert code == 2, err  # InputError's exit code, at the end
    assert [r["id"] for r in rows] == ["1", "2", "3"]
    assert "error" not in rows[0] and "error" not in rows[2]
    assert set(rows[1]) == {"id", "text", "error"} and "13 tokens" in rows[1]["error"]
    assert rows[1]["text"].startswith("Taxes will rise") and rows[2]["output"]
    assert "dualdecomp compress: 1 of 3 sentences failed" in err and "Traceback" not in err


def test_an_impossible_length_fails_only_its_sentences(tiny_model, capsys):
    code, rows, err = _split(tiny_model, capsys, "--length", "5")
    assert code == 2, err
    assert ["error" in r for r in rows] == [False, False, True]  # "They agreed quickly ." has 4 tokens
    assert [sum(r["keep"]) for r in rows[:2]] == [5, 5]
    assert "2 of 3" not in err and "1 of 3 sentences failed" in err


def test_the_error_row_is_the_one_a_batch_file_gives(tiny_model, tmp_path, capsys):
    _, rows, _ = _split(tiny_model, capsys, "--max-tokens", "8")
    path = tmp_path / "in.txt"
    path.write_text(TEXT + "\n")
    code = main(["compress", "--model", str(tiny_model), "--split", "--json", "--deterministic",
                 "--max-tokens", "8", "--input", str(path), "--quiet"])
    batch = _rows(capsys.readouterr().out)
    assert code == 2
    assert [r["id"] for r in batch] == ["1.1", "1.2", "1.3"]
    assert batch[1]["error"] == rows[1]["error"]
    assert [r.get("compression") for r in batch] == [r.get("compression") for r in rows]


def test_on_error_fail_stops_at_the_failing_sentence(tiny_model, capsys):
    code, rows, err = _split(tiny_model, capsys, "--max-tokens", "8", "--on-error", "fail")
    assert code == 2
    assert [r["id"] for r in rows] == ["1"] and "13 tokens" in err


def test_without_failures_the_exit_is_0_and_no_summary(tiny_model, capsys):
    code, rows, err = _split(tiny_model, capsys)
    assert code == 0 and len(rows) == 3 and not any("error" in r for r in rows) and "failed" not in err


def test_human_output_shows_the_error_row(tiny_model, capsys):
    code = main(["compress", "--model", str(tiny_model), "--split", "--max-tokens", "8", TEXT])
    out = capsys.readouterr().out
    assert code == 2 and "[2] error: " in out and out.count("[3] ") == 1


# --- shared options ---------------------------------------------------------------------------------------

def _help(command: str, capsys, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    assert main([command, "-h"]) == 0
    return capsys.readouterr().out


def _actions(command: str) -> dict[str, argparse.Action]:
    """The command's options as its parser declares them, by option string."""
    module = importlib.import_module(f"dualdecomp.app.commands.{command}")
    parser = module.add_parser(argparse.ArgumentParser().add_subparsers())
    return {s: a for a in parser._actions for s in a.option_strings}


def test_help_keeps_every_option_within_100_columns(capsys, monkeypatch):
    for command in ("compress", "rewrite"):
        text = _help(command, capsys, monkeypatch)
        assert max(len(line) for line in text.splitlines()) <= 100
        for option in SHARED:
            assert option in text, (command, option)
    assert "--split" in _help("compress", capsys, monkeypatch)


def test_shared_options_are_declared_once():
    compress, rewrite = _actions("compress"), _actions("rewrite")
    for option in ("--input-format", "--output", "--max-line-bytes", "--resume", "--on-error",
                   "--deterministic", "--batch-size", "--json", "--quiet"):
        a, b = compress[option], rewrite[option]
        assert (a.help, a.default, a.choices, a.dest, a.metavar) == (b.help, b.default, b.choices, b.dest,
                                                                     b.metavar), option
    for name in ("compress", "rewrite"):  # declared by batch_command's add_input_options/add_run_options
        source = (ROOT / "dualdecomp" / "app" / "commands" / f"{name}.py").read_text()
        for option in SHARED:
            assert f'"{option}"' not in source, (name, option)


@pytest.mark.parametrize("option", ["--workers", "--time-limit", "--max-tokens", "--format"])
def test_worded_options_name_their_command(option):
    compress, rewrite = _actions("compress")[option], _actions("rewrite")[option]
    assert compress.help != rewrite.help and compress.dest == rewrite.dest
