"""Rewriting evaluation (models/evaluation/rewriting.py, dualdecomp/app/rewriting_evaluation.py and
``dualdecomp evaluate --task rewrite``): SARI, BLEU and the reference-free measures on tiny cases computed
by hand, the matching of predictions to references by id, and the command on a 3-line fixture.

The whole module is new: every test fails on the code before it (no rewriting evaluation: ImportError at
collection; ``evaluate`` had no ``--task``).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction as F

import pytest

from dualdecomp.app.cli import main
from dualdecomp.app.rewriting_evaluation import (
    default_references_path,
    evaluate_rewrite_files,
    match_predictions,
    parse_sets,
)
from dualdecomp.core.errors import InputError
from dualdecomp.models.evaluation.rewriting import evaluate_rewrites

TOL = 1e-9


def pct(x: F | float) -> float:
    return float(100 * x)


# --------------------------------------------------------------------------------------------------------
# SARI (pooled corpus SARI, 13a tokens, lowercased: deletion scored by F1 at corpus level)


def test_sari_hand_case_with_deletion_f1():
    # I = "a b c", O = "a b", R = ["a"] (one sentence, r = 1)
    # n=1: ADD nothing either side -> 0. KEEP a (right 1, out 1, ref 1), b (0, 1, 0), c (0, 0, 0)
    #      -> p = 1/2, r = 1, F = 2/3. DELETE b (right 0, out 0, ref 1), c (1, 1, 1) -> p = 1, r = 1/2,
    #      F1 = 2/3.
    # n=2: KEEP ab (0, 1, 0), bc (0, 0, 0) -> 0. DELETE ab (0, 0, 1), bc (1, 1, 1) -> p = 1, r = 1/2,
    #      F1 = 2/3.
    # n=3: KEEP abc: nothing kept -> 0. DELETE abc (1, 1, 1) -> F1 = 1. n=4: no 4-gram -> 0.
    # add = 0, keep = (2/3)/4 = 1/6, delete = (2/3 + 2/3 + 1)/4 = 7/12; SARI = (1/6 + 7/12)/3 = 1/4.
    # (Deletion by precision would give delete = 3/4 and SARI = 11/36: the pooled corpus score uses F1.)
    scores = evaluate_rewrites(["a b c"], ["a b"], {"set": [["a"]]}).by_set("set")
    assert scores.add == pytest.approx(0.0, abs=TOL)
    assert scores.keep == pytest.approx(pct(F(1, 6)), abs=TOL)
    assert scores.delete == pytest.approx(pct(F(7, 12)), abs=TOL)
    assert scores.sari == pytest.approx(25.0, abs=TOL)


def test_sari_substitution_lowercased_and_13a_tokens():
    # I = "a b c", O = R = "a x c" (substitution b -> x), r = 1
    # n=1: ADD {x} right 1/1, 1 reference addition -> F = 1. KEEP a, c right -> F = 1. DELETE b: F1 = 1.
    # n=2: ADD {ax, xc} -> F = 1. KEEP ab, bc: nothing -> 0. DELETE ab, bc (2, 2, 2) -> 1.
    # n=3: ADD {axc} -> 1. KEEP 0. DELETE abc -> 1. n=4: nothing -> 0.
    # add = 3/4, keep = 1/4, delete = 3/4; SARI = 7/12.
    expected = pct(F(7, 12))
    assert evaluate_rewrites(["a b c"], ["a x c"], {"s": [["a x c"]]}).by_set("s").sari == pytest.approx(
        expected, abs=TOL)
    # lowercased: case does not change SARI; 13a: "c." is the two tokens "c" and "."
    upper = evaluate_rewrites(["a b c"], ["A X C"], {"s": [["a x c"]]}).by_set("s")
    assert upper.sari == pytest.approx(expected, abs=TOL)
    glued = evaluate_rewrites(["a b c."], ["a x c."], {"s": [["a x c ."]]}).by_set("s")
    spaced = evaluate_rewrites(["a b c ."], ["a x c ."], {"s": [["a x c ."]]}).by_set("s")
    assert glued.sari == pytest.approx(spaced.sari, abs=TOL)


def test_each_reference_set_is_scored_separately():
    # the same output against a set that has it (SARI 7/12 above) and a set that keeps the source
    # (I = O_ref = "a b c": every reference n-gram is kept; O = "a x c"): n=1 ADD x not in the
    # references -> p = 0 -> 0; KEEP a, c (right 2, out 2, ref 3) -> p = 1, r = 2/3, F = 4/5; DELETE b
    # (right 0: the references keep it) -> 0. n>=2: KEEP nothing right -> 0; ADD, DELETE 0.
    # add = 0, keep = (4/5)/4 = 1/5, delete = 0; SARI = 1/15.
    scores = evaluate_rewrites(["a b c"], ["a x c"], {"one": [["a x c"]], "two": [["a b c"]]})
    assert [s.name for s in scores.sets] == ["one", "two"]
    assert scores.by_set("one").sari == pytest.approx(pct(F(7, 12)), abs=TOL)
    assert scores.by_set("two").sari == pytest.approx(pct(F(1, 15)), abs=TOL)
    with pytest.raises(KeyError):
        scores.by_set("three")


# --------------------------------------------------------------------------------------------------------
# BLEU (sacrebleu corpus BLEU, 13a, case-sensitive, exponential smoothing)


def test_bleu_hand_case_with_smoothing():
    # O = "a b x d", R = "a b c d": 1-grams 3/4, 2-grams (ab) 1/3, 3-grams 0/2, 4-grams 0/1.
    # Exponential smoothing: the k-th order without a match gets precision 1 / (2^k * total):
    # 3-grams 1/(2*2) = 1/4, 4-grams 1/(4*1) = 1/4. Same length: BP = 1.
    # BLEU = (3/4 * 1/3 * 1/4 * 1/4)^(1/4) = (1/64)^(1/4) = 1 / (2 sqrt 2).
    scores = evaluate_rewrites(["a b c d"], ["a b x d"], {"s": [["a b c d"]]}).by_set("s")
    assert scores.bleu == pytest.approx(100 / (2 * math.sqrt(2)), abs=1e-9)
    assert "tok:13a" in scores.bleu_signature and "case:mixed" in scores.bleu_signature
    assert "smooth:exp" in scores.bleu_signature
    # case-sensitive (unlike SARI): O = "A b x d", "A" does not match "a" -> 1-grams 2/4,
    # 2-grams 0/3 (k=1: 1/6), 3-grams 0/2 (k=2: 1/8), 4-grams 0/1 (k=3: 1/8):
    # BLEU = (1/2 * 1/6 * 1/8 * 1/8)^(1/4) = (1/768)^(1/4)
    upper = evaluate_rewrites(["a b c d"], ["A b x d"], {"s": [["a b c d"]]}).by_set("s")
    assert upper.bleu == pytest.approx(100 * (1 / 768) ** 0.25, abs=1e-9)


def test_bleu_several_and_variable_references():
    # O = "a b c d" (4 tokens) against R = "a b c d e": every n-gram matches, r = 5 > c = 4:
    # BP = exp(1 - 5/4), BLEU = 100 exp(-1/4).
    one = evaluate_rewrites(["a b c d e"], ["a b c d"], {"s": [["a b c d e"]]}).by_set("s")
    assert one.bleu == pytest.approx(100 * math.exp(-0.25), abs=1e-9)
    # adding "x y z": the reference length is the closest (5 and 3 tie at distance 1: the shorter, 3),
    # so BP = 1 and BLEU = 100 (n-grams are matched against every reference).
    two = evaluate_rewrites(["a b c d e"], ["a b c d"], {"s": [["a b c d e", "x y z"]]}).by_set("s")
    assert two.bleu == pytest.approx(100.0, abs=1e-9)
    # a second sentence with one reference "a b c d e f g h" (len 8) and the output "a b c d": r = 3 + 8,
    # c = 8, BP = exp(1 - 11/8). (Had the missing second reference been an empty string, its length 0
    # would tie with 8 and win: BP = 1.)
    var = evaluate_rewrites(["a b c d e", "a b c d e f g h"], ["a b c d", "a b c d"],
                            {"s": [["a b c d e", "x y z"], ["a b c d e f g h"]]}).by_set("s")
    assert var.bleu == pytest.approx(100 * math.exp(1 - 11 / 8), abs=1e-9)
    assert var.references == 3


# --------------------------------------------------------------------------------------------------------
# reference-free measures


def test_chars_kept_words_and_identical():
    sources = ["abcd ef", "a  b", "xyz"]          # 7 + 4 + 3 = 14 characters
    predictions = ["abcd", "a b", "uvwxyz w"]     # 4 + 3 + 8 = 15 characters
    scores = evaluate_rewrites(sources, predictions, {"s": [["abcd"], ["a"], ["xyz", "xy"]]})
    assert scores.n == 3
    assert scores.chars_kept == pytest.approx(15 / 14, abs=TOL)
    assert scores.mean_words == pytest.approx((1 + 2 + 2) / 3, abs=TOL)
    # "a b" is "a  b" with its whitespace collapsed: identical; the others are not
    assert scores.identical == pytest.approx(1 / 3, abs=TOL)
    # references keep: sentence means 4, 1, (3 + 2)/2 = 2.5 -> 7.5 / 14
    assert scores.by_set("s").reference_chars_kept == pytest.approx(7.5 / 14, abs=TOL)


def test_evaluate_rewrites_rejects_bad_input():
    with pytest.raises(InputError):
        evaluate_rewrites([], [], {"s": []})
    with pytest.raises(InputError):
        evaluate_rewrites(["a"], ["a", "b"], {"s": [["a"]]})
    with pytest.raises(InputError):
        evaluate_rewrites(["a"], ["a"], {})
    with pytest.raises(InputError):
        evaluate_rewrites(["a"], ["a"], {"s": [[]]})
    with pytest.raises(InputError):
        evaluate_rewrites(["a"], ["a"], {"s": [["a"], ["b"]]})
    with pytest.raises(InputError):
        evaluate_rewrites(["a"], [None], {"s": [["a"]]})  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------------------
# files, id matching and the command

CORPUS = [
    {"id": "s1", "text": "a b c", "references": {"asset": ["a x c", "a b"], "turkcorpus": ["a b c"]}},
    {"id": "s2", "text": "d e f g", "references": {"asset": ["d e f g"], "turkcorpus": ["d f g", "e f"]}},
    {"id": "s3", "text": "h i", "references": {"asset": ["h"], "turkcorpus": ["h i"]}},
]


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


@pytest.fixture()
def corpus(tmp_path):
    return write_jsonl(tmp_path / "refs.jsonl", CORPUS)


def test_match_predictions_by_id():
    assert match_predictions(["a", "b"], {"b": "B", "a": "A"}) == ["A", "B"]
    with pytest.raises(InputError, match=r"1 reference ids have no prediction \('b'\)"):
        match_predictions(["a", "b"], {"a": "A"})
    with pytest.raises(InputError, match=r"1 predictions have an id that is not in the references \('c'\)"):
        match_predictions(["a"], {"a": "A", "c": "C"})
    many = {f"x{i}": "" for i in range(8)}
    with pytest.raises(InputError, match="and 3 more"):
        match_predictions([], many)


def test_parse_sets():
    assert parse_sets(None) == ("asset", "turkcorpus")
    assert parse_sets("turkcorpus") == ("turkcorpus",)
    for bad in ("", "asset,", "asset,asset"):
        with pytest.raises(InputError):
            parse_sets(bad)


def test_cli_scores_the_3_line_fixture(tmp_path, corpus, capsys):
    # rows in another order than the references, as dualdecomp rewrite writes them
    predictions = write_jsonl(tmp_path / "pred.jsonl", [
        {"id": "s3", "text": "h i", "rewrite": "h"},
        {"id": "s1", "text": "a b c", "rewrite": "a x c"},
        {"id": "s2", "text": "d e f g", "rewrite": "d e f g"},
    ])
    code = main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--references", corpus,
                 "--format", "json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    expected = evaluate_rewrites(
        ["a b c", "d e f g", "h i"], ["a x c", "d e f g", "h"],
        {s: [row["references"][s] for row in CORPUS] for s in ("asset", "turkcorpus")})
    assert report["n"] == 3 and report["failed"] == 0 and report["fields"] == {"rewrite": 3}
    # characters: (5 + 7 + 1) / (5 + 7 + 3); words (3 + 4 + 1) / 3; one output (s2) is its source
    assert report["chars_kept"] == pytest.approx(13 / 15, abs=TOL)
    assert report["mean_words"] == pytest.approx(8 / 3, abs=TOL)
    assert report["identical"] == pytest.approx(1 / 3, abs=TOL)
    assert list(report["sets"]) == ["asset", "turkcorpus"]
    for name in ("asset", "turkcorpus"):
        for key in ("sari", "add", "keep", "delete", "bleu"):
            assert report["sets"][name][key] == pytest.approx(getattr(expected.by_set(name), key), abs=TOL)
    assert report["sets"]["asset"]["references"] == 4 and report["sets"]["turkcorpus"]["references"] == 4
    # the plain-text report names every set; --sets picks one
    assert main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--references", corpus]) == 0
    text = capsys.readouterr().out
    assert "asset" in text and "turkcorpus" in text and "characters kept" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--references", corpus,
                 "--sets", "turkcorpus", "--format", "json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["sets"]) == ["turkcorpus"]


def test_cli_reads_compress_rows(tmp_path, corpus, capsys):
    # dualdecomp compress rows: text is the (tokenised) source and never the prediction; output (raw
    # text input) is preferred to compression; an error row is failed and scored as an empty output
    predictions = write_jsonl(tmp_path / "compress.jsonl", [
        {"id": "s1", "text": "a b c", "compression": "a b", "output": "a c", "certified": True},
        {"id": "s2", "text": "d e f g", "compression": "d f g", "certified": True},
        {"id": "s3", "text": "h i", "error": "too long"},
    ])
    assert main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--references", corpus,
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] == 1
    assert report["fields"] == {"output": 1, "compression": 1}
    assert report["chars_kept"] == pytest.approx((3 + 5 + 0) / 15, abs=TOL)
    expected = evaluate_rewrites(["a b c", "d e f g", "h i"], ["a c", "d f g", ""],
                                 {"asset": [row["references"]["asset"] for row in CORPUS]})
    assert report["sets"]["asset"]["sari"] == pytest.approx(expected.by_set("asset").sari, abs=TOL)


@pytest.mark.parametrize("rows, message", [
    ([{"id": "s1", "rewrite": "a"}, {"id": "s2", "rewrite": "d"}],
     "1 reference ids have no prediction ('s3')"),
    ([{"id": i, "rewrite": "x"} for i in ("s1", "s2", "s3", "s9")],
     "1 predictions have an id that is not in the references ('s9')"),
    ([{"id": i, "rewrite": "x"} for i in ("s1", "s2", "s3", "s1")], "id 's1' appears twice"),
    ([{"id": "s1", "text": "a b c"}], "no prediction"),
    ([{"rewrite": "a"}], "needs an \"id\""),
])
def test_cli_id_and_row_errors_exit_2(tmp_path, corpus, capsys, rows, message):
    predictions = write_jsonl(tmp_path / "pred.jsonl", rows)
    assert main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--references", corpus]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dualdecomp evaluate: error: ") and message in err
    assert "Traceback" not in err


def test_cli_option_errors_exit_2(tmp_path, corpus, capsys):
    predictions = write_jsonl(tmp_path / "pred.jsonl",
                              [{"id": r["id"], "rewrite": r["text"]} for r in CORPUS])
    cases = [
        (["--task", "rewrite", "--references", corpus], "needs --predictions"),
        (["--task", "rewrite", "--predictions", predictions, "--references", corpus, "--sets", "newsela"],
         "no reference set 'newsela' (this row has: asset, turkcorpus)"),
        (["--task", "rewrite", "--predictions", predictions, "--references", corpus, "--input", corpus],
         "--input: not an option of --task rewrite"),
        (["--task", "rewrite", "--predictions", str(tmp_path / "none.jsonl"), "--references", corpus],
         "cannot read"),
        (["--predictions", predictions], "--predictions is an option of --task rewrite"),
    ]
    for argv, message in cases:
        assert main(["evaluate", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)
    # argparse refuses an unknown task or format (usage error: 2)
    assert main(["evaluate", "--task", "paraphrase"]) == 2
    assert main(["evaluate", "--task", "rewrite", "--predictions", predictions, "--format", "xml"]) == 2


def test_help_mentions_the_rewrite_task_within_100_columns(capsys):
    assert main(["evaluate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--task {compress,rewrite}" in out and "--predictions" in out and "--sets" in out
    assert max(len(line) for line in out.splitlines()) <= 100


# --------------------------------------------------------------------------------------------------------
# the identity baseline on the shared dev set


def test_identity_baseline_on_dev():
    path = default_references_path()
    if not path.exists():
        pytest.skip(f"{path} is not here")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    sources = [r["text"] for r in rows]
    scores = evaluate_rewrites(sources, sources, {s: [r["references"][s] for r in rows]
                                                  for s in ("asset", "turkcorpus")})
    assert scores.n == 200 and scores.chars_kept == 1.0 and scores.identical == 1.0
    for s in scores.sets:
        # a copy adds and deletes nothing, so SARI is KEEP's F1 over 3
        assert s.add == 0.0 and s.delete == 0.0
        assert s.sari == pytest.approx(s.keep / 3, abs=TOL)
    # the issue quotes the identity baseline on the test sources: about 21 (ASSET) and 26 (TurkCorpus);
    # the dev sources are from the same pool
    assert 15 < scores.by_set("asset").sari < 30
    assert 20 < scores.by_set("turkcorpus").sari < 32


def test_evaluate_rewrite_files_matches_the_command(tmp_path, corpus):
    predictions = write_jsonl(tmp_path / "pred.jsonl",
                              [{"id": r["id"], "rewrite": r["text"]} for r in CORPUS])
    report = evaluate_rewrite_files(predictions, corpus, ("asset",))
    assert report.scores.identical == 1.0 and report.failed == 0
    assert [s.name for s in report.scores.sets] == ["asset"]
