"""W3.1 items 1-5 and the batch part of item 9: the batch path of ``dualdecomp compress``.

1. standard input redirected from the output (or its journal) is refused;
2. an output or journal that is the length file, or a file of (or inside) the model directory, is refused;
3. a journal with several hard links is refused before anything is truncated;
4. every option that can change a row is in the journal's fingerprint (one case per member);
5. a line over ``--max-line-bytes`` is an error row, read without being kept; devices that never end
   are refused; 50 MB lines under a 2 GB address space (JSONL and text): two rows, one error row, exit 2;
9. with ``--time-limit`` a line's parse counts against its own deadline.

Run against the code before W3.1 (the worktree at 803d7a0), every test here failed except the
fingerprint cases whose member was already hashed (ratio, chars, time limit, deterministic, trace, input
format, split, config) and two of the cases of options left out of it on purpose (--format,
--batch-size), which document the list: they passed there and pass here (the third, the length file's
name, failed there: LengthSpec had no path).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.journal import journal_path
from dualdecomp.app.length_request import LengthSpec
from dualdecomp.core.errors import InputError
from tests.conftest import CORPORA
from tests.test_batch_safety import _interrupted
from tests.test_memory_ceiling import LIMIT, SCRIPT
from tests.test_w25_cli_regressions import CLI, TIMEOUT, _env

resource = pytest.importorskip("resource")

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def compressor(tiny_model):
    return Compressor(tiny_model)


@pytest.fixture()
def source(tmp_path):
    path = tmp_path / "in.jsonl"
    lines = (CORPORA / "written.dev.jsonl").read_text(encoding="utf-8").splitlines()[:8]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- 1. standard input redirected from the output -----------------------------------------------------------

def test_stdin_redirected_from_the_output_is_refused_and_kept(source, tmp_path) -> None:
    """``dualdecomp compress --input - --output in.jsonl < in.jsonl`` (before: exit 0, in.jsonl replaced)
    and ``< out.jsonl.partial --output out.jsonl`` (before: the journal truncated under the reader)."""
    before = source.read_bytes()
    journal = tmp_path / "out.jsonl.partial"
    journal.write_bytes(before)
    for stdin, output, needle in ((source, source, "standard input"),
                                  (journal, tmp_path / "out.jsonl", "journal")):
        with stdin.open("rb") as fh:
            proc = subprocess.run([*CLI, "compress", "--input", "-", "--output", str(output), "--quiet"],
                                  stdin=fh, capture_output=True, text=True, env=_env(), cwd=tmp_path,
                                  timeout=TIMEOUT)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert needle in proc.stderr and "Traceback" not in proc.stderr
        assert stdin.read_bytes() == before
    assert not (tmp_path / "out.jsonl").exists()


# --- 2. the length file, the model directory ----------------------------------------------------------------

def test_length_file_as_output_or_journal_is_refused_and_kept(tiny_model, source, tmp_path, capsys) -> None:
    """``--length-file len.txt --output len.txt`` (before: exit 0, len.txt overwritten), also as
    ``--length file:``, through a hard link, and as the output's journal (which a run truncates)."""
    lengths = tmp_path / "len.txt"
    lengths.write_text("5\n" * 8)
    before = lengths.read_bytes()
    hard = tmp_path / "hard.txt"
    os.link(lengths, hard)
    journal = tmp_path / "out.jsonl.partial"
    journal.write_bytes(before)
    base = ["compress", "--model", str(tiny_model), "--input", str(source), "--quiet"]
    for length, output in ((["--length-file", str(lengths)], lengths),
                           (["--length", f"file:{lengths}"], lengths),
                           (["--length-file", str(lengths)], hard),
                           (["--length-file", str(journal)], tmp_path / "out.jsonl")):
        assert main([*base, *length, "--output", str(output)]) == 2
        assert "length file" in capsys.readouterr().err
    assert lengths.read_bytes() == before and journal.read_bytes() == before
    assert not (tmp_path / "out.jsonl").exists()


