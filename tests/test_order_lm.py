"""The LM term of word ordering: its sum over any derivation is the KenLM score of the sentence minus the
unigram scores of its words, and the exact DP and exhaustive best-first search stay equal to brute force
with it."""

from __future__ import annotations

import json
from dataclasses import fields

import kenlm
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.locations import default_model_dir
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.load import load_decoder, with_decoding_lm
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from dualdecomp.models.ordering.paper.model import OrderingModel, load_model
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer
from tests.ordering_oracles import FIXTURES, brute_force_best, linearisations, random_model
from tests.test_order_exact import trees

LM_PATH = default_model_dir() / "lm.binary"
LM = load_lm(LM_PATH)
RAW = kenlm.Model(str(LM_PATH))  # the oracle: KenLM's own per-word scores of the whole sentence


@settings(max_examples=30, deadline=None)
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000), weight=st.floats(0.05, 5.0))
def test_lm_terms_of_every_derivation_sum_to_the_sentence_score(inp, seed, weight):
    model = random_model(seed)
    ctx = model.context(inp)
    goals = linearisations(model, ctx, inp.heads)
    goals_lm = linearisations(model, ctx, inp.heads, OrderingLM(LM, weight))
    assert len(goals) == len(goals_lm) > 0
    for edge, edge_lm in zip(goals, goals_lm, strict=True):
        assert edge.words == edge_lm.words
        sentence = " ".join(LM.lm_words(inp.words[k] for k in edge.words))
        unigrams = sum(RAW.score(w, bos=False, eos=False) for w in sentence.split())
        expected = weight * (sum(p for p, _, _ in RAW.full_scores(sentence, bos=True, eos=True)) - unigrams)
        assert edge_lm.score - edge.score == pytest.approx(expected, abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000), weight=st.floats(0.05, 5.0))
