"""The rewriting chart (W3.3 item 3) against hand cases and a brute-force enumeration of derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.trees import Tree, preterminal
from dualdecomp.solvers.rewriting import (
    APPROXIMATE,
    EXACT,
    Budget,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    derivation_score,
    detokenise_words,
    joins_left,
    joins_right,
    rewriting_coverage_rules,
    space_between,
    text_chars,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag
from tests.oracles.rewriting import best_rewrite, enumerate_rewrites

LABELS = ("A", "B", "C")
WORDS = ("x", "yy", ",", "'s", "z", "(", "-")
NEW_WORDS = ("w", "vvv", ".", "n't", "x", "$", "-", ")")
# "(" and "$" attach to the right, "-" to both sides, "," "'s" "." "n't" ")" to the left: the character
# budget's pairwise spaces (text.space_between) are exercised by the oracle tests below


def W(word: str, kept: bool = True) -> Frag:  # noqa: N802
    return Frag(WORD, word, (), kept)


def V(label: str, kept: bool = True) -> Frag:  # noqa: N802
    return Frag(VAR, label, (), kept)


def N(label: str, *kids: Frag) -> Frag:  # noqa: N802
    return Frag(NODE, label, tuple(kids))


def sentence() -> Tree:
    """(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"""
    np_ = Tree("NP", (preterminal("DT", "the", 0), preterminal("NN", "cat", 1)))
    pp = Tree("PP", (preterminal("IN", "on", 3),
                     Tree("NP", (preterminal("DT", "the", 4), preterminal("NN", "mat", 5)))))
    vp = Tree("VP", (preterminal("VBD", "sat", 2), pp))
    return Tree("TOP", (Tree("S", (np_, vp, preterminal(".", ".", 6))),))


def decode_rules(rules: list[RewriteRule], bonus: dict[str, float], **kw):
    """Decode the sentence with coverage rules (copy 0.01, delete -0.01) and ``rules`` scored by ``bonus``."""
    hg = build_rewrite_hypergraph(sentence(), rules, rewriting_coverage_rules)
    scores = np.array([bonus.get(hg.rule(e).key, 0.01 if "copy" in hg.rule(e).origins else -0.01)
                       for e in range(hg.num_hyperedges)])
    return hg, decode(hg, scores, **kw)


# --- text -------------------------------------------------------------------------------------------


def test_joins_left_and_detokenise() -> None:
    assert [joins_left(w) for w in (",", ".", "?!", ")", "'s", "n't", "N'T", "%", "(", "cat", "-", "", "$")] \
        == [True, True, True, True, True, True, True, True, False, False, True, False, False]
    assert [joins_right(w) for w in ("(", "[", "$", "£", "-", ")", ",", "cat", "", '"')] \
        == [True, True, True, True, True, False, False, False, False, False]
    words = ["He", "did", "n't", "go", "(", "far", ")", ",", "Ann", "'s", "cat", "."]
    assert detokenise_words(words) == "He didn't go (far), Ann's cat."
    assert text_chars(words) == len(detokenise_words(words))
    assert text_chars([]) == 0 and detokenise_words([]) == ""


@pytest.mark.parametrize("words, text", [
    (["a", "well", "-", "known", "moon"], "a well-known moon"),
    (["a", "180", "km", "-", "wide", "(", "111.85", "mile", "-", "wide", ")", "strait"],
     "a 180 km-wide (111.85 mile-wide) strait"),
    (["for", "US", "$", "750", "."], "for US $750."),
    (["(", "(", "x", ")", ")"], "((x))"),
    (["x", "-", "(", "y", ")", "-", "z"], "x-(y)-z"),
    (["$", "-", ",", "$"], "$-, $"),
    (["non", "-"], "non-"),
    (["-"], "-"),
])
def test_pairwise_detokenisation_and_its_length(words, text) -> None:
    assert detokenise_words(words) == text
    assert text_chars(words) == len(text)
    for a, b in zip(words, words[1:], strict=False):
        assert space_between(a, b) == (0 if joins_left(b) or joins_right(a) else 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["x", "yy", ",", "(", ")", "-", "$", "'s", ".", '"', "n't"]), max_size=8))
def test_text_chars_is_the_detokenised_length(words) -> None:
    assert text_chars(words) == len(detokenise_words(words))


def test_budget_validation() -> None:
    for bad in (lambda: Budget.words(-1), lambda: Budget.chars(2.5), lambda: Budget.ratio(float("nan")),
                lambda: Budget("lines", 3), lambda: Budget.words(True)):
        with pytest.raises(InputError):
            bad()
    assert Budget.ratio(0.29).limit(100) == 29
    assert Budget.ratio(0.5).limit(25) == 12
    assert Budget.chars(7).limit(1000) == 7


# --- hand cases, one per operation ------------------------------------------------------------------


def test_copy_is_identity() -> None:
    hg, d = decode_rules([], {})
    assert d.words == ("the", "cat", "sat", "on", "the", "mat", ".")
    assert d.text == "the cat sat on the mat."
    assert d.operations.as_dict() == {"kept": 7, "deleted": 0, "substituted": 0, "reordered": 0,
                                      "inserted": 0}
    assert d.certified and d.method == EXACT


def test_substitution() -> None:
    rule = RewriteRule(N("NN", W("cat")), N("NN", W("feline")), (), (0,))
    hg, d = decode_rules([rule], {rule.key: 1.0})
    assert "feline" in hg.vocab
    assert d.words == ("the", "feline", "sat", "on", "the", "mat", ".")
    assert d.operations.substituted == 1 and d.operations.kept == 6
    assert d.score > 1.0


def test_phrasal_substitution_and_insertion() -> None:
    # (VP (VBD sat) @PP) -> (VP "was" "sitting" @PP): "sat" substituted by "sitting", "was" inserted
    rule = RewriteRule(N("VP", N("VBD", W("sat")), V("PP")), N("VP", W("was"), W("sitting"), V("PP")),
                       (0,), (None, 0))
    hg, d = decode_rules([rule], {rule.key: 0.5})
    assert d.words == ("the", "cat", "was", "sitting", "on", "the", "mat", ".")
    ops = d.operations
    assert (ops.inserted, ops.substituted, ops.kept, ops.deleted) == (1, 1, 6, 0)


def test_reordering() -> None:
    # (S @NP @VP @.) -> (S @VP @NP @.)
    rule = RewriteRule(N("S", V("NP"), V("VP"), V(".")), N("S", V("VP"), V("NP"), V(".")), (1, 0, 2), ())
    hg, d = decode_rules([rule], {rule.key: 1.0})
    assert d.words == ("sat", "on", "the", "mat", "the", "cat", ".")
    assert d.operations.reordered == 1 and d.operations.kept == 7


def test_deletion_of_a_subtree() -> None:
    # (VP @VBD ~PP) -> (VP @VBD): the PP's three words are deleted
    rule = RewriteRule(N("VP", V("VBD"), V("PP", kept=False)), N("VP", V("VBD")), (0,), ())
    hg, d = decode_rules([rule], {rule.key: 1.0})
    assert d.words == ("the", "cat", "sat", ".")
    assert d.operations.deleted == 3 and d.operations.kept == 4
    used = [hg.hyperedge_rule[e] for e in d.hyperedges]
    assert hg.rules.index(rule) in used
    e = next(e for e in d.hyperedges if hg.rule(e) == rule)
    assert sorted(hg.dropped(e).tolist()) == [3, 4, 5]


def test_category_change() -> None:
    # the PP rewritten into an ADVP "there"; the VP takes an ADVP where the source has a PP
    pp = RewriteRule(N("PP", V("IN", kept=False), V("NP", kept=False)), N("ADVP", W("there")), (), (None,))
    vp = RewriteRule(N("VP", V("VBD"), V("PP")), N("VP", V("VBD"), V("ADVP")), (0, 1), ())
    hg, d = decode_rules([pp, vp], {pp.key: 0.5, vp.key: 0.5})
    assert d.words == ("the", "cat", "sat", "there", ".")
    ops = d.operations
    assert (ops.deleted, ops.inserted, ops.kept) == (3, 1, 4)
    labels = {hg.vertex_label[int(hg.hyperedge_head[e])] for e in d.hyperedges}
    assert "ADVP" in labels


def test_everything_deleted() -> None:
    # (S ~NP ~VP ~.) -> (S): the empty rewrite, scored lm[bos, eos]
    rule = RewriteRule(N("S", V("NP", kept=False), V("VP", kept=False), V(".", kept=False)), N("S"), (), ())
    hg = build_rewrite_hypergraph(sentence(), [rule], rewriting_coverage_rules)
    scores = np.array([2.0 if hg.rule(e) == rule else 0.0 for e in range(hg.num_hyperedges)])
    lm = np.zeros((len(hg.vocab) + 2,) * 2)
    lm[hg.bos, hg.eos] = -0.5
    d = decode(hg, scores, lm)
    assert d.words == () and d.text == ""
    assert math.isclose(d.score, 1.5) and math.isclose(d.lm_score, -0.5)
    assert d.operations.deleted == 7 and d.operations.kept == 0
    assert decode(hg, scores, lm, Budget.words(0)).words == ()
    assert decode(hg, scores, lm, Budget.chars(0)).words == ()
    lm[hg.bos, hg.eos] = -5.0  # now any non-empty rewrite (score 0, LM 0) wins
    d = decode(hg, scores, lm)
    assert d.words and d.score == 0.0


def test_infeasible_budget_raises() -> None:
    hg = build_rewrite_hypergraph(sentence(), [], rewriting_coverage_rules)
    scores = np.zeros(hg.num_hyperedges)
    with pytest.raises(InputError, match="at most 7 words"):
        decode(hg, scores, budget=Budget.words(20))
    with pytest.raises(InputError, match="characters"):
        decode(hg, scores, budget=Budget.chars(1))
    with pytest.raises(InputError):
        decode(hg, scores[:-1])
    with pytest.raises(InputError):
        decode(hg, scores, lm=np.zeros((3, 3)))
    with pytest.raises(InputError):
        decode(hg, scores, max_states=0)


def test_budgets_on_the_sentence() -> None:
    hg = build_rewrite_hypergraph(sentence(), [], rewriting_coverage_rules)
    rng = np.random.default_rng(3)
    scores = rng.normal(size=hg.num_hyperedges)
    lm = rng.normal(size=(len(hg.vocab) + 2,) * 2)
    d = decode(hg, scores, lm, Budget.words(3))
    assert len(d.words) == 3 and d.count == 3
    d = decode(hg, scores, lm, Budget.chars(12))
    assert d.chars <= 12 and d.count == d.chars and d.limit == 12
    d = decode(hg, scores, lm, Budget.ratio(0.5))
    assert d.limit == len("the cat sat on the mat.") // 2 and d.chars <= d.limit


# --- random instances against the oracle ------------------------------------------------------------


def random_tree(rng: np.random.Generator, n: int) -> Tree:
    items = [Tree(str(rng.choice(["P", "Q"])), (Tree(str(rng.choice(WORDS)), (), i),)) for i in range(n)]
    while len(items) > 1:
        i = int(rng.integers(0, len(items)))
        j = min(len(items), i + int(rng.integers(1, 4)))
        node = Tree(str(rng.choice(LABELS)), tuple(items[i:j]))
        if rng.random() < 0.2:
            node = Tree(str(rng.choice(LABELS)), (node,))
        items[i:j] = [node]
    return Tree("TOP", (items[0],))


def random_rule(rng: np.random.Generator, node: Tree) -> RewriteRule:
    """A random rewriting rule whose source matches ``node`` (depth 1 or 2, random deletions, substitutions,
    insertions, reordering and category changes)."""
    src_words: list[Frag] = []
    linked: list[Frag] = []

    def grow(t: Tree, depth: int) -> Frag:
        if t.is_leaf:
            f = W(t.label, bool(rng.random() < 0.7))
            src_words.append(f)
            return f
        if depth > 0 and (t.is_preterminal or rng.random() < 0.5):
            return N(t.label, *(grow(c, depth - 1) for c in t.children))
        f = V(t.label, bool(rng.random() < 0.75))
        if f.kept:
            linked.append(f)
        return f

    source = N(node.label, *(grow(c, 1) for c in node.children))
    seq: list[tuple[Frag, int | None]] = []
    for j, f in enumerate(src_words):
        if f.kept:
            word = f.label if rng.random() < 0.6 else str(rng.choice(NEW_WORDS))
            seq.append((W(word), j))
    links = list(range(len(linked)))
    if rng.random() < 0.4:
        rng.shuffle(links)
    cats = [lv.label if rng.random() < 0.8 else str(rng.choice(LABELS)) for lv in linked]
    var_items = [(V(cats[k]), -1 - k) for k in links]
    items = seq + var_items
    order = rng.permutation(len(items)) if rng.random() < 0.3 else np.arange(len(items))
    items = [items[int(i)] for i in order]
    while rng.random() < 0.3:
        items.insert(int(rng.integers(0, len(items) + 1)), (W(str(rng.choice(NEW_WORDS))), None))
    # target variables must appear in `links` order: renumber after the shuffles above
    tvars = [code for _, code in items if code is not None and code < 0]
    links_out = tuple(-1 - code for code in tvars)
    wlinks = tuple(code for f, code in items if f.kind == WORD)
    label = node.label if node.label == "TOP" or rng.random() < 0.8 else str(rng.choice(LABELS))
    if len(items) == 1 and items[0][0].kind == VAR and label != "TOP" and rng.random() < 0.5:
        target = V(items[0][0].label)
    elif not items and rng.random() < 0.5:
        target = N(label, W(str(rng.choice(NEW_WORDS))))
        wlinks = (None,)
    else:
        target = N(label, *(f for f, _ in items))
    return RewriteRule(source, target, links_out, wlinks)


def random_instance(seed: int):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, int(rng.integers(1, 6)))
    internal = [t for t in tree.preorder() if not t.is_leaf]
    rules = [random_rule(rng, internal[int(rng.integers(0, len(internal)))])
             for _ in range(int(rng.integers(0, 7)))]
    wide = [t for t in internal if len(t.children) >= 2]
    if wide and rng.random() < 0.6:  # a rule that reverses a node's children
        node = wide[int(rng.integers(0, len(wide)))]
        src = [W(c.label) if c.is_leaf else V(c.label) for c in node.children]
        nvars = sum(1 for f in src if f.kind == VAR)
        words = [j for j, f in enumerate([f for f in src if f.kind == WORD])]
        rules.append(RewriteRule(N(node.label, *src), N(node.label, *reversed(src)),
                                 tuple(range(nvars - 1, -1, -1)), tuple(reversed(words))))
    return rng, tree, rules


def _setup(seed: int):
    rng, tree, rules = random_instance(seed)
    hg = build_rewrite_hypergraph(tree, rules, rewriting_coverage_rules)
    table: dict[tuple[str, int], float] = {}

    def score(rule: RewriteRule, node: int) -> float:
        key = (rule.key, node)
        if key not in table:
            table[key] = float(np.round(rng.normal(), 3))
        return table[key]

    scores = np.array([score(hg.rule(e), int(hg.hyperedge_node[e])) for e in range(hg.num_hyperedges)])
    V_ = len(hg.vocab)
    lm = np.round(rng.normal(size=(V_ + 2, V_ + 2)), 3)
    if rng.random() < 0.3:
        lm[rng.random(lm.shape) < 0.15] = -np.inf
    ids = {w: i for i, w in enumerate(hg.vocab)}

    def lm_of(words) -> float:
        seq = [hg.bos, *(ids[w] for w in words), hg.eos]
        return float(sum(lm[a, b] for a, b in zip(seq, seq[1:], strict=False)))

    derivs = enumerate_rewrites(tree, rules, score, rewriting_coverage_rules)
    return rng, tree, hg, scores, lm, lm_of, derivs


def random_budget(rng: np.random.Generator, hg) -> Budget | None:
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.5:
        return Budget.words(int(rng.integers(0, hg.n + 3)))
    if r < 0.75:
        return Budget.chars(int(rng.integers(0, hg.source_chars + 6)))
    return Budget.ratio(float(np.round(rng.uniform(0.0, 1.4), 2)))


def allowed(budget: Budget | None, source_chars: int):
    if budget is None:
        return lambda words: True
    limit = budget.limit(source_chars)
    if budget.kind == "words":
        return lambda words: len(words) == limit
    return lambda words: text_chars(words) <= limit


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_chart_matches_oracle(seed: int) -> None:
    rng, tree, hg, scores, lm, lm_of, derivs = _setup(seed)
    budget = random_budget(rng, hg)
    best = best_rewrite(derivs, lm_of, allowed(budget, hg.source_chars))
    if best is None:
        with pytest.raises(InputError):
            decode(hg, scores, lm, budget)
        return
    d = decode(hg, scores, lm, budget)
    assert d.certified and d.method == EXACT
    assert math.isclose(d.score, best[0], rel_tol=0, abs_tol=1e-9)
    total, words = derivation_score(hg, scores, lm, d.hyperedges)
    assert words == d.words
    assert math.isclose(total, d.score, rel_tol=0, abs_tol=1e-9)
    assert math.isclose(lm_of(d.words), d.lm_score, rel_tol=0, abs_tol=1e-9)
    assert allowed(budget, hg.source_chars)(d.words)
    # the operations of the chart's derivation are those of some oracle derivation with its yield and score
    same = [o for o in derivs if o.words == d.words and math.isclose(o.score + lm_of(o.words), d.score,
                                                                      abs_tol=1e-9)]
    assert tuple(d.operations.as_dict().values()) in {o.operations for o in same}
    ops = d.operations
    assert ops.kept + ops.substituted + ops.inserted == len(d.words)
    assert ops.kept + ops.substituted + ops.deleted == hg.n


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4))
def test_beam_never_certifies_when_it_prunes(seed: int, max_states: int) -> None:
    rng, tree, hg, scores, lm, lm_of, derivs = _setup(seed)
    budget = random_budget(rng, hg)
    best = best_rewrite(derivs, lm_of, allowed(budget, hg.source_chars))
    try:
        d = decode(hg, scores, lm, budget, max_states=max_states)
    except SolverError:  # the beam pruned, and lost every derivation within the budget (if there was one)
        if best is not None:
            assert decode(hg, scores, lm, budget).peak_states > max_states
        return
    except InputError:  # an exact decode: no derivation meets the budget
        assert best is None
        return
    assert best is not None
    total, _ = derivation_score(hg, scores, lm, d.hyperedges)
    assert math.isclose(total, d.score, rel_tol=0, abs_tol=1e-9)
    assert d.score <= best[0] + 1e-9
    assert allowed(budget, hg.source_chars)(d.words)
    if d.certified:
        assert d.method == EXACT and d.peak_states <= max_states
        assert math.isclose(d.score, best[0], rel_tol=0, abs_tol=1e-9)
        exact = decode(hg, scores, lm, budget)
        assert exact.states == d.states
    else:
        assert d.method == APPROXIMATE
        assert decode(hg, scores, lm, budget).peak_states > max_states


def test_sentence_case_follows_the_source():
    from dualdecomp.solvers.rewriting import sentence_case

    assert sentence_case("the cat sat.", "The cat sat on the mat.") == "The cat sat."
    assert sentence_case("\"the cat\" sat.", "\"The cat\" sat.") == "\"The cat\" sat."
    assert sentence_case("iPhone sales rose.", "iPhone sales rose sharply.") == "iPhone sales rose."
    assert sentence_case("", "The end.") == ""
    assert len(sentence_case("the end.", "The end.")) == len("the end.")


def test_rule_word_case_mends_the_case_a_rule_brought():
    from dualdecomp.solvers.rewriting import rewrite_text, rule_word_case

    source = "The Administrators are, by contrast, appointed by the Governor-General."
    words = ("the", "Administrators", "are", "made", "By", "the", "Governor-General", ".")
    assert rule_word_case(words, source) == ("the", "Administrators", "are", "made", "by", "the",
                                             "Governor-General", ".")
    assert rewrite_text(words, source) == "The Administrators are made by the Governor-General."
    # the first word, a word after a sentence break or an opening quotation, a copied capital, "I",
    # an acronym and a capitalised content word are left as they are
    assert rule_word_case(("Also", "it", "."), "It ran.") == ("Also", "it", ".")
    assert rule_word_case(("it", "ran", ".", "Also", "it", "hid"), "It ran and hid.")[3] == "Also"
    assert rule_word_case(("a", "\"", "Just", "Say", "No", "\""), "a \"Just Say No\" campaign") \
        == ("a", "\"", "Just", "Say", "No", "\"")
    assert rule_word_case(("he", "and", "I", "saw", "US", "IT", "Army"), "He saw it and us.") \
        == ("he", "and", "I", "saw", "US", "IT", "Army")
    # a function word in capitals of three letters or more, and a capital the source shows only as its
    # sentence start ("On September 17, ...") are lowered; one it shows mid-sentence is kept
    assert rule_word_case(("Whedon", "said", "On", "the", "site", "THAT", "it", "ended"),
                          "On September 17, Whedon announced it.") \
        == ("Whedon", "said", "on", "the", "site", "that", "it", "ended")
    assert rule_word_case(("he", "saw", "On", "Top"), "He saw \"On Top\".") == ("he", "saw", "On", "Top")
    assert rule_word_case(("he", "saw", "On"), "He ran. On the road he saw it.")[2] == "on"
    # a word the source writes one way inside a sentence is written that way, content word or not
    assert rule_word_case(("the", "biggest", "Known", "moon", "in", "july"),
                          "The largest known moon was seen in July.") \
        == ("the", "biggest", "known", "moon", "in", "July")
    # written so at the source's start: the source decides nothing ("Year" and "year")
    assert rule_word_case(("The", "Year", "Round", "School", "lasts", "a", "year"),
                          "Year-Round School lasts the entire year.")[1] == "Year"
    # the article "A" a rule brought is lowered, one the source writes inside a sentence is kept
    assert rule_word_case(("the", "game", "in", "A", "single"), "It was in a single.")[3] == "a"
    assert rule_word_case(("the", "game", "in", "A", "single"), "It was a game.")[3] == "a"
    assert rule_word_case(("the", "film", "A", "Pattern"), "The film, A Pattern of Roses.")[2] == "A"
    # a function word in lower case is never raised to the source's capital ("may" beside "May")
    assert rule_word_case(("it", "may", "open", "in", "May"), "It opened in May.")[1] == "may"
    # two spellings in the source: the source decides nothing ("Bay" and "bay")
    assert rule_word_case(("a", "BAY"), "The bay of Bay City.") == ("a", "BAY")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Also", "also", "By", "the", "Cat", ".", "(", "I", "US", "Since", ",", "A"]),
                max_size=12),
       st.sampled_from(["Also by the cat.", "the cat", "Since I saw US."]))
def test_rule_word_case_keeps_lengths_and_source_words(words, source):
    from dualdecomp.solvers.rewriting import detokenise_words, rewrite_text, rule_word_case

    out = rule_word_case(words, source)
    assert [len(w) for w in out] == [len(w) for w in words]
    assert [w.lower() for w in out] == [w.lower() for w in words]
    assert rule_word_case(out, source) == out
    source_words = set(source.replace(".", " ").split()[1:])  # written mid-sentence in the source
    assert all(a == b for a, b in zip(out, words, strict=True) if b in source_words)
    assert all(a in source_words for a, b in zip(out, words, strict=True)
               if a != b and a.lower() in {w.lower() for w in source_words} and a != b.lower())
    assert len(rewrite_text(words, source)) == len(detokenise_words(words))
