"""The rewriting grammar (W3.3 item 1): extraction of every rule type on hand-made tree pairs, derivations
enumerated by brute force on random aligned pairs, and the binary grammar file."""

from __future__ import annotations

import itertools
import json
import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree
from dualdecomp.data.trees import preterminal as P
from dualdecomp.models.rewriting import (
    derivable,
    extract_rewrite_grammar,
    extract_rules,
    node_alignment,
    paraphrase_rules,
    rule_types,
)
from dualdecomp.solvers.rewriting import (
    RewriteGrammar,
    RewriteGrammarConfig,
    RewriteRule,
    load_rewrite_grammar,
    rewriting_coverage_rules,
    save_rewrite_grammar,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag, match_frag


def S(*kids):
    return Tree("S", kids)


def NP(*kids):
    return Tree("NP", kids)


def VP(*kids):
    return Tree("VP", kids)


def TOP(kid):
    return Tree("TOP", (kid,))


def keys(rules):
    return {r.key for r in rules}


# ------------------------------------------------------------------------------------------------------
# brute force: every target tree the grammar (plus coverage) derives from a source tree
# ------------------------------------------------------------------------------------------------------


def render(frag: Frag, fill) -> str:
    if frag.kind == VAR:
        return next(fill)
    if frag.kind == WORD:
        return json.dumps(frag.label)
    return f"({frag.label} {' '.join(render(c, fill) for c in frag.children)})"


def render_tree(tree: Tree) -> str:
    if tree.is_leaf:
        return json.dumps(tree.label)
    return f"({tree.label} {' '.join(render_tree(c) for c in tree.children)})"


def derive_all(grammar: RewriteGrammar, source: Tree, coverage: bool = True) -> frozenset[str]:
    """All target trees (text) of all derivations rooted at the source's root category."""
    T = IndexedTree(source)

    @cache
    def gen(i: int, label: str) -> frozenset[str]:
        node = T.nodes[i]
        rules = [grammar.rule(r) for r in grammar.candidates(node.production())]
        if coverage:
            rules += rewriting_coverage_rules(node)
        out: set[str] = set()
        for rule in rules:
            if rule.target.label != label:
                continue
            frontier: list[int] = []
            if not match_frag(rule.source, T, i, frontier):
                continue
            linked = [n for n, f in zip(frontier, rule.source.frontier(), strict=True)
                      if f.kind == VAR and f.kept]
            tvars = [f for f in rule.target.frontier() if f.kind == VAR]
            options = [gen(linked[k], f.label) for f, k in zip(tvars, rule.links, strict=True)]
            for combo in itertools.product(*options):
                out.add(render(rule.target, iter(combo)))
        return frozenset(out)

    return gen(0, source.label)


def yields(tree_texts) -> set[tuple[str, ...]]:
    out = set()
    for text in tree_texts:
        out.add(tuple(json.loads(w) for w in re.findall(r'"(?:[^"\\]|\\.)*"', text)))
    return out


# ------------------------------------------------------------------------------------------------------
# each rule type on hand-made pairs
# ------------------------------------------------------------------------------------------------------

# the big dog barked -> the dog barked
DEL = (TOP(S(NP(P("DT", "the", 0), P("JJ", "big", 1), P("NN", "dog", 2)), P("VBD", "barked", 3))),
       TOP(S(NP(P("DT", "the", 0), P("NN", "dog", 1)), P("VBD", "barked", 2))), [(0, 0), (2, 1), (3, 2)])
# the dog barked loudly -> loudly the hound barked
REORDER = (TOP(S(NP(P("DT", "the", 0), P("NN", "dog", 1)), VP(P("VBD", "barked", 2), P("RB", "loudly", 3)))),
           TOP(S(P("RB", "loudly", 0), NP(P("DT", "the", 1), P("NN", "hound", 2)), P("VBD", "barked", 3))),
           [(0, 1), (1, 2), (2, 3), (3, 0)])
# dogs barked -> the dogs barked
INSERT = (TOP(S(NP(P("NN", "dogs", 0)), P("VBD", "barked", 1))),
          TOP(S(NP(P("DT", "the", 0), P("NN", "dogs", 1)), P("VBD", "barked", 2))), [(0, 1), (1, 2)])
# he left -> he
CATEGORY = (TOP(S(NP(P("PRP", "he", 0)), VP(P("VBD", "left", 1)))), TOP(NP(P("PRP", "he", 0))), [(0, 0)])
# he passed away -> he died ("died" aligned to "passed")
PHRASE = (TOP(S(NP(P("PRP", "he", 0)), VP(P("VBD", "passed", 1), P("RP", "away", 2)))),
          TOP(S(NP(P("PRP", "he", 0)), VP(P("VBD", "died", 1)))), [(0, 0), (1, 1)])


def test_deletion_rule():
    rules = extract_rules(*DEL, minimal_only=True)
    assert keys(rules) == {
        "(TOP @S) => (TOP @S) | 0 | ",
        "(S @NP @VBD) => (S @NP @VBD) | 0,1 | ",
        "(NP @DT ~JJ @NN) => (NP @DT @NN) | 0,1 | ",
        '(DT "the") => (DT "the") |  | 0',
        '(NN "dog") => (NN "dog") |  | 0',
        '(VBD "barked") => (VBD "barked") |  | 0',
    }
    (deleting,) = [r for r in rules if "deletion" in rule_types(r)]
    assert deleting.operations().deleted == 0  # a deleted variable: its words are the chart's to count
    assert rule_types(deleting) == {"deletion"}


def test_lexical_substitution_and_reordering_rules():
    rules = extract_rules(*REORDER, minimal_only=True)
    assert keys(rules) == {
        "(TOP @S) => (TOP @S) | 0 | ",
        "(S @NP (VP @VBD @RB)) => (S @RB @NP @VBD) | 2,0,1 | ",
        "(NP @DT @NN) => (NP @DT @NN) | 0,1 | ",
        '(NN "dog") => (NN "hound") |  | 0',
        '(DT "the") => (DT "the") |  | 0',
        '(VBD "barked") => (VBD "barked") |  | 0',
        '(RB "loudly") => (RB "loudly") |  | 0',
    }
    by_key = {r.key: r for r in rules}
    sub = by_key['(NN "dog") => (NN "hound") |  | 0']
    assert rule_types(sub) == {"lexical_substitution"} and sub.operations().substituted == 1
    reo = by_key["(S @NP (VP @VBD @RB)) => (S @RB @NP @VBD) | 2,0,1 | "]
    assert rule_types(reo) == {"reordering"} and reo.operations().reordered == 1
    lexical = [r for r in paraphrase_rules(*REORDER) if "lexical" in r.origins]
    assert keys(lexical) == {'(NN "dog") => (NN "hound") |  | 0'}


def test_insertion_rule():
    rules = extract_rules(*INSERT, minimal_only=True)
    ins = [r for r in rules if "insertion" in rule_types(r)]
    assert '(NP @NN) => (NP (DT "the") @NN) | 0 | -' in keys(ins)
    rule = next(r for r in ins if r.key.startswith("(NP @NN)"))
    assert rule_types(rule) == {"insertion"} and rule.operations().inserted == 1


def test_category_change_rule():
    rules = extract_rules(*CATEGORY, minimal_only=True)
    assert "(S @NP ~VP) => @NP | 0 | " in keys(rules)  # a bare-variable target: S rewritten into NP
    assert "(TOP @S) => (TOP @NP) | 0 | " in keys(rules)
    by_key = {r.key: r for r in rules}
    assert rule_types(by_key["(S @NP ~VP) => @NP | 0 | "]) == {"category_change", "deletion"}
    assert rule_types(by_key["(TOP @S) => (TOP @NP) | 0 | "]) == {"category_change"}


def test_phrasal_substitution_rule():
    rules = paraphrase_rules(*PHRASE)
    phrasal = {r.key for r in rules if "phrasal" in r.origins}
    assert '(VP (VBD "passed") (RP ~"away")) => (VP (VBD "died")) |  | 0' in phrasal
    rule = next(r for r in rules if r.key.startswith('(VP (VBD "passed")'))
    assert rule_types(rule) == {"phrasal_substitution", "deletion"}
    assert "(VP @VBD ~RP) => (VP @VBD) | 0 | " in keys(extract_rules(*PHRASE, minimal_only=True))


def test_node_alignment_consistency():
    src, tgt, al = REORDER
    align = node_alignment(src, tgt, al)
    S_, T_ = IndexedTree(src), IndexedTree(tgt)
    pairs = {(S_.nodes[a].label, T_.nodes[b].label) for a, bs in align.items() for b in bs}
    # VP (barked loudly) is split in the target: nothing aligns with it
    assert not any(s == "VP" for s, _ in pairs)
    assert ("NP", "NP") in pairs and ("NN", "NN") in pairs and ("S", "TOP") in pairs


@pytest.mark.parametrize("case", [DEL, REORDER, INSERT, CATEGORY, PHRASE])
def test_hand_made_pairs_derivable_by_brute_force(case):
    src, tgt, al = case
    grammar = RewriteGrammar(extract_rules(src, tgt, al, minimal_only=True))
    derived = derive_all(grammar, src, coverage=False)
    assert render_tree(tgt) in derived
    assert derivable(grammar, src, tgt, coverage=False)


def test_not_derivable_without_the_substitution():
    src, tgt, al = REORDER
    rules = [r for r in extract_rules(src, tgt, al) if "lexical_substitution" not in rule_types(r)
             and "phrasal_substitution" not in rule_types(r)]
    grammar = RewriteGrammar(rules)
    assert render_tree(tgt) not in derive_all(grammar, src)
    assert not derivable(grammar, src, tgt)


def test_corpus_report_counts_types_and_reasons():
    src, tgt, _ = DEL
    grammar, report = extract_rewrite_grammar([DEL, REORDER, INSERT, CATEGORY, PHRASE, (src, tgt, []),
                                               (src, tgt, [(0, 0), (1, 0)])])
    assert report.pairs == 7 and report.derivable == 5
    assert report.not_derivable == {"no aligned word": 1, "bad alignment": 1}
    for t in ("deletion", "lexical_substitution", "phrasal_substitution", "reordering", "insertion",
              "category_change", "copy"):
        assert report.rule_types[t] >= 1
    assert {"train", "lexical", "phrasal"} <= set(report.origins)
    dog = grammar.find('(NN "dog") => (NN "hound") |  | 0')
    assert dog is not None and grammar.rule(dog).count == 1
    assert {"train", "lexical"} <= grammar.rule(dog).origins
    the = grammar.rule(grammar.find('(DT "the") => (DT "the") |  | 0'))
    assert the.count == 2 and "copy" in the.origins  # two pairs, merged with its coverage rule


def test_bad_alignment_is_input_error():
    src, tgt, _ = DEL
    with pytest.raises(InputError, match="more than one"):
        extract_rules(src, tgt, [(0, 0), (1, 0)])
    with pytest.raises(InputError, match="out of range"):
        extract_rules(src, tgt, [(9, 0)])


# ------------------------------------------------------------------------------------------------------
# random aligned pairs: the extracted rules derive the target (brute force)
# ------------------------------------------------------------------------------------------------------

PHRASES = ("NP", "VP", "S", "PP")
TAGS = ("DT", "NN", "VB", "JJ")
VOCAB = ("a", "b", "c", "d")


@st.composite
def trees(draw, n: int) -> Tree:
    words = [draw(st.sampled_from(VOCAB)) for _ in range(n)]

    def build(lo: int, hi: int, depth: int) -> Tree:
        if hi - lo == 1 and (depth >= 2 or draw(st.booleans())):
            return P(draw(st.sampled_from(TAGS)), words[lo], lo)
        if hi - lo == 1:
            return Tree(draw(st.sampled_from(PHRASES)), (build(lo, hi, depth + 1),))
        k = draw(st.integers(1, min(2, hi - lo - 1)))
        cuts = sorted(draw(st.lists(st.integers(lo + 1, hi - 1), min_size=k, max_size=k, unique=True)))
        bounds = [lo, *cuts, hi]
        return Tree(draw(st.sampled_from(PHRASES)), tuple(build(a, b, depth + 1)
                                                         for a, b in itertools.pairwise(bounds)))

    return Tree("TOP", (build(0, n, 0),))


@st.composite
def aligned_pairs(draw):
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    src, tgt = draw(trees(n)), draw(trees(m))
    links = [draw(st.one_of(st.none(), st.integers(0, n - 1))) for _ in range(m)]
    al = [(i, j) for j, i in enumerate(links) if i is not None]
    return src, tgt, al


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aligned_pairs(), st.integers(0, 2))
def test_extracted_rules_derive_the_target(pair, depth):
    src, tgt, al = pair
    cfg = RewriteGrammarConfig(depth=depth)
    rules = extract_rules(src, tgt, al, cfg)
    if not al:
        assert rules == []
        return
    minimal = RewriteGrammar(extract_rules(src, tgt, al, cfg, minimal_only=True))
    derived = derive_all(minimal, src, coverage=False)  # minimal rules alone derive the target
    assert render_tree(tgt) in derived
    assert tuple(tgt.words()) in yields(derived)
    assert derivable(minimal, src, tgt, coverage=False)
    full = RewriteGrammar(rules + paraphrase_rules(src, tgt, al, cfg))
    everything = derive_all(full, src)
    assert render_tree(tgt) in everything
    grammar, report = extract_rewrite_grammar([(src, tgt, al)], cfg)
    assert report.derivable == 1 and report.not_derivable == {}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aligned_pairs(), aligned_pairs())
