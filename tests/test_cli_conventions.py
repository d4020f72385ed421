"""W2.6 CLI conventions for plain text: text input (one sentence per line, or --split paragraphs), text or
JSONL output (--format), format detection, progress and summaries on stderr only."""

from __future__ import annotations

import io
import json
import sys

import pytest

from dualdecomp.app.batch import BatchOptions, detect_input_format, read_lines, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor

LINES = ["The Gilmer City Council on Tuesday plans to consider canceling its May council election.",
         "Quentin Tarantino sued Gawker on Monday, seeking $2 million. He said the leak was a betrayal."]


@pytest.fixture()
def text_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n\n", encoding="utf-8")  # a trailing blank line is skipped
    return path


def test_text_input_is_tokenised_with_its_spacing(text_file):
    items = [item for item, _ in read_lines(text_file, "text")]
    assert [it.id for it in items] == ["1", "2"]
    assert items[0].text[-2:] == ("election", ".") and items[0].spaces[-2:] == (False, False)
    assert "$" in items[1].text and items[1].spaces[items[1].text.index("$")] is False


def test_split_gives_one_item_per_sentence(text_file):
    items = [item for item, _ in read_lines(text_file, "text", split=True)]
    assert [it.id for it in items] == ["1.1", "2.1", "2.2"]
    assert items[2].text[0] == "He"


def test_text_output_is_detokenised_and_aligned_with_the_input(tiny_model, text_file, tmp_path):
    out = tmp_path / "out.txt"
    options = BatchOptions(input_format="text", output_format="text", deterministic=True)
    rows, summary = run_batch(text_file, out, Compressor(tiny_model), options)
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) == 3  # one line per input sentence
    for line, row in zip(lines, rows, strict=False):
        assert line == row["output"]
        assert " ." not in line and " ," not in line  # the original spacing, not the tokens
    assert summary.lines == 2


def test_text_input_with_jsonl_output_keeps_the_certificate(tiny_model, text_file, tmp_path):
    out = tmp_path / "out.jsonl"
    code = main(["compress", "--model", str(tiny_model), "--input", str(text_file), "--output", str(out),
                 "--input-format", "text", "--quiet"])
    assert code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {"output", "compression", "primal", "dual", "certified"} <= set(rows[0])


def test_resume_of_a_text_run_reuses_its_rows(tiny_model, text_file, tmp_path):
    out = tmp_path / "out.txt"
    first = BatchOptions(input_format="text", split=True, output_format="text", deterministic=True)
    run_batch(text_file, out, Compressor(tiny_model), first)
    expected = out.read_bytes()
    # an interrupted run leaves its journal: simulate one by journalling without finishing
    from dualdecomp.app.batch import BatchSession

    with BatchSession(text_file, out, Compressor(tiny_model), first) as session:
        session.record(0, {"id": "1.1", "compression": "x", "output": "x"})
    resumed = BatchOptions(input_format="text", split=True, output_format="text", deterministic=True,
                           resume=True)
    _, summary = run_batch(text_file, out, Compressor(tiny_model), resumed)
    assert summary.reused == 1  # the journalled row was computed from the same line and options
    assert out.read_bytes() != expected  # ... and was reused as it was journalled (here: "x")
    other = BatchOptions(input_format="text", split=False, output_format="text", deterministic=True,
                         resume=True)
    with BatchSession(text_file, out, Compressor(tiny_model), first) as session:
        session.record(0, {"id": "1.1", "compression": "x", "output": "x"})
    _, summary = run_batch(text_file, out, Compressor(tiny_model), other)
    assert summary.reused == 0  # --split changed: nothing reused


def test_stdin_text_to_stdout_text_keeps_stdout_clean(tiny_model, text_file, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text_file.read_bytes())))
    code = main(["compress", "--model", str(tiny_model), "--input", "-", "--input-format", "text",
                 "--output", "-", "--format", "text"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert len(out.splitlines()) == 2 and not any(line.startswith("{") for line in out.splitlines())
    assert "written to standard output" in err  # the summary (and any progress bar) goes to stderr


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("a.jsonl", "plain words\n", "jsonl"), ("a.txt", '{"id": 1}\n', "text"),
    ("a.in", '\n  {"id": 1, "text": "a"}\n', "jsonl"), ("a.in", "Some raw text.\n", "text")])
