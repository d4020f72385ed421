"""The exact DP of the full-tree condition equals brute-force enumeration; its certificates are honest."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.paper.edge import can_attach
from dualdecomp.models.ordering.paper.exact import (
    budgeted_beam,
    exact_linearisation,
    signature,
    worst_case_attachments,
)
from dualdecomp.models.ordering.paper.search import SearchConfig
from dualdecomp.solvers.ordering.linearise import best_linearisation
from tests.ordering_oracles import brute_force_best, linearisations, random_model

WORDS = ("the", "cat", "sat", "on", "mat", ".", "We", "do", "like", "rain")
TAGS = ("DT", "NN", "VBD", "IN", "NN", ".", "PRP", "VBP", "VB", "NN")


def _arcs(result) -> dict[int, int]:
    """Input word -> input head of an output (recomputed here, independently of the decoder)."""
    return {result.order[k]: (ROOT if h == 0 else result.order[h - 1]) for k, h in enumerate(result.heads)}


@st.composite
def trees(draw, max_n: int = 6):
    n = draw(st.integers(1, max_n))
    root = draw(st.integers(0, n - 1))
    order = draw(st.permutations(range(n)))
    order = [root] + [k for k in order if k != root]
    heads = [ROOT] * n
    for i in range(1, n):
        heads[order[i]] = order[draw(st.integers(0, i - 1))]
    words = [WORDS[draw(st.integers(0, len(WORDS) - 1))] for _ in range(n)]
    give_pos = draw(st.booleans())
    pos = [TAGS[WORDS.index(w)] if give_pos else None for w in words]
    return OrderingInput(tuple(words), tuple(pos), tuple(heads))


@settings(max_examples=40, deadline=None)
@given(inp=trees(), seed=st.integers(0, 10_000))
def test_exact_dp_equals_brute_force(inp, seed):
    model = random_model(seed)
    found = exact_linearisation(model, inp, 10**7)
    best, count = brute_force_best(model, inp)
    assert count > 0
    assert found.certified
    assert found.best.scaled == pytest.approx(best, abs=1e-9)
    # the edge's score is its feature vector times the weights (recomputed independently)
    phi = model.feature_vector(found.best)
    assert found.best.score == pytest.approx(float(model.weights[phi].sum()), abs=1e-9)


def test_exact_decode_result_is_certified_and_respects_the_tree():
    model = random_model(3)
    inp = OrderingInput(("cat", "The", "sat", "."), ("NN", "DT", "VBD", "."), (2, 0, ROOT, 2))
    result = OrderingDecoder(model).decode(inp, SearchConfig(timeout=None, max_expansions=1000),
                                           ExactConfig())
    assert result.certified and result.method == "exact DP" and result.complete
    assert _arcs(result) == dict(enumerate(inp.heads))
    best, _ = brute_force_best(model, inp)
    assert result.score == pytest.approx(best, abs=1e-9)


def test_state_limit_gives_an_uncertified_answer_and_best_first_fallback():
    model = random_model(4)
    inp = OrderingInput(("sat", "cat", "mat", "rain", "."), (None,) * 5, (ROOT, 0, 0, 0, 0))
    found = exact_linearisation(model, inp, 3)
    assert not found.certified and found.best is None
    result = OrderingDecoder(model).decode(inp, SearchConfig(timeout=None, max_expansions=50_000),
                                           ExactConfig(max_states=3))
    assert not result.certified and result.method.startswith("best-first")


def test_bruteforce_counts_every_projective_order():
    # a head with two dependents: 3 positions for each arrangement -> 3! / ... = 6 orders in total
    model = random_model(5)
    inp = OrderingInput(("sat", "cat", "."), ("VBD", "NN", "."), (ROOT, 0, 0))
    ctx = model.context(inp)
    assert len({e.words for e in linearisations(model, ctx, inp.heads)}) == 6
    # a chain a <- b <- c has 4 projective orders
    chain = OrderingInput(("sat", "cat", "the"), ("VBD", "NN", "DT"), (ROOT, 0, 1))
    assert len({e.words for e in linearisations(model, model.context(chain), chain.heads)}) == 4


def test_linearise_rejects_a_non_tree():
    with pytest.raises(InputError):
        best_linearisation([[1], [0]], 0, lambda h: [h], lambda a, b, r: None, float, lambda s: s)



@settings(max_examples=40, deadline=None)
@given(inp=trees(), seed=st.integers(0, 10_000), beam=st.integers(1, 4))
def test_tree_beam_gives_a_valid_linearisation_never_above_the_optimum(inp, seed, beam):
    model = random_model(seed)
    best, _ = brute_force_best(model, inp)
    found = exact_linearisation(model, inp, beam=beam)
    assert found.best is not None
    assert found.best.scaled <= best + 1e-9
    if found.certified:  # nothing was pruned: the beam DP is the exact DP
        assert found.best.scaled == pytest.approx(best, abs=1e-9)
    result = OrderingDecoder(model).decode(inp, None, ExactConfig(max_states=None, beam=beam))
    assert result.complete and sorted(result.order) == list(range(len(inp.words)))
    assert _arcs(result) == dict(enumerate(inp.heads))
    assert result.method == ("exact DP" if result.certified else "tree beam DP (approximate)")
    assert all(p == g for p, g in zip((result.pos[result.order.index(k)] for k in range(len(inp.words))),
                                      inp.pos, strict=True) if g is not None)


@settings(max_examples=25, deadline=None)
@given(inp=trees(), seed=st.integers(0, 10_000))
def test_tree_beam_with_a_wide_beam_is_exact_and_certified(inp, seed):
    model = random_model(seed)
    best, _ = brute_force_best(model, inp)
    found = exact_linearisation(model, inp, beam=10**6)
    assert found.certified
    assert found.best.scaled == pytest.approx(best, abs=1e-9)


def test_tree_beam_prunes_and_says_so():
    model = random_model(4)
    inp = OrderingInput(("sat", "cat", "mat", "rain", "."), (None,) * 5, (ROOT, 0, 0, 0, 0))
    exact = exact_linearisation(model, inp, 10**7)
    found = exact_linearisation(model, inp, beam=1)
    assert not found.certified and found.best is not None
    assert found.states < exact.states
    assert found.best.scaled <= exact.best.scaled + 1e-9
    with pytest.raises(ValueError):
        exact_linearisation(model, inp, beam=0)


def _attachments_tried(model, inp: OrderingInput, beam: int) -> int:
    """How many attachments the tree beam DP tries (calls of its ``attach``) on a full-tree input."""
    ctx = model.context(inp)
    leaves = model.leaves(ctx)
    tried = 0

    def attach(head, dep, right):
        nonlocal tried
        tried += 1
        if not can_attach(ctx, head, dep, right):
            return None
        return model.attach(ctx, head, dep, right, with_phi=False)

    best_linearisation(inp.given_children(), inp.given_root(), lambda h: [e for e in leaves if e.head == h],
                       attach, lambda e: e.score, signature, beam=beam)
    return tried


@settings(max_examples=40, deadline=None)
@given(inp=trees(max_n=7), seed=st.integers(0, 10_000), beam=st.integers(1, 6))
def test_the_worst_case_of_attachments_bounds_what_the_tree_beam_dp_tries(inp, seed, beam):
    tried = _attachments_tried(random_model(seed), inp, beam)
    assert tried <= worst_case_attachments(inp.given_children(), beam)


def test_the_worst_case_of_attachments_is_reached_by_a_star_of_unknown_words():
    """Words outside the tag dictionary take every open tag, so every beam is full: the bound is tight."""
    inp = OrderingInput(("zzq", "qqa", "wwb", "eec"), (None,) * 4, (ROOT, 0, 0, 0))
    for beam in (1, 2, 3):
        tried = _attachments_tried(random_model(3), inp, beam)
        assert tried == worst_case_attachments(inp.given_children(), beam)


def test_a_budget_of_attachments_halves_the_beam_until_the_tree_fits():
    model = random_model(2)
    inp = OrderingInput(("sat", "cat", "mat", "rain", "."), (None,) * 5, (ROOT, 0, 0, 0, 0))
    children = inp.given_children()  # one node with four children: 20 K² attachments at most
    assert worst_case_attachments(children, 8) == 20 * 64
    assert budgeted_beam(children, 64, None) == 64
    assert budgeted_beam(children, 64, 20 * 64) == 8 and budgeted_beam(children, 64, 20 * 64 - 1) == 4
    assert budgeted_beam(children, 64, 1) == 1
    for bound, beam in ((None, 64), (20 * 16, 4), (1, 1)):
        budgeted = exact_linearisation(model, inp, beam=64, beam_attachments=bound)
        plain = exact_linearisation(model, inp, beam=beam)
        assert budgeted.best.words == plain.best.words and budgeted.states == plain.states
        config = ExactConfig(max_states=None, beam=64, beam_attachments=bound)
        same = ExactConfig(max_states=None, beam=beam)
        decoder = OrderingDecoder(model)
        assert decoder.decode(inp, None, config).order == decoder.decode(inp, None, same).order
    with pytest.raises(ValueError):
        ExactConfig(beam=4, beam_attachments=0)
