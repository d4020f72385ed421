"""The APPROXIMATE T3 + LM beam search with a length target: exact length, exactness with a wide beam
(against the exact length chart and against brute force over all derivations), and the fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers.transducer import lm_beam as transducer_lm_beam
from dualdecomp.solvers.transducer.lm_beam import beam_search, lm_score
from dualdecomp.solvers.transducer.solver import Transducer
from tests.oracles.transducer import best_by_yield
from tests.test_transducer import all_rules, instance


def random_lm(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random finite trigram potentials of shape (n+2, n+2, n+2)."""
    return np.log10(rng.random((n + 2, n + 2, n + 2)))


def brute_lm(T: np.ndarray, kept: frozenset[int]) -> float:
    """Contract-2 LM of a yield (0-based positions), written out independently of the module."""
    n = T.shape[0] - 2
    s = [p + 1 for p in sorted(kept)]
    if not s:
        return float(T[0, 0, n + 1])
    out = T[0, 0, s[0]]
    for t in range(1, len(s)):
        out += T[s[t - 2] if t >= 2 else 0, s[t - 1], s[t]]
    return float(out + T[s[-2] if len(s) >= 2 else 0, s[-1], n + 1])


def setup(seed: int, max_n: int = 6):
    rng, src, grammar, score, _ = instance(seed, max_n=max_n)
    transducer = Transducer(src, grammar, score)
    return rng, src, grammar, score, transducer


def feasible_lengths(transducer: Transducer) -> list[int]:
    return [m for m, v in enumerate(transducer.solve_lengths()) if v > -math.inf]


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_target_length_is_always_met(seed):
    rng, _, _, _, transducer = setup(seed, max_n=7)
    T = random_lm(rng, transducer.n)
    weight = float(rng.choice([0.5, 1.0, 3.0]))
    feasible = feasible_lengths(transducer)
    for m in range(transducer.n + 1):
        if m not in feasible:
            with pytest.raises(SolverError):
                beam_search(transducer, T, weight, beam=2, length=m)
            continue
        for beam in (1, 3):
            res = beam_search(transducer, T, weight, beam=beam, length=m)
            assert res.approximate
            assert int(res.keep.sum()) == m
            assert list(res.by_length) == [m] and np.array_equal(res.by_length[m], res.keep)
            own = transducer.best_given(res.keep)
            assert own > -math.inf  # the yield of a real derivation
            # the reported score is that of some derivation with this yield
            assert res.score <= own + weight * lm_score(T, res.keep) + 1e-9


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_no_lm_wide_beam_equals_exact_length_chart(seed):
    rng, _, _, _, transducer = setup(seed)
    T = random_lm(rng, transducer.n)
    table = transducer.solve_lengths()
    for m in feasible_lengths(transducer):
        res = beam_search(transducer, T, lm_weight=0.0, beam=1000, length=m)
        assert not res.fallback
        assert res.score == pytest.approx(table[m], abs=1e-9)
        assert int(res.keep.sum()) == m


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_wide_beam_equals_bruteforce_t3_plus_lm(seed):
    rng, src, grammar, score, transducer = setup(seed)
    T = random_lm(rng, transducer.n)
    weight = float(rng.choice([0.5, 1.0, 2.0]))
    by_yield = best_by_yield(src, all_rules(src, grammar), score)
    for m in range(transducer.n + 1):
        vals = [(s + weight * brute_lm(T, ks), ks) for ks, s in by_yield.items() if len(ks) == m]
        if not vals:
            continue
        best = max(v for v, _ in vals)
        res = beam_search(transducer, T, weight, beam=1000, length=m)
        assert not res.fallback
        assert res.score == pytest.approx(best, abs=1e-9)
        got = frozenset(np.flatnonzero(res.keep).tolist())
        assert by_yield[got] + weight * brute_lm(T, got) == pytest.approx(best, abs=1e-9)
    # free length, wide beam: the overall optimum
    best_free = max(s + weight * brute_lm(T, ks) for ks, s in by_yield.items())
    assert beam_search(transducer, T, weight, beam=1000).score == pytest.approx(best_free, abs=1e-9)


def check_fallback(transducer: Transducer, T: np.ndarray, weight: float, res, m: int) -> None:
    sol = transducer.solve(length=m)
    assert res.fallback and res.approximate
    assert np.array_equal(res.keep, sol.keep) and int(res.keep.sum()) == m
    assert res.score == pytest.approx(sol.score + weight * brute_lm(T, frozenset(np.flatnonzero(sol.keep))),
                                      abs=1e-9)


@pytest.mark.parametrize(("seed", "m"), [(0, 3), (171, 3)])
def test_fallback_when_beam_one_loses_the_length(seed, m):
    # instances found by search where beam=1 loses every root item of length m
    _, _, _, _, transducer = setup(seed, max_n=7)
    T = random_lm(np.random.default_rng(seed), transducer.n)
    check_fallback(transducer, T, 1.0, beam_search(transducer, T, 1.0, beam=1, length=m), m)
    assert not beam_search(transducer, T, 1.0, beam=1000, length=m).fallback


def test_fallback_by_construction(monkeypatch):
    # a beam that keeps nothing: every vertex is empty, so the result must come from the exact chart
    monkeypatch.setattr(transducer_lm_beam, "_select", lambda items, beam, by_length: [])
    for seed in range(5):
        rng, _, _, _, transducer = setup(seed)
        T = random_lm(rng, transducer.n)
        for m in feasible_lengths(transducer):
            check_fallback(transducer, T, 0.7, beam_search(transducer, T, 0.7, beam=5, length=m), m)


def test_select_reserves_every_length():
    items = [(-float(i), tuple(range(1, 4))) for i in range(10)] + [(-100.0 - i, (1,)) for i in range(3)]
    out = transducer_lm_beam._select(items, 4, by_length=True)
    # two lengths -> k = 4 // 4 = 1 reserved each, then the best two others
    assert [s for s, _ in out] == [0.0, -1.0, -2.0, -100.0]
    assert transducer_lm_beam._select(items, 4, by_length=False) == items[:4]


def test_bad_arguments():
    rng, _, _, _, transducer = setup(1)
    T = random_lm(rng, transducer.n)
    with pytest.raises(InputError):
        beam_search(transducer, T, length=transducer.n + 1)
    with pytest.raises(InputError):
        beam_search(transducer, T, beam=0)
    with pytest.raises(InputError):
        beam_search(transducer, T[:-1], length=1)
