"""Article agreement in rewrites (docs/rewriting.md, the eighteenth rule): which article a word takes,
the forbidden bigrams, and the chart under them against a brute-force enumeration of derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.trees import Tree, preterminal
from dualdecomp.models.rewriting.articles import (
    article_disagreements,
    forbid_article_disagreement,
    indefinite_article,
)
from dualdecomp.models.rewriting.decode_settings import ARTICLE_AGREEMENT, DecodeSettings
from dualdecomp.solvers.rewriting import (
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    rewriting_coverage_rules,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag
from tests.oracles.rewriting import best_rewrite, enumerate_rewrites


@pytest.mark.parametrize(("word", "article"), [
    ("epithet", "an"), ("eagle", "an"), ("Avro", "an"), ("hour", "an"), ("FBI", "an"),
    ("university", "a"), ("one", "a"), ("cat", "a"), ("European", "a"), ("8", None), ('"', None),
    ("-", None)])
def test_indefinite_article(word, article):
    assert indefinite_article(word) == article


def test_forbidden_bigrams_and_the_source_exemption():
    vocab = ("a", "An", "eagle", "cat", "8", "the")
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(8, 8))
    matrix[:, 6] = -np.inf  # nothing into <s>
    before = matrix.copy()
    out = forbid_article_disagreement(matrix, vocab, ("the", "cat"))
    assert np.array_equal(matrix, before)  # a new matrix; the argument is untouched
    forbidden = {(i, j) for i in range(8) for j in range(8)
                 if out[i, j] == -np.inf and before[i, j] > -np.inf}
    assert forbidden == {(0, 2), (1, 3), (1, 5)}  # "a eagle", "An cat", "An the"; "a a", "a An" free
    assert np.array_equal(out[np.isfinite(out)], before[np.isfinite(out)])
    # a bigram the source has stays allowed (compared lower-cased)
    kept = forbid_article_disagreement(matrix, vocab, ("A", "Eagle", "saw", "an", "cat", "an", "the"))
    assert np.array_equal(kept, before)


def test_article_disagreements_of_a_rewrite():
    source = "An eagle saw a cat".split()
    words = "A eagle saw an cat , an hour and a 8 or an a".split()
    assert article_disagreements(words, source) == [("A", "eagle"), ("an", "cat")]
    assert article_disagreements(source, source) == []


def test_no_matrix_and_nothing_to_forbid():
    assert forbid_article_disagreement(None, ("the", "cat"), ("the", "cat")) is None  # no article
    matrix = np.zeros((4, 4))
    assert forbid_article_disagreement(matrix, ("a", "cat"), ()) is matrix  # nothing disagrees
    out = forbid_article_disagreement(None, ("an", "cat"), ())
    V = 2
    assert out[0, 1] == -np.inf and out[0, 0] == 0.0
    assert np.all(out[:, V] == -np.inf) and np.all(out[V + 1, :] == -np.inf)  # <s> and </s> as the chart's
    assert out[V, V + 1] == 0.0  # the empty rewrite stays possible


def test_the_setting_round_trips_and_is_checked():
    flipped = DecodeSettings(article_agreement=not ARTICLE_AGREEMENT)
    assert flipped.as_dict()["article_agreement"] == (not ARTICLE_AGREEMENT)
    assert "article_agreement" not in DecodeSettings().as_dict()  # the default is left out
    assert DecodeSettings.from_meta({"decode": flipped.as_dict()}) == flipped
    assert DecodeSettings().replace(article_agreement=not ARTICLE_AGREEMENT) == flipped
    with pytest.raises(InputError):
        DecodeSettings(article_agreement="yes")  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        DecodeSettings.from_meta({"decode": {"lm_scale": 1.0, "article_agreement": 1}})


def test_training_stores_the_setting_only_when_turned_off():
    import argparse

    from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings
    from dualdecomp.models.rewriting.trainer import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    base = ["--data", "d", "--out", "o"]
    assert parser.parse_args(base).no_article_agreement is False
    assert parser.parse_args([*base, "--no-article-agreement"]).no_article_agreement is True
    on = RewriteTrainingSettings(data_dir="d", out_dir="o", cache_dir="c")
    off = RewriteTrainingSettings(data_dir="d", out_dir="o", cache_dir="c", article_agreement=False)
    assert on.decode.article_agreement is True and "article_agreement" not in on.decode.as_dict()
    assert off.decode.as_dict()["article_agreement"] is False
    with pytest.raises(InputError):
        RewriteTrainingSettings(data_dir="d", out_dir="o", cache_dir="c", article_agreement=None)


# --- the chart under the constraint, against the oracle ------------------------------------------------


def W(word: str) -> Frag:  # noqa: N802
    return Frag(WORD, word, (), True)


def V(label: str) -> Frag:  # noqa: N802
    return Frag(VAR, label, (), True)


def N(label: str, *kids: Frag) -> Frag:  # noqa: N802
    return Frag(NODE, label, tuple(kids))


def article_tree() -> Tree:
    """(S (NP (DT an) (NN eagle)) (VP (VBD saw) (NP (DT a) (NN cat))))"""
    first = Tree("NP", (preterminal("DT", "an", 0), preterminal("NN", "eagle", 1)))
    second = Tree("NP", (preterminal("DT", "a", 3), preterminal("NN", "cat", 4)))
    return Tree("S", (first, Tree("VP", (preterminal("VBD", "saw", 2), second))))


ARTICLE_RULES = [
    RewriteRule(N("DT", W("an")), N("DT", W("a")), (), (0,)),  # "a eagle"
    RewriteRule(N("DT", W("a")), N("DT", W("an")), (), (0,)),  # "an cat"
    RewriteRule(N("DT", W("an")), N("DT", W("the")), (), (0,)),
    RewriteRule(N("NN", W("cat")), N("NN", W("owl")), (), (0,)),  # "a owl", "an owl"
    RewriteRule(N("NP", V("DT"), V("NN")), N("NP", V("DT"), W("old"), V("NN")), (0, 1), (None,)),  # "an old"
    RewriteRule(N("VP", V("VBD"), V("NP")), N("VP", V("VBD"), W("an"), V("NP")), (0, 1), (None,)),  # "an a"
]


def _disagrees(words, source) -> bool:
    pairs = set(zip((w.lower() for w in source), (w.lower() for w in source[1:]), strict=False))
    return any(a.lower() in ("a", "an") and b.lower() not in ("a", "an")
               and indefinite_article(b) not in (None, a.lower())
               and (a.lower(), b.lower()) not in pairs for a, b in zip(words, words[1:], strict=False))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_chart_with_article_agreement_matches_the_oracle(seed):
    rng = np.random.default_rng(seed)
    tree = article_tree()
    hg = build_rewrite_hypergraph(tree, ARTICLE_RULES, rewriting_coverage_rules)
    table: dict[tuple[str, int], float] = {}

    def score(rule: RewriteRule, node: int) -> float:
        return table.setdefault((rule.key, node), float(np.round(rng.normal(), 3)))

    scores = np.array([score(hg.rule(e), int(hg.hyperedge_node[e])) for e in range(hg.num_hyperedges)])
    n = len(hg.vocab)
    lm = np.round(rng.normal(size=(n + 2, n + 2)), 3)
    lm[:, hg.bos] = -np.inf
    lm[hg.eos, :] = -np.inf
    ids = {w: i for i, w in enumerate(hg.vocab)}

    def lm_of(words) -> float:
        seq = [hg.bos, *(ids[w] for w in words), hg.eos]
        return float(sum(lm[a, b] for a, b in zip(seq, seq[1:], strict=False)))

    derivs = enumerate_rewrites(tree, ARTICLE_RULES, score, rewriting_coverage_rules)
    source = hg.words
    best = best_rewrite(derivs, lm_of, lambda words: not _disagrees(words, source))
    d = decode(hg, scores, forbid_article_disagreement(lm, hg.vocab, source))
    assert d.certified
    assert math.isclose(d.score, best[0], rel_tol=0, abs_tol=1e-9)
    assert not _disagrees(d.words, source)
