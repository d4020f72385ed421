"""Best-first search: its search space is exactly the projective (tree, order, tags) space, it pops in
score order, and its outputs never violate the given POS tags and heads."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.paper import search as search_module
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from tests.ordering_oracles import all_trees, brute_force_best, exhaustive_goals, random_model

WORDS = ("the", "cat", "sat", "on", "mat", ".", "We", "do", "like", "rain")
TAGS = {"the": "DT", "cat": "NN", "sat": "VBD", "on": "IN", "mat": "NN", ".": ".", "We": "PRP", "do": "VBP",
        "like": "VB", "rain": "NN"}


@st.composite
def constrained_bags(draw, max_n: int = 4):
    """A bag with a random subset of gold-consistent POS tags and heads (from a random tree)."""
    n = draw(st.integers(1, max_n))
    words = [draw(st.sampled_from(WORDS)) for _ in range(n)]
    trees = list(all_trees(n, (None,) * n))
    tree = trees[draw(st.integers(0, len(trees) - 1))]
    pos = [TAGS[w] if draw(st.booleans()) else None for w in words]
    heads = [h if draw(st.booleans()) else None for h in tree]
    return OrderingInput(tuple(words), tuple(pos), tuple(heads))


@settings(max_examples=30, deadline=None)
@given(inp=constrained_bags(), seed=st.integers(0, 10_000))
def test_exhaustive_best_first_equals_brute_force(inp, seed):
    model = random_model(seed)
    result = best_first(model, inp, SearchConfig(chart_size=None, timeout=None, exhaustive=True))
    best, count = brute_force_best(model, inp)
    assert count > 0 and result.complete
    assert result.score == pytest.approx(best, abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(inp=constrained_bags(max_n=4), seed=st.integers(0, 10_000))
def test_every_goal_is_generated_exactly_once(inp, seed):
    """No spurious ambiguity: the goals popped are the brute-force linearisations, each once."""
    model = random_model(seed)
    _, popped = exhaustive_goals(model, inp)
    _, count = brute_force_best(model, inp)
    if len(inp) == 1:  # a goal leaf is never built by attach
        assert count == len(model.context(inp).leaf_tags[0])
    else:
        assert len(popped) == count
        assert len(set(popped)) == len(popped)


def test_first_goal_has_the_best_score_on_the_agenda(monkeypatch):
    """Best-first property: the goal returned scored at least as high as everything still queued."""
    model = random_model(11)
    inp = OrderingInput(("cat", "the", "sat"), (None,) * 3, (None,) * 3)
    seen = {}
    original = heapq.heappop

    def spy(agenda):
        item = original(agenda)
        seen["rest"] = max((-e[0] for e in agenda), default=float("-inf"))
        seen["top"] = -item[0]
        return item

    monkeypatch.setattr(search_module.heapq, "heappop", spy)
    result = best_first(model, inp, SearchConfig(chart_size=None, timeout=None))
    assert result.complete
    assert seen["top"] >= seen["rest"]
    assert result.score == pytest.approx(seen["top"], abs=1e-9)


def _check_constraints(inp: OrderingInput, result) -> None:
    assert sorted(result.order) == sorted(set(result.order))
    assert all(0 <= k < len(inp) for k in result.order)
    for k, w in enumerate(result.order):
        assert result.words[k] == inp.words[w]
        if inp.pos[w] is not None:
            assert result.pos[k] == inp.pos[w]
    n = len(result.order)
    heads = [h - 1 if h else ROOT for h in result.heads]
    assert sum(h == ROOT for h in heads) == 1
    for m in range(n):  # a tree: every word reaches the root
        seen, k = set(), m
        while k != ROOT:
            assert k not in seen
            seen.add(k)
            k = heads[k]
    if result.complete:
        assert n == len(inp)
        for m in range(n):  # projective
            h = heads[m]
            if h == ROOT:
                continue
            for b in range(min(h, m) + 1, max(h, m)):
                a = b
                while a not in (ROOT, h):
                    a = heads[a]
                assert a == h
        for k, w in enumerate(result.order):
            given = inp.heads[w]
            if given is not None:
                assert (heads[k] == ROOT) if given == ROOT else result.order[heads[k]] == given


@settings(max_examples=40, deadline=None)
@given(inp=constrained_bags(max_n=7), seed=st.integers(0, 10_000), chart=st.sampled_from([2, 4, 16, None]),
       pops=st.integers(1, 300))
def test_constraints_are_never_violated(inp, seed, chart, pops):
    """Complete outputs respect every given tag and head; timed-out (joined) outputs every given tag."""
    model = random_model(seed)
    result = best_first(model, inp, SearchConfig(chart_size=chart, timeout=None, max_expansions=pops))
    _check_constraints(inp, result)
    assert not result.certified
    assert 0 < result.recovered <= 1
    assert result.complete == (result.recovered == 1.0 and result.score == result.score)


def test_timeout_rule_joins_the_largest_disjoint_chart_edges():
    model = random_model(2)
    inp = OrderingInput(tuple("the cat sat on the mat .".split()), (None,) * 7, (None,) * 7)
    result = best_first(model, inp, SearchConfig(chart_size=4, timeout=None, max_expansions=6))
    assert not result.complete
    assert result.method == "best-first (approximate)"
    assert len(result.order) < 7 or result.recovered == 1.0