def test_output_in_the_model_directory_is_refused_and_the_model_kept(tiny_model, source, tmp_path,
                                                                     capsys) -> None:
    """``--output MODEL/model.json`` (before: exit 0, the model replaced by rows), a symlink to a model file,
    a new file inside the model directory (the run hashes every file there) and the default model's
    directory when no --model is given."""
    from dualdecomp.data.locations import default_model_dir

    model = tmp_path / "model"
    shutil.copytree(tiny_model, model)
    before = {p.name: p.read_bytes() for p in model.iterdir() if p.is_file()}
    link = tmp_path / "link.jsonl"
    link.symlink_to(model / "model.json")
    base = ["compress", "--model", str(model), "--input", str(source), "--quiet", "--output"]
    for output in (model / "model.json", link, model / "new.jsonl"):
        assert main([*base, str(output)]) == 2
        assert "model directory" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in model.iterdir() if p.is_file()} == before
    inside_default = default_model_dir() / "never-written.jsonl"
    try:
        assert main(["compress", "--input", str(source), "--quiet", "--output", str(inside_default)]) == 2
        assert "model directory" in capsys.readouterr().err and not inside_default.exists()
    finally:
        inside_default.unlink(missing_ok=True)


# --- 3. a hard-linked journal -------------------------------------------------------------------------------

