"""The second stage for inputs without a full tree: complete the best-first output's tree, re-order it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.paper.refine import REFINED_METHOD, completed_input, output_arcs, refine
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from tests.ordering_oracles import random_model
from tests.test_order_search import _check_constraints, constrained_bags


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=constrained_bags(max_n=6), seed=st.integers(0, 10_000), pops=st.integers(1, 200),
       beam=st.integers(1, 8))
def test_refined_output_is_complete_and_respects_every_constraint(inp, seed, pops, beam):
    model = random_model(seed)
    first = best_first(model, inp, SearchConfig(chart_size=4, timeout=None, max_expansions=pops))
    result = refine(model, inp, first, beam)
    assert result.complete and result.recovered == 1.0
    _check_constraints(inp, result)
    assert not result.certified
    if first.complete:  # never worse than a complete first output under the model
        assert result.score >= first.score - 1e-12
    assert result is first or result.method == REFINED_METHOD


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=constrained_bags(max_n=6), seed=st.integers(0, 10_000), pops=st.integers(1, 200))
def test_completed_tree_keeps_the_given_heads_and_the_outputs_tags(inp, seed, pops):
    model = random_model(seed)
    first = best_first(model, inp, SearchConfig(chart_size=4, timeout=None, max_expansions=pops))
    tree = completed_input(model, inp, first)  # OrderingInput: validated as an acyclic single-rooted tree
    assert all(h is not None for h in tree.heads) and sum(h == ROOT for h in tree.heads) == 1
    for w, h in enumerate(inp.heads):
        if h is not None:
            assert tree.heads[w] == h
    for w, tag in zip(first.order, first.pos, strict=True):
        assert tree.pos[w] == tag
    if first.complete:  # a complete output's own tree is kept as it is
        assert dict(enumerate(tree.heads)) == output_arcs(first)


def test_a_timed_out_search_is_completed_with_every_word():
    model = random_model(2)
    inp = OrderingInput(tuple("the cat sat on the mat .".split()), (None,) * 7, (None,) * 7)
    search = SearchConfig(chart_size=4, timeout=None, max_expansions=6)
    first = best_first(model, inp, search)
    assert not first.complete and first.recovered < 1
    result = OrderingDecoder(model).decode(inp, search, ExactConfig(beam=4))
    assert result.complete and result.method == REFINED_METHOD
    assert sorted(result.words) == sorted(inp.words)
    assert result.expansions > first.expansions
