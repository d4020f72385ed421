"""The rewriting corpus's data side (W3.3 item 1): reading, parsing with its cache, word alignment."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.rewriting import (
    RewritingExample,
    align_words,
    parse_examples,
    parse_texts,
    read_rewriting,
)
from dualdecomp.data.rewriting import parsed as parsed_module
from dualdecomp.data.rewriting.alignment import similarity
from dualdecomp.data.rewriting.alignment_scoring import (
    GoldAlignment,
    read_gold_alignments,
    score_alignments,
)

GOLD = Path(__file__).parent / "fixtures" / "rewriting" / "alignment_gold.jsonl"
MEASURED_GOLD_F1 = 0.968  # benchmarks/rewriting_aligners.py, "lexical" row (docs/rewriting.md)


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _row(ident="a", text="The cat sat.", refs=None) -> str:
    return json.dumps({"id": ident, "text": text,
                       "references": refs if refs is not None else {"asset": ["A cat sat."],
                                                                     "turkcorpus": ["The cat sat ."]}})


# --- reading -------------------------------------------------------------------------------------------


def test_read_rewriting_reads_examples(tmp_path):
    other = _row("b", "Dogs run.", {"asset": ["Dogs run."], "turkcorpus": ["x"]})
    path = _write(tmp_path, [_row("a"), "", other])
    examples = read_rewriting(path)
    assert [e.id for e in examples] == ["a", "b"]
    assert examples[0].references["asset"] == ("A cat sat.",)
    assert examples[1].reference_sets == ("asset", "turkcorpus")
    with pytest.raises(TypeError):
        examples[0].references["asset"] = ("changed",)


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"id": "x", "text": "t"}), "missing field(s) references"),
    (json.dumps({"id": 3, "text": "t", "references": {"asset": ["r"]}}), "'id' must be"),
    (json.dumps({"id": "x", "text": 5, "references": {"asset": ["r"]}}), "'text' must be a string"),
    (json.dumps({"id": "x", "text": "  ", "references": {"asset": ["r"], "turkcorpus": ["r"]}}),
     "empty text"),
    (json.dumps({"id": "x", "text": "t", "references": []}), "'references' must be"),
    (json.dumps({"id": "x", "text": "t", "references": {"asset": "r"}}), "must be a non-empty list"),
    (json.dumps({"id": "x", "text": "t", "references": {"asset": ["r", ""], "turkcorpus": ["r"]}}),
     "empty or non-string rewrite"),
    (json.dumps({"id": "x", "text": "t", "references": {"asset": ["r"]}}), "differ from the file's"),
    (_row("a"), "already on line 1"),
])
def test_read_rewriting_errors_name_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, [_row("a"), line])
    with pytest.raises(InputError) as err:
        read_rewriting(path)
    assert f"{path}:2" in str(err.value)
    assert message in str(err.value)


def test_read_rewriting_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        read_rewriting(tmp_path / "nope.jsonl")


def test_example_validates_itself():
    with pytest.raises(InputError, match="empty text"):
        RewritingExample("x", " ", {"asset": ("r",)})
    with pytest.raises(InputError, match="unpaired surrogate"):
        RewritingExample("x", "a\ud800", {"asset": ("r",)})


# --- parsing and its cache -----------------------------------------------------------------------------


def test_parse_texts_tokens_lemmas_tree():
    [p] = parse_texts(["The children  were running home."], ids=["s1"])
    assert p.tokens == ("The", "children", "were", "running", "home", ".")
    assert p.sentence.id == "s1"
    assert p.lemmas[1] == "child" and p.lemmas[3] == "run"
    assert p.sentence.spaces[1]  # the double space is dropped, its spacing kept
    assert p.tree.label == "TOP"
    assert p.tree.words() == list(p.tokens)


def test_parse_texts_rejects_blank():
    with pytest.raises(InputError, match="empty text"):
        parse_texts(["ok", "   "])


def test_parse_cache_round_trip(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "parses.json.gz"
    texts = ["Adjacent counties are Marin and Napa.", "Nearby counties are Marin and Napa.",
             "Adjacent counties are Marin and Napa."]
    first = parse_texts(texts, cache=cache)
    data = json.loads(gzip.decompress(cache.read_bytes()))
    assert data["format"] == "dualdecomp-rewriting-parses" and len(data["entries"]) == 2  # parsed once each
    stamp = cache.read_bytes()

    def no_parsing(*args, **kwargs):
        raise AssertionError("a cached text was parsed again")

    monkeypatch.setattr(parsed_module, "_parse", no_parsing)
    again = parse_texts(texts, cache=cache)
    assert again == first
    assert [p.tree for p in again] == [p.tree for p in first]
    assert cache.read_bytes() == stamp  # nothing new: not rewritten
    # a new pipeline version misses (and would parse)
    monkeypatch.setattr(parsed_module, "pipeline_version", lambda: "other-pipeline")
    with pytest.raises(AssertionError, match="parsed again"):
        parse_texts(texts[:1], cache=cache)


def test_parse_cache_is_deterministic(tmp_path):
    texts = ["One text.", "Another text here."]
    parse_texts(texts, cache=tmp_path / "a.json.gz")
    parse_texts(list(reversed(texts)), cache=tmp_path / "b.json.gz")
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.json.gz").read_bytes()


@pytest.mark.parametrize("content", [b"not gzip", gzip.compress(b'{"format": "other", "entries": {}}')])
def test_parse_cache_corrupt_is_model_error(tmp_path, content):
    cache = tmp_path / "bad.json.gz"
    cache.write_bytes(content)
    with pytest.raises(ModelError, match="delete it"):
        parse_texts(["A text."], cache=cache)


def test_parse_examples_reference_sets(tmp_path):
    path = _write(tmp_path, [_row("a")])
    examples = read_rewriting(path)
    [p] = parse_examples(examples, reference_sets=["turkcorpus"])
    assert set(p.references) == {"turkcorpus"}
    assert p.source.sentence.id == "a" and p.references["turkcorpus"][0].sentence.id == "a/turkcorpus/0"
    assert p.references["turkcorpus"][0].tokens == ("The", "cat", "sat", ".")
    [both] = parse_examples(examples)
    assert set(both.references) == {"asset", "turkcorpus"}
    with pytest.raises(InputError, match="unknown reference set 'newsela'.*asset, turkcorpus"):
        parse_examples(examples, reference_sets=["newsela"])


# --- alignment -----------------------------------------------------------------------------------------


def test_exact_case_lemma_and_edit_distance_stages():
    src = "The Cat was running to the neighbouring house".split()
    tgt = "the cat runs to a neighboring house".split()
    lem_s = "the cat be run to the neighbouring house".split()
    lem_t = "the cat run to a neighboring house".split()
    a = align_words(src, tgt, lem_s, lem_t)
    # exact (to, house), case (The/the, Cat/cat), lemma (running/runs), edit distance (neighbouring),
    # then the one-for-one substitution the/a between to and neighbouring
    assert set(a) == {(0, 0), (1, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6)}
    assert (3, 2) not in align_words(src, tgt)  # no lemmas: no lemma stage
    assert (6, 5) not in align_words(src, tgt, lem_s, lem_t, similarity_threshold=0.95)
    assert (6, 5) in align_words(src, tgt, lem_s, lem_t, similarity_threshold=0.9)


def test_edit_distance_ignores_short_tokens():
    assert align_words(["cat"], ["cut"], substitutions=False) == ()
    assert align_words(["cats"], ["cuts"], similarity_threshold=0.75, substitutions=False) == ((0, 0),)
    assert align_words(["cats"], ["cuts"], similarity_threshold=0.75, min_chars=5, substitutions=False) == ()


def test_each_token_aligned_at_most_once():
    a = align_words("the the".split(), "the the the".split())
    assert a == ((0, 0), (1, 1))
    b = align_words("the the the".split(), "the".split())
    assert len(b) == 1


def test_monotone_tie_break_prefers_the_continuing_run():
    # "the" occurs twice in the source; the target's "the" follows "on" as the second one does
    src = "the dog sat on the mat".split()
    tgt = "sat on the mat".split()
    assert align_words(src, tgt) == ((2, 0), (3, 1), (4, 2), (5, 3))


def test_nearest_position_tie_break():
    # no context decides between the two "x": the nearest predicted position does
    src = "x a b c d e f x".split()
    tgt = "z y w v u x".split()
    assert align_words(src, tgt, substitutions=False) == ((7, 5),)


def test_reordered_clause():
    src = "At the festival , Alain announced it .".split()
    tgt = "Alain announced at the festival it .".split()
    assert set(align_words(src, tgt)) == {(0, 2), (1, 3), (2, 4), (4, 0), (5, 1), (6, 5), (7, 6)}


def test_sandwiched_substitution_stage():
    src = "the drum attests his name".split()
    tgt = "the drum confirms his name".split()
    assert (2, 2) in align_words(src, tgt)
    assert (2, 2) not in align_words(src, tgt, substitutions=False)
    # two free words on one side: not one-for-one
    assert (2, 2) not in align_words("the drum clearly attests his".split(), tgt)
    # punctuation is never substituted
    assert align_words("a ; b".split(), "a . b".split()) == ((0, 0), (2, 2))


def test_lemma_lengths_checked():
    with pytest.raises(ValueError, match="source lemmas"):
        align_words(["a", "b"], ["a"], ["a"], ["a"])


words = st.lists(st.sampled_from(["the", "The", "cat", "cats", "sat", "on", "mat", "mats", ".", "x"]),
                 max_size=8)


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_alignment_properties(src, tgt):
    a = align_words(src, tgt)
    assert list(a) == sorted(set(a))
    assert len({i for i, _ in a}) == len(a) and len({j for _, j in a}) == len(a)
    assert all(0 <= i < len(src) and 0 <= j < len(tgt) for i, j in a)
    plain = align_words(src, tgt, substitutions=False, similarity_threshold=2.0)
    for i, j in plain:  # without stages 4 and 5 every link is a case-insensitive match
        assert src[i].lower() == tgt[j].lower()
    # every case-insensitive match between two free tokens is taken: the stages leave none unlinked
    free_s = set(range(len(src))) - {i for i, _ in plain}
    free_t = set(range(len(tgt))) - {j for _, j in plain}
    assert not any(src[i].lower() == tgt[j].lower() for i in free_s for j in free_t)


def _levenshtein(a: str, b: str) -> int:
    if not a or not b:
        return len(a) + len(b)
    return min(_levenshtein(a[1:], b) + 1, _levenshtein(a, b[1:]) + 1,
               _levenshtein(a[1:], b[1:]) + (a[0] != b[0]))


@settings(max_examples=200, deadline=None)
@given(st.text("abc", max_size=5), st.text("abc", max_size=5))
def test_similarity_matches_brute_force(a, b):
    expected = 1.0 if a == b else 1.0 - _levenshtein(a, b) / max(len(a), len(b))
    assert similarity(a, b) == pytest.approx(expected, abs=1e-12)
    assert similarity(a, b) == pytest.approx(similarity(b, a), abs=1e-12)


# --- scoring and the gold set --------------------------------------------------------------------------


def test_scores_by_hand():
    g = GoldAlignment("x", "asset", 0, "", "", ("a", "b", "c"), ("a", "b", "c"),
                      frozenset({(0, 0), (1, 1)}), frozenset({(2, 2)}))
    s = score_alignments([g], [[(0, 0), (2, 2), (1, 2)]])
    assert s.precision == pytest.approx(2 / 3)  # (0,0) sure, (2,2) possible, (1,2) wrong
    assert s.recall == pytest.approx(1 / 2)
    assert s.f1 == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))
    assert s.aer == pytest.approx(1 - (1 + 2) / (3 + 2))
    with pytest.raises(InputError):
        score_alignments([g], [])


def test_gold_file_is_well_formed():
    gold = read_gold_alignments(GOLD)
    assert len(gold) == 30 and len({(g.id, g.reference_set) for g in gold}) == 30
    for g in gold:
        assert g.sure.isdisjoint(g.possible)
        targets = [j for _, j in g.sure]
        assert len(targets) == len(set(targets))
    head = json.loads(GOLD.read_text(encoding="utf-8").splitlines()[0])
    assert "CC BY-NC 4.0" in head["note"] and "by hand" in head["note"]


def test_aligner_f1_on_the_gold_set():
    gold = read_gold_alignments(GOLD)
    parsed = parse_texts([t for g in gold for t in (g.source, g.target)])
    predicted = []
    for k, g in enumerate(gold):
        s, t = parsed[2 * k], parsed[2 * k + 1]
        assert (s.tokens, t.tokens) == (g.source_tokens, g.target_tokens)
        predicted.append(align_words(s.tokens, t.tokens, s.lemmas, t.lemmas))
    scores = score_alignments(gold, predicted)
    assert scores.f1 >= MEASURED_GOLD_F1 - 0.02
