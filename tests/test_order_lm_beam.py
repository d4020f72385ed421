"""The LM beam search for bags (``dualdecomp.models.ordering.bag_lm.search``): with a beam that never prunes
it equals brute force over every order of the items under the real KenLM trigram; its score is always the
KenLM score of its output; units stay contiguous and in order; the output's tree keeps every given tag and
head and the unit rule whatever the parser says; bad settings and inputs are clear errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.locations import default_model_dir
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.lm.build import build_lm_report
from dualdecomp.models.lm.model import LanguageModel, load_lm
from dualdecomp.models.ordering.bag_lm.search import (
    CERTIFIED_METHOD,
    LMBeam,
    LMTerm,
    constrained_tree,
    input_items,
    lm_beam_applies,
    lm_beam_decode,
    lm_beam_order,
    load_lm_beam,
)
from tests.test_order_units import _keeps_units, unit_inputs

LM = load_lm(default_model_dir() / "lm.binary")
SLOW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WRITTEN = Path(__file__).resolve().parent.parent / "data" / "corpora" / "written.train.jsonl"


@pytest.fixture(scope="module")
def cased_lm(tmp_path_factory) -> LanguageModel:
    """A cased order-4 LM of 300 sentences as written (tokens with capitals, digits kept)."""
    lines = WRITTEN.read_text(encoding="utf-8").splitlines()[:300]
    path = tmp_path_factory.mktemp("cased") / "cased.binary"
    build_lm_report([json.loads(line)["text"].split() for line in lines], path, order=4, memory="64M",
                    cased=True)
    return load_lm(path, cased=True)


@st.composite
def bags(draw, max_n: int = 6):
    """A bag with at most one ordered unit whose internal heads are the only heads given."""
    inp = draw(unit_inputs(max_n=max_n))
    inside = {k for unit in inp.units for k in unit}
    heads = tuple(h if k in inside and h in inside else None for k, h in enumerate(inp.heads))
    pos = tuple(draw(st.sampled_from((None, "NN", "VB"))) for _ in inp.words)
    return OrderingInput(inp.words, pos, heads, units=inp.units)


def brute_force(inp: OrderingInput, terms=None) -> float:
    """The best weighted LM score over every order of the items (default: the trigram alone)."""
    terms = terms or (LMTerm(LM),)
    items = input_items(inp)
    return max(weighted(terms, [inp.words[k] for item in perm for k in item])
               for perm in itertools.permutations(items))


def weighted(terms, words) -> float:
    return sum(t.weight * t.lm.sentence_logprob(words) for t in terms)


@SLOW
@given(bags())
def test_unpruned_search_is_the_lm_optimum(inp):
    found = lm_beam_order([LMTerm(LM)], inp, beam=10**6)
    assert not found.pruned
    assert found.logprob == pytest.approx(brute_force(inp), abs=1e-9)
    assert found.logprob == pytest.approx(LM.sentence_logprob([inp.words[k] for k in found.order]), abs=1e-9)


@SLOW
@given(bags(), st.integers(1, 4))
def test_narrow_beam_scores_its_output_and_never_beats_brute_force(inp, beam):
    found = lm_beam_order([LMTerm(LM)], inp, beam)
    assert sorted(found.order) == list(range(len(inp)))
    assert _keeps_units(inp, found.order)
    assert found.logprob == pytest.approx(LM.sentence_logprob([inp.words[k] for k in found.order]), abs=1e-9)
    best = brute_force(inp)
    assert found.logprob <= best + 1e-9
    if not found.pruned:
        assert found.logprob == pytest.approx(best, abs=1e-9)


@SLOW
@given(bags(max_n=5), st.sampled_from((0.25, 0.5, 2.0)), st.integers(1, 3))
def test_two_lms_with_weights_equal_brute_force(cased_lm, inp, weight, beam):
    cased = tuple(w.capitalize() if k % 2 else w for k, w in enumerate(inp.words))  # some capitals
    inp = OrderingInput(cased, inp.pos, inp.heads, units=inp.units)
    terms = (LMTerm(LM), LMTerm(cased_lm, weight))
    best = brute_force(inp, terms)
    found = lm_beam_order(terms, inp, beam=10**6)
    assert not found.pruned and found.logprob == pytest.approx(best, abs=1e-9)
    narrow = lm_beam_order(terms, inp, beam)
    assert narrow.logprob == pytest.approx(weighted(terms, [inp.words[k] for k in narrow.order]), abs=1e-9)
    assert narrow.logprob <= best + 1e-9


def test_a_cased_lm_keeps_case_and_digits(cased_lm):
    assert cased_lm.cased and cased_lm.lm_word("The") == "The" and cased_lm.lm_word("1999") == "1999"
    assert LM.lm_word("The") == "the"
    assert cased_lm.sentence_logprob(["The", "government", "said"]) != cased_lm.sentence_logprob(
        ["the", "government", "said"])
    with pytest.raises(InputError, match="positive weight"):
        lm_beam_order((LMTerm(LM), LMTerm(cased_lm, 0.0)), OrderingInput(("a",), (None,), (None,)), 4)


def test_a_beam_of_one_prunes_and_says_so():
    inp = OrderingInput(tuple("the dog barked at the cat".split()), (None,) * 6, (None,) * 6)
    assert lm_beam_order([LMTerm(LM)], inp, 1).pruned
    assert not lm_beam_order([LMTerm(LM)], inp, 10**6).pruned


def _is_tree(heads: list[int]) -> bool:
    if sum(h == ROOT for h in heads) != 1:
        return False
    for start in range(len(heads)):
        seen, k = set(), start
        while k != ROOT:
            if k in seen:
                return False
            seen.add(k)
            k = heads[k]
    return True


@settings(max_examples=200, deadline=None)
@given(bags(max_n=8), st.data())
def test_constrained_tree_keeps_the_constraints_whatever_the_parser_says(inp, data):
    n = len(inp)
    order = tuple(data.draw(st.permutations(range(n))))
    parsed = tuple(data.draw(st.lists(st.integers(0, n), min_size=n, max_size=n)))  # any heads, cycles too
    heads = constrained_tree(inp, order, parsed)
    assert _is_tree(heads)
    for p, k in enumerate(order):
        if inp.heads[k] is not None:
            assert heads[p] == (ROOT if inp.heads[k] == ROOT else order.index(inp.heads[k]))
    for unit, top in zip(inp.units, inp.unit_heads(), strict=True):
        members = {order.index(k) for k in unit}
        for p in range(n):
            if p not in members and heads[p] in members:
                assert heads[p] == order.index(top)


@SLOW
@given(bags())
def test_decode_keeps_every_word_tag_head_and_unit(inp):
    result = lm_beam_decode([LMTerm(LM)], inp, beam=8)
    assert result.complete and sorted(result.order) == list(range(len(inp)))
    assert result.words == tuple(inp.words[k] for k in result.order)
    heads = [h - 1 if h else ROOT for h in result.heads]
    assert _is_tree(heads)
    for p, k in enumerate(result.order):
        if inp.pos[k] is not None:
            assert result.pos[p] == inp.pos[k]
    assert _keeps_units(inp, result.order, result.heads)
    assert result.certified == (result.method == CERTIFIED_METHOD)


def test_inputs_with_heads_outside_units_are_refused():
    inp = OrderingInput(("dogs", "bark"), (None, None), (1, ROOT))
    assert not lm_beam_applies(inp)
    with pytest.raises(InputError, match="without given heads outside"):
        lm_beam_decode([LMTerm(LM)], inp, 4)
    with pytest.raises(InputError, match="at least 1"):
        lm_beam_order([LMTerm(LM)], OrderingInput(("a",), (None,), (None,)), 0)


def test_settings_load_and_bad_ones_are_model_errors(tmp_path):
    assert load_lm_beam(tmp_path, {}) is None
    (tmp_path / "lm_beam.binary").write_bytes((default_model_dir() / "lm.binary").read_bytes())
    loaded = load_lm_beam(tmp_path, {"decode": {"lm_beam": {"beam": 8, "default": True}}})
    assert isinstance(loaded, LMBeam) and loaded.beam == 8 and loaded.default
    (tmp_path / "cased.binary").write_bytes((default_model_dir() / "lm.binary").read_bytes())
    two = load_lm_beam(tmp_path, {"decode": {"lm_beam": {"beam": 8, "cased_lm": "cased.binary",
                                                         "cased_weight": 0.5}}})
    assert [t.weight for t in two.terms] == [1.0, 0.5] and two.terms[1].lm.cased and not two.default
    for bad in ({"beam": 0}, {"beam": "8"}, {"beam": True}, {"beam": 8, "default": "yes"}, [8],
                {"beam": 8, "cased_lm": "cased.binary"}, {"beam": 8, "cased_lm": "cased.binary",
                                                          "cased_weight": -1}):
        with pytest.raises(ModelError, match="LM beam"):
            load_lm_beam(tmp_path, {"decode": {"lm_beam": bad}})
    with pytest.raises(ModelError):
        load_lm_beam(tmp_path, {"decode": {"lm_beam": {"beam": 8, "lm": "missing.binary"}}})


def test_cli_orders_with_the_lm_beam(capsys):
    assert main(["order", "--words", "barked the dog loudly .", "--lm-beam", "16"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out["words"]) == sorted("barked the dog loudly .".split())
    assert out["method"].startswith("LM beam")


def test_cli_lm_beam_refuses_a_bad_beam(capsys):
    assert main(["order", "--words", "the dog", "--lm-beam", "-1"]) == 2
    assert "LM beam" in capsys.readouterr().err


def test_a_unit_head_with_a_given_head_outside_its_unit_is_not_for_the_lm_beam():
    words = ("the", "dog", "barked")
    inside_only = OrderingInput(words, (None,) * 3, (1, None, None), units=((0, 1),))
    outside = OrderingInput(words, (None,) * 3, (1, 2, None), units=((0, 1),))
    assert lm_beam_applies(inside_only) and not lm_beam_applies(outside)
