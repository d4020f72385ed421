"""Tests of the dual-decomposition engine (contract 5): bounds, certificates, length, tightening."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp import decode
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.result import TraceStep, is_certified
from dualdecomp.engine.options import STEP_RULES, make_options
from dualdecomp.solvers.bigram.solver import Bigram
from dualdecomp.solvers.dependency.solver import Dependency
from dualdecomp.solvers.ngram.solver import Trigram
from tests.oracles.joint import joint, objective

# --------------------------------------------------------------------------------------------------
# random joint instances (also used by tests/test_ilp.py)
# --------------------------------------------------------------------------------------------------

KIND_SETS = [
    ("bigram", "trigram"),
    ("bigram", "dep"),
    ("trigram", "dep"),
    ("bigram", "trigram", "dep"),
    ("trigram", "dep-bs"),
    ("bigram", "dep-s"),
    ("dep-b", "trigram", "bigram"),
]


def _fill(rng: np.random.Generator, shape: tuple[int, ...], values: str, p_inf: float) -> np.ndarray:
    if values == "int":  # small integers: many ties
        arr = rng.integers(-2, 3, size=shape).astype(np.float64)
    else:
        arr = rng.normal(scale=2.0, size=shape)
    arr[rng.random(shape) < p_inf] = -np.inf
    return arr


def make_component(kind: str, n: int, rng: np.random.Generator, values: str, p_inf: float):
    """A random component of the given kind over n tokens."""
    if kind == "bigram":
        return Bigram(_fill(rng, (n + 2, n + 2), values, p_inf))
    if kind == "trigram":
        return Trigram(_fill(rng, (n + 2, n + 2, n + 2), values, p_inf))
    A = _fill(rng, (n + 1, n + 1), values, p_inf)
    B = _fill(rng, (n + 2, n + 2), values, p_inf / 2) if "b" in kind.split("-")[-1] else None
    S = _fill(rng, (n + 1, n + 1, n + 1), values, 0.0) if "s" in kind.split("-")[-1] else None
    return Dependency(A, B=B, S=S)


@st.composite
def instances(draw, max_n: int = 7, with_length: bool = True, kind_sets=None):
    """(components, length) of a random joint problem: 2–3 components, ties and -inf entries."""
    n = draw(st.integers(0, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    kinds = draw(st.sampled_from(kind_sets or KIND_SETS))
    values = draw(st.sampled_from(["int", "float"]))
    p_inf = draw(st.sampled_from([0.0, 0.1, 0.3]))
    length = draw(st.none() | st.integers(0, n)) if with_length else None
    rng = np.random.default_rng(seed)
    return [make_component(k, n, rng, values, p_inf) for k in kinds], length


def tol(x: float) -> float:
    return 1e-7 * max(1.0, abs(x))


SETTINGS = dict(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_result(components, length, result, optimum) -> None:
    """The invariants of any decode result against the brute-force optimum."""
    n = components[0].n
    assert result.keep.shape == (n,) and result.keep.dtype == bool
    if length is not None:
        assert int(result.keep.sum()) == length
    # primal is the objective of keep under all components
    assert result.primal == pytest.approx(objective(components, result.keep), rel=1e-12, abs=1e-12) \
        or result.primal == objective(components, result.keep)
    # dual >= optimum >= primal at every iteration; bounds monotone
    previous = None
    for step in result.trace:
        assert step.dual >= optimum.value - tol(optimum.value)
        assert step.primal <= optimum.value + tol(optimum.value)
        if previous is not None:
            assert step.dual <= previous.dual
            assert step.primal >= previous.primal
            assert step.iteration == previous.iteration + 1
        previous = step
    assert result.dual >= optimum.value - tol(optimum.value)
    assert result.primal <= optimum.value + tol(optimum.value)
    assert result.gap >= 0
    assert result.certified == is_certified(result.primal, result.dual)
    if result.certified:
        assert result.primal == pytest.approx(optimum.value, rel=1e-9, abs=1e-9)
        assert any(np.array_equal(result.keep, k) for k in optimum.keeps)


# --------------------------------------------------------------------------------------------------
# bounds and certificates on random instances
# --------------------------------------------------------------------------------------------------


@settings(max_examples=1000, **SETTINGS)
@given(instances())
def test_bounds_and_certificates(inst):
    components, length = inst
    optimum = joint(components, length)
    try:
        result = decode(components, length=length, max_iterations=400)
    except SolverError:
        assert not optimum.feasible  # only a proved infeasibility raises
        return
    if not optimum.feasible:
        assert result.primal == -math.inf and not result.certified
        return
    check_result(components, length, result, optimum)


@settings(max_examples=400, **SETTINGS)
@given(instances())
def test_tightening_always_certifies_with_enough_budget(inst):
    """Branch and bound is complete: every feasible instance is certified, infeasible ones proved."""
    components, length = inst
    optimum = joint(components, length)
    if not optimum.feasible:
        with pytest.raises(SolverError):
            decode(components, length=length, max_iterations=100_000, tighten_after=10, node_iterations=5)
        return
    result = decode(components, length=length, max_iterations=100_000, tighten_after=10, node_iterations=5)
    check_result(components, length, result, optimum)
    assert result.certified


@settings(max_examples=150, **SETTINGS)
@given(instances(with_length=False))
def test_free_length_without_tightening(inst):
    components, _ = inst
    optimum = joint(components)
    try:
        result = decode(components, tighten=False, max_iterations=200)
    except SolverError:
        assert not optimum.feasible
        return
    if optimum.feasible:
        check_result(components, None, result, optimum)
        assert all(s.node == 0 for s in result.trace)  # no branching


@pytest.mark.parametrize("rule", STEP_RULES)
@settings(max_examples=60, **SETTINGS)
@given(inst=instances(max_n=6))
def test_step_rules_keep_valid_bounds(rule, inst):
    components, length = inst
    optimum = joint(components, length)
    step_size = None if rule in ("rush-collins", "polyak") else 0.5
    try:
        result = decode(components, length=length, step=rule, step_size=step_size, max_iterations=300)
    except SolverError:
        assert not optimum.feasible
        return
    if optimum.feasible:
        check_result(components, length, result, optimum)


@settings(max_examples=150, **SETTINGS)
@given(instances(max_n=6), st.sampled_from(["bisection", "exact"]))
def test_length_methods(inst, method):
    components, length = inst
    if length is None:
        length = components[0].n // 2
    optimum = joint(components, length)
    try:
        result = decode(components, length=length, length_method=method, max_iterations=400)
    except SolverError:
        assert not optimum.feasible
        return
    assert int(result.keep.sum()) == length
    if optimum.feasible:
        check_result(components, length, result, optimum)


def test_certified_dd_agrees_with_ilp_on_ties():
    """Integer potentials with many ties: a certified keep may differ from the ILP's, not its value."""
    from dualdecomp import ilp

    rng = np.random.default_rng(7)
    for _ in range(8):
        comps = [make_component(k, 6, rng, "int", 0.1) for k in ("bigram", "trigram", "dep")]
        try:
            exact = ilp.decode(comps)
        except SolverError:
            continue
        result = decode(comps, max_iterations=20_000, tighten_after=10, node_iterations=5)
        assert result.certified
        assert result.primal == pytest.approx(exact.primal, rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------------------------------
# single component
# --------------------------------------------------------------------------------------------------


class NoLength:
    """A component that hides the exact-length DP of another one (forces the bisection on λ)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.n = inner.n

    def solve(self, u=None):
        return self.inner.solve(u)

    def best_given(self, keep) -> float:
        return self.inner.best_given(keep)

    def to_ilp(self, problem, keep_vars):
        return self.inner.to_ilp(problem, keep_vars)


@settings(max_examples=150, **SETTINGS)
@given(instances(kind_sets=[("bigram",), ("trigram",), ("dep",), ("dep-bs",)]))
def test_single_component_is_exact(inst):
    components, length = inst
    optimum = joint(components, length)
    try:
        result = decode(components, length=length, max_iterations=100_000)
    except SolverError:
        assert not optimum.feasible
        return
    assert optimum.feasible
    check_result(components, length, result, optimum)
    assert result.certified
    if length is None or not isinstance(components[0], Dependency):
        assert result.iterations == 1 and len(result.trace) == 1  # solved directly


def test_single_bigram_with_length_is_one_exact_solve():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(12, 12))
    for m in range(11):
        result = decode([Bigram(B)], length=m)
        assert result.certified and result.iterations == 1 and result.length == m
        assert result.primal == pytest.approx(joint([Bigram(B)], m).value)


# --------------------------------------------------------------------------------------------------
# bisection on the length multiplier
# --------------------------------------------------------------------------------------------------


def gap_instance() -> np.ndarray:
    """Bigram potentials over 2 tokens: keeping 0 or 2 tokens scores 0, keeping 1 scores -5."""
    B = np.full((4, 4), -np.inf)
    B[0, 3] = 0.0  # keep nothing
    B[0, 1], B[1, 2], B[2, 3] = 0.0, 0.0, 0.0  # keep both
    B[1, 3] = -2.5  # keep token 1 only: 0 - 2.5 ... (B[0, 1] + B[1, 3])
    B[0, 2] = -2.5  # keep token 2 only: B[0, 2] + B[2, 3]
    return B


def test_bisection_length_gap_without_tightening():
    """No λ gives exactly one token: the gap is reported, the answer still keeps exactly one token."""
    B = gap_instance()
    comps = [Bigram(B), NoLength(Bigram(np.zeros((4, 4))))]
    result = decode(comps, length=1, tighten=False)
    assert result.length_gap
    assert any("length-gap" in note for note in result.notes)
    assert any("length-gap" in s.note for s in result.trace)
    assert result.length == 1
    assert result.primal == pytest.approx(-2.5)  # made by the exact-length DP of the Bigram
    assert result.dual >= -2.5 - 1e-9
    assert result.gap > 1.0 and not result.certified


def test_bisection_length_gap_with_tightening_certifies():
    B = gap_instance()
    comps = [Bigram(B), NoLength(Bigram(np.zeros((4, 4))))]
    result = decode(comps, length=1)
    assert result.certified and result.length == 1
    assert result.primal == pytest.approx(-2.5)


def test_bisection_length_gap_without_exact_component():
    """Only components without exact-length DP: branch and bound on λ-nodes closes the gap."""
    comps = [NoLength(Bigram(gap_instance()))]
    result = decode(comps, length=1, tighten=False)
    assert result.length_gap and result.length == 1 and not result.certified
    result = decode(comps, length=1)
    assert result.certified and result.length == 1 and result.primal == pytest.approx(-2.5)


@settings(max_examples=200, **SETTINGS)
@given(instances(kind_sets=[("bigram",), ("trigram",), ("dep",), ("dep-b",)]), st.booleans())
def test_bisection_keeps_exactly_m_tokens(inst, tighten):
    """The bisection alone (components without exact length DP): always m tokens; certified ⇒ optimal."""
    components, length = inst
    n = components[0].n
    m = n // 2 if length is None else length
    hidden = [NoLength(c) for c in components]
    optimum = joint(components, m)
    try:
        result = decode(hidden, length=m, tighten=tighten, max_iterations=100_000 if tighten else 400)
    except SolverError:
        assert not optimum.feasible
        return
    assert result.length == m
    if optimum.feasible:
        check_result(components, m, result, optimum)
        if tighten:
            assert result.certified
        if result.length_gap:
            # no λ gives m tokens: certified only when the m-token primal meets the dual
            assert result.certified == is_certified(result.primal, result.dual)
        if result.certified and not tighten:
            assert result.lam is not None


def test_bisection_certifies_by_complementary_slackness():
    """An m-token relaxed optimum at some λ: certified without any tightening."""
    rng = np.random.default_rng(0)
    B = rng.normal(size=(9, 9))
    # make the free-length optimum long: a bonus per kept token that λ must compensate
    comps = [NoLength(Bigram(B + np.triu(np.ones((9, 9)), 1)))]
    hits = 0
    for m in range(8):
        result = decode(comps, length=m, tighten=False)
        assert result.length == m
        if result.certified:
            hits += 1
            assert result.primal == pytest.approx(joint(comps, m).value)
            assert result.lam is not None
    assert hits >= 1


# --------------------------------------------------------------------------------------------------
# options, errors, trace
# --------------------------------------------------------------------------------------------------


def small_pair(n: int = 5, seed: int = 1):
    rng = np.random.default_rng(seed)
    return [Bigram(rng.normal(size=(n + 2, n + 2))), Trigram(rng.normal(size=(n + 2,) * 3))]


def test_bad_options_and_inputs():
    comps = small_pair()
    with pytest.raises(InputError):
        decode(comps, bogus=1)
    with pytest.raises(InputError):
        decode(comps, step="newton")
    with pytest.raises(InputError):
        decode(comps, max_iterations=0)
    with pytest.raises(InputError):
        decode(comps, step_size=-1.0)
    with pytest.raises(InputError):
        decode(comps, time_limit=float("nan"))
    with pytest.raises(InputError):
        decode(comps, length=6)
    with pytest.raises(InputError):
        decode([])
    with pytest.raises(InputError):
        decode([comps[0], Bigram(np.zeros((4, 4)))])
    with pytest.raises(InputError):
        decode([Bigram(np.zeros((7, 7))), NoLength(Bigram(np.zeros((7, 7))))][1:], length=2,
               length_method="exact")
    assert make_options().step == "rush-collins"


def test_infeasible_joint_problem_raises():
    # each component is feasible alone, but they have no keep in common
    B1 = np.full((4, 4), -np.inf)
    B1[0, 1] = B1[1, 3] = 0.0  # only keep = (1, 0)
    B2 = np.full((4, 4), -np.inf)
    B2[0, 2] = B2[2, 3] = 0.0  # only keep = (0, 1)
    with pytest.raises(SolverError):
        decode([Bigram(B1), Bigram(B2)], max_iterations=10_000)
    with pytest.raises(SolverError):
        decode([Bigram(B1), Bigram(np.zeros((4, 4)))], length=2)  # B1 has no 2-token keep


def test_iteration_budget_and_time_limit_are_respected():
    comps = small_pair(12, seed=5)
    result = decode(comps, length=6, max_iterations=7)
    assert result.iterations <= 7 and len(result.trace) == result.iterations
    assert result.length == 6
    result = decode(comps, length=6, time_limit=1e-9)
    assert result.iterations <= 1
    assert result.length == 6


def test_trace_json_is_safe():
    step = TraceStep(1, math.inf, -math.inf, 0.5, 2, None, node=3, note="branch")
    row = step.to_json()
    assert row == {"iteration": 1, "dual": None, "primal": None, "step": 0.5, "disagreements": 2,
                   "lam": None, "node": 3, "note": "branch"}
    json.dumps(row, allow_nan=False)
    result = decode(small_pair(), length=3)
    json.dumps([s.to_json() for s in result.trace], allow_nan=False)
    assert result.trace[-1].dual == pytest.approx(result.dual) or result.dual <= result.trace[-1].dual


def test_polyak_uses_primal_target():
    comps = small_pair(8, seed=11)
    optimum = joint(comps)
    result = decode(comps, step="polyak", tighten=False, max_iterations=300)
    check_result(comps, None, result, optimum)
