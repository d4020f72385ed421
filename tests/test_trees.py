"""Phrase-structure trees: PTB reading/writing and the dependency → phrase-structure conversion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.data.ptb import read_tree, read_trees, write_tree
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import Tree, from_dependency, reindex

FIG6_SOURCE = ("(S (S (WHNP (RB exactly) (WP what)) (S (NP (NNS records)) (VP (VBD made) (NP (PRP it))))) "
               "(CC and) (S (WHNP (WP which)) (S (NP (NNS ones)) (VP (VBP are) (VP (VBN involved))))))")


def test_read_write_roundtrip_and_indices():
    tree = read_tree(FIG6_SOURCE)
    assert tree.label == "TOP"
    assert tree.words() == "exactly what records made it and which ones are involved".split()
    assert tree.indices() == list(range(10))
    assert read_tree(write_tree(tree)) == tree
    assert write_tree(read_tree("( (NP (DT the) (NN dog)))")) == "(TOP (NP (DT the) (NN dog)))"
    assert read_tree("(NP (-LRB- -LRB-) (NN x))").words() == ["(", "x"]
    assert len(list(read_trees("(A (B b)) (C (D d))"))) == 2


@pytest.mark.parametrize("bad", ["", "(S (NP x)", "(S (NP x)))", "(S ())", "(NP x) y"])
def test_read_errors(bad):
    with pytest.raises(InputError):
        read_tree(bad)


@st.composite
def trees(draw, depth=3):
    counter = [0]

    def build(d):
        if d == 0 or draw(st.booleans()):
            i = counter[0]
            counter[0] += 1
            word = Tree(draw(st.sampled_from(["a", "b", "-x-"])), (), i)
            return Tree(draw(st.sampled_from(["NN", "DT", "VB"])), (word,))
        kids = tuple(build(d - 1) for _ in range(draw(st.integers(1, 3))))
        return Tree(draw(st.sampled_from(["S", "NP", "VP"])), kids)

    return Tree("TOP", (build(depth),))


@settings(max_examples=50, derandomize=True, deadline=None)
@given(trees())
def test_roundtrip_random(tree):
    assert read_tree(write_tree(tree)) == tree


def test_reindex():
    t = read_tree("(S (NP (NNS records)) (VP (VBP are)))")
    assert reindex(t, [3, 7]).indices() == [3, 7]


def _sentence(tokens, pos, tags, heads, labels):
    return Sentence(tuple(tokens), tuple(pos), tuple(tags), tuple(heads), tuple(labels))


def test_from_dependency_clause():
    s = _sentence(["The", "cat", "sat", "on", "the", "mat", "."],
                  ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"],
                  ["DT", "NN", "VBD", "IN", "DT", "NN", "."],
                  [2, 3, 0, 3, 6, 4, 3],
                  ["det", "nsubj", "ROOT", "prep", "det", "pobj", "punct"])
    tree = from_dependency(s)
    assert write_tree(tree) == ("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
                                "(NN mat)))) (. .)))")
    assert tree.indices() == list(range(7))


def test_from_dependency_lifts_nonprojective():
    # token 1 attached to token 4 across token 2 which hangs from 3: not projective
    s = _sentence(["a", "b", "c", "d"], ["NOUN"] * 4, ["NN"] * 4, [4, 3, 0, 3], ["dep"] * 4)
    tree = from_dependency(s)
    assert tree.indices() == [0, 1, 2, 3]


def test_from_dependency_spacy(parsed_dev):
    _, sents = parsed_dev
    for s in sents[:10]:
        tree = from_dependency(s)
        assert tree.words() == list(s.tokens)
        assert tree.indices() == list(range(s.n))
        assert read_tree(write_tree(tree)).words() == list(s.tokens)
