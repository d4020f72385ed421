"""W2.5 part A: batches lose nothing, overwrite nothing and exit only with 0, 2, 3, 4 or 130.

Fixtures in tests/nasty/. Each test fails on the code before W2.5 (resume without hashes, str.splitlines,
no path checks, no lock, exit code 1 on odd lines).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import pytest

import dualdecomp.app.journal as journal_module
from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.journal import Journal, journal_path
from dualdecomp.app.length_request import LengthSpec
from dualdecomp.core.errors import InputError, SolverError

NASTY = Path(__file__).parent / "nasty"


@pytest.fixture(scope="module")
def compressor(tiny_model):
    return Compressor(tiny_model)


@pytest.fixture()
def source(corpora, tmp_path):
    path = tmp_path / "in.jsonl"
    lines = (corpora / "written.dev.jsonl").read_text().splitlines()[:12]
    path.write_text("\n".join(lines) + "\n")
    return path


class Stop(Exception):
    pass


def _interrupted(source, out, compressor, options, after: int) -> None:
    seen = []

    def progress(k):
        seen.append(k)
        if len(seen) == after:
            raise Stop

    with pytest.raises(Stop):
        run_batch(source, out, compressor, options, progress)
    assert len(journal_path(out).read_text().splitlines()) == after


# --- 1. resume reuses only rows computed from the same line, options and model -------------------------

def test_output_is_input_is_refused_and_input_kept(tiny_model, source, capsys) -> None:
    before = source.read_bytes()
    for extra in ([], ["--resume"]):
        code = main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(source),
                     "--quiet", *extra])
        assert code == 2
        assert "is the input file" in capsys.readouterr().err
        assert source.read_bytes() == before
    link = source.with_name("hard.jsonl")
    os.link(source, link)
    assert main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(link)]) == 2
    assert source.read_bytes() == before


def test_resume_with_another_ratio_recomputes_every_row(compressor, source, tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    _interrupted(source, out, compressor, BatchOptions(deterministic=True, batch_size=4), after=7)
    ratio = BatchOptions(deterministic=True, batch_size=4, spec=LengthSpec("ratio", 0.3))
    fresh = tmp_path / "fresh.jsonl"
    run_batch(source, fresh, compressor, ratio)
    _, summary = run_batch(source, out, compressor, BatchOptions(**{**ratio.__dict__, "resume": True}))
    assert summary.reused == 0
    assert out.read_bytes() == fresh.read_bytes()


def test_resume_recomputes_an_edited_line_only(compressor, source, tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    options = BatchOptions(deterministic=True, batch_size=4)
    _interrupted(source, out, compressor, options, after=6)
    lines = source.read_text().splitlines()
    row = json.loads(lines[2])
    row["text"] = "Completely different words were typed here ."
    row.pop("compressions", None)
    lines[2] = json.dumps(row)
    source.write_text("\n".join(lines) + "\n")
    fresh = tmp_path / "fresh.jsonl"
    run_batch(source, fresh, compressor, options)
    resume = BatchOptions(deterministic=True, batch_size=4, resume=True)
    _, summary = run_batch(source, out, compressor, resume)
    assert summary.reused == 5
    assert out.read_bytes() == fresh.read_bytes()
    assert json.loads(out.read_text().splitlines()[2])["text"] == row["text"]


def test_resume_with_another_model_recomputes(tiny_model, compressor, source, tmp_path) -> None:
    import shutil

    out = tmp_path / "out.jsonl"
    _interrupted(source, out, compressor, BatchOptions(deterministic=True), after=5)
    other = tmp_path / "model"
    shutil.copytree(tiny_model, other)
    (other / "extra.txt").write_text("a changed model directory")
    _, summary = run_batch(source, out, Compressor(other), BatchOptions(deterministic=True, resume=True))
    assert summary.reused == 0


# --- 2. paths: journal as input, symlinks, devices, locks, stale temporaries ------------------------------

def test_input_named_like_the_journal_is_refused_and_kept(tiny_model, source, tmp_path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    journal = journal_path(out)
    journal.write_bytes(source.read_bytes())
    assert main(["compress", "--model", str(tiny_model), "--input", str(journal), "--output", str(out)]) == 2
    assert "journal" in capsys.readouterr().err
    assert journal.read_bytes() == source.read_bytes() and not out.exists()


def test_symlinked_output_stays_a_symlink(compressor, source, tmp_path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    run_batch(source, link, compressor, BatchOptions())
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(real.read_text().splitlines()) == 12


def test_device_output_is_written_directly(compressor, source, tmp_path, monkeypatch) -> None:
    def no_rename(*args):  # a device must never be replaced: fail before any rename could reach it
        raise AssertionError(f"os.replace{args} called for a device output")

    monkeypatch.setattr(os, "replace", no_rename)
    before = os.stat("/dev/null")
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    for out in (link, Path("/dev/null")):
        rows, _ = run_batch(source, out, compressor, BatchOptions())
        assert len(rows) == 12
        after = os.stat("/dev/null")
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert link.is_symlink() and not journal_path(link).exists()
    with pytest.raises(InputError, match="regular file"):
        run_batch(source, link, compressor, BatchOptions(resume=True))


def test_fifo_output_streams_rows(compressor, source, tmp_path) -> None:
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    run_batch(source, fifo, compressor, BatchOptions(deterministic=True))
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(got[0].splitlines()) == 12


def test_symlinked_journal_is_not_followed(compressor, source, tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.jsonl"
    journal_path(out).symlink_to(victim)
    for resume in (False, True):
        with pytest.raises(InputError, match="symbolic link"):
            run_batch(source, out, compressor, BatchOptions(resume=resume))
    assert victim.read_text() == "precious\n" and not out.exists()


def test_second_run_on_a_locked_output_stops(compressor, source, tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    with Journal(journal_path(out), resume=False) as held:
        held.append(0, "x", "y", {"id": "mine"})
        with pytest.raises(InputError, match="another run"):
            run_batch(source, out, compressor, BatchOptions(resume=True))
        with pytest.raises(InputError, match="another run"):
            run_batch(source, out, compressor, BatchOptions())
        assert b"mine" in journal_path(out).read_bytes()  # not truncated by the refused run
    run_batch(source, out, compressor, BatchOptions())
    assert len(out.read_text().splitlines()) == 12


def test_stale_temporaries_of_the_output_are_removed(compressor, source, tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    stale = tmp_path / ".out.jsonl.ab12_xyz.tmp"
    stale.write_text("left by a kill in the rename window")
    other = tmp_path / ".other.jsonl.ab12_xyz.tmp"
    other.write_text("not ours")
    run_batch(source, out, compressor, BatchOptions())
    assert not stale.exists() and other.exists()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".other.jsonl.ab12_xyz.tmp", "in.jsonl", "out.jsonl"]


# --- 3. lines -----------------------------------------------------------------------------------------------

def test_unicode_line_separators_stay_in_their_line(compressor, tmp_path) -> None:
    rows, summary = run_batch(NASTY / "separators.jsonl", tmp_path / "o.jsonl", compressor, BatchOptions())
    assert [r["id"] for r in rows] == ["ls", "ps", "nel", "plain"]
    assert summary.failed == 0


def test_bom_on_line_one_is_accepted(compressor, tmp_path) -> None:
    rows, summary = run_batch(NASTY / "bom.jsonl", tmp_path / "o.jsonl", compressor, BatchOptions())
    assert [r["id"] for r in rows] == ["first", "second"] and summary.failed == 0


def test_bad_lines_become_error_rows_exit_2(tiny_model, tmp_path, capsys) -> None:
    out = tmp_path / "o.jsonl"
    code = main(["compress", "--model", str(tiny_model), "--input", str(NASTY / "bad_lines.jsonl"),
                 "--output", str(out), "--quiet"])
    assert code == 2, capsys.readouterr().err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]  # valid UTF-8 throughout
    assert len(rows) == 8
    assert ["error" in r for r in rows] == [False, True, True, True, False, True, True, False]
    assert rows[1]["id"] == "lone\\ud800"
    assert "4300" in rows[2]["error"] and rows[3]["id"] == "4"
    assert "UTF-8" in rows[6]["error"]


def test_control_characters_in_ids_never_reach_the_terminal(tiny_model, capsys) -> None:
    main(["compress", "--model", str(tiny_model), "--input", str(NASTY / "bad_lines.jsonl")])
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "[bell\\x07esc\\x1b[31mred]" in out


def test_full_disk_while_journalling_exits_2_then_resume_works(compressor, source, tmp_path, monkeypatch,
                                                               tiny_model, capsys) -> None:
    out = tmp_path / "out.jsonl"
    full = tmp_path / "full.jsonl"
    run_batch(source, full, compressor, BatchOptions(deterministic=True))
    real_write, calls = os.write, []

    def write(fd, data):
        calls.append(1)
        if len(calls) == 5:  # half of the fifth record gets written, then the disk is full
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(journal_module, "_write", write)
    code = main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(out),
                 "--deterministic", "--quiet"])
    assert code == 2
    assert "No space left on device" in capsys.readouterr().err
    assert not out.exists()
    monkeypatch.setattr(journal_module, "_write", real_write)
    _, summary = run_batch(source, out, compressor, BatchOptions(deterministic=True, resume=True))
    assert summary.reused == 4
    assert out.read_bytes() == full.read_bytes()


# --- 4. exit codes ------------------------------------------------------------------------------------------

def test_ctrl_c_while_importing_the_commands_is_130(monkeypatch, capsys) -> None:
    import dualdecomp.app.cli as cli

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["compress", "x"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_no_bound_prints_plus_inf() -> None:
    from dualdecomp.app.commands.compress import _human

    row = {"id": "x", "compression": "a", "keep": [1], "primal": None, "dual": None, "gap": None,
           "certified": False}
    assert "primal=-inf dual=+inf gap=+inf" in _human(row)


def test_solver_failure_is_exit_4_in_text_and_batch_mode(tiny_model, source, tmp_path, monkeypatch,
                                                          capsys) -> None:
    def fail(self, *args, **kwargs):
        raise SolverError("no feasible compression (injected)")

    monkeypatch.setattr(Compressor, "compress_lengths", fail)
    base = ["compress", "--model", str(tiny_model)]
    assert main([*base, "Some text to compress ."]) == 4
    assert main([*base, "--input", str(source), "--output", str(tmp_path / "o.jsonl"), "--quiet"]) == 4
    assert main([*base, "--input", str(source), "--output", str(tmp_path / "p.jsonl"), "--quiet",
                 "--on-error", "fail"]) == 4
    assert "Traceback" not in capsys.readouterr().err


def test_internal_error_is_not_exit_1(tiny_model, monkeypatch, capsys) -> None:
    def bug(self, *args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(Compressor, "compress_lengths", bug)
    assert main(["compress", "--model", str(tiny_model), "Some text ."]) == 4
    assert "internal error" in capsys.readouterr().err


def test_compress_text_of_bytes_is_an_input_error(compressor) -> None:
    with pytest.raises(InputError, match="str"):
        compressor.compress_text(b"Some bytes .")


# --- W2.6 CLI conventions ---------------------------------------------------------------------------------

def test_version(capsys) -> None:
    from importlib import metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dualdecomp {metadata.version('dualdecomp')}"


def test_dash_reads_stdin_and_writes_stdout(tiny_model, source, monkeypatch, capsys) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(source.read_bytes())))
    code = main(["compress", "--model", str(tiny_model), "--input", "-", "--output", "-", "--deterministic"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(x) for x in out.splitlines()]  # stdout holds the JSON lines only
    assert [r["id"] for r in rows] == [json.loads(x)["id"] for x in source.read_text().splitlines()]
    assert "written to standard output" in err
    assert main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", "-",
                 "--resume"]) == 2
