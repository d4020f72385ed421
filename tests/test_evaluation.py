"""Tests of dualdecomp/evaluation.py and the `evaluate` command."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.app.commands import evaluate as evaluate_command
from dualdecomp.app.evaluation import EvaluationReport, evaluate_files
from dualdecomp.core.errors import InputError
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.evaluation.compression import (
    METRICS,
    PairScores,
    bigram_f1,
    compression_rate,
    gr_f1,
    gr_triples,
    multiset_f1,
    padded_bigrams,
    rouge_f1,
    score_pair,
    token_f1,
)

CORPORA = Path(__file__).resolve().parent.parent / "data" / "corpora"

SOURCE = "The cat sat on the mat .".split()
REFS = ["The cat sat on the mat .", "The cat sat .", "cat sat ."]


def toks(s: str) -> tuple[str, ...]:
    return tuple(s.split())


def keep_of(source: list[str], comp: str) -> list[int]:
    """Greedy left-most keep vector of a subsequence (enough for these tests)."""
    keep, j, c = [], 0, comp.split()
    for tok in source:
        if j < len(c) and tok == c[j]:
            keep.append(1)
            j += 1
        else:
            keep.append(0)
    assert j == len(c)
    return keep


def sys_line(sid: str, comp: str, source: list[str] = SOURCE, **extra) -> dict:
    return {"id": sid, "text": " ".join(source), "compression": comp, "keep": keep_of(source, comp), **extra}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def gold(tmp_path) -> Path:
    return write_jsonl(tmp_path / "gold.jsonl", [
        {"id": "s1", "text": " ".join(SOURCE), "compressions": REFS},
        {"id": "s2", "text": "Dogs bark loudly at night .", "compressions": ["Dogs bark ."] * 3},
    ])


# ------------------------------------------------------------------------------------------ hand computed


def test_compression_rate():
    assert compression_rate(SOURCE, toks("The cat sat .")) == pytest.approx(4 / 7)
    assert compression_rate(SOURCE, ()) == 0.0
    with pytest.raises(InputError):
        compression_rate((), ())


def test_token_f1_hand_computed():
    # P = 1 (2/2), R = 2/4 → F1 = 2/3
    assert token_f1(toks("a b"), toks("a b c d")) == pytest.approx(2 / 3)
    # repeated tokens are clipped: overlap = min(2, 3) of "a" = 2; P = 2/4, R = 2/4
    assert token_f1(toks("a b a c"), toks("a a a d")) == pytest.approx(0.5)
    assert token_f1(toks("a a"), toks("a")) == pytest.approx(2 * 1 / 3)
    assert token_f1(toks("x"), toks("y")) == 0.0


def test_bigram_f1_padded_and_clipped():
    assert padded_bigrams(toks("a")) == {(None, "a"): 1, ("a", None): 1}
    assert padded_bigrams(()) == {(None, None): 1}
    # <s>a a a a</s> a a</s> vs <s>a a a</s>: (a, a) clipped to 1 → overlap 3 of 4 and 3
    assert bigram_f1(toks("a a a"), toks("a a")) == pytest.approx(6 / 7)
    # one-token output still has bigrams: {<s>a, a</s>} vs {<s>a, a b, b</s>} → overlap 1
    assert bigram_f1(toks("a"), toks("a b")) == pytest.approx(2 / 5)
    # same tokens, different order: only the boundary bigrams can differ
    assert bigram_f1(toks("a b"), toks("b a")) == 0.0


def test_empty_compressions():
    assert token_f1((), ()) == bigram_f1((), ()) == 1.0
    assert token_f1((), toks("a")) == bigram_f1((), toks("a")) == 0.0
    assert token_f1(toks("a"), ()) == bigram_f1(toks("a"), ()) == 0.0
    assert rouge_f1((), ()) == (1.0, 1.0, 1.0)
    assert rouge_f1((), toks("a b")) == (0.0, 0.0, 0.0)
    empty = Sentence((), (), (), (), ())
    one = Sentence(("go",), ("VERB",), ("VB",), (0,), ("ROOT",))
    assert gr_f1(empty, empty) == 1.0
    assert gr_f1(empty, one) == gr_f1(one, empty) == 0.0


def hand_sentence(words: str, heads: tuple[int, ...], labels: str) -> Sentence:
    w = tuple(words.split())
    return Sentence(w, ("X",) * len(w), ("XX",) * len(w), heads, tuple(labels.split()))


def test_gr_triples_and_f1_hand_computed():
    sys_ = hand_sentence("Dogs bark .", (2, 0, 2), "nsubj ROOT punct")
    ref = hand_sentence("Dogs bark loudly .", (2, 0, 2, 2), "nsubj ROOT advmod punct")
    assert gr_triples(sys_) == {("bark", "Dogs", "nsubj"): 1, ("ROOT", "bark", "ROOT"): 1,
                                ("bark", ".", "punct"): 1}
    # 3 shared triples out of 3 and 4
    assert gr_f1(sys_, ref) == pytest.approx(6 / 7)
    # a different label or head word breaks the triple
    other = hand_sentence("Dogs bark .", (2, 0, 2), "dobj ROOT punct")
    assert gr_f1(sys_, other) == pytest.approx(2 / 3)


def test_gr_triples_of_a_spacy_parse():
    sent = parse_tokens([toks("The cat sat on the mat .")])[0]
    triples = gr_triples(sent)
    assert sum(triples.values()) == len(sent.tokens)
    assert sum(c for (h, _, label), c in triples.items() if h == "ROOT" and label == "ROOT") == 1
    assert gr_f1(sent, parse_tokens([sent.tokens])[0]) == 1.0


def test_identical_pair_scores_one():
    parse = parse_tokens([SOURCE])[0]
    scores = score_pair(SOURCE, SOURCE, SOURCE, parse, parse)
    assert scores == PairScores(cr=1.0, token_f1=1.0, bigram_f1=1.0, gr_f1=1.0, rouge1=1.0, rouge2=1.0,
                                rougeL=1.0)
    # ROUGE-2 of a one-word output identical to the reference is 1 (rouge-score alone says 0)
    assert rouge_f1(toks("cat"), toks("cat")) == (1.0, 1.0, 1.0)


def test_rouge_matches_package():
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    sys_, ref = toks("The cat sat on the mat"), toks("cat sat on a mat .")
    got = rouge_f1(sys_, ref)
    want = scorer.score(" ".join(ref), " ".join(sys_))
    assert got == pytest.approx((want["rouge1"].fmeasure, want["rouge2"].fmeasure, want["rougeL"].fmeasure))


# ------------------------------------------------------------------------------------------ properties

WORDS = st.sampled_from(["a", "b", "c", "the", "The", ".", ",", "dog", "runs"])
SEQ = st.lists(WORDS, max_size=8).map(tuple)


@given(SEQ, SEQ)
def test_f1_metrics_bounded_and_symmetric(x, y):
    for metric in (token_f1, bigram_f1):
        v = metric(x, y)
        assert 0.0 <= v <= 1.0
        assert v == pytest.approx(metric(y, x))
    for v in rouge_f1(x, y):
        assert 0.0 <= v <= 1.0
    assert token_f1(x, x) == bigram_f1(x, x) == 1.0
    assert rouge_f1(x, x) == (1.0, 1.0, 1.0)


@given(st.lists(WORDS, min_size=1, max_size=10), st.data())
def test_token_f1_of_a_subsequence(source, data):
    keep = data.draw(st.lists(st.booleans(), min_size=len(source), max_size=len(source)))
    sub = tuple(t for t, k in zip(source, keep, strict=True) if k)
    # a deletion compression against its source: P = 1, R = |sub| / |source|
    assert token_f1(sub, source) == pytest.approx(2 * len(sub) / (len(sub) + len(source)))
    assert 0.0 <= compression_rate(source, sub) <= 1.0


@st.composite
def sentences(draw):
    n = draw(st.integers(0, 6))
    words = tuple(draw(st.lists(WORDS, min_size=n, max_size=n)))
    heads = tuple(draw(st.sampled_from([h for h in range(n + 1) if h != k])) for k in range(1, n + 1))
    labels = tuple(draw(st.lists(st.sampled_from(["nsubj", "ROOT", "det", "obj"]), min_size=n, max_size=n)))
    return Sentence(words, ("X",) * n, ("XX",) * n, heads, labels)


@given(sentences(), sentences())
def test_gr_f1_bounded_and_symmetric(x, y):
    v = gr_f1(x, y)
    assert 0.0 <= v <= 1.0
    assert v == pytest.approx(gr_f1(y, x))
    assert gr_f1(x, x) == 1.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORDS, min_size=1, max_size=8))
def test_gr_f1_of_spacy_parse_with_itself(words):
    a, b = parse_tokens([words, list(words)])
    assert gr_f1(a, b) == 1.0


@given(st.lists(st.floats(0, 1), min_size=0, max_size=5), st.lists(st.floats(0, 1), min_size=0, max_size=5))
def test_multiset_f1_bounded(xs, ys):
    from collections import Counter

    v = multiset_f1(Counter(round(x, 1) for x in xs), Counter(round(y, 1) for y in ys))
    assert 0.0 <= v <= 1.0


# ------------------------------------------------------------------------------------------ corpus level


def test_identical_system_scores_100(tmp_path, gold):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        {"id": "s1", "references": [{"compression": r, "keep": keep_of(SOURCE, r), "length": len(r.split())}
                                    for r in REFS]},
        sys_line("s2", "Dogs bark .", toks("Dogs bark loudly at night .")),
    ])
    report = evaluate_files(gold, sysf)
    for m in METRICS[1:]:
        assert getattr(report, m) == pytest.approx(1.0), m
    assert report.n == 2 and report.failed == 0 and report.missing == 0
    assert report.gold_length == 1 and report.mode == "mixed"
    assert "token F1 100.0" in report.to_line()


def test_multiple_references_are_averaged(tmp_path, gold):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        sys_line("s1", "The cat sat ."),
        sys_line("s2", "Dogs bark at night .", toks("Dogs bark loudly at night ."), certified=True,
                 seconds=0.5),
    ])
    report = evaluate_files(gold, sysf)
    # s1: against "The cat sat on the mat ." 2·4/(4+7); "The cat sat ." 1; "cat sat ." 2·3/(4+3)
    s1 = (8 / 11 + 1 + 6 / 7) / 3
    s2 = 2 * 3 / (5 + 3)
    assert report.token_f1 == pytest.approx((s1 + s2) / 2)
    assert report.cr == pytest.approx((4 / 7 + 5 / 6) / 2)
    assert report.reference_cr == pytest.approx(((7 + 4 + 3) / 21 + 3 / 6) / 2)
    assert report.certified == 1.0 and report.mean_seconds == 0.5  # only s2 says
    assert report.mode == "free" and report.gold_length == 0


def test_gold_length_mode_uses_one_output_per_reference(tmp_path, gold):
    outs = ["The cat sat on the mat .", "The cat sat .", "sat on ."]
    entries = [{"compression": o, "keep": keep_of(SOURCE, o), "length": len(o.split()), "certified": c,
                "seconds": t} for o, c, t in zip(outs, [True, True, False], [1.0, 2.0, 3.0], strict=True)]
    # the top-level compression (and its certificate and time) is not what gets scored in this mode
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        {**sys_line("s1", "cat", certified=True, seconds=9.0), "references": entries},
    ])
    report = evaluate_files(gold, sysf, allow_missing=True)
    assert report.n == 1 and report.missing == 1 and report.mode == "gold-length"
    assert report.token_f1 == pytest.approx((1 + 1 + 2 * 2 / 6) / 3)
    assert report.cr == pytest.approx((7 + 4 + 3) / 21)
    assert report.cr == pytest.approx(report.reference_cr)
    assert report.certified == pytest.approx(2 / 3)
    assert report.mean_seconds == pytest.approx(2.0)
    # without per-entry fields, the line's own are used
    bare = [{k: v for k, v in e.items() if k not in ("certified", "seconds")} for e in entries]
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        {**sys_line("s1", "cat", certified=True, seconds=9.0), "references": bare},
    ])
    report = evaluate_files(gold, sysf, allow_missing=True)
    assert report.certified == 1.0 and report.mean_seconds == 9.0


def test_failed_lines_are_counted_and_excluded(tmp_path, gold):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        {"id": "s1", "error": "solver failed"},
        sys_line("s2", "Dogs bark .", toks("Dogs bark loudly at night .")),
    ])
    report = evaluate_files(gold, sysf)
    assert report.n == 1 and report.failed == 1
    assert report.token_f1 == 1.0
    assert report.certified is None and report.mean_seconds is None
    d = report.to_dict()
    assert d["failed"] == 1 and d["n"] == 1 and d["mode"] == "free"
    json.dumps(d)
    all_failed = write_jsonl(tmp_path / "sys2.jsonl",
                             [{"id": "s1", "error": "x"}, {"id": "s2", "error": "y"}])
    with pytest.raises(InputError, match="no sentence to evaluate"):
        evaluate_files(gold, all_failed)


def test_empty_compression_line(tmp_path, gold):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        {"id": "s1", "compression": "", "keep": [0] * 7},
        {"id": "s2", "keep": [0] * 6},
    ])
    report = evaluate_files(gold, sysf)
    for m in METRICS:
        assert getattr(report, m) == 0.0, m


def test_markdown_row_and_header():
    report = EvaluationReport(cr=0.5, token_f1=0.75, bigram_f1=0.5, gr_f1=0.25, rouge1=0.7, rouge2=0.6,
                              rougeL=0.65, n=10, failed=1, certified=0.9, mean_seconds=0.0123)
    header = EvaluationReport.markdown_header().splitlines()
    row = report.to_markdown_row("DD | trigram")
    assert len(header) == 2
    assert header[0].count("|") == header[1].count("|") == row.count("|") - row.count("\\|")
    assert "| 75.0 |" in row and "90.0%" in row and "DD \\| trigram" in row


# ------------------------------------------------------------------------------------------ input errors


@pytest.mark.parametrize("line, message", [
    ("{not json", r"sys\.jsonl:2: invalid JSON"),
    (json.dumps({"id": "zz", "compression": "a"}), "'zz' is not in the gold corpus"),
    (json.dumps({"compression": "Dogs"}), "missing or invalid 'id'"),
    (json.dumps({"id": "s1", "compression": "cat The"}), "'s1': compression is not a subsequence"),
    (json.dumps({"id": "s1", "compression": "cat", "keep": [1, 0, 0, 0, 0, 0, 0]}),
     "'s1': 'keep' is inconsistent with 'compression'"),
    (json.dumps({"id": "s1", "keep": [1, 0]}), "'keep' has 2 entries"),
    (json.dumps({"id": "s1", "keep": [2, 0, 0, 0, 0, 0, 0]}), "'keep' must be a list of 0/1"),
    (json.dumps({"id": "s1"}), "no 'compression' nor 'keep'"),
    (json.dumps({"id": "s1", "text": "A cat", "compression": "cat"}), "'text' differs from the gold text"),
    (json.dumps({"id": "s1", "references": [{"compression": "cat"}]}), "1 entries in 'references'"),
    (json.dumps({"id": "s1", "references": [{"compression": c} for c in ["The cat sat .", "cat", "sat"]]}),
     r"references\[0\]: id 's1': compression has 4 tokens, gold reference 0 has 7"),
    (json.dumps({"id": "s1", "references": [{"compression": r, "length": 1} for r in REFS]}),
     "'length' is 1"),
    (json.dumps({"id": "s1", "compression": "cat", "seconds": "fast"}), "'seconds' must be a finite number"),
    (json.dumps({"id": "s2", "compression": "Dogs"}), "'s2' appears twice"),
])
def test_input_errors(tmp_path, gold, line, message):
    first = json.dumps(sys_line("s2", "Dogs bark .", toks("Dogs bark loudly at night .")))
    sysf = tmp_path / "sys.jsonl"
    sysf.write_text(first + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message):
        evaluate_files(gold, sysf, allow_missing=True)


def test_missing_gold_ids(tmp_path, gold):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [sys_line("s1", "The cat sat .")])
    with pytest.raises(InputError, match="1 of 2 gold sentences have no output line"):
        evaluate_files(gold, sysf)
    report = evaluate_files(gold, sysf, allow_missing=True)
    assert report.n == 1 and report.missing == 1 and "missing=1" in report.to_line()


def test_missing_system_file(tmp_path, gold):
    with pytest.raises(InputError, match="cannot read"):
        evaluate_files(gold, tmp_path / "absent.jsonl")


# ------------------------------------------------------------------------------------------ command


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="dualdecomp")
    evaluate_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_command_outputs(tmp_path, gold, capsys):
    sysf = write_jsonl(tmp_path / "sys.jsonl", [
        sys_line("s1", "The cat sat ."),
        sys_line("s2", "Dogs bark .", toks("Dogs bark loudly at night ."), certified=False, seconds=0.2),
    ])
    base = ["evaluate", "--input", str(gold), "--output", str(sysf)]
    assert run_cli(base) == 0
    text = capsys.readouterr().out
    for label in ("CR", "token F1", "bigram F1", "GR-F1", "ROUGE-1", "ROUGE-2", "ROUGE-L"):
        assert label in text
    assert run_cli([*base, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["n"] == 2 and 0 < d["token_f1"] <= 1 and d["certified"] == 0.0
    assert run_cli([*base, "--markdown", "--name", "keep4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].startswith("| keep4 |")
    with pytest.raises(SystemExit):
        run_cli([*base, "--json", "--markdown"])


def test_keep_everything_on_broadcast_dev(tmp_path):
    """docs/architecture.md §4: keeping every word scores token F1 ≈ 84 on the broadcast corpus."""
    gold = CORPORA / "broadcast.dev.jsonl"
    rows = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        rows.append({"id": d["id"], "compression": d["text"], "keep": [1] * len(d["text"].split())})
    report = evaluate_files(gold, write_jsonl(tmp_path / "all.jsonl", rows))
    assert report.n == 88 and report.cr == 1.0
    assert 0.82 < report.token_f1 < 0.86
    assert not math.isnan(report.reference_cr) and report.reference_cr < 0.8


def test_at_reference_lengths_decodes_once_per_length() -> None:
    from dualdecomp.models.evaluation.compression import at_reference_lengths, bigram_f1, token_f1

    tokens = "the cat sat on the mat".split()
    calls = []

    def keep_at(length: int) -> list[bool]:
        calls.append(length)
        return [i < length for i in range(len(tokens))]

    refs = [["the", "cat", "sat"], ["cat", "sat", "mat"], ["the", "mat"]]
    got = at_reference_lengths(tokens, refs, keep_at)
    assert calls == [3, 2]
    expected = [bigram_f1(tokens[:3], refs[0]), bigram_f1(tokens[:3], refs[1]),
                bigram_f1(tokens[:2], refs[2])]
    assert got == sum(expected) / 3
    assert at_reference_lengths(tokens, refs[:1], keep_at, token_f1) == 1.0
