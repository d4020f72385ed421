"""Four cases of issue W2.5 driven through the command line alone, in subprocesses (no internal API).

Written so that they run on any version: on the pre-W2.5 main (2ce63e5) each fails by its behaviour (a
second run on one output exits 0, a full disk exits 1, an `.npz` declaring gigabytes runs out of memory,
the time limit does not stop the LM potentials); now each gives the README's exit code with one clear line
on stderr, no traceback and no data lost.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import CORPORA
from tests.test_memory_ceiling import DEFAULT, LIMIT
from tests.test_time_limit_cli import _long_text

resource = pytest.importorskip("resource")

_ENTRY = Path(sys.executable).with_name("dualdecomp")
CLI = [str(_ENTRY)] if _ENTRY.is_file() else \
    [sys.executable, "-c", "import sys; from dualdecomp.app.cli import main; sys.exit(main())"]
TIMEOUT = 300  # a safety net against a hung run, never an assertion on speed


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DUALDECOMP_DEBUG"}  # the traceback stays hidden
    return env


def _start(*args: str, preexec=None, cwd: Path) -> subprocess.Popen:
    """Start ``dualdecomp ARGS`` (stdout and stderr captured as text)."""
    return subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), cwd=cwd, preexec_fn=preexec)


def _run(*args: str, preexec=None, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``dualdecomp ARGS`` to the end."""
    proc = _start(*args, preexec=preexec, cwd=cwd)
    out, err = proc.communicate(timeout=TIMEOUT)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _one_line_error(proc: subprocess.CompletedProcess, code: int, needle: str) -> str:
    """Assert exit ``code`` with exactly one line on stderr that contains ``needle``; that line."""
    err = proc.stderr
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == code, (proc.returncode, err[-3000:])
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err[-3000:]
    return lines[0]


def _dev_input(path: Path, n: int) -> Path:
    """The first ``n`` lines of the written dev corpus, as a JSONL input."""
    with (CORPORA / "written.dev.jsonl").open(encoding="utf-8") as fh:
        path.write_text("".join(next(fh) for _ in range(n)), encoding="utf-8")
    return path


def test_a_second_run_on_the_same_output_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    """W2.5 "two concurrent runs on one output mix their journals: take a lock".

    Run A is stopped (SIGSTOP) as soon as its journal ``OUT.partial`` holds a first row (the lock, where
    there is one, is taken before any row), so it surely holds the output while run B starts on the same
    output: B must stop with exit 2 and "another run is writing this output", leaving A's journal as it
    was; A, continued, writes the same bytes as a clean run on its own. (Before W2.5, B truncated A's
    journal, wrote the output and exited 0.)
    """
    inp = _dev_input(tmp_path / "in.jsonl", 12)
    out, clean = tmp_path / "out.jsonl", tmp_path / "clean.jsonl"
    journal = tmp_path / "out.jsonl.partial"
    args = ("compress", "--input", str(inp), "--deterministic", "--quiet", "--output")
    c = _start(*args, str(clean), cwd=tmp_path)
    a = _start(*args, str(out), cwd=tmp_path)
    try:
        # no time assumed: poll until A has journalled a row (or ended), then freeze it there
        while a.poll() is None and not (journal.exists() and b"\n" in journal.read_bytes()):
            time.sleep(0.002)
        if a.returncode is None:  # not reaped: the pid is still A's
            os.kill(a.pid, signal.SIGSTOP)
        assert a.returncode is None, "run A ended before a journal row was seen: " + a.stderr.read()[-3000:]
        journal_before_b = journal.read_bytes()
        b = _run(*args, str(out), cwd=tmp_path)
        journal_after_b = journal.read_bytes() if journal.exists() else None
        out_after_b = out.exists()
    finally:
        if a.returncode is None:
            os.kill(a.pid, signal.SIGCONT)
        a_out, a_err = a.communicate(timeout=TIMEOUT)
        c_out, c_err = c.communicate(timeout=TIMEOUT)
    _one_line_error(b, 2, "another run is writing this output")
    assert journal_after_b == journal_before_b and not out_after_b  # B touched neither A's journal nor OUT
    assert a.returncode == 0 and "Traceback" not in a_err, a_err[-3000:]
    assert c.returncode == 0, c_err[-3000:]
    assert out.read_bytes() == clean.read_bytes()
    assert len(out.read_text(encoding="utf-8").splitlines()) == 12
    assert not journal.exists()


def _file_size_limit(limit: int):
    """A ``preexec_fn``: files of the child may not grow past ``limit`` bytes; a write beyond fails with
    EFBIG (SIGXFSZ ignored) — a disk that is full for that run."""
    def setup() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