def test_derivable_agrees_with_brute_force(pair, other):
    """The derivability DP against brute-force enumeration, on a target it may or may not derive."""
    src, tgt, al = pair
    grammar = RewriteGrammar(extract_rules(src, tgt, al, RewriteGrammarConfig(depth=0)))
    derived = derive_all(grammar, src)
    for target in (tgt, other[1]):
        assert derivable(grammar, src, target) == (render_tree(target) in derived)


# ------------------------------------------------------------------------------------------------------
# the binary file
# ------------------------------------------------------------------------------------------------------


def _corpus_grammar() -> RewriteGrammar:
    grammar, _ = extract_rewrite_grammar([DEL, REORDER, INSERT, CATEGORY, PHRASE],
                                         RewriteGrammarConfig(depth=2, phrase_words=3))
    grammar.add(RewriteRule(Frag(NODE, "NN", (Frag(WORD, "naïve \"x\"\n"),)),
                            Frag(NODE, "NN", (Frag(WORD, "ünïcode"),)), (), (0,), frozenset({"substitute"}),
                            3))
    return grammar


def test_binary_round_trip(tmp_path):
    grammar = _corpus_grammar()
    path = save_rewrite_grammar(grammar, tmp_path / "grammar.bin")
    loaded = load_rewrite_grammar(path)
    assert len(loaded) == len(grammar) and loaded.config == grammar.config
    assert sorted(loaded.productions()) == sorted(grammar.productions())
    for p in grammar.productions():
        assert loaded.candidates(p) == grammar.candidates(p)
    for i, r in enumerate(grammar):  # decoded lazily, equal in every field
        got = loaded.rule(i)
        assert (got.key, got.origins, got.count) == (r.key, r.origins, r.count)
        assert loaded.find(r.key) == i
    assert loaded.find("(NN \"nope\") => (NN \"nope\") |  | 0") is None
    loaded.add(grammar.rule(0))  # dedupe against the file's rules: counts add
    assert len(loaded) == len(grammar) and loaded.rule(0).count == 2 * grammar.rule(0).count
    save_rewrite_grammar(grammar, tmp_path / "again.bin")  # same grammar, same bytes
    assert (tmp_path / "again.bin").read_bytes() == path.read_bytes()
    load_rewrite_grammar(path, validate=True)


