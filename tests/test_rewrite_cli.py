"""``dualdecomp rewrite`` and the :class:`~dualdecomp.app.rewriter.Rewriter` API (W3.3 item 4).

A tiny rewriting model is trained once per session from the shared rewriting corpus (15 training and 5
dev sources, one epoch). Checked: the text mode, budgets (at most N characters, exactly N words, a
ratio), the rules that fired, a JSONL batch with its journal and ``--resume`` (rows reused; none under
another ``--chars``), the per-line error row of a line without tokens, the atomic output, plain-text
input and output, exit codes for bad options and a missing or damaged model, and the help text.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from dualdecomp.app.batch import BatchOptions, journal_path, run_batch
from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.locations import CHECKOUT_ROOT

SHARED_REWRITING = CHECKOUT_ROOT.parent / "shared" / "data" / "rewriting"

SOURCES = [
    "On September 17, 2004, Whedon announced on the movie's official website that shooting had been "
    "completed.",
    "The film was released in the United States on 4 May 2001 and received mixed reviews from critics.",
    "He later became a member of the city council and served there for many years.",
    "The river flows through the northern part of the town before it joins the sea.",
]


@pytest.fixture(scope="session")
def rewrite_model(tmp_path_factory) -> Path:
    """A rewriting model trained on 15 sources of the shared corpus (one epoch)."""
    if not (SHARED_REWRITING / "train.jsonl").is_file() or not (SHARED_REWRITING / "dev.jsonl").is_file():
        pytest.skip(f"the shared rewriting corpus is absent ({SHARED_REWRITING})")
    from dualdecomp.models.lm.build import find_programs

    try:
        find_programs()
    except Exception as exc:  # noqa: BLE001 - any reason lmplz cannot be found
        pytest.skip(f"KenLM's lmplz is not available (make lmplz; DUALDECOMP_LMPLZ_DIR): {exc}")
    from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings, train_rewrite_model

    tmp = tmp_path_factory.mktemp("rewrite_model")
    # with seed 0 these 15 sources learn a negative LM weight: the decoder's LM matrix keeps its -inf
    # entries forbidden whatever the weight's sign (models.rewriting.lm_matrix.scaled_lm)
    settings = RewriteTrainingSettings(data_dir=str(SHARED_REWRITING), out_dir=str(tmp / "model"),
                                       cache_dir=str(tmp / "cache"), limit=15, dev_limit=5, epochs=1)
    return train_rewrite_model(settings, say=lambda _: None)


@pytest.fixture(scope="session")
def rewriter(rewrite_model):
    from dualdecomp.app.rewriter import Rewriter

    return Rewriter(rewrite_model)


@pytest.fixture
def source(tmp_path) -> Path:
    """A JSONL input of raw sentences (the rewriting corpus' format) with an empty text (its error row)."""
    rows = [{"id": f"s{k}", "text": t} for k, t in enumerate(SOURCES)]
    rows.insert(2, {"id": "blank", "text": ""})
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------------------
# the Python API


def test_rewriter_is_exported_lazily():
    import dualdecomp
    from dualdecomp.app.rewriter import Rewriter

    assert "Rewriter" in dualdecomp.__all__ and dualdecomp.Rewriter is Rewriter


def test_rewrite_text_is_certified_and_names_the_rules_that_fired(rewriter):
    r = rewriter.rewrite_text(SOURCES[0])
    assert r.certified and r.method == "exact chart" and r.gap == 0.0 and r.dual == r.primal
    assert math.isfinite(r.primal) and r.seconds > 0
    assert r.text == SOURCES[0]
    # the rules' target words, read off the keys in derivation order, are the rewrite's words
    assert r.rules and all(" => " in k for k in r.rules)
    ops = r.operations.as_dict()
    assert set(ops) == {"kept", "deleted", "substituted", "reordered", "inserted"}
    assert ops["kept"] + ops["substituted"] + ops["inserted"] == len(r.words)
    row = r.to_json(timing=False, rules=True)
    assert list(row) == ["text", "rewrite", "primal", "dual", "gap", "certified", "operations", "method",
                         "rules"]
    assert row["rules"] == list(r.rules)


def test_rules_of_the_derivation_rebuild_its_score(rewriter):
    """The rules reported are those of the decoded hyperedges: rescoring them gives the primal."""
    from dualdecomp.data.parsing import parse_text
    from dualdecomp.data.trees import from_dependency
    from dualdecomp.models.rewriting.model import hyperedge_scores
    from dualdecomp.solvers.rewriting import decode, derivation_score

    sentence = parse_text(SOURCES[1])
    hg = rewriter.decoder.hypergraph(from_dependency(sentence))
    scores = hyperedge_scores(hg, rewriter.decoder.model.weights, rewriter.decoder.featuriser)
    lm = rewriter.decoder.lm_matrix(hg)
    der = decode(hg, scores, lm)
    r = rewriter.rewrite_sentence(sentence)
    assert r.rules == tuple(str(hg.rule(e).key) for e in der.hyperedges)
    score, words = derivation_score(hg, scores, lm, der.hyperedges)
    assert r.primal == pytest.approx(score, abs=1e-9) and r.words == words


@pytest.mark.parametrize("text", SOURCES)
def test_budgets_are_respected(rewriter, text):
    from dualdecomp.solvers.rewriting import text_chars

    free = rewriter.rewrite_text(text)
    n = max(len(free.rewrite) // 2, 10)
    short = rewriter.rewrite_text(text, chars=n)
    assert len(short.rewrite) <= n and short.certified and short.limit == n
    assert short.primal <= free.primal + 1e-9  # a budget can only cost score
    exact = rewriter.rewrite_text(text, length=6)
    assert len(exact.words) == 6 and exact.certified
    half = rewriter.rewrite_text(text, ratio=0.5)
    assert len(half.rewrite) <= math.floor(0.5 * len(text)) and text_chars(half.words) == len(half.rewrite)


def test_bad_budgets_and_inputs_are_input_errors(rewriter):
    with pytest.raises(InputError, match="at most one budget"):
        rewriter.rewrite_text(SOURCES[0], chars=10, length=3)
    for kwargs in ({"chars": -1}, {"length": 2.5}, {"ratio": 0}, {"ratio": float("nan")}):
        with pytest.raises(InputError):
            rewriter.rewrite_text(SOURCES[0], **kwargs)
    with pytest.raises(InputError, match="str"):
        rewriter.rewrite_text(b"bytes")
    with pytest.raises(InputError, match="empty"):
        rewriter.rewrite_text("   ")


def test_a_missing_or_damaged_model_is_a_model_error(rewrite_model, tmp_path):
    from dualdecomp.app.rewriter import Rewriter

    with pytest.raises(ModelError, match="no rewriting model"):
        Rewriter(tmp_path / "nowhere")
    broken = tmp_path / "broken"
    shutil.copytree(rewrite_model, broken)
    weights = broken / "weights.npz"
    weights.write_bytes(weights.read_bytes()[:-7] + b"garbage")
    with pytest.raises(ModelError, match="checksum"):
        Rewriter(broken)
    with pytest.raises(InputError, match="max_states"):
        Rewriter(rewrite_model, max_states=0)


# --------------------------------------------------------------------------------------------------------
# the command line


def test_text_mode_prints_a_certified_row(rewrite_model, capsys):
    assert main(["rewrite", SOURCES[0], "--model", str(rewrite_model), "--json", "--deterministic"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["text"] == SOURCES[0] and row["certified"] is True and row["gap"] == 0.0
    assert "seconds" not in row and row["method"] == "exact chart"
    assert main(["rewrite", SOURCES[0], "--model", str(rewrite_model), "--chars", "40"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out[0].split("] ", 1)[1]) <= 40 and "certified=yes" in out[1]
    assert main(["rewrite", SOURCES[0], "--model", str(rewrite_model), "--length", "5", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    ops = row["operations"]
    assert ops["kept"] + ops["substituted"] + ops["inserted"] == 5 and "seconds" in row


def test_decode_settings_options_change_the_rewrite_and_the_fingerprint(rewrite_model, capsys):
    from dualdecomp.app.rewriter import Rewriter

    lengths = []
    for bias in ("-1000", "0", "1000"):
        assert main(["rewrite", SOURCES[1], "--model", str(rewrite_model), f"--word-bias={bias}",
                     "--json"]) == 0
        row = json.loads(capsys.readouterr().out)
        assert row["certified"] is True
        lengths.append(len(row["rewrite"].split()))
    assert lengths[0] < lengths[1] <= lengths[2]
    substitutions = []
    for bias in ("-1000", "1000"):
        assert main(["rewrite", SOURCES[1], "--model", str(rewrite_model), f"--substitution-bias={bias}",
                     "--insertion-bias=0", "--json"]) == 0
        row = json.loads(capsys.readouterr().out)
        assert row["certified"] is True
        substitutions.append(row["operations"]["substituted"])
    assert substitutions[0] == 0 < substitutions[1]
    plain, scaled = Rewriter(rewrite_model), Rewriter(rewrite_model, lm_scale=0.5, word_bias=2.0)
    assert plain.fingerprint() != scaled.fingerprint()
    assert scaled.worker_factory()().decoder.settings == scaled.decoder.settings
    biased = Rewriter(rewrite_model, substitution_bias=5.0, insertion_bias=-1.0)
    assert biased.fingerprint() not in (plain.fingerprint(), scaled.fingerprint())
    assert biased.worker_factory()().decoder.settings == biased.decoder.settings


def test_article_agreement_option_holds_in_the_rewrite_and_changes_the_fingerprint(rewrite_model, capsys):
    from dualdecomp.app.rewriter import Rewriter
    from dualdecomp.models.rewriting.articles import indefinite_article
    from dualdecomp.models.rewriting.decode_settings import ARTICLE_AGREEMENT

    text = "An eagle and an owl saw a cat, an hour later, near a university in an old town."
    source = [w.lower() for w in text.replace(",", " ,").replace(".", " .").split()]
    for flag in ("--article-agreement", "--no-article-agreement"):
        for bias in ("0", "1000"):  # 1000: substitutions everywhere the grammar has one
            assert main(["rewrite", text, "--model", str(rewrite_model), flag, f"--substitution-bias={bias}",
                         "--insertion-bias=500", "--json"]) == 0
            row = json.loads(capsys.readouterr().out)
            assert row["certified"] is True
            if flag == "--article-agreement":
                words = row["rewrite"].replace(",", " ,").replace(".", " .").split()
                pairs = set(zip(source, source[1:], strict=False))
                assert not [(a, b) for a, b in zip(words, words[1:], strict=False)
                            if a.lower() in ("a", "an") and b.lower() not in ("a", "an")
                            and indefinite_article(b) not in (None, a.lower())
                            and (a.lower(), b.lower()) not in pairs], row["rewrite"]
    plain, flipped = Rewriter(rewrite_model), Rewriter(rewrite_model, article_agreement=not ARTICLE_AGREEMENT)
    assert plain.decoder.settings.article_agreement is ARTICLE_AGREEMENT
    assert plain.fingerprint() != flipped.fingerprint()
    assert flipped.worker_factory()().decoder.settings == flipped.decoder.settings


def test_a_beam_makes_the_rewrite_approximate(rewrite_model, capsys):
    from dualdecomp.solvers.rewriting import APPROXIMATE

    assert main(["rewrite", SOURCES[0], "--model", str(rewrite_model), "--max-states", "1", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["method"] == APPROXIMATE and row["certified"] is False
    assert row["dual"] is None and row["gap"] is None and row["primal"] is not None


def test_jsonl_batch_journal_resume_and_error_row(rewrite_model, source, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    base = ["rewrite", "--input", str(source), "--output", str(out), "--model", str(rewrite_model),
            "--deterministic", "--quiet"]
    assert main([*base, "--chars", "60"]) == 2  # the blank line failed: exit 2, the others written
    assert "1 of 5 lines failed" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["s0", "s1", "blank", "s2", "s3"]
    assert rows[2] == {"id": "blank", "error": f"{source}:3: 'text' must be a non-empty string"}
    for r in rows[:2] + rows[3:]:
        assert list(r) == ["id", "text", "rewrite", "primal", "dual", "gap", "certified", "operations",
                           "method"]
        assert len(r["rewrite"]) <= 60 and r["certified"]
    assert rows[0]["text"] == SOURCES[0]  # raw JSONL text, tokenised by spaCy, spacing kept
    assert not journal_path(out).exists()
    first = out.read_bytes()

    # an interrupted run: the journal holds three rows, the output is not written (atomic)
    from dualdecomp.app.rewriter import Rewriter

    class Stop(Exception):
        pass

    seen = []

    def progress(k):
        seen.append(k)
        if len(seen) == 3:
            raise Stop

    out2 = tmp_path / "out2.jsonl"
    rewriter = Rewriter(rewrite_model)
    options = BatchOptions(budget=("chars", 60), deterministic=True, batch_size=1)
    with pytest.raises(Stop):
        run_batch(source, out2, rewriter, options, progress)
    assert not out2.exists() and len(journal_path(out2).read_text().splitlines()) == 3
    _, summary = run_batch(source, out2, rewriter, BatchOptions(**{**options.__dict__, "resume": True}))
    assert summary.reused == 2  # the two good rows of the three (an error row is never reused)
    assert out2.read_bytes() == first

    # another --chars: nothing reused
    with pytest.raises(Stop):
        seen.clear()
        run_batch(source, out2, rewriter, options, progress)
    other = BatchOptions(budget=("chars", 50), deterministic=True, batch_size=1, resume=True)
    _, summary = run_batch(source, out2, rewriter, other)
    assert summary.reused == 0
    rows = [json.loads(line) for line in out2.read_text().splitlines()]
    assert all(len(r["rewrite"]) <= 50 for r in rows if "error" not in r)

    # the CLI's --resume (the output exists, the journal is gone: a fresh run with nothing reused)
    assert main([*base, "--chars", "60", "--resume"]) == 2
    assert out.read_bytes() == first


def test_plain_text_input_and_text_output(rewrite_model, tmp_path, capsys):
    inp = tmp_path / "in.txt"
    inp.write_text(SOURCES[2] + "\n\n" + SOURCES[3] + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["rewrite", "--input", str(inp), "--output", str(out), "--model", str(rewrite_model),
                 "--format", "text", "--length", "4"]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and all(line.strip() for line in lines)
    assert "2 lines, 2 certified" in capsys.readouterr().err
    assert main(["rewrite", "--input", str(inp), "--output", "-", "--model", str(rewrite_model),
                 "--deterministic"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["1", "3"] and rows[0]["text"] == SOURCES[2]


def test_workers_give_the_single_process_bytes(rewrite_model, source, tmp_path):
    single, multi = tmp_path / "single.jsonl", tmp_path / "multi.jsonl"
    base = ["rewrite", "--input", str(source), "--model", str(rewrite_model), "--deterministic", "--quiet",
            "--batch-size", "2"]
    assert main([*base, "--output", str(single)]) == 2
    assert main([*base, "--output", str(multi), "--workers", "2"]) == 2
    assert multi.read_bytes() == single.read_bytes()


@pytest.mark.parametrize("argv, message", [
    ([], "give either TEXT or --input"),
    (["x", "--input", "in.jsonl"], "give either TEXT or --input"),
    (["x", "--chars", "-3"], "--chars must be >= 0"),
    (["x", "--ratio", "0"], "--ratio must be"),
    (["x", "--ratio", "nan"], "--ratio must be"),
    (["x", "--length", "-1"], "--length must be >= 0"),
    (["x", "--time-limit", "0"], "--time-limit must be positive"),
    (["x", "--max-states", "0"], "--max-states must be >= 1"),
    (["x", "--lm-scale", "-1"], "lm_scale must be >= 0"),
    (["x", "--word-bias", "nan"], "word_bias must be a finite number"),
    (["x", "--substitution-bias", "inf"], "substitution_bias must be a finite number"),
    (["x", "--insertion-bias", "nan"], "insertion_bias must be a finite number"),
    (["x", "--output", "o.jsonl"], "--output needs --input"),
    (["x", "--workers", "2"], "needs --input"),
    (["--input", "in.jsonl", "--resume"], "--resume needs --output"),
])
def test_bad_options_exit_2_with_a_message(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["rewrite", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_two_budgets_and_an_unknown_option_are_usage_errors(capsys):
    assert main(["rewrite", "x", "--chars", "3", "--length", "2"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_infeasible_budget_exits_2(rewrite_model, capsys):
    assert main(["rewrite", SOURCES[0], "--model", str(rewrite_model), "--chars", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dualdecomp rewrite: error:") and "Traceback" not in err


def test_a_missing_model_exits_3(tmp_path, capsys):
    assert main(["rewrite", "some text", "--model", str(tmp_path / "nowhere")]) == 3
    assert "no rewriting model" in capsys.readouterr().err


def test_help_is_plain_within_100_columns_and_states_exactness_and_licence(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["rewrite", "--help"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100 and "\x1b" not in out
    flat = " ".join(out.split())
    assert "certified" in flat and "--max-states" in flat and "APPROXIMATE" in flat
    assert "CC BY-NC 4.0" in flat and "NON-COMMERCIAL" in flat
    assert main(["--help"]) == 0
    assert "rewrite" in capsys.readouterr().out
