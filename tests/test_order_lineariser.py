"""The head-domain lineariser: the exact domain DP against brute force, decoding, training, files, CLI."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.errors import ModelError
from dualdecomp.data.ordering.inputs import ROOT, is_projective
from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.ordering.decoding.config import SECOND_STAGES, ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.decoding.relinearise import REFINED_METHOD
from dualdecomp.models.ordering.lineariser.exact import exact_with_lm
from dualdecomp.models.ordering.lineariser.model import (
    APPROXIMATE_METHOD,
    EXACT_LM_METHOD,
    EXACT_METHOD,
    METHOD_NAME,
    Lineariser,
    load_lineariser,
)
from dualdecomp.models.ordering.lineariser.training import tag_dictionary, train_lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.refine import REFINED_METHOD as TREE_BEAM_STAGE
from dualdecomp.models.ordering.paper.search import SearchConfig
from dualdecomp.solvers.ordering.domain_order import best_domain_order, order_score
from tests.ordering_oracles import FIXTURES, all_trees, random_model
from tests.test_order_search import _check_constraints, constrained_bags

WORDS = ("the", "dog", "barked", "at", "a", "cat", ".", "loudly")
TAGS = ("DT", "NN", "VBD", "IN", "DT", "NN", ".", "RB")


@st.composite
def domain_tables(draw, max_n: int = 6):
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    return (rng.normal(size=(n, 2)), rng.normal(size=(n, n)), rng.normal(size=n), rng.normal(size=n),
            draw(st.integers(0, n - 1)))


@settings(max_examples=150, deadline=None)
@given(tables=domain_tables())
def test_held_karp_equals_brute_force_over_every_order(tables):
    side, pair, start, end, head = tables
    found = best_domain_order(side, pair, start, end, head)
    every = itertools.permutations(range(len(start)))
    best = max(order_score(p, side, pair, start, end, head) for p in every)
    assert found.exact
    assert sorted(found.order.tolist()) == list(range(len(start)))
    assert found.score == pytest.approx(best, abs=1e-9)
    assert order_score(found.order, side, pair, start, end, head) == pytest.approx(found.score, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(tables=domain_tables(), width=st.integers(1, 8))
def test_the_beam_above_the_exact_limit_is_a_valid_order_never_above_the_optimum(tables, width):
    side, pair, start, end, head = tables
    found = best_domain_order(side, pair, start, end, head, exact_limit=0, beam=width)
    optimum = best_domain_order(side, pair, start, end, head).score
    assert sorted(found.order.tolist()) == list(range(len(start)))
    assert order_score(found.order, side, pair, start, end, head) == pytest.approx(found.score, abs=1e-9)
    assert found.score <= optimum + 1e-9
    assert found.exact == (len(start) == 1)


def gold_sentences():
    """The two fully annotated sentences of the hand-written fixture."""
    return read_conllu_examples(FIXTURES / "tiny.conllu", limit=2)


def random_lineariser(seed: int, hash_bits: int = 12) -> Lineariser:
    weights = np.random.default_rng(seed).normal(size=1 << hash_bits)
    best_tag, default = tag_dictionary(gold_sentences())
    return Lineariser(weights, hash_bits, best_tag, default)


def score_with_lm(lin: Lineariser, words, pos, heads, order) -> float:
    """The brute-force score of one order under a lineariser with its LM term: domain features + λ ×
    (KenLM sentence log10 − each word read alone)."""
    lm = lin.lm
    return (lin.order_score(words, pos, heads, order) + lm.phrase(words, order, sentence=True)
            - sum(lm.phrase(words, (w,)) for w in range(len(words))))


@st.composite
def trees(draw, max_n: int = 6):
    n = draw(st.integers(1, max_n))
    picks = [draw(st.integers(0, len(WORDS) - 1)) for _ in range(n)]
    words = tuple(WORDS[k] for k in picks)
    pos = tuple(TAGS[k] if draw(st.booleans()) else None for k in picks)
    every = list(all_trees(n, (None,) * n))
    return words, pos, every[draw(st.integers(0, len(every) - 1))]


def projective_orders(heads):
    """Every projective linearisation of a tree, by brute force over all permutations."""
    for order in itertools.permutations(range(len(heads))):
        position = {w: k for k, w in enumerate(order)}
        if is_projective(tuple(ROOT if heads[w] == ROOT else position[heads[w]] for w in order)):
            yield order


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(), seed=st.integers(0, 10_000))
def test_the_lineariser_certifies_the_best_projective_linearisation(tree, seed):
    words, pos, heads = tree
    lin = random_lineariser(seed)
    found = lin.linearise(words, pos, heads)
    scores = {order: lin.order_score(words, pos, heads, order) for order in projective_orders(heads)}
    assert found.certified and found.method == EXACT_METHOD
    assert found.order in scores  # a projective linearisation of the given tree, every word once
    assert found.score == pytest.approx(max(scores.values()), abs=1e-9)
    assert found.score == pytest.approx(scores[found.order], abs=1e-9)
    assert all(t == p for t, p in zip(found.tags, pos, strict=True) if p is not None)  # given tags kept


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(), seed=st.integers(0, 10_000), weight=st.floats(0.1, 5.0))
def test_with_the_lm_the_output_is_a_projective_linearisation_and_uncertified(tree, seed, weight, default_lm):
    words, pos, heads = tree
    lin = random_lineariser(seed).with_lm(OrderingLM(default_lm, weight))
    found = lin.linearise(words, pos, heads)
    assert found.order in set(projective_orders(heads))
    assert not found.certified and found.method == APPROXIMATE_METHOD


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(), seed=st.integers(0, 10_000), weight=st.floats(0.1, 5.0))
def test_the_exact_dp_with_the_lm_equals_brute_force_and_the_beam_never_beats_it(tree, seed, weight,
                                                                                  default_lm):
    from dataclasses import replace

    words, pos, heads = tree
    lm = OrderingLM(default_lm, weight)
    lin = replace(random_lineariser(seed), lm_states=1_000_000).with_lm(lm)

    scores = {order: score_with_lm(lin, words, pos, heads, order) for order in projective_orders(heads)}
    found = lin.linearise(words, pos, heads)
    assert found.certified and found.method == EXACT_LM_METHOD
    assert found.score == pytest.approx(max(scores.values()), abs=1e-9)
    assert found.score == pytest.approx(scores[found.order], abs=1e-9)
    beam = replace(lin, lm_states=0).linearise(words, pos, heads)
    assert beam.score == pytest.approx(scores[beam.order], abs=1e-9) and not beam.certified
    assert beam.score <= found.score + 1e-9


CONTEXT_WORDS = (*WORDS, "of", "in", "zebra", "xylophone", ",")


@settings(max_examples=200, deadline=None)
@given(first=st.lists(st.sampled_from(CONTEXT_WORDS), min_size=0, max_size=3),
       second=st.lists(st.sampled_from(CONTEXT_WORDS), min_size=0, max_size=3))
def test_contexts_with_one_key_give_every_next_word_the_same_probability(first, second, default_lm):
    """The exact DP merges partial subtrees whose last words have one ``context_key``: that must be exact."""
    a, b = (tuple(default_lm.lm_word(w) for w in ws) for ws in (first, second))
    same = default_lm.context_key(a[-2:]) == default_lm.context_key(b[-2:])
    nexts = [default_lm.lm_word(w) for w in CONTEXT_WORDS]
    for c, d in itertools.product(nexts, repeat=2):  # two following words, and the sentence end
        pa = default_lm.phrase_logprob((c, d), a, eos=True)
        pb = default_lm.phrase_logprob((c, d), b, eos=True)
        if same:
            assert pa == pytest.approx(pb, abs=1e-9)
    if a[-2:] == b[-2:]:
        assert same


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 9), picks=st.lists(st.integers(0, len(CONTEXT_WORDS) - 1), min_size=9, max_size=9),
       tree_seed=st.integers(0, 10_000), seed=st.integers(0, 10_000), weight=st.floats(0.5, 8.0))
def test_merging_equivalent_lm_contexts_keeps_the_exact_optimum(n, picks, tree_seed, seed, weight,
                                                                 default_lm):
    """Larger trees than brute force allows, with rare words (whose contexts merge): the DP whose
    signature keeps the words themselves and the one that merges what the LM cannot tell apart agree."""
    rng = np.random.default_rng(tree_seed)
    heads = tuple(ROOT if d == 0 else int(rng.integers(0, d)) for d in range(n))  # a random tree
    words = tuple(CONTEXT_WORDS[k] for k in picks[:n])
    lin = random_lineariser(seed)
    tags = lin.tags_of(words, (None,) * n)
    domains = lin.domains(words, tags, heads)
    lm = OrderingLM(default_lm, weight)
    merged = exact_with_lm(words, heads, domains, lin.weights, lm, 2_000_000)
    plain = exact_with_lm(words, heads, domains, lin.weights, lm, 2_000_000, merge_contexts=False)
    assert merged.certified and plain.certified
    assert merged.score == pytest.approx(plain.score, abs=1e-9)
    assert merged.states <= plain.states


def test_context_keys_merge_only_what_the_lm_cannot_tell_apart(default_lm):
    key = default_lm.context_key
    assert key(("zebra", "xylophone")) == key(("xylophone",))  # no trigram starts with these two words
    assert key(("of", "the")) != key(("in", "the"))
    assert default_lm.phrase_logprob(("house",), ("of", "the")) != default_lm.phrase_logprob(("house",),
                                                                                            ("in", "the"))


def test_the_exact_dp_with_the_lm_gives_up_to_the_beam_past_its_state_limit(default_lm):
    from dataclasses import replace

    lin = replace(random_lineariser(4), lm_states=3).with_lm(OrderingLM(default_lm, 1.0))
    found = lin.linearise(("saw", "a", "b", "c", "d"), (None,) * 5, (ROOT, 0, 0, 0, 0))
    assert not found.certified and found.method == APPROXIMATE_METHOD
    assert sorted(found.order) == list(range(5))


def test_a_domain_beyond_the_exact_limit_is_not_certified():
    lin = random_lineariser(3)
    words = ("saw", "a", "b", "c", "d")
    found = lin.linearise(words, (None,) * 5, (ROOT, 0, 0, 0, 0), exact_limit=3)
    assert not found.certified and found.method == APPROXIMATE_METHOD
    assert sorted(found.order) == list(range(5))


def test_missing_head_is_refused():
    with pytest.raises(ValueError):
        random_lineariser(0).linearise(("a", "b"), (None, None), (ROOT, None))


def test_training_reproduces_its_training_sentences():
    examples = gold_sentences()
    lin, logs = train_lineariser(examples, epochs=5, hash_bits=14, seed=0)
    assert logs[-1].mistakes == 0 < logs[0].mistakes
    for ex in examples:
        inp = ex.as_input(1.0, 1.0, seed=7)
        found = lin.linearise(inp.words, inp.pos, inp.heads)
        assert tuple(inp.words[w] for w in found.order) == ex.words
    again, _ = train_lineariser(examples, epochs=5, hash_bits=14, seed=0)
    assert np.array_equal(again.weights, lin.weights)  # deterministic


def test_training_keeps_the_epoch_the_selection_prefers():
    examples = gold_sentences()
    picks = iter([3.0, 5.0, 5.0, 1.0])
    lin, logs = train_lineariser(examples, epochs=4, hash_bits=12, select=lambda _: next(picks))
    assert [log.selection for log in logs] == [3.0, 5.0, 5.0, 1.0]
    assert lin.meta["epoch"] == 2  # the first of the tied best


def test_files_round_trip_and_damage_is_a_model_error(tmp_path):
    lin = random_lineariser(5)
    weights = lin.weights.astype(np.float32).astype(np.float64)  # stored as float32
    weights[0] = 0.0  # index 0 is the padding of weight files (features never hash there)
    lin = Lineariser(weights, lin.hash_bits, lin.best_tag, lin.default_tag, 2.0, {"note": "test"})
    lin.save(tmp_path)
    back = load_lineariser(tmp_path)
    assert back is not None and np.array_equal(back.weights, lin.weights)
    assert (back.best_tag, back.default_tag, back.lm_weight, back.meta) == (lin.best_tag, lin.default_tag,
                                                                            2.0, {"note": "test"})
    assert load_lineariser(tmp_path / "nothing-here") is None
    doc = json.loads((tmp_path / "linearizer.json").read_text())
    (tmp_path / "linearizer.json").write_text(json.dumps({**doc, "format": "other"}))
    with pytest.raises(ModelError):
        load_lineariser(tmp_path)
    (tmp_path / "linearizer.json").write_text("{not json")
    with pytest.raises(ModelError):
        load_lineariser(tmp_path)
    (tmp_path / "linearizer.json").write_text(json.dumps(doc))
    (tmp_path / "linearizer.npz").write_bytes(b"PK\x03\x04 not a zip archive")
    with pytest.raises(ModelError):
        load_lineariser(tmp_path)


def test_features_never_use_the_padding_index():
    from dualdecomp.models.ordering.lineariser.features import sentence_domains

    for ex in gold_sentences():
        for domain in sentence_domains(ex.words, ex.pos, ex.heads, (1 << 4) - 1):  # 15 slots: every one hit
            assert domain.index.min() >= 1 and domain.index.max() <= 15


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=constrained_bags(max_n=6), seed=st.integers(0, 10_000), pops=st.integers(1, 200),
       stage=st.sampled_from(SECOND_STAGES))
def test_the_decoder_with_a_lineariser_keeps_every_word_and_constraint(inp, seed, pops, stage):

    decoder = OrderingDecoder(random_model(seed), lineariser=random_lineariser(seed + 1))
    result = decoder.decode(inp, SearchConfig(chart_size=4, timeout=None, max_expansions=pops),
                            ExactConfig(max_states=None, beam=4, lineariser=True, second_stage=stage))
    assert result.complete and result.recovered == 1.0
    _check_constraints(inp, result)
    if all(h is not None for h in inp.heads):
        assert result.method == EXACT_METHOD and result.certified
        assert all(result.heads[k] == (0 if inp.heads[w] == ROOT else result.order.index(inp.heads[w]) + 1)
                   for k, w in enumerate(result.order))
    elif stage == "lineariser":
        assert result.method == REFINED_METHOD and not result.certified
    else:
        assert METHOD_NAME not in result.method


def test_an_unknown_second_stage_is_refused():
    with pytest.raises(ValueError):
        ExactConfig(second_stage="other")


def run_cli(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_orders_full_trees_with_the_shipped_lineariser(capsys):
    demo = str(FIXTURES / "demo.jsonl")
    code, out, err = run_cli(capsys, ["order", "--input", demo, "--max-expansions", "200"])
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[1]["text"] == "the dog ran home ."
    assert lines[1]["method"].startswith(METHOD_NAME)
    # a bag of words without tags: the shipped model's LM beam (its stored rule, README)
    assert lines[0]["method"].startswith("LM beam")
    assert sorted(lines[0]["words"]) == sorted(["quickly", "the", "dog", "home", "ran", "."])
    # without it: best-first search, then the tree beam DP (which keeps the search's output when that
    # scores at least as high)
    code, out, _ = run_cli(capsys, ["order", "--input", demo, "--lm-beam", "0", "--max-expansions", "200"])
    assert code == 0 and json.loads(out.splitlines()[0])["method"] in (TREE_BEAM_STAGE,
                                                                       "best-first (approximate)")
    code, out, _ = run_cli(capsys, ["order", "--input", demo, "--second-stage", "lineariser",
                                    "--lm-beam", "0", "--max-expansions", "200"])
    assert code == 0 and json.loads(out.splitlines()[0])["method"] == REFINED_METHOD
    code, out, _ = run_cli(capsys, ["order", "--input", demo, "--lineariser-states", "20000",
                                    "--max-expansions", "200"])
    full = json.loads(out.splitlines()[1])
    assert code == 0 and full["method"] == EXACT_LM_METHOD and full["certified"]
    code, _, err = run_cli(capsys, ["order", "--input", demo, "--lineariser-states", "-1"])
    assert code == 2 and "Traceback" not in err
    code, out, _ = run_cli(capsys, ["order", "--input", str(FIXTURES / "demo.jsonl"), "--no-lineariser",
                            "--max-expansions", "200"])
    assert code == 0 and METHOD_NAME not in out


def test_cli_trains_a_lineariser_and_refuses_bad_options(capsys, tmp_path):
    text = (FIXTURES / "tiny.conllu").read_text(encoding="utf-8")
    tiny = tmp_path / "gold.conllu"
    tiny.write_text(text[:text.index("# sent_id = t3")], encoding="utf-8")
    tiny = str(tiny)
    train = ["order", "train-lineariser", "--train", tiny, "--dev", tiny, "--out", str(tmp_path)]
    code, out, err = run_cli(capsys, [*train,
                              "--epochs", "2", "--hash-bits", "12", "--start", "0", "--sentences", "2",
                              "--lm-weights", "0", "1"])
    assert code == 0, err
    assert json.loads(out.splitlines()[-1])["selected_epoch"] in (1, 2)
    assert load_lineariser(tmp_path) is not None
    code, _, err = run_cli(capsys, [*train, "--epochs", "0"])
    assert code == 2 and "Traceback" not in err
