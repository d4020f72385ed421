"""Ordered units (the base NPs the paper keeps as atoms): every decoder of the paper's model keeps each
unit contiguous and in its order, its search space is exactly the unit-free space filtered by the unit
rule (brute force), bad units are one-line errors, and base NPs come from UD trees by the stated rule."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.base_np import base_np_units
from dualdecomp.data.ordering.inputs import ROOT, OrderingExample, OrderingInput
from dualdecomp.data.ordering.reading import parse_jsonl_record, read_conllu_examples
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.evaluation.ordering import condition_input
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.lineariser.model import APPROXIMATE_METHOD, EXACT_METHOD
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from dualdecomp.models.ordering.paper.model import new_model
from dualdecomp.models.ordering.paper.refine import completed_input, refine
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer
from tests.ordering_oracles import all_trees, exhaustive_goals, goal_key, linearisations, random_model
from tests.test_order_lineariser import projective_orders, random_lineariser, score_with_lm
from tests.test_order_search import WORDS, _check_constraints


def _projective_tree(draw, n: int) -> list[int]:
    """A random projective tree in index order: each span's root, its dependents' spans beside it."""
    heads = [ROOT] * n

    def span(i: int, j: int, parent: int) -> None:
        r = draw(st.integers(i, j - 1))
        heads[r] = parent
        for a, b in ((i, r), (r + 1, j)):
            while a < b:
                c = draw(st.integers(a + 1, b))
                span(a, c, r)
                a = c

    span(0, n, ROOT)
    return heads


def _valid_unit(heads, unit) -> bool:
    members = set(unit)
    tops = [w for w in unit if heads[w] not in members]
    return len(tops) == 1 and not any(heads[k] in members - {tops[0]} for k in range(len(heads))
                                      if k not in members)


@st.composite
def unit_inputs(draw, max_n: int = 5, full_tree: bool = False):
    """A projective gold tree in index order, a unit that is a valid span of it, and some given heads."""
    n = draw(st.integers(2, max_n))
    tree = _projective_tree(draw, n)
    spans = [tuple(range(i, j + 1)) for i in range(n) for j in range(i + 1, n)
             if _valid_unit(tree, range(i, j + 1))]
    unit = spans[draw(st.integers(0, len(spans) - 1))] if spans else ()
    words = tuple(draw(st.sampled_from(WORDS)) for _ in range(n))
    heads = [h if (full_tree or draw(st.booleans())) else None for h in tree]
    for w in unit:
        if tree[w] in unit:
            heads[w] = tree[w]
    return OrderingInput(words, (None,) * n, tuple(heads), units=(unit,) if unit else ())


def _keeps_units(inp: OrderingInput, order, heads_1based=None) -> bool:
    """Every unit contiguous and in order; its words other than its head have no dependent outside it."""
    place = {w: k for k, w in enumerate(order)}
    for unit, top in zip(inp.units, inp.unit_heads(), strict=True):
        start = place[unit[0]]
        if [place[w] for w in unit] != list(range(start, start + len(unit))):
            return False
        if heads_1based is not None:
            for k, h in enumerate(heads_1based):
                if h and order[h - 1] in unit and order[h - 1] != top and order[k] not in unit:
                    return False
    return True


def _unit_free(inp: OrderingInput) -> OrderingInput:
    return OrderingInput(inp.words, inp.pos, inp.heads, inp.ident)


def _filtered_goals(model, inp: OrderingInput):
    """Brute force: every goal of the unit-free input that the unit rule allows."""
    free = _unit_free(inp)
    ctx = model.context(free)
    closed = inp.closed_words()
    out = []
    for heads in all_trees(len(inp), inp.heads):
        if any(heads[k] in closed and not any(k in u and heads[k] in u for u in inp.units)
               for k in range(len(inp))):
            continue
        out.extend(e for e in linearisations(model, ctx, heads) if _keeps_units(inp, e.words))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=5), seed=st.integers(0, 10_000))
def test_exhaustive_best_first_with_units_equals_filtered_brute_force(inp, seed):
    model = random_model(seed)
    goals = _filtered_goals(model, inp)
    assert goals  # the gold order is one of them
    result, found = exhaustive_goals(model, inp)
    assert result.complete
    assert result.score == pytest.approx(max(e.scaled for e in goals), abs=1e-9)
    expected = {goal_key(e) for e in goals}
    assert len(found) == len(set(found)) and set(found) == expected  # each allowed goal exactly once


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=5, full_tree=True), seed=st.integers(0, 10_000))
def test_exact_dp_with_units_equals_filtered_brute_force(inp, seed):
    model = random_model(seed)
    goals = _filtered_goals(model, inp)
    found = exact_linearisation(model, inp, max_states=10**6)
    assert found.certified
    assert found.best.scaled == pytest.approx(max(e.scaled for e in goals), abs=1e-9)
    assert _keeps_units(inp, found.best.words)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=7), seed=st.integers(0, 10_000), pops=st.integers(1, 200),
       beam=st.integers(1, 8))
def test_every_decoder_keeps_the_units(inp, seed, pops, beam):
    """Best-first (complete or joined), the second stage and the default decoder never break a unit."""
    model = random_model(seed)
    first = best_first(model, inp, SearchConfig(chart_size=4, timeout=None, max_expansions=pops))
    _check_constraints(inp, first)
    if first.complete:
        assert _keeps_units(inp, first.order, first.heads)
    for result in (refine(model, inp, first, beam),
                   OrderingDecoder(model).decode(inp, SearchConfig(chart_size=4, timeout=None,
                                                                   max_expansions=pops),
                                                 ExactConfig(max_states=50, beam=beam, lineariser=True))):
        assert result.complete
        _check_constraints(inp, result)
        assert _keeps_units(inp, result.order, result.heads)


@pytest.mark.parametrize("units, heads, message", [
    (((0,),), (None, None, None), "at least two words"),
    (((0, 5),), (None, None, None), "out of range"),
    (((0, 1), (1, 2)), (1, None, 1), "two units"),
    (((0, 1),), (None, None, None), "one subtree"),
    (((0, 1, 2),), (2, None, 1), "crosses its own arcs"),
    (((0, 1),), (1, None, 0), "only the unit's head"),
])
def test_bad_units_are_one_line_errors(units, heads, message):
    with pytest.raises(InputError, match=message):
        OrderingInput(("a", "b", "c"), (None,) * 3, heads, units=units)


def test_units_may_be_lists():
    inp = OrderingInput(("a", "b"), (None, None), (1, None), units=[[0, 1]])
    assert inp.units == ((0, 1),)
    with pytest.raises(InputError, match="sequences of word indices"):
        OrderingInput(("a", "b"), (None, None), (1, None), units=[3])


def test_jsonl_units_are_read_and_checked(tmp_path, capsys):
    record = {"words": ["car", "the", "red"], "heads": [None, 1, 1], "units": [[2, 3, 1]]}
    inp = parse_jsonl_record(record, "x")
    assert inp.units == ((1, 2, 0),) and inp.closed_words() == frozenset({1, 2})
    with pytest.raises(InputError, match="unit word"):
        parse_jsonl_record({"words": ["a", "b"], "units": [[1, 3]]}, "x")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"words": ["a", "b"], "units": [[1, 2]]}) + "\n")
    assert main(["order", "--input", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "one subtree" in err


CONLLU = """# sent_id = bnp1
1	President	President	PROPN	NNP	_	2	nmod:desc	_	_
2	Bush	Bush	PROPN	NNP	_	3	nsubj	_	_
3	praised	praise	VERB	VBD	_	0	root	_	_
4	my	my	PRON	PRP$	_	7	nmod:poss	_	_
5	very	very	ADV	RB	_	6	advmod	_	_
6	old	old	ADJ	JJ	_	7	amod	_	_
7	friend	friend	NOUN	NN	_	3	obj	_	_
8	of	of	ADP	IN	_	14	case	_	_
9	John	John	PROPN	NNP	_	14	nmod:poss	_	_
10	's	's	PART	POS	_	9	case	_	_
11	15	15	NUM	CD	_	13	nummod	_	_
12	-	-	PUNCT	HYPH	_	13	punct	_	_
13	year	year	NOUN	NN	_	14	compound	_	_
14	team	team	NOUN	NN	_	7	nmod	_	_
15	.	.	PUNCT	.	_	3	punct	_	_

