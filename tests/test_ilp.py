"""Tests of the exact ILP oracle of contract 5 (``dualdecomp.ilp.decode``) against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from dualdecomp import decode, ilp
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.result import is_certified
from dualdecomp.solvers.bigram.solver import Bigram
from dualdecomp.solvers.ngram.solver import Trigram
from tests.oracles.joint import joint, objective
from tests.test_engine import SETTINGS, instances, make_component

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def check_exact(components, length, result) -> None:
    optimum = joint(components, length)
    assert optimum.feasible
    assert result.certified
    assert result.primal == objective(components, result.keep)
    assert result.primal == pytest.approx(optimum.value, rel=1e-9, abs=1e-9)
    assert any(np.array_equal(result.keep, k) for k in optimum.keeps)
    assert result.dual >= result.primal and is_certified(result.primal, result.dual)
    if length is not None:
        assert result.length == length


@settings(max_examples=300, **SETTINGS)
@given(instances())
def test_cbc_equals_bruteforce(inst):
    components, length = inst
    optimum = joint(components, length)
    if not optimum.feasible:
        with pytest.raises(SolverError):
            ilp.decode(components, length=length)
        return
    check_exact(components, length, ilp.decode(components, length=length))


@settings(max_examples=60, **SETTINGS)
@given(instances())
def test_highs_equals_bruteforce(inst):
    components, length = inst
    optimum = joint(components, length)
    if not optimum.feasible:
        with pytest.raises(SolverError):
            ilp.decode(components, length=length, solver="highs")
        return
    check_exact(components, length, ilp.decode(components, length=length, solver="highs"))


@settings(max_examples=40, **SETTINGS)
@given(instances(max_n=6))
def test_certified_dd_matches_ilp(inst):
    components, length = inst
    try:
        exact = ilp.decode(components, length=length)
    except SolverError:
        return
    result = decode(components, length=length, max_iterations=300)
    assert result.dual >= exact.primal - 1e-7 * max(1.0, abs(exact.primal))
    assert result.primal <= exact.primal + 1e-7 * max(1.0, abs(exact.primal))
    if result.certified:
        assert result.primal == pytest.approx(exact.primal, rel=1e-9, abs=1e-9)


def test_empty_sentence():
    comps = [Bigram(np.array([[0.0, 1.5], [0.0, 0.0]])), Trigram(np.full((2, 2, 2), -0.5))]
    result = ilp.decode(comps)
    assert result.keep.shape == (0,) and result.certified and result.primal == pytest.approx(1.0)
    assert ilp.decode(comps, length=0).certified


def test_medium_instances_agree_with_dd():
    """n = 12 (no brute force): the certified DD answer has the ILP's optimal value."""
    rng = np.random.default_rng(4)
    for _ in range(3):
        comps = [make_component(k, 12, rng, "float", 0.05) for k in ("bigram", "trigram")]
        for length in (None, 6):
            exact = ilp.decode(comps, length=length)
            assert exact.certified
            result = decode(comps, length=length)
            assert result.certified
            assert result.primal == pytest.approx(exact.primal, rel=1e-9, abs=1e-9)


def test_time_limit_gives_a_consistent_result():
    rng = np.random.default_rng(9)
    comps = [make_component(k, 14, rng, "float", 0.0) for k in ("bigram", "trigram", "dep")]
    for solver in ("cbc", "highs"):
        try:
            result = ilp.decode(comps, length=7, solver=solver, time_limit=0.01)
        except SolverError:
            continue  # stopped before any feasible solution
        assert result.length == 7
        assert result.primal == objective(comps, result.keep)
        assert result.certified == (result.dual != math.inf and is_certified(result.primal, result.dual))
        assert result.dual >= result.primal - 1e-9 * max(1.0, abs(result.primal))


def test_bad_arguments():
    comps = [Bigram(np.zeros((5, 5)))]
    with pytest.raises(InputError):
        ilp.decode(comps, solver="gurobi")
    with pytest.raises(InputError):
        ilp.decode(comps, length=4)
    with pytest.raises(InputError):
        ilp.decode(comps, time_limit=0)
    with pytest.raises(InputError):
        ilp.decode([])
    with pytest.raises(InputError):
        ilp.decode([comps[0], Bigram(np.zeros((4, 4)))])


def test_infeasible_raises():
    B1 = np.full((4, 4), -np.inf)
    B1[0, 1] = B1[1, 3] = 0.0
    B2 = np.full((4, 4), -np.inf)
    B2[0, 2] = B2[2, 3] = 0.0
    for solver in ("cbc", "highs"):
        with pytest.raises(SolverError):
            ilp.decode([Bigram(B1), Bigram(B2)], solver=solver)
        with pytest.raises(SolverError):
            ilp.decode([Bigram(B1)], length=2, solver=solver)


@pytest.mark.slow
def test_real_sentences_dd_certified_equals_ilp(parsed_dev):
    """Bigram model + KenLM trigram on real dev sentences: DD certifies the ILP's optimum."""
    from dualdecomp.models.bigram.store import load_model
    from dualdecomp.models.lm.model import load_lm
    from tests.conftest import ROOT

    lm = load_lm(ROOT / "data" / "default_model" / "lm.binary")
    try:
        model = load_model(ROOT / "data" / "default_model")
    except Exception:  # noqa: BLE001 - the default model may not be trained yet: random potentials
        model = None
    _, sentences = parsed_dev
    rng = np.random.default_rng(0)
    for sentence in sorted(sentences, key=lambda s: s.n)[:6]:
        n = sentence.n
        B = model.potentials(sentence) if model is not None else rng.normal(scale=10.0, size=(n + 2, n + 2))
        comps = [Bigram(B), Trigram(lm.trigram_tensor(sentence.tokens))]
        for length in (None, max(1, n // 2)):
            exact = ilp.decode(comps, length=length)
            result = decode(comps, length=length)
            assert exact.certified and result.certified
            assert result.primal == pytest.approx(exact.primal, rel=1e-9, abs=1e-9)