def test_hard_linked_journal_is_refused_before_truncating(compressor, source, tmp_path, capsys,
                                                          tiny_model) -> None:
    """``ln victim OUT.partial`` then a fresh run (before: victim truncated and filled with records)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.jsonl"
    os.link(victim, journal_path(out))
    for resume in (False, True):
        with pytest.raises(InputError, match="hard link"):
            run_batch(source, out, compressor, BatchOptions(resume=resume))
    assert main(["compress", "--model", str(tiny_model), "--input", str(source), "--output", str(out)]) == 2
    assert "remove it" in capsys.readouterr().err
    assert victim.read_text() == "precious\n" and not out.exists()
    journal_path(out).unlink()  # what the message says: the victim keeps its content
    _, summary = run_batch(source, out, compressor, BatchOptions())
    assert summary.lines == 8 and victim.read_text() == "precious\n"


# --- 4. the fingerprint holds every option that can change a row --------------------------------------------

def _joint_model(tiny_model: Path, root: Path) -> Path:
    """A joint configuration over the tiny bigram model, with a second configuration ``double``."""
    d = root / "joint"
    shutil.copytree(tiny_model, d / "bigram")
    spec = {"format": "dualdecomp-config", "version": 1,
            "components": [{"kind": "bigram", "path": "bigram", "weight": 1.0}]}
    (d / "config.json").write_text(json.dumps(spec))
    (d / "configs").mkdir()
    spec["components"][0]["weight"] = 2.0
    (d / "configs" / "double.json").write_text(json.dumps(spec))
    return d


def _text_source(tmp_path: Path) -> Path:
    """Plain sentences as JSONL lines without ids (ids: line numbers, as read as text)."""
    path = tmp_path / "plain.jsonl"
    words = [json.loads(x)["text"] for x in (CORPORA / "written.dev.jsonl").read_text().splitlines()[:8]]
    path.write_text("".join(json.dumps({"text": w}) + "\n" for w in words))
    return path


D = {"deterministic": True, "batch_size": 3}
# name: (options A, options B, what changes in compressor B: max_tokens, config, versions), input
MEMBERS = {
    "ratio": (D, {"deterministic": True, "spec": LengthSpec("ratio", 0.5)}, {}, "dev"),
    "chars": (D, {"deterministic": True, "chars": 40}, {}, "dev"),
    "time_limit": (D, {"deterministic": True, "time_limit": 600.0}, {}, "dev"),
    "deterministic": (D, {"deterministic": False}, {}, "dev"),
    "trace": (D, {"deterministic": True, "trace": True}, {}, "dev"),
    "input_format": (D, {"deterministic": True, "input_format": "text"}, {}, "plain"),
    "split": ({"deterministic": True, "input_format": "text"},
              {"deterministic": True, "input_format": "text", "split": True}, {}, "plain"),
    "max_tokens": (D, D, {"max_tokens": 8}, "dev"),
    "max_line_bytes": (D, {"deterministic": True, "max_line_bytes": 400}, {}, "dev"),
    "config": (D, D, {"config": "double"}, "joint"),
    "versions": (D, D, {"versions": True}, "dev"),
}


@pytest.mark.parametrize("member", sorted(MEMBERS))
def test_resume_under_another_value_of_a_row_option_recomputes(member, tiny_model, source, tmp_path,
                                                               monkeypatch) -> None:
    """Journal some rows under one value, resume under another: nothing is reused and the output is a
    fresh run's (before W3.1: ``max_tokens``, ``max_line_bytes`` and ``versions`` failed; ``--max-tokens``
    rows were reused)."""
    import dualdecomp.app.batch as batch

    a, b, change, kind = MEMBERS[member]
    opt_a, opt_b = BatchOptions(**a), BatchOptions(**b)
    inp = _text_source(tmp_path) if kind == "plain" else source
    model = _joint_model(tiny_model, tmp_path) if kind == "joint" else tiny_model
    comp_a = Compressor(model)
    comp_b = Compressor(model, change.get("config"), max_tokens=change.get("max_tokens", comp_a.max_tokens))
    out, fresh = tmp_path / "out.jsonl", tmp_path / "fresh.jsonl"
    _interrupted(inp, out, comp_a, opt_a, after=5)
    if change.get("versions"):  # another spaCy pipeline or dualdecomp version
        real = batch._versions()
        monkeypatch.setattr(batch, "_versions", lambda: {**real, "pipeline": "en_core_web_sm 9.9.9"})
    run_batch(inp, fresh, comp_b, opt_b)
    _, summary = run_batch(inp, out, comp_b, BatchOptions(**{**opt_b.__dict__, "resume": True}))
    assert summary.reused == 0
    if opt_b.deterministic:
        assert out.read_bytes() == fresh.read_bytes()
    else:
        assert all("seconds" in r for r in _rows(out) if "error" not in r)


@pytest.mark.parametrize("change", ["output_format", "batch_size", "length_file_name"])
def test_options_left_out_of_the_fingerprint_do_not_change_a_row(change, compressor, source,
                                                                 tmp_path) -> None:
    """``--format``, ``--batch-size`` and the length file's name (its lengths are in) are not in the
    fingerprint (BatchOptions.row_options says why): resuming under another value reuses the rows and
    gives a fresh run's bytes."""
    out, fresh = tmp_path / "out.jsonl", tmp_path / "fresh.jsonl"
    lengths = (4,) * 8
    named = change == "length_file_name"
    first = {"spec": LengthSpec("file", lengths=lengths, path="a.txt")} if named else {}
    _interrupted(source, out, compressor, BatchOptions(**D, **first), after=5)
    other = {"output_format": {"output_format": "text"}, "batch_size": {"batch_size": 1}}.get(change) \
        or {"spec": LengthSpec("file", lengths=lengths, path="b.txt")}
    opt_b = BatchOptions(**{**D, **other})
    run_batch(source, fresh, compressor, opt_b)
    _, summary = run_batch(source, out, compressor, BatchOptions(**{**opt_b.__dict__, "resume": True}))
    assert summary.reused == 5
    assert out.read_bytes() == fresh.read_bytes()


# --- 5. one line never ends a batch; nothing reads without a bound ------------------------------------------