def test_a_full_disk_while_journalling_keeps_the_rows_done_and_resume_completes(tmp_path: Path) -> None:
    """W2.5 "a full disk while writing the journal: exit 1, no output, and --resume repeats the failure".

    The run's files may not grow past half the size of the finished output (``RLIMIT_FSIZE``), so the
    journal's write fails with EFBIG after a few rows: the run must stop with exit 2 and one line naming
    the journal, keep the rows already journalled, and a rerun with ``--resume`` (no limit) must reuse
    them and write the same bytes as a clean run. (Before W2.5: exit 1, an internal error.)
    """
    inp = _dev_input(tmp_path / "in.jsonl", 12)
    out, clean = tmp_path / "out.jsonl", tmp_path / "clean.jsonl"
    journal = tmp_path / "out.jsonl.partial"
    args = ("compress", "--input", str(inp), "--deterministic", "--output")
    first = _run(*args, str(clean), "--quiet", cwd=tmp_path)  # also fills any cache before the limit
    assert first.returncode == 0, first.stderr[-3000:]
    limit = clean.stat().st_size // 2

    full = _run(*args, str(out), "--quiet", preexec=_file_size_limit(limit), cwd=tmp_path)
    _one_line_error(full, 2, "cannot write the journal")
    assert not out.exists()
    kept = journal.read_bytes()
    assert 0 < kept.count(b"\n") < 12, kept[:300]  # some rows were journalled before the disk was full

    resumed = _run(*args, str(out), "--resume", cwd=tmp_path)
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr[-3000:]
    reused = re.search(r"(\d+) reused from the earlier run", resumed.stderr)
    assert reused and int(reused.group(1)) >= 1, resumed.stderr[-3000:]
    assert out.read_bytes() == clean.read_bytes()
    assert not journal.exists()


def _npz_declaring(path: Path, nbytes: int) -> None:
    """A small ``.npz`` whose ``indices.npy`` member declares ``nbytes`` (in the zip's local and central
    headers, and an int64 shape of that size in the array's header) but holds only the array's header."""
    count = (nbytes - 128) // 8
    header = f"{{'descr': '<i8', 'fortran_order': False, 'shape': ({count},), }}"
    header += " " * (128 - 10 - len(header) - 1) + "\n"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")
    values = io.BytesIO()
    np.save(values, np.zeros(0))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("indices.npy", data)
        zf.writestr("values.npy", values.getvalue())
    raw = bytearray(path.read_bytes())
    local = raw.index(b"PK\x03\x04")  # the first member's local header: uncompressed size at +22
    central = raw.index(b"PK\x01\x02")  # its central directory entry: uncompressed size at +24
    struct.pack_into("<I", raw, local + 22, nbytes)
    struct.pack_into("<I", raw, central + 24, nbytes)
    path.write_bytes(bytes(raw))
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("indices.npy").file_size == nbytes
    assert path.stat().st_size < 1024


def _address_space_limit(limit: int):
    """A ``preexec_fn``: the child's address space is capped at ``limit`` bytes."""
    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return setup


def test_an_npz_declaring_gigabytes_is_refused_by_the_size_cap(tmp_path: Path) -> None:
    """W2.5 "size limits on decompression" for ``.npz`` model files.

    A copy of the default model whose bigram ``weights.npz`` is a zip of a few hundred bytes whose
    ``indices`` member declares 3 GB; its line in ``MANIFEST.json`` (where there is one) is rewritten
    with the file's new sha256, so the checksum is not what refuses it. Under a 2 GB address space
    ``compress --model`` must exit 3 with one line saying it decompresses to more than allowed.
    (Before W2.5 numpy allocated the declared array: out of memory, exit 4.)
    """
    model = tmp_path / "model"
    shutil.copytree(DEFAULT, model, ignore=shutil.ignore_patterns("neural", "t3"))
    weights = model / "weights.npz"
    _npz_declaring(weights, 3 * 10 ** 9)
    manifest = model / "MANIFEST.json"
    if manifest.exists():
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        doc["sha256"]["weights.npz"] = hashlib.sha256(weights.read_bytes()).hexdigest()
        manifest.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    proc = _run("compress", "--model", str(model), "--json", "The minister said on Monday that the new "
                "rules would apply .", preexec=_address_space_limit(LIMIT), cwd=tmp_path)
    line = _one_line_error(proc, 3, "weights.npz")
    assert re.search(r"decompresses to \d+ bytes, more than the \d+ allowed", line), line
    assert "checksum" not in line
    assert proc.stdout.strip() == ""


def test_the_time_limit_stops_the_lm_potentials_inside_their_loop(tmp_path: Path) -> None:
    """W2.5 "--time-limit covers only the decoder loop (a 500-token line took 15.7 s under --time-limit 1)".

    A batch line of 1,000 tokens (``--max-tokens 1000``) under ``--config lm-only`` and a limit of 2 s.
    Since W3.1 a batch line's parse counts against its deadline too (about 0.15 s for this line here),
    so the limit is set between the parse and the LM's KenLM lookups (about 17 s for this line, README
    table): it runs out inside the lookups. The line must fail with exit 4 and the time-limit message
    naming the loop's position, before its end (context word a of n, a < n): the potentials were
    stopped, not finished. ``tests/test_time_limit_cli.py`` covers a text argument whose limit runs out
    while parsing; this is the limit inside one component's potentials. (Before W2.5: exit 0, a
    compression, the potentials computed in full.)
    """
    inp = tmp_path / "long.jsonl"
    inp.write_text(json.dumps({"id": "long", "text": _long_text(1000)}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    proc = _run("compress", "--config", "lm-only", "--input", str(inp), "--output", str(out),
                "--max-tokens", "1000", "--time-limit", "2", "--deterministic", "--quiet", cwd=tmp_path)
    _one_line_error(proc, 4, "1 of 1 lines failed")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1 and rows[0]["id"] == "long" and "compression" not in rows[0], rows
    error = rows[0].get("error", "")
    found = re.search(r"the time limit of 2 s ran out while computing the lm potentials "
                      r"\(KenLM lookups, context word (\d+) of (\d+)\)", error)
    assert found, error
    stopped_at, n = int(found.group(1)), int(found.group(2))
    assert n == 1000 and stopped_at < n