"""


def test_base_nps_follow_the_stated_rule(tmp_path):
    path = tmp_path / "bnp.conllu"
    path.write_text(CONLLU)  # "John 's" is a base NP; a possessive with a dependent stays out of "team"'s
    example = read_conllu_examples(path)[0]
    units = [" ".join(example.words[k] for k in u) for u in base_np_units(example)]
    assert units == ["President Bush", "my very old friend", "John 's", "15 - year team"]
    no_rels = example.__class__(example.words, example.pos, example.heads, example.ident)
    with pytest.raises(InputError, match="DEPREL"):
        base_np_units(no_rels)


def test_bnp_condition_is_the_words_bag_with_units(tmp_path):
    path = tmp_path / "bnp.conllu"
    path.write_text(CONLLU)
    example = read_conllu_examples(path)[0]
    words = condition_input(example, "words", 5)
    bnp = condition_input(example, "bnp", 5)
    assert bnp.words == words.words and len(bnp.units) == 4
    inp, order = example.shuffled(0.0, 0.0, 5, base_np_units(example))
    assert inp == bnp and _keeps_units(bnp, order)
    given = {k for k, h in enumerate(bnp.heads) if h is not None}
    assert given == {w for u in bnp.units for w in u} - set(bnp.unit_heads())
    full = condition_input(example, "allbnp", 5)  # the "all" input with the same units
    assert full.units == bnp.units and full == dataclasses.replace(condition_input(example, "all", 5),
                                                                 units=bnp.units)


def test_a_fragment_hung_on_a_unit_word_is_reattached():
    """The timeout rule hangs fragments on the first fragment's root, which may be inside a unit."""
    inp = OrderingInput(("the", "big", "car", "sat"), (None,) * 4, (2, 2, None, None), units=((0, 1, 2),))
    joined = OrderingResult(order=(1, 3), words=("big", "sat"), pos=("NN", "VBD"), heads=(0, 1),
                            complete=False, score=float("nan"), recovered=0.5, expansions=3, seconds=0.0)
    tree = completed_input(random_model(3), inp, joined)  # validated: no outside word hangs on "big"
    assert tree.heads[3] != 1 and tree.units == inp.units
    result = refine(random_model(3), inp, joined, beam=4)
    assert result.complete and _keeps_units(inp, result.order, result.heads)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=6, full_tree=True), seed=st.integers(0, 10_000))