def test_an_over_long_line_is_read_without_being_kept(tmp_path) -> None:
    """A 20 MB line between two good ones: its error row, the others read, and the reader's peak memory
    is far under the line (before: the whole file was read at once)."""
    from dualdecomp.app.batch import read_lines

    path = tmp_path / "long.jsonl"
    good = (CORPORA / "written.dev.jsonl").read_text().splitlines()[:2]
    with path.open("w") as fh:
        fh.write(good[0] + "\n")
        fh.write('{"id": "huge", "text": "' + "word " * 4_000_000 + '"}\r\n')
        fh.write(good[1])  # no final newline
    tracemalloc.start()
    try:
        lines = read_lines(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, peak
    (first, _), (middle, digest), (last, _) = lines
    assert first.id == json.loads(good[0])["id"] and last.id == json.loads(good[1])["id"]
    size = len('{"id": "huge", "text": "') + 20_000_000 + len('"}')
    assert middle["id"] == "2" and "--max-line-bytes" in middle["error"]
    assert f"{size} bytes" in middle["error"]
    assert digest == hashlib.sha256(b'{"id": "huge", "text": "' + b"word " * 4_000_000 + b'"}\r').hexdigest()


def test_bounded_reader_lines_and_a_line_that_never_ends() -> None:
    from dualdecomp.data.line_reader import read_bounded_lines

    data = b"\xef\xbb\xbfab\r\n\ncdefgh\nij\r"
    lines = list(read_bounded_lines(io.BytesIO(data), 4))
    assert [(x.number, x.data, x.size) for x in lines] == [(1, b"ab", 2), (2, b"", 0), (3, None, 6),
                                                           (4, b"ij", 2)]
    assert lines[2].sha256 == hashlib.sha256(b"cdefgh").hexdigest()

    class Zeros(io.RawIOBase):  # a pipe of zeros: one line that never ends
        def readable(self) -> bool:
            return True

        def readinto(self, buf) -> int:
            buf[:] = bytes(len(buf))
            return len(buf)

    with pytest.raises(InputError, match="without a line break"):
        list(read_bounded_lines(Zeros(), 100, max_skipped=1 << 20))


def test_text_input_line_over_the_cap_is_its_error_row(compressor, tmp_path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("The minister said on Monday that the rules would apply .\n" + "word " * 300 + "\n"
                    "He said the leak was a betrayal .\n")
    rows, summary = run_batch(path, tmp_path / "out.jsonl", compressor,
                              BatchOptions(input_format="text", max_line_bytes=1000))
    assert ["error" in r for r in rows] == [False, True, False] and summary.exit_code == 2
    assert "--max-line-bytes 1000" in rows[1]["error"]


def test_every_shipped_corpus_line_fits_the_default_cap() -> None:
    """Every line of data/corpora and ../shared/data fits the cap computed from its own token count
    (so from any --max-tokens that accepts it)."""
    from dualdecomp.app.batch import default_max_line_bytes

    files = sorted(CORPORA.glob("*.jsonl")) + sorted(SHARED_DATA.glob("*/*.jsonl"))
    assert files
    for path in files:
        with path.open("rb") as fh:
            for raw in fh:
                n = len(json.loads(raw)["text"].split())
                assert len(raw.rstrip(b"\n")) <= default_max_line_bytes(n), (path, n)


def test_detect_input_format_does_not_read_a_fifo(tmp_path) -> None:
    """Sniffing the format never takes a pipe's first bytes (before: its first line was read and lost)."""
    from dualdecomp.app.batch import detect_input_format

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader and a writer: nothing blocks
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, b"plain words\n")
        assert detect_input_format(fifo) is None  # a pipe: its first line decides as it is read (W3.4)
        assert os.read(reader, 100) == b"plain words\n"
    finally:
        os.close(writer)
        os.close(reader)


def _big_inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A 50 MB line between two good ones, as JSONL and as text, and a 2-line JSONL file."""
    good = ["The minister said on Monday that the new rules would apply to every company .",
            "He said the leak was a betrayal of trust ."]
    filler = "the minister said that the new rules would apply " * 1_000_000  # 50 MB
    jsonl, text, small = tmp_path / "big.jsonl", tmp_path / "big.txt", tmp_path / "small.jsonl"
    with jsonl.open("w") as fh:
        fh.write(json.dumps({"id": "a", "text": good[0]}) + "\n")
        fh.write(json.dumps({"id": "huge", "text": filler}) + "\n")
        fh.write(json.dumps({"id": "c", "text": good[1]}) + "\n")
    with text.open("w") as fh:
        fh.write(good[0] + "\n" + filler + "\n" + good[1] + "\n")
    small.write_text("".join(json.dumps({"id": k, "text": t}) + "\n"
                             for k, t in zip("ab", good, strict=True)))
    return jsonl, text, small


def test_fifty_megabyte_lines_and_endless_devices_under_two_gigabytes(tmp_path) -> None:
    """Under RLIMIT_AS = 2 GB, with the default model: a 50 MB line between two good ones, JSONL and text
    (before: exit 4, out of memory, no rows) gives two compressed rows, one error row and exit 2;
    ``--input /dev/zero`` and ``--length file:/dev/zero`` / ``--length-file /dev/zero`` (before: read
    until out of memory, exit 4) are refused with exit 2 before anything is read."""
    jsonl, text, small = _big_inputs(tmp_path)
    cases = [("jsonl", ["compress", "--input", str(jsonl), "--output", "out_jsonl.jsonl", "--quiet",
                        "--deterministic"]),
             ("text", ["compress", "--input", str(text), "--output", "out_text.jsonl", "--quiet",
                       "--deterministic"]),
             ("zero", ["compress", "--input", "/dev/zero", "--output", "zero.jsonl", "--quiet"]),
             ("length", ["compress", "--input", str(small), "--length", "file:/dev/zero", "--quiet"]),
             ("length_file", ["compress", "--input", str(small), "--length-file", "/dev/zero", "--quiet"])]
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(limit=LIMIT), json.dumps(cases)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {r["case"]: r for r in map(json.loads, proc.stdout.splitlines())}
    for case, ids in (("jsonl", ["a", "huge", "c"]), ("text", ["1", "2", "3"])):
        assert got[case]["code"] == 2, got[case]
        rows = _rows(tmp_path / f"out_{case}.jsonl")
        assert ["error" in r for r in rows] == [False, True, False], rows
        assert [r["id"] for r in rows] == [ids[0], "2", ids[2]]
        assert "--max-line-bytes" in rows[1]["error"] and rows[0]["certified"] and rows[2]["certified"]
    for case in ("zero", "length", "length_file"):
        assert got[case]["code"] == 2, got[case]
        assert "/dev/zero is a device" in got[case]["err"], got[case]
    assert not (tmp_path / "zero.jsonl").exists()


# --- 9. the parse counts against each line's time limit -----------------------------------------------------

def test_a_slow_parse_uses_up_its_own_lines_time_limit(compressor, source, monkeypatch) -> None:
    """A (fake) parse that takes 60 s of a fake clock for one line, under --time-limit 5: that line gets the
    time-limit error (exit 4), as a text argument would; the lines parsed in its chunk do not pay for it
    (before: the chunk was parsed before any deadline started, so the line was compressed)."""
    import dualdecomp.app.batch as batch
    import dualdecomp.core.deadline as deadline_module

    clock = [1000.0]
    monkeypatch.setattr(deadline_module, "monotonic", lambda: clock[0])
    slow = json.loads(source.read_text().splitlines()[2])["id"]
    real = batch.parse_tokens

    def parse(token_lists, ids=None, **kwargs):
        if ids is not None and slow in ids:
            clock[0] += 60.0
        return real(token_lists, ids=ids, **kwargs)

    monkeypatch.setattr(batch, "parse_tokens", parse)
    rows, summary = run_batch(source, None, compressor, BatchOptions(time_limit=5.0, batch_size=4))
    assert [r["id"] == slow for r in rows] == ["error" in r for r in rows]
    assert "ran out while parsing" in rows[2]["error"] and summary.exit_code == 4
