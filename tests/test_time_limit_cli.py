"""`--time-limit` covers parsing and potentials, through the command line only (W2.5).

Written against the CLI alone (no internal API), so it runs on any version: before W2.5 the limit
covered the decoder loop only, a long line under `--time-limit` was parsed, scored and decoded in full
and the command exited 0 with a compression; now the deadline runs out before decoding and the command
exits 4 with one line on stderr.
"""

from __future__ import annotations

from dualdecomp.app.cli import main
from dualdecomp.data.jsonl import read_corpus
from tests.conftest import CORPORA


def _long_text(n: int) -> str:
    tokens: list[str] = []
    for item in read_corpus(CORPORA / "written.dev.jsonl"):
        tokens.extend(item.text)
        if len(tokens) >= n:
            break
    return " ".join(tokens[:n])


def test_a_time_limit_shorter_than_parsing_and_potentials_exits_4(capsys) -> None:
    code = main(["compress", "--time-limit", "0.001", _long_text(250)])
    captured = capsys.readouterr()
    assert code == 4
    assert "time limit" in captured.err and "Traceback" not in captured.err
    assert captured.out.strip() == ""
