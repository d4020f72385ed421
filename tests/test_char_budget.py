"""The character-budget bigram solver equals brute force; its outputs never exceed the budget."""

from __future__ import annotations

import numpy as np
import pulp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers.bigram.char_budget import CharBudgetBigram, compression_chars, solve
from tests.oracles.bruteforce import bigram_score, kept_subsets


def _instance(draw, max_n=8):
    n = draw(st.integers(0, max_n))
    ints = draw(st.booleans())
    vals = st.integers(-3, 3).map(float) if ints else st.floats(-5, 5, allow_nan=False)
    B = np.array(draw(st.lists(vals, min_size=(n + 2) ** 2, max_size=(n + 2) ** 2))).reshape(n + 2, n + 2)
    mask = np.array(draw(st.lists(st.booleans(), min_size=(n + 2) ** 2, max_size=(n + 2) ** 2)))
    if draw(st.booleans()):
        B[mask.reshape(n + 2, n + 2) & (np.random.default_rng(n).random((n + 2, n + 2)) < 0.3)] = -np.inf
    widths = np.array(draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)), dtype=np.int64)
    budget = draw(st.integers(0, int(widths.sum()) + n + 1))
    u = np.array(draw(st.lists(vals, min_size=n, max_size=n))) if draw(st.booleans()) else None
    return B, widths, budget, u


def _oracle(B, widths, budget, u):
    best = -np.inf
    for keep in kept_subsets(len(widths)):
        if compression_chars(widths, keep) <= budget:
            best = max(best, bigram_score(B, keep, u))
    return best


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.data())
def test_matches_bruteforce(data) -> None:
    B, widths, budget, u = _instance(data.draw)
    best = _oracle(B, widths, budget, u)
    if best == -np.inf:
        with pytest.raises(SolverError):
            solve(B, widths, budget, u)
        return
    sol = solve(B, widths, budget, u)
    assert compression_chars(widths, sol.keep) <= budget
    assert abs(sol.score - best) <= 1e-9 * max(1.0, abs(best))
    assert abs(bigram_score(B, sol.keep, u) - sol.score) <= 1e-9 * max(1.0, abs(best))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_ilp_matches_bruteforce(data) -> None:
    B, widths, budget, _ = _instance(data.draw, max_n=6)
    comp = CharBudgetBigram(B, widths, budget)
    n = comp.n
    prob = pulp.LpProblem("t", pulp.LpMaximize)
    keep = [pulp.LpVariable(f"k{i}", cat=pulp.LpBinary) for i in range(n)]
    prob += comp.to_ilp(prob, keep) + 0
    status = prob.solve(pulp.PULP_CBC_CMD(msg=False))
    best = _oracle(B, widths, budget, None)
    if best == -np.inf:
        assert pulp.LpStatus[status] != "Optimal"
        return
    assert pulp.LpStatus[status] == "Optimal"
    kv = np.array([round(v.value()) for v in keep], dtype=bool)
    assert abs(comp.best_given(kv) - best) <= 1e-6 * max(1.0, abs(best))


def test_best_given_and_errors() -> None:
    B = np.zeros((5, 5))
    comp = CharBudgetBigram(B, [3, 3, 3], 7)
    assert comp.best_given([1, 1, 0]) == 0.0
    assert comp.best_given([1, 1, 1]) == -np.inf  # 11 characters
    with pytest.raises(InputError):
        solve(B, [3, 3], 5)
    with pytest.raises(InputError):
        solve(B, [3, 0, 3], 5)
    with pytest.raises(InputError):
        solve(B, [3, 3, 3], -1)
