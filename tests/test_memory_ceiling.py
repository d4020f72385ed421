"""Memory ceiling (issue W2.5): under a 2 GB address-space limit the CLI handles a line one token over the
default configuration's limit (its measured ``growth.max_tokens``, W3.1; 2,000 tokens when the limit was
300), ``--chars 10**9`` and a gzip-bomb grammar with an error row or a clear error, never running out of
memory.

One subprocess (``resource.setrlimit(RLIMIT_AS)`` applies to the whole process) runs the three cases
through ``dualdecomp.app.cli.main`` and prints one JSON line per case.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "data" / "default_model"
LIMIT = 2 * 1024 ** 3

SCRIPT = textwrap.dedent("""
    import contextlib, io, json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    from dualdecomp.app.cli import main
    for name, argv in json.loads(sys.argv[1]):
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
        print(json.dumps({{"case": name, "code": code, "err": err.getvalue(), "out": out.getvalue()}}),
              file=sys.__stdout__, flush=True)
""")


def _gzip_bomb(path: Path, size: int) -> None:
    """A gzip file of ``size`` decompressed bytes (a JSON grammar that never ends), written in chunks."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    head = b'{"format": "dualdecomp-stsg", "version": 1, "rules": ["'
    chunk = b"a" * (1 << 20)
    with path.open("wb") as fh:
        fh.write(comp.compress(head))
        for _ in range(size // len(chunk)):
            fh.write(comp.compress(chunk))
        fh.write(comp.flush())


@pytest.fixture(scope="module")
def ceiling(tmp_path_factory):
    """Run the three cases in one 2 GB subprocess; (results by case, the working directory)."""
    tmp_path = tmp_path_factory.mktemp("ceiling")
    long_line = tmp_path / "long.jsonl"
    words = ("the minister said on monday that the new rules would apply to every company in the "
             "country from next year").split()
    over = json.loads((DEFAULT / "config.json").read_text())["growth"]["max_tokens"] + 1
    rows = [{"id": "long", "text": " ".join(words[k % len(words)] for k in range(over))},
            {"id": "short", "text": " ".join(words)}]
    long_line.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bomb = tmp_path / "bomb"
    shutil.copytree(DEFAULT, bomb)
    # reach the decompression itself (the checksum refuses first)
    (bomb / "t3" / "MANIFEST.json").unlink(missing_ok=True)
    (bomb / "t3" / "grammar.bin").unlink()  # a JSON grammar is read when there is no binary one
    _gzip_bomb(bomb / "t3" / "grammar.json.gz", 1 << 30)
    assert (bomb / "t3" / "grammar.json.gz").stat().st_size < 2 << 20
    cases = [
        ("long", ["compress", "--input", str(long_line), "--output", str(tmp_path / "out.jsonl"), "--quiet"]),
        ("chars", ["compress", "--chars", str(10 ** 9), "--json",
                   "The minister said on Monday that the new rules would apply to every company."]),
        ("bomb", ["compress", "--model", str(bomb), "--config", "t3", "a b c"]),
    ]
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(limit=LIMIT), json.dumps(cases)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["case"]: r for r in map(json.loads, proc.stdout.splitlines())}, tmp_path


def test_two_thousand_token_line_is_its_own_error_row(ceiling):
    got, tmp_path = ceiling
    # the line over the limit gets its own error row; the other line is compressed; exit 2 (a line failed)
    assert got["long"]["code"] == 2, got["long"]
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert "--max-tokens" in out[0]["error"] and "error" not in out[1] and out[1]["certified"]


def test_huge_character_budget_is_capped_by_the_sentence(ceiling):
    got, _ = ceiling
    # --chars 10**9 on a short sentence: the budget is capped by the sentence's length
    assert got["chars"]["code"] == 0, got["chars"]
    assert json.loads(got["chars"]["out"])["certified"]


def test_gzip_bomb_grammar_is_refused_while_streaming(ceiling):
    got, _ = ceiling
    # the gzip bomb is refused while streaming, with the model error's exit code
    assert got["bomb"]["code"] == 3, got["bomb"]
    assert "decompresses to more than" in got["bomb"]["err"]
