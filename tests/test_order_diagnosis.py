"""Search error or model error: the gold ordering's derivation equals brute force; the verdicts are honest."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.paper.diagnosis import (
    GOLD,
    MODEL_ERROR,
    SEARCH_ERROR,
    error_kind,
    gold_derivation,
)
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from tests.ordering_oracles import example, linearisations, random_model

WORDS = ("the", "cat", "sat", "on", "mat", ".")
TAGS = ("DT", "NN", "VBD", "IN", "NN", ".")


@st.composite
def full_trees(draw, max_n: int = 5):
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(n)))
    heads = [ROOT] * n
    for i in range(1, n):
        heads[order[i]] = order[draw(st.integers(0, i - 1))]
    picks = [draw(st.integers(0, len(WORDS) - 1)) for _ in range(n)]
    return OrderingInput(tuple(WORDS[k] for k in picks), tuple(TAGS[k] for k in picks), tuple(heads))


@settings(max_examples=40, deadline=None)
@given(inp=full_trees(), seed=st.integers(0, 10_000))
def test_gold_derivation_scores_every_ordering_as_brute_force(inp, seed):
    model = random_model(seed)
    brute = {e.words: e.score for e in linearisations(model, model.context(inp), inp.heads)}
    for order in itertools.permutations(range(len(inp))):
        gold = gold_derivation(model, inp, order)
        if order in brute:
            assert gold is not None and gold.words == order
            assert gold.score == pytest.approx(brute[order], abs=1e-9)
        else:  # not a projective linearisation of the tree: no derivation builds it
            assert gold is None


@settings(max_examples=40, deadline=None)
@given(inp=full_trees(), seed=st.integers(0, 10_000), beam=st.sampled_from([None, 1, 2]))
def test_verdicts_are_honest(inp, seed, beam):
    model = random_model(seed)
    orders = [e.words for e in linearisations(model, model.context(inp), inp.heads)]
    found = exact_linearisation(model, inp, 10**7, beam=beam)
    for order in orders:
        gold = gold_derivation(model, inp, order)
        verdict = error_kind(gold, found.best)
        if found.best.words == order:
            assert verdict == GOLD
        elif gold.score > found.best.score + 1e-9:
            assert verdict == SEARCH_ERROR
            assert beam is not None and not found.certified  # the exact DP never loses a better ordering
        else:
            assert verdict == MODEL_ERROR


def test_shuffled_input_and_its_gold_order():
    ex = example("the cat sat on the mat .", [2, 3, 0, 6, 6, 3, 3], "DT NN VBD IN DT NN .")
    for seed in range(5):
        inp, order = ex.shuffled(1.0, 1.0, seed)
        assert inp == ex.as_input(1.0, 1.0, seed)
        assert tuple(inp.words[k] for k in order) == ex.words
        assert tuple(inp.pos[k] for k in order) == ex.pos
        heads = tuple(ROOT if inp.heads[k] == ROOT else order.index(inp.heads[k]) for k in order)
        assert heads == ex.heads
        gold = gold_derivation(random_model(seed), inp, order)
        assert gold is not None and gold.words == order


def test_bad_arguments():
    model = random_model(0)
    with pytest.raises(ValueError, match="every head"):
        gold_derivation(model, OrderingInput(("a", "b"), ("DT", "NN"), (1, None)), (0, 1))
    with pytest.raises(ValueError, match="permutation"):
        gold_derivation(model, OrderingInput(("a", "b"), ("DT", "NN"), (1, ROOT)), (0, 0))
