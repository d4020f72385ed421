"""Word ordering's decoder registry (``dualdecomp.models.ordering.decoding.registry``): every decoder is
reachable by name, unknown names and options the schemas refuse are InputErrors, each decoder decodes a
tiny input, and what it certifies is what its docstring says — the exact one against brute force over
every linearisation (``tests.ordering_oracles``), the approximate ones never above it and certified only
when they reach it. ``OrderingDecoder.decode`` gives what the registered stages give."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.engine.decoders import COMPRESSION_DECODERS, DecoderRegistry, DecoderSpec
from dualdecomp.models.ordering.bag_lm.search import LMBeam, LMTerm
from dualdecomp.models.ordering.decoding.config import SECOND_STAGES, ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.decoding.registry import (
    ORDERING_DECODERS,
    SECOND_STAGE_DECODERS,
    GaveUp,
    decode_with,
)
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.search import SearchConfig
from tests.ordering_oracles import brute_force_best, random_model
from tests.test_order_exact import trees
from tests.test_order_lineariser import projective_orders, random_lineariser
from tests.test_order_lm_beam import LM, bags, brute_force

SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ("lm-beam", "exact-dp", "tree-beam", "lineariser", "best-first")
SEARCH = {"timeout": None, "max_expansions": 2000}
TREE = OrderingInput(("cat", "The", "sat", "."), ("NN", "DT", "VBD", "."), (2, 0, ROOT, 2))
BAG = OrderingInput(("cat", "The", "sat", "."), (None,) * 4, (None,) * 4)


def bundle(seed: int = 0, lm_beam: int | None = None) -> OrderingDecoder:
    """A decoder with every part: a random paper model and lineariser, and an LM beam of the trigram."""
    beam = None if lm_beam is None else LMBeam((LMTerm(LM),), lm_beam)
    return OrderingDecoder(random_model(seed), lineariser=random_lineariser(seed + 1), lm_beam=beam)


# --- names ---------------------------------------------------------------------------------------------


def test_every_decoder_is_registered_and_reachable_by_name():
    assert ORDERING_DECODERS.names() == NAMES and len(ORDERING_DECODERS) == len(NAMES)
    assert set(SECOND_STAGE_DECODERS.names()) == set(SECOND_STAGES)
    for registry in (ORDERING_DECODERS, SECOND_STAGE_DECODERS):
        assert isinstance(registry, DecoderRegistry)
        for spec in registry:
            assert registry.spec(spec.name) is spec and spec.name in registry and callable(spec.decode)
            assert spec.defaults() == {o.name: o.default for o in spec.options}
    assert ORDERING_DECODERS.check_block({}) == "best-first"
    assert ORDERING_DECODERS.check_block({"decoder": "exact-dp", "max_states": 5}) == "exact-dp"
    assert COMPRESSION_DECODERS.names() == ("dd", "ilp", "beam")  # the engine's, the same mechanism


@pytest.mark.parametrize("name", ["", "exact", "Exact-DP", "dd", None, 3])
def test_an_unknown_decoder_is_an_input_error(name):
    with pytest.raises(InputError, match="unknown decoder"):
        ORDERING_DECODERS.spec(name)
    with pytest.raises(InputError, match="unknown decoder"):
        decode_with(bundle(), name, TREE)
    with pytest.raises(InputError, match="decode.decoder must be one of"):
        ORDERING_DECODERS.check_block({"decoder": name})
    assert name not in ORDERING_DECODERS


def test_a_registry_refuses_two_decoders_of_one_name_and_an_unregistered_default():
    spec = DecoderSpec("a", lambda: None, ())
    with pytest.raises(ValueError, match="two"):
        DecoderRegistry("t", (spec, spec))
    with pytest.raises(ValueError, match="default"):
        DecoderRegistry("t", (spec,), default="b")


@pytest.mark.parametrize(("name", "options"), [
    ("exact-dp", {"max_states": 0}), ("exact-dp", {"max_states": -3}), ("exact-dp", {"max_states": 1.5}),
    ("exact-dp", {"max_states": True}), ("exact-dp", {"max_states": None}), ("exact-dp", {"beam": 4}),
    ("tree-beam", {"beam": 0}), ("tree-beam", {"beam": "8"}), ("tree-beam", {"beam_attachments": 0}),
    ("best-first", {"chart_size": 0}), ("best-first", {"timeout": -1.0}),
    ("best-first", {"timeout": float("inf")}), ("best-first", {"max_expansions": 2.5}),
    ("best-first", {"exhaustive": "yes"}), ("lm-beam", {"beam": 4}), ("lineariser", {"lm_states": 1}),
])
def test_the_option_schema_refuses_bad_values(name, options):
    with pytest.raises(InputError, match="must be|unknown option"):
        ORDERING_DECODERS.checked(name, options)
    with pytest.raises(InputError):
        decode_with(bundle(lm_beam=8), name, TREE if name != "lm-beam" else BAG, options)


@pytest.mark.parametrize(("name", "options"), [
    ("exact-dp", {"max_states": 1}), ("tree-beam", {"beam": 1, "beam_attachments": None}),
    ("tree-beam", {"beam_attachments": 10}), ("best-first", {"chart_size": None, "timeout": 0.5}),
    ("best-first", {"max_expansions": 3, "exhaustive": True}), ("lm-beam", {}), ("lineariser", {}),
])
def test_the_option_schema_takes_good_values(name, options):
    assert ORDERING_DECODERS.checked(name, options).name == name


def test_a_decoder_refuses_an_input_or_a_model_it_cannot_order():
    plain = OrderingDecoder(random_model(0))
    for name in ("exact-dp", "tree-beam", "lineariser"):
        with pytest.raises(InputError, match="every head"):
            decode_with(bundle(), name, BAG)
    with pytest.raises(InputError, match="no head-domain lineariser"):
        decode_with(plain, "lineariser", TREE)
    with pytest.raises(InputError, match="no LM beam"):
        decode_with(plain, "lm-beam", BAG)
    with pytest.raises(InputError, match="only inputs without a given head"):
        decode_with(bundle(lm_beam=8), "lm-beam", TREE)


# --- certification: docstrings, exactness, brute force ---------------------------------------------------


def test_each_docstring_says_whether_its_decoder_is_exact():
    for registry in (ORDERING_DECODERS, SECOND_STAGE_DECODERS):
        for spec in registry:
            doc = spec.decode.__doc__ or ""
            assert f"``{spec.name}``" in doc
            if spec.exact:
                assert "EXACT" in doc and "APPROXIMATE" not in doc, spec.name
            else:
                assert "APPROXIMATE" in doc, spec.name
    assert [s.name for s in ORDERING_DECODERS if s.exact] == ["exact-dp"]
    assert not any(s.exact for s in SECOND_STAGE_DECODERS)


@SLOW
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000))
def test_the_exact_dp_certifies_the_brute_force_optimum(inp, seed):
    found = decode_with(bundle(seed), "exact-dp", inp, {"max_states": 10**7})
    best, count = brute_force_best(random_model(seed), inp)
    assert count > 0 and found.certified and found.method == "exact DP" and found.complete
    assert found.score == pytest.approx(best, abs=1e-9)


def test_the_exact_dp_gives_up_past_its_state_limit():
    inp = OrderingInput(("sat", "cat", "mat", "rain", "."), (None,) * 5, (ROOT, 0, 0, 0, 0))
    assert decode_with(OrderingDecoder(random_model(4)), "exact-dp", inp, {"max_states": 3}) == GaveUp(())


@SLOW
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000), beam=st.integers(1, 3))
def test_the_tree_beam_never_beats_brute_force_and_certifies_only_the_optimum(inp, seed, beam):
    best, _ = brute_force_best(random_model(seed), inp)
    found = decode_with(bundle(seed), "tree-beam", inp, {"beam": beam})
    assert found.complete and found.score <= best + 1e-9
    if found.certified:
        assert found.score == pytest.approx(best, abs=1e-9) and found.method == "exact DP"
    wide = decode_with(bundle(seed), "tree-beam", inp, {"beam": 10**6})
    assert wide.certified and wide.score == pytest.approx(best, abs=1e-9)


@SLOW
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000))
def test_the_lineariser_certifies_its_own_optimum_and_not_with_its_lm(inp, seed, default_lm):
    decoder = bundle(seed)
    found = decode_with(decoder, "lineariser", inp)
    lin = decoder.lineariser
    scores = {o: lin.order_score(inp.words, inp.pos, inp.heads, o) for o in projective_orders(inp.heads)}
    assert found.certified and found.order in scores
    assert found.score == pytest.approx(max(scores.values()), abs=1e-9)
    with_lm = decode_with(dataclasses.replace(decoder, lineariser_lm=OrderingLM(default_lm, 1.0)),
                          "lineariser", inp)
    assert not with_lm.certified and with_lm.order in scores


@SLOW
@given(inp=trees(max_n=4), seed=st.integers(0, 10_000), drop=st.booleans())
def test_best_first_and_the_second_stages_never_certify_nor_beat_brute_force(inp, seed, drop):
    if drop:  # also inputs without heads
        inp = OrderingInput(inp.words, inp.pos, (None,) * len(inp))
    decoder = bundle(seed)
    best, _ = brute_force_best(decoder.model, inp)
    first = decode_with(decoder, "best-first", inp, SEARCH)
    assert not first.certified
    if first.complete:
        assert first.score <= best + 1e-9
    for name in SECOND_STAGE_DECODERS.names():
        spec = SECOND_STAGE_DECODERS.checked(name, {})
        second = spec.decode(decoder, inp, first, spec.defaults(), None)
        assert second.complete and not second.certified and len(second.order) == len(inp)


@SLOW
@given(inp=bags(max_n=5), beam=st.integers(1, 3))
def test_the_lm_beam_certifies_only_the_lm_optimum(inp, beam):
    best = brute_force(inp)
    found = decode_with(bundle(lm_beam=beam), "lm-beam", inp)
    assert found.complete and found.score <= best + 1e-9
    if found.certified:
        assert found.score == pytest.approx(best, abs=1e-9)
    wide = decode_with(bundle(lm_beam=10**6), "lm-beam", inp)
    assert wide.certified and wide.score == pytest.approx(best, abs=1e-9)


# --- the chain ---------------------------------------------------------------------------------------


def _same(a, b) -> bool:
    """Two results equal but for their seconds."""
    return dataclasses.replace(a, seconds=0.0) == dataclasses.replace(b, seconds=0.0)


@SLOW
@given(inp=trees(max_n=5), seed=st.integers(0, 10_000), drop=st.booleans())
def test_the_decoder_gives_what_the_registered_stages_give(inp, seed, drop):
    if drop:
        inp = OrderingInput(inp.words, inp.pos, (None,) * len(inp))
    decoder = bundle(seed)
    search = SearchConfig(timeout=None, max_expansions=2000)
    full = not drop
    paper = decoder.decode(inp, search, None)
    assert _same(paper, decode_with(decoder, "best-first", inp, SEARCH))
    if full:
        assert _same(decoder.decode(inp, search, ExactConfig()), decode_with(decoder, "exact-dp", inp))
        assert _same(decoder.decode(inp, search, ExactConfig(max_states=None, lineariser=True)),
                     decode_with(decoder, "lineariser", inp))
        assert _same(decoder.decode(inp, search, ExactConfig(max_states=None, beam=2)),
                     decode_with(decoder, "tree-beam", inp, {"beam": 2}))
    else:
        second = SECOND_STAGE_DECODERS.spec("tree-beam").decode(decoder, inp, paper, {"beam": 2}, None)
        assert _same(decoder.decode(inp, search, ExactConfig(beam=2)), second)
    assert _same(decoder.decode_with("best-first", inp, **SEARCH), paper)
