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
