"""Batches lose nothing: journal, resume after an interruption or a kill, error policy, determinism."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dualdecomp.app.batch import BatchOptions, journal_path, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.errors import InputError


@pytest.fixture(scope="module")
def compressor(tiny_model):
    return Compressor(tiny_model)


@pytest.fixture()
def source(corpora, tmp_path):
    path = tmp_path / "in.jsonl"
    lines = (corpora / "written.dev.jsonl").read_text().splitlines()[:40]
    lines.insert(7, "{broken json")
    path.write_text("\n".join(lines) + "\n")
    return path


class Stop(Exception):
    pass


def test_interrupted_then_resumed_equals_uninterrupted(compressor, source, tmp_path) -> None:
    options = BatchOptions(deterministic=True, batch_size=8)
    full = tmp_path / "full.jsonl"
    run_batch(source, full, compressor, options)
    out = tmp_path / "out.jsonl"
    seen = []

    def progress(k):
        seen.append(k)
        if len(seen) == 19:
            raise Stop

    with pytest.raises(Stop):
        run_batch(source, out, compressor, options, progress)
    assert not out.exists()  # never a half-written output
    assert len(journal_path(out).read_text().splitlines()) == 19
    options = BatchOptions(deterministic=True, batch_size=8, resume=True)
    _, summary = run_batch(source, out, compressor, options)
    assert summary.reused == 18  # the broken line is redone (it has an error)
    assert out.read_bytes() == full.read_bytes()
    assert not journal_path(out).exists()


def test_resume_ignores_a_cut_journal_line_and_foreign_rows(compressor, source, tmp_path) -> None:
    options = BatchOptions(deterministic=True)
    full = tmp_path / "full.jsonl"
    run_batch(source, full, compressor, options)
    out = tmp_path / "out.jsonl"
    seen = []

    def progress(k):
        seen.append(k)
        if len(seen) == 6:
            raise Stop

    with pytest.raises(Stop):
        run_batch(source, out, compressor, options, progress)
    journal = journal_path(out)
    recs = [json.loads(x) for x in journal.read_text().splitlines()]
    foreign = {**recs[-1], "index": 6, "row": {**recs[-1]["row"], "compression": "WRONG"}}  # another line's
    journal.write_text("".join(json.dumps(r) + "\n" for r in [*recs, foreign]) + '{"index": 6, "ro')
    _, summary = run_batch(source, out, compressor, BatchOptions(deterministic=True, resume=True))
    assert summary.reused == 6
    assert out.read_bytes() == full.read_bytes()


def test_kill_then_resume_from_the_cli(tiny_model, corpora, tmp_path) -> None:
    src = corpora / "eval.dev.jsonl"
    out = tmp_path / "out.jsonl"
    args = [sys.executable, "-m", "dualdecomp.app.cli", "compress", "--model", str(tiny_model), "--input",
            str(src), "--output", str(out), "--deterministic", "--quiet", "--batch-size", "16"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = journal_path(out)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.exists() and journal.stat().st_size > 20000:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists()
    done_before = len(journal.read_text().splitlines())
    assert done_before > 0
    assert subprocess.run([*args, "--resume"]).returncode == 0
    resumed = out.read_bytes()
    fresh = tmp_path / "fresh.jsonl"
    args[args.index(str(out))] = str(fresh)
    assert subprocess.run(args).returncode == 0
    assert resumed == fresh.read_bytes()
    assert len(resumed.splitlines()) == len(src.read_text().splitlines())


def test_on_error_fail_stops_and_keeps_the_journal(compressor, source, tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(InputError, match="line 8"):
        run_batch(source, out, compressor, BatchOptions(on_error="fail"))
    assert not out.exists()
    assert len(journal_path(out).read_text().splitlines()) == 7


def test_skip_counts_failures_and_exit_code(tiny_model, source, tmp_path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    assert main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(out)]) == 2
    assert "1 of 41 lines failed" in capsys.readouterr().err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 41 and "invalid JSON" in rows[7]["error"]


def test_deterministic_output_is_byte_identical(tiny_model, source, tmp_path) -> None:
    outs = []
    for k in range(2):
        out = tmp_path / f"o{k}.jsonl"
        main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(out),
              "--deterministic", "--length", "ratio:0.6", "--quiet"])
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert b'"seconds"' not in outs[0]


def test_ctrl_c_says_what_is_kept_and_how_to_resume(tiny_model, source, tmp_path, monkeypatch,
                                                    capsys) -> None:
    """A Ctrl-C in a batch with a journal: exit 130, one line naming the rows kept and --resume; the
    count is the journal's. Without a journal (output to stdout) the line is the plain one."""
    from dualdecomp.app import batch

    real = batch.process_chunk
    calls = []

    def interrupted_second_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "process_chunk", interrupted_second_chunk)
    out = tmp_path / "out.jsonl"
    code = main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(out),
                 "--batch-size", "8", "--quiet"])
    assert code == 130
    err = capsys.readouterr().err.strip()
    kept = len(journal_path(out).read_text().splitlines())
    assert kept == 8
    assert err == (f"dualdecomp: interrupted: the {kept} lines done are kept in {journal_path(out)}; run the "
                   "same command with --resume to go on from there")
    calls.clear()
    code = main(["compress", "--model", str(tiny_model), "--input", str(source), "--batch-size", "8",
                 "--quiet"])
    assert code == 130
    assert capsys.readouterr().err.strip().endswith("dualdecomp: interrupted")