def test_exact_dp_with_the_lm_equals_brute_force(inp, seed, weight):
    model, lm = random_model(seed), OrderingLM(LM, weight)
    found = exact_linearisation(model, inp, 10**7, lm=lm)
    best, count = brute_force_best(model, inp, lm)
    assert count > 0 and found.certified
    assert found.best.scaled == pytest.approx(best, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(inp=trees(max_n=4), seed=st.integers(0, 10_000))
def test_exhaustive_best_first_with_the_lm_equals_brute_force(inp, seed):
    free = type(inp)(inp.words, (None,) * len(inp), (None,) * len(inp))  # bag of words: every tree
    model, lm = random_model(seed), OrderingLM(LM, 1.0)
    result = best_first(model, free, SearchConfig(chart_size=None, timeout=None, exhaustive=True), lm=lm)
    best, _ = brute_force_best(model, free, lm)
    assert result.complete and result.score == pytest.approx(best, abs=1e-9)


def test_bad_weights_are_refused_and_the_trained_model_holds_no_lm():
    for weight in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(InputError, match="LM weight"):
            OrderingLM(LM, weight)
    # the trainer learns the syntax model alone: the model it trains holds only weights (the LM term is
    # the decoder's, an argument of the scoring functions), so no LM can reach it
    assert [f.name for f in fields(OrderingModel)] == ["weights", "tag_names", "word_tags", "open_tags",
                                                       "hash_bits", "meta"]
    trainer = Trainer(random_model(0), TrainConfig())
    assert not hasattr(trainer.model, "lm")


def test_select_lm_stores_the_best_weight_and_decoding_uses_it(tmp_path, capsys):
    model_dir = tmp_path / "model"
    random_model(5).save(model_dir)
    argv = ["order", "select-lm", "--model", str(model_dir), "--dev", str(FIXTURES / "tiny.conllu"),
            "--start", "0", "--sentences", "2", "--weights", "0", "0.5", "2", "--max-expansions", "200",
            "--write"]
    assert main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    grid, chosen = lines[:-1], lines[-1]
    assert [g["lm_weight"] for g in grid] == [0.0, 0.5, 2.0]
    best = max(grid, key=lambda g: (g["mean"], -g["lm_weight"]))
    assert chosen == {"selected_lm_weight": best["lm_weight"], "units": False, "written": True}
    stored = load_decoder(model_dir)
    assert stored.model.meta["decode"]["lm_weight"] == best["lm_weight"]
    assert len(stored.model.meta["decode"]["selection"]["grid"]) == 3
    decoding = with_decoding_lm(stored)
    assert (decoding.lm.weight if decoding.lm is not None else 0.0) == best["lm_weight"]
    assert with_decoding_lm(stored, weight=0.0).lm is None


def test_select_lm_refuses_bad_options(capsys):
    base = ["order", "select-lm", "--model", "data/word_order_model", "--dev", str(FIXTURES / "tiny.conllu")]
    assert main([*base, "--weights", "-1"]) == 2
    assert main([*base, "--write", "--lm", str(LM_PATH)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_reweighted_lm_shares_the_cache_and_scales_every_term():
    base = OrderingLM(LM, 1.0)
    words = ("the", "dog", "barked", "loudly")
    other = base.with_weight(2.5)
    assert (base.weight, other.weight) == (1.0, 2.5) and other._cache is base._cache
    joined = base.join(words, (1, 0), (2, 3), True)
    assert other.join(words, (1, 0), (2, 3), True) == pytest.approx(2.5 * joined, abs=1e-12)
    assert other.leaf(words[:1], 0, True) == pytest.approx(2.5 * base.leaf(words[:1], 0, True), abs=1e-12)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(InputError, match="LM weight"):
            base.with_weight(bad)


def test_inputs_with_units_decode_with_the_weight_stored_for_them(tmp_path):
    words = ("the", "dog", "barked", "at", "a", "cat", ".")
    heads = (1, None, None, None, 5, None, None)  # the units "the dog" and "a cat" with their heads
    with_units = OrderingInput(words, (None,) * 7, heads, units=((0, 1), (4, 5)))
    plain = OrderingInput(words, (None,) * 7, heads)
    model_dir = tmp_path / "model"
    random_model(11).save(model_dir, {"decode": {"lm_weight": 0.5, "units": {"lm_weight": 2.0}}})
    decoding = with_decoding_lm(load_decoder(model_dir))
    assert decoding.lm.weight == 0.5 and decoding.units_lm.weight == 2.0
    assert decoding.lm_for(with_units) is decoding.units_lm and decoding.lm_for(plain) is decoding.lm
    search, exact = SearchConfig(chart_size=16, timeout=None, max_expansions=300), ExactConfig(beam=8)
    for inp, weight in ((with_units, 2.0), (plain, 0.5)):
        got = decoding.decode(inp, search, exact)
        expected = with_decoding_lm(load_decoder(model_dir), weight=weight).decode(inp, search, exact)
        assert got.words == expected.words and got.score == pytest.approx(expected.score, abs=1e-9)
    other = with_decoding_lm(load_decoder(model_dir), weight=0.5).decode(with_units, search, exact)
    assert other.score != pytest.approx(decoding.decode(with_units, search, exact).score, abs=1e-9)
    # a given weight: every input
    assert with_decoding_lm(load_decoder(model_dir), weight=1.0).units_lm is None
    full = OrderingInput(("dog", "barked"), (None, None), (1, ROOT))
    assert decoding.lm_for(full) is decoding.lm
    random_model(11).save(tmp_path / "bad", {"decode": {"lm_weight": 1.0, "units": {"lm_weight": 0}}})
    with pytest.raises(ModelError, match="units"):
        with_decoding_lm(load_decoder(tmp_path / "bad"))


def test_select_lm_for_units_stores_its_own_weight_and_keeps_the_other(tmp_path, capsys):
    model_dir = tmp_path / "model"
    random_model(5).save(model_dir)
    base = ["order", "select-lm", "--model", str(model_dir), "--dev", str(FIXTURES / "tiny.conllu"),
            "--start", "0", "--sentences", "2", "--max-expansions", "200", "--write"]
    assert main([*base, "--weights", "0.5", "1"]) == 0
    plain_weight = load_model(model_dir).meta["decode"]["lm_weight"]
    capsys.readouterr()
    assert main([*base, "--weights", "1", "4", "--units"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    grid, chosen = lines[:-1], lines[-1]
    assert [g["lm_weight"] for g in grid] == [1.0, 4.0] and all(list(g["bleu"]) == ["bnp"] for g in grid)
    best = max(grid, key=lambda g: (g["mean"], -g["lm_weight"]))
    assert chosen == {"selected_lm_weight": best["lm_weight"], "units": True, "written": True}
    stored = load_model(model_dir).meta["decode"]
    assert stored["lm_weight"] == plain_weight and stored["units"]["lm_weight"] == best["lm_weight"]
    assert "bnp" in stored["units"]["selection"]["rule"]
    assert main([*base, "--weights", "2"]) == 0  # choosing the other weight again keeps this one
    stored = load_model(model_dir).meta["decode"]
    assert stored["lm_weight"] == 2.0 and stored["units"]["lm_weight"] == best["lm_weight"]
    assert main([*base, "--weights", "0", "1", "--units"]) == 2
    assert "Traceback" not in capsys.readouterr().err
