"""``dualdecomp plot`` (convergence) and ``dualdecomp evaluate --curve``: the pictures are real PNGs of the
expected size whose pixels show the drawn lines; the curve's points are measured, not made up."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from dualdecomp import decode
from dualdecomp.app.cli import main
from dualdecomp.app.plots import DPI, CurvePoint, plot_curve, read_trace
from dualdecomp.core.errors import InputError
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.dependency import Dependency

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
LM = "LM only (trigram, exact length)"  # the name in data/default_model/configs/lm-only.json


def color_pixels(image: np.ndarray, name: str, tol: float = 0.02) -> int:
    """Number of pixels of the named matplotlib colour."""
    rgb = np.array(to_rgb(name))
    return int(np.count_nonzero(np.all(np.abs(image[..., :3] - rgb) < tol, axis=-1)))


def grey_pixels(image: np.ndarray) -> np.ndarray:
    """Mask of mid-grey pixels (the dotted node lines are grey 0.6, antialiased)."""
    rgb = image[..., :3]
    mean = rgb.mean(axis=-1)
    return (rgb.max(axis=-1) - rgb.min(axis=-1) < 0.02) & (mean > 0.45) & (mean < 0.85)


def read_png(path) -> np.ndarray:
    assert path.read_bytes()[:8] == PNG_MAGIC
    assert path.stat().st_size > 10_000  # a drawn figure, not an empty canvas
    return mpimg.imread(path)


@pytest.fixture(scope="module")
def bisection_trace(tmp_path_factory):
    """A real engine trace with a length multiplier: Bigram + Dependency at length 5 by bisection."""
    rng = np.random.default_rng(3)
    n = 10
    comps = [Bigram(rng.normal(size=(n + 2, n + 2))), Dependency(rng.normal(size=(n + 1, n + 1)))]
    result = decode(comps, length=5, length_method="bisection")
    path = tmp_path_factory.mktemp("trace") / "trace.jsonl"
    rows = [{"id": "free", "certified": True, "trace": [s.to_json() for s in decode(comps).trace]},
            {"id": "len5", "certified": result.certified, "trace": [s.to_json() for s in result.trace]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, result


def test_plot_command_draws_bounds_gap_and_lambda(bisection_trace, tmp_path, capsys):
    path, result = bisection_trace
    assert any(s.lam is not None for s in result.trace)
    out = tmp_path / "conv.png"
    assert main(["plot", str(path), "--id", "len5", "-o", str(out)]) == 0
    assert f"{len(result.trace)} iterations of 'len5'" in capsys.readouterr().err
    image = read_png(out)
    assert image.shape[:2] == (round((2.6 * 3 + 0.6) * DPI), round(7.5 * DPI))  # three panels: with λ
    for colour in ("tab:blue", "tab:orange", "tab:red", "tab:purple"):  # dual, primal, gap, λ
        assert color_pixels(image, colour) > 200, colour


def test_plot_without_lambda_has_two_panels(bisection_trace, tmp_path):
    path, _ = bisection_trace
    out = tmp_path / "free.png"
    assert main(["plot", str(path), "-o", str(out)]) == 0  # the first line with a trace: "free"
    image = read_png(out)
    assert image.shape[:2] == (round((2.6 * 2 + 0.6) * DPI), round(7.5 * DPI))
    assert color_pixels(image, "tab:purple") == 0


def test_read_trace_of_gold_length_references(tmp_path):
    row = {"id": "s1", "trace": [{"iteration": 1, "dual": 2.0, "primal": 1.0}],
           "references": [{"length": 3, "certified": True,
                           "trace": [{"iteration": 1, "dual": 5.0, "primal": 5.0}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert read_trace(path).id == "s1"
    ref = read_trace(path, "s1#3")
    assert ref.certified is True and ref.steps[0]["dual"] == 5.0


@pytest.mark.parametrize("content, message", [
    ('{"id": "a", "keep": [1]}\n', "no line has a trace"),
    ("not json\n", "not valid JSON"),
    ('{"id": "a", "trace": [{"dual": 1.0}]}\n', "needs 'iteration'"),
])
def test_bad_trace_files(tmp_path, content, message):
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_trace(path)


def test_plot_cli_errors_are_one_line(tmp_path, capsys):
    assert main(["plot", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.png")]) == 2
    assert "trace file not found" in capsys.readouterr().err
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a", "trace": [{"iteration": 1, "dual": 1.0, "primal": 0.5}]}\n')
    assert main(["plot", str(path), "-o", str(tmp_path / "x.txt")]) == 2
    assert main(["plot", str(path), "--id", "b", "-o", str(tmp_path / "x.png")]) == 2


def test_plot_curve_one_line_per_system(tmp_path):
    points = [CurvePoint("A", r, r, 0.5 + r / 2, 0.4 + r / 2) for r in (0.4, 0.6)] + \
             [CurvePoint("B", r, r, 0.3 + r / 2, 0.2 + r / 2) for r in (0.4, 0.6)]
    image = read_png(plot_curve(points, tmp_path / "c.png"))
    assert image.shape[:2] == (round(4.2 * DPI), round(10 * DPI))
    assert color_pixels(image, "tab:blue") > 200 and color_pixels(image, "tab:orange") > 200
    with pytest.raises(InputError):
        plot_curve([], tmp_path / "d.png")


def test_evaluate_curve_sweeps_ratios_and_draws(corpora, tmp_path, capsys):
    out = tmp_path / "curve.png"
    code = main(["evaluate", "--input", str(corpora / "broadcast.dev.jsonl"), "--curve",
                 "--system", "mcdonald", "--system", "lm-only", "--ratios", "0.5,0.8", "--limit", "3",
                 "--json", "-o", str(out)])
    assert code == 0
    points = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(p["system"], p["ratio"]) for p in points] == [
        ("McDonald", 0.5), ("McDonald", 0.8), (LM, 0.5), (LM, 0.8)]
    for a, b in (points[:2], points[2:]):
        assert 0.4 < a["cr"] < 0.6 < 0.7 < b["cr"] < 0.9  # the measured rate follows the ratio
        assert 0 < a["token_f1"] < b["token_f1"] <= 1  # keeping more of the sentence recalls more
    image = read_png(out)
    assert image.shape[:2] == (round(4.2 * DPI), round(10 * DPI))
    assert color_pixels(image, "tab:blue") > 100 and color_pixels(image, "tab:orange") > 100


def test_evaluate_curve_bad_ratios(corpora, tmp_path, capsys):
    argv = ["evaluate", "--input", str(corpora / "broadcast.dev.jsonl"), "--curve",
            "-o", str(tmp_path / "c.png")]
    assert main([*argv, "--ratios", "0.5,1.5"]) == 2
    assert main([*argv, "--ratios", "a,b"]) == 2
    assert "--ratios" in capsys.readouterr().err


def test_branch_and_bound_nodes_are_marked_in_the_lambda_panel(tmp_path):
    steps = [{"iteration": k, "dual": 10.0 - k, "primal": 1.0, "lam": float(k % 3), "node": k // 3}
             for k in range(1, 10)]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"id": "bb", "trace": steps}) + "\n")
    out = tmp_path / "bb.png"
    assert main(["plot", str(path), "-o", str(out)]) == 0
    marked = grey_pixels(read_png(out))
    unmarked = tmp_path / "t0.jsonl"
    unmarked.write_text(json.dumps({"id": "bb", "trace": [{**s, "node": 0} for s in steps]}) + "\n")
    assert main(["plot", str(unmarked), "-o", str(tmp_path / "bb0.png")]) == 0
    plain = grey_pixels(read_png(tmp_path / "bb0.png"))
    assert np.count_nonzero(marked & ~plain) > 100  # the dotted lines at iterations 4 and 7
