"""W3.1, "nothing reads without a bound", for ``dualdecomp order --input``: a JSONL line over
``MAX_LINE_BYTES``, a CoNLL-U word line over it and a CoNLL-U sentence block over ``MAX_BLOCK_BYTES`` get
their own error row without being kept in memory, the other inputs are ordered (exit 2); a device that
never ends (``/dev/zero``) is refused before anything is read.

Run against the code before this change: the module's caps did not exist (the tests that lower them
fail at monkeypatch), the long lines were read whole and decoded, and ``/dev/zero`` was read without end
(the test's subprocess ran into its address-space limit instead of a one-line refusal).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from dualdecomp.app.cli import main
from dualdecomp.data.ordering import reading

GOOD = "# sent_id = {id}\n1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n"
FAST = ["--lm-beam", "0", "--lm-weight", "0", "--timeout", "5"]


def _order(path, capsys) -> tuple[int, list[dict], str]:
    code = main(["order", "--input", str(path), *FAST])
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err


def test_a_jsonl_line_over_the_cap_gets_its_error_row(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 200)
    path = tmp_path / "in.jsonl"
    good = json.dumps({"id": "a", "words": ["dog", "the"]})
    long = json.dumps({"id": "long", "words": ["w"] * 100})
    path.write_text(f"{good}\n{long}\n{good.replace('a', 'b')}\n")
    code, rows, err = _order(path, capsys)
    assert code == 2
    assert [r["id"] for r in rows] == ["a", "in.jsonl:2", "b"]
    assert "longer than 200 (not read)" in rows[1]["error"] and "error" not in rows[0]


def test_a_conllu_line_or_block_over_the_cap_gets_its_error_row(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(reading, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(reading, "MAX_BLOCK_BYTES", 1000)
    long_line = "# sent_id = longline\n1\t" + "x" * 300 + "\tx\tNOUN\tNN\t_\t0\troot\t_\t_\n"
    long_block = "# sent_id = longblock\n" + "".join(
        f"{k}\tw\tw\tNOUN\tNN\t_\t0\troot\t_\t_\n" for k in range(1, 200))
    path = tmp_path / "in.conllu"
    path.write_text("\n".join([GOOD.format(id="g1"), long_line, long_block, GOOD.format(id="g2")]))
    code, rows, err = _order(path, capsys)
    assert code == 2
    assert [r["id"] for r in rows] == ["g1", "in.conllu:2", "in.conllu:3", "g2"]
    assert "more than 100 (not read)" in rows[1]["error"]
    assert "sentence block is longer than 1000 bytes" in rows[2]["error"]
    assert rows[0]["complete"] and rows[3]["complete"]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2_000_000_000, 2_000_000_000))


def test_dev_zero_as_input_is_refused(tmp_path):
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    run = subprocess.run([sys.executable, "-m", "dualdecomp.app.cli", "order", "--input", str(link), *FAST],
                         capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory, check=False)
    assert run.returncode == 2, run.stderr
    assert "is a device, not a file" in run.stderr and "Traceback" not in run.stderr
