"""BagCount (sum over types of a function of the type's kept count) against brute force over keeps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers.bag_count import BagCount


def random_bag(seed: int, max_n: int = 7, neg_inf: bool = True, min_n: int = 0):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_n, max_n + 1))
    K = int(rng.integers(1, 4))
    types = rng.integers(0, K, size=n)
    counts = np.bincount(types, minlength=K)
    gains = [rng.normal(size=c + 1 + int(rng.integers(0, 2))) for c in counts]
    u = rng.normal(size=n) * 1.5
    if neg_inf and n and rng.random() < 0.3:
        u[int(rng.integers(0, n))] = -np.inf
    return BagCount(types, gains), u


def brute(bag: BagCount, u: np.ndarray) -> dict[int, float]:
    """Best objective for every length."""
    best: dict[int, float] = {}
    for bits in itertools.product((False, True), repeat=bag.n):
        keep = np.array(bits, dtype=bool)
        val = objective(bag, u, keep)
        m = int(keep.sum())
        best[m] = max(best.get(m, -math.inf), val)
    return best


def objective(bag: BagCount, u: np.ndarray, keep: np.ndarray) -> float:
    return bag.best_given(keep) + (float(np.sum(u[keep])) if keep.any() else 0.0)


def test_best_given_counts_per_type():
    bag = BagCount([0, 1, 0, 2, 0], [[0.0, 1.0, 5.0, -2.0], [0.5, 0.25], [3.0, -1.0], [7.0]])
    assert bag.best_given([1, 0, 1, 0, 0]) == pytest.approx(5.0 + 0.5 + 3.0 + 7.0)
    assert bag.best_given(np.ones(5, dtype=bool)) == pytest.approx(-2.0 + 0.25 - 1.0 + 7.0)


@pytest.mark.parametrize("seed", range(60))
def test_solve_equals_bruteforce(seed):
    bag, u = random_bag(seed)
    best = brute(bag, u)
    opt = max(best.values())
    if opt == -math.inf:
        with pytest.raises(SolverError):
            bag.solve(u)
    else:
        sol = bag.solve(u)
        assert sol.score == pytest.approx(opt, abs=1e-9)
        assert objective(bag, u, sol.keep) == pytest.approx(opt, abs=1e-9)
    table = bag.solve_lengths(u)
    for m in range(bag.n + 1):
        if best[m] == -math.inf:
            assert table.scores[m] == -math.inf
            with pytest.raises(SolverError):
                bag.solve(u, length=m)
            continue
        sol = bag.solve(u, length=m)
        assert sol.length == m
        assert sol.score == pytest.approx(best[m], abs=1e-9)
        assert objective(bag, u, sol.keep) == pytest.approx(best[m], abs=1e-9)
        assert table.scores[m] == pytest.approx(best[m], abs=1e-9)
        assert int(table.keeps[m].sum()) == m
        assert objective(bag, u, table.keeps[m]) == pytest.approx(best[m], abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_to_ilp_equals_bruteforce(seed):
    import pulp

    bag, u = random_bag(1000 + seed, max_n=6, neg_inf=False, min_n=1)
    opt = max(brute(bag, u).values())
    prob = pulp.LpProblem("bag", pulp.LpMaximize)
    keep_vars = [pulp.LpVariable(f"keep_{k}", cat=pulp.LpBinary) for k in range(1, bag.n + 1)]
    obj = bag.to_ilp(prob, keep_vars)
    prob += obj + pulp.lpSum(float(u[k]) * keep_vars[k] for k in range(bag.n))
    prob.solve(pulp.PULP_CBC_CMD(msg=False))
    assert pulp.LpStatus[prob.status] == "Optimal"
    assert pulp.value(prob.objective) == pytest.approx(opt, abs=1e-6)
    keep = np.array([round(v.value()) for v in keep_vars], dtype=bool)
    assert objective(bag, u, keep) == pytest.approx(opt, abs=1e-6)
    bag.to_ilp(prob, keep_vars)  # fresh names for a second copy


def test_decode_with_a_bigram_component_is_certified_and_optimal():
    from dualdecomp.engine.decode import decode
    from dualdecomp.solvers.bigram.solver import Bigram

    rng = np.random.default_rng(5)
    for _ in range(5):
        n = 6
        bag = BagCount(rng.integers(0, 2, size=n), [rng.normal(size=n + 1), rng.normal(size=n + 1)])
        B = rng.normal(size=(n + 2, n + 2))
        big = Bigram(B)
        best = max(bag.best_given(k) + big.best_given(k)
                   for k in (np.array(b, dtype=bool) for b in itertools.product((0, 1), repeat=n)))
        res = decode([big, bag])
        assert res.certified
        assert res.primal == pytest.approx(best, abs=1e-9)


def test_bad_inputs():
    with pytest.raises(InputError):
        BagCount([0, 2], [[0.0, 1.0], [0.0]])  # type 2 out of range
    with pytest.raises(InputError):
        BagCount([0, 0], [[0.0, 1.0]])  # table too short for 2 tokens
    with pytest.raises(InputError):
        BagCount([0], [[0.0, np.nan]])
    with pytest.raises(InputError):
        BagCount([0.5], [[0.0, 1.0]])
    bag = BagCount([0, 0], [[0.0, 1.0, 2.0]])
    with pytest.raises(InputError):
        bag.solve(np.zeros(3))
    with pytest.raises(InputError):
        bag.solve([0.0, np.inf])
    with pytest.raises(InputError):
        bag.solve(None, length=3)
    with pytest.raises(InputError):
        bag.best_given([1, 2])
    with pytest.raises(SolverError):
        bag.solve([-np.inf, 0.0], length=2)
