"""Grammar extraction (Figures 6 and 7 of Cohn & Lapata 2009), coverage rules, file format, gold
derivations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dualdecomp.core.errors import ModelError
from dualdecomp.data.ptb import read_tree
from dualdecomp.data.trees import reindex
from dualdecomp.models.transducer.extraction import (
    constituent_alignment,
    coverage_rules,
    extract_grammar,
    extract_rules,
)
from dualdecomp.models.transducer.features import RuleFeaturiser, rule_feature_strings
from dualdecomp.models.transducer.gold import gold_derivation
from dualdecomp.solvers.transducer.grammar import (
    Grammar,
    GrammarConfig,
    Rule,
    load_grammar,
    parse_frag,
    save_grammar,
)
from dualdecomp.solvers.transducer.heads import head_order
from dualdecomp.solvers.transducer.solver import build_hypergraph

# Figure 6 (tree pair of Figure 1). The text transcription of the figure is garbled (node labels and
# words are scattered); the trees are reconstructed from it and from the bracketings of Figures 4 and 5.
FIG6_SOURCE = ("(S (S (WHNP (RB exactly) (WP what)) (S (NP (NNS records)) (VP (VBD made) (NP (PRP it))))) "
               "(CC and) (S (WHNP (WP which)) (S (NP (NNS ones)) (VP (VBP are) (VP (VBN involved))))))")
FIG6_TARGET = "(S (WHNP (WP what)) (S (NP (NNS records)) (VP (VBP are) (VP (VBN involved)))))"
# word alignment: what→1, records→2, are→8, involved→9 (0-based source positions)
FIG6_LINKS = [1, 2, 8, 9]

FIG7 = {  # Figure 7, in this project's rule notation
    '(S (S @WHNP @S) ~CC @S) => (S @WHNP (S @NP @VP))',
    '(WHNP ~RB @WP) => (WHNP @WP)',
    '(WP "what") => (WP "what")',
    '(S @NP ~VP) => @NP',
    '(NP @NNS) => (NP @NNS)',
    '(NNS "records") => (NNS "records")',
    '(S ~WHNP @S) => @VP',
    '(S ~NP @VP) => @VP',
    '(VP @VBP @VP) => (VP @VBP @VP)',
    '(VBP "are") => (VBP "are")',
    '(VP @VBN) => (VP @VBN)',
    '(VBN "involved") => (VBN "involved")',
}


def fig6():
    return read_tree(FIG6_SOURCE), reindex(read_tree(FIG6_TARGET), FIG6_LINKS)


def test_figure7_minimal_rules():
    src, tgt = fig6()
    keys = {r.key for r in extract_rules(src, tgt, GrammarConfig(depth=0))}
    assert keys == FIG7 | {"(TOP @S) => (TOP @S)"}


def test_specialised_rules_of_the_paper():
    src, tgt = fig6()
    d1 = {r.key for r in extract_rules(src, tgt, GrammarConfig(depth=1))}
    assert "(S (WHNP ~WP) @S) => @VP" in d1
    assert "(S ~WHNP (S ~NP @VP)) => @VP" in d1
    assert FIG7 <= d1
    d2 = {r.key for r in extract_rules(src, tgt, GrammarConfig(depth=2))}
    assert '(S (WHNP (WP ~"which")) @S) => @VP' in d2
    assert '(S (WHNP (WP ~"which")) (S ~NP @VP)) => @VP' in d2
    assert "(S ~WHNP (S (NP ~NNS) @VP)) => @VP" in d2
    assert d1 <= d2
    small = extract_rules(src, tgt, GrammarConfig(depth=2, max_nodes=4))
    assert all(r.source.size() <= 4 for r in small if r.key not in FIG7 and "TOP" not in r.key)


def test_constituent_alignment():
    src, tgt = fig6()
    al = constituent_alignment(src, tgt)
    assert al[0] == [0, 1] and al[1] == [0, 1]  # TOP and S span the same aligned words
    assert 2 not in al  # "exactly what records made it" has no target constituent


def test_coverage_rules_and_heads():
    assert head_order("NP", ["DT", "JJ", "NN"])[0] == 2
    node = read_tree("(NP (DT the) (JJ big) (NN dog))").children[0]
    keys = {r.key for r in coverage_rules(node)}
    assert "(NP @DT @JJ @NN) => (NP @DT @JJ @NN)" in keys
    assert "(NP ~DT ~JJ @NN) => (NP @NN)" in keys
    assert "(NP ~DT ~JJ @NN) => @NN" in keys
    assert len(keys) == 4
    pre = read_tree("(NN dog)").children[0]
    assert [r.key for r in coverage_rules(pre)] == ['(NN "dog") => (NN "dog")']


def test_grammar_roundtrip(tmp_path):
    src, tgt = fig6()
    grammar, failed = extract_grammar([(src, tgt)], GrammarConfig(depth=1))
    assert failed == 0
    path = save_grammar(grammar, tmp_path / "g.json")
    back = load_grammar(path)
    assert [r.key for r in back.rules] == [r.key for r in grammar.rules]
    assert [r.kinds for r in back.rules] == [r.kinds for r in grammar.rules]
    doc = json.loads(path.read_text())
    doc["rules"][0]["target"] = "(S @NP"
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelError):
        load_grammar(path)
    doc["rules"][0]["target"] = '(S "nope")'
    path.write_text(json.dumps(doc))
    with pytest.raises(ModelError):
        load_grammar(path)
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ModelError):
        load_grammar(tmp_path / "x.json")
    with pytest.raises(ModelError):
        load_grammar(tmp_path / "missing.json")


def test_frag_text_roundtrip():
    for text in ['(S (S @WHNP @S) ~CC @S)', '(WP ~"wh\\"at")', "@VP", '(NP (DT "the") ~NN)']:
        assert str(parse_frag(text)) == text
    for bad in ["(S", "S", "()", '(S ~"")', "(@S @NP)"]:
        with pytest.raises(ModelError):
            parse_frag(bad)
    with pytest.raises(ModelError):
        Rule(parse_frag("(S @NP ~VP)"), parse_frag("(S @NP @VP)"))


def test_max_targets_pruning():
    src, tgt = fig6()
    grammar, _ = extract_grammar([(src, tgt)], GrammarConfig(depth=2, max_targets=1))
    per_source: dict[str, int] = {}
    for r in grammar.rules:
        if r.kinds == frozenset({"train"}):
            per_source[str(r.source)] = per_source.get(str(r.source), 0) + 1
    assert max(per_source.values()) == 1


def test_gold_derivation_max_rules():
    src, tgt = fig6()
    for depth in (0, 1, 2):
        grammar, _ = extract_grammar([(src, tgt)], GrammarConfig(depth=depth))
        hg = build_hypergraph(src, grammar)
        gold = gold_derivation(hg, tgt)
        assert gold is not None
        keys = {hg.rules[int(hg.hyperedge_rule[e])].key for e in gold}
        # the maximum-rules derivation is the minimal-rule one (13 rules incl. TOP)
        assert len(gold) == 13
        assert keys == FIG7 | {"(TOP @S) => (TOP @S)"}
        keep = np.zeros(10, dtype=bool)
        for e in gold:
            keep[hg.kept(e)] = True
        assert np.flatnonzero(keep).tolist() == FIG6_LINKS
    # an underivable target
    grammar = Grammar()
    hg = build_hypergraph(src, grammar)
    assert gold_derivation(hg, tgt) is None


def test_table2_features():
    rule = Rule(parse_frag('(NP ~CD ~ADJP (NNS "activists"))'), parse_frag('(NNS "activists")'),
                frozenset({"train"}))
    feats = {(t, v): w for t, v, w in rule_feature_strings(rule)}
    assert feats[("type", "train")] == 1
    assert feats[("root.xy", "NP|NNS")] == 1
    assert feats[("unlex.src", "(NP ~CD ~ADJP NNS)")] == 1
    assert feats[("words.tgt", "")] == 1 and feats[("words.src", "")] == 1
    assert feats[("yield.same", "")] == 1 and feats[("yield.both", "activists")] == 1
    assert feats[("nt.src_only", "CD")] == 1 and feats[("nt.src_only", "ADJP")] == 1
    assert feats[("nt.both", "NNS")] == 1
    assert feats[("length.diff", "")] == 2 and feats[("length.shorter", "")] == 1
    idx, val = RuleFeaturiser(16)(rule)
    assert idx.shape == val.shape and (idx > 0).all() and (idx < 1 << 16).all()
