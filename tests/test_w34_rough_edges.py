"""W3.4 item 4, the rough edges a new user meets: raw text piped into ``dualdecomp compress`` (with and
without ``--input -``), ``--split`` with a text argument and in ``compress_text``, progress bars with a
total that end before the summary line."""

from __future__ import annotations

import io
import json
import os
import sys
import threading

import pytest

from dualdecomp.app.batch import BatchOptions, detect_input_format, read_input_lines, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.progress import ProgressBar, progress_factory
from dualdecomp.data.line_reader import standard_input_is_redirected

RAW = "The minister said on Monday that taxes would rise ."
PARAGRAPH = "The minister spoke on Monday. Taxes will rise next year."


def _pipe_stdin(monkeypatch, data: bytes) -> None:
    """Standard input as a real pipe holding ``data`` (what ``echo ... |`` gives a command)."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(os.fdopen(r, "rb")))


def _rows(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# --- raw text on standard input ---------------------------------------------------------------------------

def test_text_piped_without_an_argument_is_compressed(tiny_model, monkeypatch, capsys):
    """``echo TEXT | dualdecomp compress`` (before: "give either TEXT or --input FILE")."""
    _pipe_stdin(monkeypatch, (RAW + "\n").encode())
    code = main(["compress", "--model", str(tiny_model), "--json", "--deterministic"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = _rows(out)
    assert len(rows) == 1 and rows[0]["id"] == "1" and rows[0]["text"] == RAW
    assert set(rows[0]["compression"].split()) <= set(RAW.split()) and "certified" in rows[0]


def test_raw_text_on_input_dash_is_detected_as_text(tiny_model, monkeypatch, capsys):
    """``--input -`` with raw text (before: "invalid JSON (Expecting value)", exit 2)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"\n{RAW}\n{PARAGRAPH}\n".encode())))
    code = main(["compress", "--model", str(tiny_model), "--input", "-", "--json", "--deterministic"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = _rows(out)
    assert [r["id"] for r in rows] == ["2", "3"] and not any("error" in r for r in rows)
    assert rows[1]["output"].endswith(".") and " ." not in rows[1]["output"]  # the raw text's own spacing


def test_jsonl_on_input_dash_stays_jsonl(tiny_model, monkeypatch, capsys):
    line = json.dumps({"id": "a", "text": RAW})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"  {line}\n".encode())))
    assert main(["compress", "--model", str(tiny_model), "--input", "-", "--json", "--deterministic"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert [r["id"] for r in rows] == ["a"] and "error" not in rows[0]


def test_a_pipe_is_read_once_and_its_first_line_decides(tmp_path):
    """The format of a pipe comes from its first line as it is read: nothing is read twice or lost."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert detect_input_format(fifo) is None and detect_input_format("-") is None

    def write() -> None:
        with open(fifo, "wb") as fh:
            fh.write(b"\n\xff\xfe\n" + RAW.encode() + b"\n{\"id\": 1}\n")

    writer = threading.Thread(target=write)
    writer.start()
    lines, fmt = read_input_lines(fifo, "auto")
    writer.join()
    assert fmt == "text"
    items = [item for item, _ in lines]
    assert "not valid UTF-8" in items[0]["error"]  # a line that shows no format is its error row
    assert items[1].id == "3" and items[1].text == tuple(RAW.split())
    assert items[2].id == "4" and items[2].text[0] == "{"  # text from then on, not JSON


@pytest.mark.parametrize(("content", "fmt", "split"), [
    (b'{"id": "x", "text": ["A", "b"]}\n', "jsonl", False), (b"", "jsonl", False), (b"", "text", True),
    (b"\r\n   \n" + RAW.encode(), "text", False)])
def test_format_of_standard_input(monkeypatch, content, fmt, split):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(content)))
    assert read_input_lines("-", "auto", split=split)[1] == fmt


def test_split_of_jsonl_on_standard_input_is_refused(monkeypatch):
    from dualdecomp.core.errors import InputError

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'\n{"id": "x", "text": ["A"]}\n')))
    with pytest.raises(InputError, match="--split needs plain-text input"):
        read_input_lines("-", "auto", split=True)


def test_an_auto_run_shares_its_journal_with_an_explicit_one(tiny_model, tmp_path, monkeypatch):
    """The fingerprint holds the resolved format: a run on stdin with "auto" resumes one with "text"."""
    from dualdecomp.app.batch import BatchSession

    out = tmp_path / "out.jsonl"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"{RAW}\n".encode())))
    with BatchSession("-", out, Compressor(tiny_model), BatchOptions(input_format="text")) as session:
        session.record(0, {"id": "1", "compression": "x", "output": "x"})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"{RAW}\n".encode())))
    rows, summary = run_batch("-", out, Compressor(tiny_model), BatchOptions(input_format="auto",
                                                                             resume=True))
    assert summary.reused == 1 and rows[0]["compression"] == "x"


def test_a_terminal_or_null_standard_input_keeps_the_clear_error(tiny_model, monkeypatch, capsys):
    primary, secondary = os.openpty()
    try:
        for stream in (io.TextIOWrapper(os.fdopen(os.dup(secondary), "rb")), open(os.devnull)):  # noqa: SIM115
            monkeypatch.setattr(sys, "stdin", stream)
            assert not standard_input_is_redirected()
            assert main(["compress", "--model", str(tiny_model)]) == 2
            assert "give either TEXT or --input FILE" in capsys.readouterr().err
            stream.close()
    finally:
        os.close(primary)
        os.close(secondary)


def test_a_redirected_file_is_standard_input(tmp_path, monkeypatch):
    path = tmp_path / "in.txt"
    path.write_text(RAW + "\n")
    with path.open() as fh:
        monkeypatch.setattr(sys, "stdin", fh)
        assert standard_input_is_redirected()


# --- --split with a text argument and in compress_text ----------------------------------------------------

def test_split_with_a_text_argument_gives_one_row_per_sentence(tiny_model, capsys):
    """Before: --split was ignored for TEXT (two sentences in, one row out)."""
    code = main(["compress", "--model", str(tiny_model), "--split", "--json", "--deterministic", "--ratio",
                 "0.5", PARAGRAPH])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = _rows(out)
    assert [r["id"] for r in rows] == ["1", "2"]
    assert [r["text"] for r in rows] == ["The minister spoke on Monday.", "Taxes will rise next year."]
    assert [sum(r["keep"]) for r in rows] == [round(0.5 * 6), round(0.5 * 6)]  # the ratio of each sentence


def test_compress_text_splits(tiny_model):
    compressor = Compressor(tiny_model)
    parts = compressor.compress_text(PARAGRAPH, ratio=0.5, split=True)
    assert isinstance(parts, list) and len(parts) == 2
    assert [p.sentence.id for p in parts] == ["1", "2"]
    assert parts[0].sentence.tokens == ("The", "minister", "spoke", "on", "Monday", ".")
    assert parts[1].sentence.tokens[0] == "Taxes"
    for part in parts:  # the same as each sentence compressed on its own
        alone = compressor.compress_text(" ".join(part.sentence.tokens), ratio=0.5)
        assert part.compression == alone.compression and part.result.primal == pytest.approx(
            alone.result.primal, abs=1e-9)
    whole = compressor.compress_text(PARAGRAPH, ratio=0.5)
    assert whole.sentence.n == 12  # without split: one unit, as before


def test_compress_text_split_of_empty_text_is_an_input_error(tiny_model):
    from dualdecomp.core.errors import InputError

    with pytest.raises(InputError, match="empty text"):
        Compressor(tiny_model).compress_text("   ", split=True)


# --- progress bars ----------------------------------------------------------------------------------------

def test_the_batch_gives_the_bar_its_total(tiny_model, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(f"{RAW}\n\n{PARAGRAPH}\nA third line .\n")
    bar = ProgressBar(None, "compressing", disable=False, unit="line")
    run_batch(path, tmp_path / "out.jsonl", Compressor(tiny_model), BatchOptions(input_format="text",
                                                                                  batch_size=2), bar)
    assert bar.total == 3 and bar.count == 3
    bar.close()
    err = capsys.readouterr().err
    assert "3/3" in err or "/3 [" in err  # a total (percentage, ETA) was shown


def test_the_cli_bar_has_a_total_and_ends_before_the_summary(tiny_model, tmp_path, monkeypatch, capsys):
    """Before: ``compressing: 449it`` and the summary on the same line."""
    path = tmp_path / "in.txt"
    path.write_text("".join(f"Line number {k} is a short sentence .\n" for k in range(5)))
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code = main(["compress", "--model", str(tiny_model), "--input", str(path), "--output",
                 str(tmp_path / "out.jsonl"), "--batch-size", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    bar, summary = err.rsplit("dualdecomp compress:", 1)
    assert "/5 [" in bar and "%" in bar  # the total, a percentage
    assert bar.endswith("\r")  # the bar's line cleared: the summary starts a line of its own
    assert summary.startswith(" 5 lines")


def test_progress_factory_is_still_a_plain_callback():
    update = progress_factory(quiet=True)(4, "training")
    update(2)
    update(2)
    assert update.count == 4 and update.total == 4
    update.close()
    update.close()  # idempotent
