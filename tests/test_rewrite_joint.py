"""Joint decoding of a rewrite with a compression configuration (W3.3 item 3: the T3+LM dual decomposition
of Yao, Wan & Xiao 2014): ``Rewriter(joint=NAME)`` and ``dualdecomp rewrite --joint NAME``.

The tiny rewriting model of tests/test_rewrite_cli.py (15 training sources of the shared corpus, one
epoch) is joined with the embedded compression model's default configuration. Checked on short dev
sentences by enumerating every keep vector of the source tokens (the chart's best derivation with that
keep vector plus the compression components' scores of it): the dual bounds the brute-force optimum, the
primal is the score of the returned keep vector and never above the optimum, and a certified rewrite is
the optimum; the rewrite is the chart's derivation with the returned keep vector. Also: a character
budget stays inside the chart, the CLI's rows and its exit codes, and ``--joint`` in the batch fingerprint.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError
from tests.test_rewrite_cli import rewrite_model  # noqa: F401 - the session fixture (tiny model)

# short dev sentences of the shared rewriting corpus (valid-1841, valid-1850, valid-1817): at most 10
# tokens, so the 2^n keep vectors can be enumerated
SHORT = [
    "It is a commonly stolen street sign.",
    "On 28 March 1941, Woolf committed suicide.",
    "He skated his last with the show in 2007.",
]


@pytest.fixture(scope="module")
def joint(rewrite_model):  # noqa: F811 - the imported fixture
    from dualdecomp.app.rewriter import Rewriter

    return Rewriter(rewrite_model, joint="config")


def _brute_force(chart, others, n: int) -> tuple[float, np.ndarray | None]:
    """max over keep vectors of chart.best_given + Σ others' best_given (and an argmax)."""
    best, arg = -math.inf, None
    for bits in itertools.product((False, True), repeat=n):
        keep = np.array(bits, dtype=bool)
        own = chart.best_given(keep)
        if own == -math.inf:
            continue
        total = own + sum(float(c.best_given(keep)) for c in others)
        if total > best:
            best, arg = total, keep
    return best, arg


def _components(rewriter, sentence, budget=None):
    from dualdecomp.data.trees import from_dependency

    chart = rewriter.decoder.component(from_dependency(sentence), budget)
    others, _ = rewriter.compressor.components(sentence)
    return chart, others


@pytest.mark.parametrize("text", SHORT)
@pytest.mark.parametrize("budget", [None, ("ratio", 0.6)])
def test_joint_rewrite_against_brute_force(joint, text, budget):
    from dualdecomp.data.parsing import parse_text
    from dualdecomp.solvers.rewriting import Budget, text_chars

    sentence = parse_text(text)
    assert sentence.n <= 10
    b = None if budget is None else Budget(*budget)
    r = joint.rewrite_sentence(sentence, b)
    chart, others = _components(joint, sentence, b)
    optimum, _ = _brute_force(chart, others, sentence.n)
    assert math.isfinite(optimum)
    assert r.method == "dual decomposition: rewrite chart + config"
    assert r.dual >= optimum - 1e-9 * max(1.0, abs(optimum))
    assert r.primal <= optimum + 1e-9 * max(1.0, abs(optimum))
    assert r.dual >= r.primal and r.gap == pytest.approx(r.dual - r.primal, abs=1e-9)
    if r.certified:
        assert r.primal == pytest.approx(optimum, rel=1e-9, abs=1e-9) and r.gap <= 1e-9 * max(1, abs(r.dual))
    # the rewrite is the chart's best derivation with the engine's keep vector, and the primal is its score
    # plus the compression components' scores of that keep vector
    hg = chart.hypergraph
    key_of = {str(hg.rule(e).key): e for e in range(hg.num_hyperedges)}
    keep = chart.keep_of([key_of[k] for k in r.rules])
    der = chart.derivation_given(keep)
    assert der is not None and tuple(der.words) == r.words
    total = der.score + sum(float(c.best_given(keep)) for c in others)
    assert r.primal == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert r.operations.kept + r.operations.substituted == int(keep.sum())  # used tokens are the kept ones
    if b is not None:
        assert len(r.rewrite) <= math.floor(0.6 * len(text)) and text_chars(r.words) == len(r.rewrite)