def test_the_lineariser_with_units_certifies_the_best_order_that_keeps_them(inp, seed):
    lin = random_lineariser(seed)
    found = lin.linearise(inp.words, inp.pos, inp.heads, units=inp.units)
    scores = {order: lin.order_score(inp.words, inp.pos, inp.heads, order)
              for order in projective_orders(inp.heads) if _keeps_units(inp, order)}
    assert found.certified and found.order in scores
    assert found.score == pytest.approx(max(scores.values()), abs=1e-9)
    assert found.score == pytest.approx(scores[found.order], abs=1e-9)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=6, full_tree=True), seed=st.integers(0, 10_000), weight=st.floats(0.1, 5.0))
def test_the_lineariser_with_its_lm_and_units_equals_filtered_brute_force(inp, seed, weight, default_lm):
    lm = OrderingLM(default_lm, weight)
    lin = dataclasses.replace(random_lineariser(seed), lm_states=1_000_000).with_lm(lm)
    words = inp.words
    scores = {order: score_with_lm(lin, words, inp.pos, inp.heads, order)
              for order in projective_orders(inp.heads) if _keeps_units(inp, order)}
    found = lin.linearise(words, inp.pos, inp.heads, units=inp.units)
    assert found.certified and found.order in scores
    assert found.score == pytest.approx(max(scores.values()), abs=1e-9)
    beam = dataclasses.replace(lin, lm_states=0).linearise(words, inp.pos, inp.heads, units=inp.units)
    assert beam.order in scores and not beam.certified
    assert beam.score == pytest.approx(scores[beam.order], abs=1e-9) and beam.score <= found.score + 1e-9


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=unit_inputs(max_n=7), seed=st.integers(0, 10_000), pops=st.integers(1, 100))
def test_the_lineariser_as_decoder_and_second_stage_keeps_the_units(inp, seed, pops, default_lm):
    decoder = OrderingDecoder(random_model(seed), lineariser=random_lineariser(seed))
    search = SearchConfig(chart_size=4, timeout=None, max_expansions=pops)
    full_tree = all(h is not None for h in inp.heads)
    config = ExactConfig(max_states=None, beam=4, lineariser=full_tree, second_stage="lineariser")
    for lin in (decoder.lineariser, decoder.lineariser.with_lm(OrderingLM(default_lm, 2.0))):
        result = dataclasses.replace(decoder, lineariser=lin).decode(inp, search, config)
        assert result.complete and any(m in result.method for m in (EXACT_METHOD, APPROXIMATE_METHOD))
        _check_constraints(inp, result)
        assert _keeps_units(inp, result.order, result.heads)


def test_training_with_base_nps_as_units_learns_the_orders():
    """The paper trains on bags with base NPs as units: the gold derivation keeps them, so gold is reached."""
    rels = {"DT": "det", "JJ": "amod", "NN": "nsubj", "VBD": "root", "RB": "advmod"}

    def gold(words: str, heads: list[int], tags: str) -> OrderingExample:
        return OrderingExample(tuple(words.split()), tuple(tags.split()), tuple(h - 1 for h in heads), "",
                               tuple(rels[t] for t in tags.split()))

    sentences = [gold("the big cat sat", [3, 3, 4, 0], "DT JJ NN VBD"),
                 gold("a small dog ran home", [3, 3, 4, 0, 4], "DT JJ NN VBD RB"),
                 gold("the cat ran", [2, 3, 0], "DT NN VBD")]
    assert [len(base_np_units(s)) for s in sentences] == [1, 1, 1]
    model = new_model(sentences, hash_bits=14)
    trainer = Trainer(model, TrainConfig(chart_size=16, max_expansions=200, seed=1, base_nps=True))
    for epoch in range(8):
        trainer.epoch(sentences, epoch)
    model.weights[:] = trainer.averaged()
    search = SearchConfig(chart_size=16, timeout=None, max_expansions=500)
    for s in sentences:
        inp = condition_input(s, "bnp", 3)
        assert inp.units and best_first(model, inp, search).words == s.words
