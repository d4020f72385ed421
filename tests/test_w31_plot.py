"""W3.1 items 8 and 10: ``dualdecomp plot`` refuses a bad trace with exit 2 (it was an internal error,
exit 4, or silently drawn), and values it cannot draw (NaN, infinities, beyond ±1e100) are left out
with one line on stderr instead of matplotlib's warnings.

Run against the code before the fix (/tmp/baseline): every test here failed there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dualdecomp.app.cli import main
from dualdecomp.app.plots import read_trace


def _trace_file(tmp_path, text: str):
    path = tmp_path / "t.jsonl"
    path.write_text(text + "\n")
    return path


GOOD = [{"iteration": 1, "dual": 2.0, "primal": 1.0}, {"iteration": 2, "dual": 1.5, "primal": 1.5}]


@pytest.mark.parametrize("text, message", [
    ('{"id": "a", "trace": ' + "[" * 100_000 + "]" * 100_000 + "}", "not valid JSON"),  # RecursionError
    ('{"id": "a", "trace": [{"iteration": ' + "9" * 5000 + ', "dual": 1}]}', "not valid JSON"),
    ('{"id": "a", "trace": [{"iteration": 1' + "0" * 400 + ', "dual": 1}]}', "iteration"),  # OverflowError
    ('{"id": "a", "trace": [{"iteration": -5, "dual": 1}, {"iteration": 1, "dual": 0.5}]}', "iteration"),
    ('{"id": "a", "trace": [{"iteration": 1, "dual": "x"}]}', "'dual' must be a number"),
    ('{"id": "a", "trace": [{"iteration": 1, "dual": 1, "primal": [1]}]}', "'primal' must be a number"),
    ('{"id": "a", "trace": [{"iteration": 1, "dual": 1, "lam": 1, "node": "x"}]}', "node"),
])
def test_bad_trace_is_exit_2(tmp_path, capsys, text, message):
    out = tmp_path / "x.png"
    assert main(["plot", str(_trace_file(tmp_path, text)), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("row", [
    {"id": "a", "certified": [1], "trace": GOOD},  # an unhashable certificate (was TypeError)
    {"id": "a", "trace": GOOD, "references": 5},  # references that are not a list (was TypeError)
])
def test_odd_fields_beside_a_good_trace_are_ignored(tmp_path, capsys, row):
    out = tmp_path / "x.png"
    assert main(["plot", str(_trace_file(tmp_path, json.dumps(row))), "-o", str(out)]) == 0
    assert out.stat().st_size > 10_000 and "internal error" not in capsys.readouterr().err


def _plot_in_a_process(path, out) -> subprocess.CompletedProcess:
    """The CLI in its own process: pytest would catch matplotlib's warnings before they reach stderr."""
    return subprocess.run([sys.executable, "-m", "dualdecomp.app.cli", "plot", str(path), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)


def test_nan_and_infinite_values_are_left_out_with_one_line_and_no_warning(tmp_path):
    steps = [{"iteration": 0, "dual": float("nan"), "primal": float("inf")},
             {"iteration": 1, "dual": float("inf"), "primal": float("-inf"), "lam": float("nan")},
             *({"iteration": k, "dual": 3.0 - k / 10, "primal": 1.0, "lam": 0.5} for k in range(2, 6))]
    path = _trace_file(tmp_path, json.dumps({"id": "a", "trace": steps}))  # NaN/Infinity: Python's JSON
    out = tmp_path / "nan.png"
    proc = _plot_in_a_process(path, out)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "Warning" not in proc.stderr
    assert lines[0] == ("dualdecomp plot: not drawn (NaN, infinite or beyond ±1e+100): dual at 2 iterations "
                        "(0, 1), primal at 2 iterations (0, 1), lam at 1 iteration (1)")
    assert "6 iterations of 'a'" in lines[1] and out.stat().st_size > 10_000


def test_values_beyond_the_drawn_range_are_left_out(tmp_path):
    steps = [{"iteration": 0, "dual": 1e308, "primal": -1e308}, {"iteration": 1, "dual": 2.0, "primal": 1.0}]
    path = _trace_file(tmp_path, json.dumps({"id": "a", "trace": steps}))
    out = tmp_path / "huge.png"
    proc = _plot_in_a_process(path, out)  # was: overflow warnings, then an internal error (exit 4)
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr
    assert "dual at 1 iteration (0), primal at 1 iteration (0)" in proc.stderr
    from dualdecomp.app.plots import undrawn_values  # (new: imported here so the old code runs the rest)

    assert undrawn_values(read_trace(path)) is not None


def test_a_trace_without_a_primal_draws_without_a_warning(tmp_path):
    path = _trace_file(tmp_path, json.dumps({"id": "a", "trace": [{"iteration": 1, "dual": 1.0}]}))
    proc = _plot_in_a_process(path, tmp_path / "one.png")  # the gap panel has nothing to label
    assert proc.returncode == 0 and "Warning" not in proc.stderr
    from dualdecomp.app.plots import undrawn_values

    assert len(proc.stderr.strip().splitlines()) == 1 and undrawn_values(read_trace(path)) is None


def test_an_integer_beyond_the_floats_is_left_out(tmp_path, capsys):
    steps = [{"iteration": 1, "dual": 10**400, "primal": 1.0}, {"iteration": 2, "dual": 2.0, "primal": 1.0}]
    path = _trace_file(tmp_path, json.dumps({"id": "a", "trace": steps}))
    assert main(["plot", str(path), "-o", str(tmp_path / "big.png")]) == 0  # was OverflowError (exit 4)
    assert "dual at 1 iteration (1)" in capsys.readouterr().err