def test_joint_options_are_checked(rewrite_model, tmp_path):  # noqa: F811
    from dualdecomp.app.rewriter import Rewriter

    with pytest.raises(InputError, match="unknown configuration 'no-such-config'"):
        Rewriter(rewrite_model, joint="no-such-config")
    with pytest.raises(InputError, match="joint configuration"):
        Rewriter(rewrite_model, joint_model=tmp_path)
    with pytest.raises(InputError, match="configuration name"):
        Rewriter(rewrite_model, joint="")


def test_joint_is_in_the_batch_fingerprint_and_the_worker_factory(rewrite_model, joint):  # noqa: F811
    from dualdecomp.app.rewriter import Rewriter

    plain = Rewriter(rewrite_model).fingerprint()
    mine = joint.fingerprint()
    assert "joint" not in plain and mine["joint"]["config"] == "config" and len(mine["joint"]["model"]) == 64
    other = Rewriter(rewrite_model, joint="neural").fingerprint()
    assert other != mine
    clone = joint.worker_factory()()
    assert clone.joint == "config" and clone.joint_directory == joint.joint_directory.resolve()


def test_rows_journalled_under_joint_are_not_reused_without_it(rewrite_model, joint, tmp_path):  # noqa: F811
    from dualdecomp.app.batch import BatchOptions, journal_path, run_batch
    from dualdecomp.app.rewriter import Rewriter

    class Stop(Exception):
        pass

    seen: list[int] = []

    def stop_after_two(k):
        seen.append(k)
        if len(seen) == 2:
            raise Stop

    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": f"s{k}", "text": t}) + "\n" for k, t in enumerate(SHORT)),
                   encoding="utf-8")
    out = tmp_path / "out.jsonl"
    options = BatchOptions(deterministic=True, batch_size=1)
    resume = BatchOptions(deterministic=True, batch_size=1, resume=True)
    with pytest.raises(Stop):
        run_batch(inp, out, joint, options, stop_after_two)
    assert len(journal_path(out).read_text().splitlines()) == 2
    _, summary = run_batch(inp, out, Rewriter(rewrite_model), resume)
    assert summary.reused == 0
    seen.clear()
    with pytest.raises(Stop):
        run_batch(inp, out, joint, options, stop_after_two)
    _, summary = run_batch(inp, out, joint, resume)
    assert summary.reused == 2


# --------------------------------------------------------------------------------------------------------
# the command line


def test_cli_joint_text_and_batch_rows(rewrite_model, tmp_path, capsys):  # noqa: F811
    assert main(["rewrite", SHORT[1], "--model", str(rewrite_model), "--joint", "config", "--json",
                 "--deterministic"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["method"] == "dual decomposition: rewrite chart + config"
    assert row["dual"] >= row["primal"] and isinstance(row["certified"], bool) and row["gap"] >= 0
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": f"s{k}", "text": t}) + "\n" for k, t in enumerate(SHORT)),
                   encoding="utf-8")
    out = tmp_path / "out.jsonl"
    base = ["rewrite", "--input", str(inp), "--output", str(out), "--model", str(rewrite_model),
            "--deterministic", "--quiet", "--chars", "40"]
    assert main([*base, "--joint", "config"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["s0", "s1", "s2"]
    for r in rows:
        assert list(r) == ["id", "text", "rewrite", "primal", "dual", "gap", "certified", "operations",
                           "method"]
        assert r["method"] == "dual decomposition: rewrite chart + config"
        assert r["dual"] >= r["primal"] and len(r["rewrite"]) <= 40
    joint_bytes = out.read_bytes()
    assert main([*base]) == 0  # without --joint: the chart alone, its own rows
    assert all(json.loads(line)["method"] == "exact chart" for line in out.read_text().splitlines())
    assert main([*base, "--joint", "config", "--resume"]) == 0  # the output exists, no journal: a fresh run
    assert out.read_bytes() == joint_bytes


def test_cli_joint_errors_exit_2(rewrite_model, capsys):  # noqa: F811
    assert main(["rewrite", SHORT[0], "--model", str(rewrite_model), "--joint", "no-such-config"]) == 2
    err = capsys.readouterr().err
    assert "unknown configuration 'no-such-config'" in err and "Traceback" not in err
    assert main(["rewrite", SHORT[0], "--model", str(rewrite_model), "--joint-model", "x"]) == 2
    assert "--joint-model needs --joint" in capsys.readouterr().err


def test_help_names_joint_within_100_columns(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["rewrite", "--help"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    flat = " ".join(out.split())
    assert "--joint NAME" in flat and "--joint-model DIR" in flat and "embedded compression model" in flat