def test_binary_checksum_and_bad_files(tmp_path):
    path = save_rewrite_grammar(_corpus_grammar(), tmp_path / "grammar.bin")
    data = bytearray(path.read_bytes())
    for at in (60, len(data) // 2, len(data) - 1):  # header, payload, last byte
        bad = bytearray(data)
        bad[at] ^= 0x01
        p = tmp_path / f"flip{at}.bin"
        p.write_bytes(bytes(bad))
        with pytest.raises(ModelError, match=f"flip{at}.bin: checksum mismatch"):
            load_rewrite_grammar(p)
    cases = {"short.bin": bytes(data[:20]), "magic.bin": b"XXXXXXXX" + bytes(data[8:]),
             "cut.bin": bytes(data[:-7])}
    for name, content in cases.items():
        p = tmp_path / name
        p.write_bytes(content)
        with pytest.raises(ModelError, match=name):
            load_rewrite_grammar(p)
    with pytest.raises(ModelError, match="missing.bin: file not found"):
        load_rewrite_grammar(tmp_path / "missing.bin")


def test_binary_refuses_another_format(tmp_path):
    import numpy as np

    from dualdecomp.core.array_file import write_array_file

    p = write_array_file(tmp_path / "other.bin", "something-else", 1, {}, {"x": np.zeros(3)})
    with pytest.raises(ModelError, match="not a dualdecomp-rewrite-grammar file"):
        load_rewrite_grammar(p)


def test_coverage_rules_are_rewrite_rules():
    node = S(NP(P("DT", "the", 0), P("NN", "dog", 1)), P("VBD", "barked", 2))
    rules = rewriting_coverage_rules(node)
    assert rules[0].key == "(S @NP @VBD) => (S @NP @VBD) | 0,1 | " and rules[0].origins == {"copy"}
    assert all(r.operations().substituted == r.operations().inserted == 0 for r in rules)
    pre = rewriting_coverage_rules(P("NN", "dog", 0))
    assert [r.key for r in pre] == ['(NN "dog") => (NN "dog") |  | 0']