def test_input_format_detection(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content)
    assert detect_input_format(path) == expected


def test_split_needs_text_input(tiny_model, tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "1", "text": "A b ."}\n')
    assert main(["compress", "--model", str(tiny_model), "--input", str(path), "--split"]) == 2
    assert "--split needs plain-text input" in capsys.readouterr().err


def test_ctrl_c_while_the_cli_is_imported_exits_130(monkeypatch, capsys):
    """The console script guards the CLI's own imports: a Ctrl-C there is 130 and one line, no traceback."""
    import builtins

    from dualdecomp.app import entry

    real_import = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "dualdecomp.app.cli":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    monkeypatch.delitem(sys.modules, "dualdecomp.app.cli", raising=False)
    with pytest.raises(SystemExit) as info:
        entry.main()
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == "dualdecomp: interrupted"


# --- W3.4: help texts and usage errors of every subcommand ------------------------------------------------

def _subcommands() -> list[tuple[str, ...]]:
    """Every subcommand path (``compress``, ``lm build``, ...) and ``train --kind K`` for every kind."""
    import argparse

    from dualdecomp.app.cli import build_parser
    from dualdecomp.models.registry import trainer_names

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if sub.prog.endswith(" " + name):  # an alias (train-linearizer) is the same parser
                        yield (*prefix, name)
                        yield from walk(sub, (*prefix, name))

    return [*walk(build_parser(), ()), *(("train", "--kind", k) for k in trainer_names())]


SUBCOMMANDS = _subcommands()


def _help(argv, monkeypatch, capsys) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    assert main([*argv, "-h"]) == 0
    return capsys.readouterr().out


def test_every_subcommand_is_checked():
    names = {" ".join(c) for c in SUBCOMMANDS}
    assert {"compress", "rewrite", "evaluate", "lm", "lm build", "t3", "t3 evaluate", "order", "order train",
            "plot", "train --kind transducer"} <= names


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=" ".join)
def test_help_fits_100_columns_without_markup_or_stale_paths(argv, monkeypatch, capsys):
    """``-h`` at 100 columns: no line longer (before: ``order -h``, ``t3 -h``, ``lm -h``, ``plot -h``, the
    ``train`` usage), no reST or markdown (double backticks, ``:mod:`` roles, backticks), and every file
    path it names exists (before: ``evaluate -h`` named ``dualdecomp/table.py``)."""
    import re

    from tests.test_layers import ROOT

    text = _help(argv, monkeypatch, capsys)
    assert text.startswith(f"usage: {_prog(argv)} ")
    long = [line for line in text.splitlines() if len(line) > 100]
    assert not long, long
    assert "`" not in text and not re.search(r":(func|mod|class|meth|attr|data|ref):`?", text)
    paths = re.findall(r"[\w.-]+(?:/[\w.-]+)+\.(?:py|md|json)\b", text)
    tree = ("dualdecomp/", "data/", "docs/", "benchmarks/", "models/", "solvers/", "scripts/")
    missing = [p for p in paths if p.startswith(tree) and not (ROOT / p).exists()]  # not configs/NAME.json
    assert not missing, missing


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=" ".join)
def test_an_unknown_option_shows_the_subcommand_usage(argv, capsys):
    """``dualdecomp compress --bogus``: the usage line of ``compress``, not the top-level one."""
    assert main([*argv, "--bogus-option"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {_prog(argv)} "), err
    # the unknown option, or first a missing required argument, named by the subcommand
    assert f"{_prog(argv)}: error: " in err


@pytest.mark.parametrize("argv", [
    ["compress", "text", "--bogus-option"], ["lm", "query", "x", "--bogus-option"],
    ["train", "--kind", "lm", "--train", "a", "--out", "b", "--bogus-option"]])
def test_an_unknown_option_is_named_under_the_subcommand_usage(argv, capsys):
    """Before: ``usage: dualdecomp [-h] [--version] COMMAND ...`` and ``dualdecomp: error: ...``."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    prog = _prog(tuple(argv[:2] if argv[0] == "lm" else argv[:1]))
    assert err.startswith(f"usage: {prog} "), err
    assert f"{prog}: error: unrecognised arguments: --bogus-option" in err


def _prog(argv: tuple[str, ...]) -> str:
    return "dualdecomp " + " ".join(argv[:1] if argv[0] == "train" else argv)
