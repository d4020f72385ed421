"""Phrase-structure trees: PTB reading/writing and the dependency → phrase-structure conversion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.data.ptb import read_tree, read_trees, write_tree
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import Tree, _projective_heads, from_dependency, reindex

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
    nouns = (Tree("NN", (Tree("x", (), 0),), head=0), Tree("NN", (Tree("y", (), 1),), head=1))
    np_ = Tree("NP", nouns, head=1)
    assert [reindex(np_, [4, 6]).head, reindex(np_, [4, 6]).children[0].head] == [6, 4]


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
    s_node = tree.children[0]
    vp, pp = s_node.children[1], s_node.children[1].children[1]
    assert (tree.head, s_node.head, vp.head, pp.head, pp.children[1].head) == (2, 2, 2, 3, 5)
    assert [pt.head for pt in (s_node.children[0].children[0], s_node.children[2])] == [0, 6]


def _check_heads(tree, heads):
    """Every internal node's head is the one token of its span whose dependency head lies outside it."""
    for node in tree.preorder():
        if node.is_leaf:
            continue
        span = set(node.indices())
        outside = [k for k in span if heads[k] - 1 not in span]
        if node.label == "TOP" and len(outside) > 1:
            assert node.head == -1
        else:
            assert outside == [node.head]


@given(st.data())
def test_from_dependency_heads_random_trees(data):
    n = data.draw(st.integers(1, 9))
    order = data.draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for j, tok in enumerate(order[1:], start=1):  # a random tree rooted at order[0], maybe non-projective
        heads[tok - 1] = data.draw(st.sampled_from(order[:j]))
    pos = data.draw(st.lists(st.sampled_from(["NOUN", "VERB", "ADJ", "PUNCT"]), min_size=n, max_size=n))
    labels = data.draw(st.lists(st.sampled_from(["nsubj", "dobj", "amod", "punct"]), min_size=n, max_size=n))
    s = _sentence([f"w{i}" for i in range(n)], pos, ["NN"] * n, heads, labels)
    _check_heads(from_dependency(s), _projective_heads(s))


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
        if s.heads.count(0) == 1 and list(s.heads) == _projective_heads(s):
            _check_heads(tree, list(s.heads))
