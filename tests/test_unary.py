"""Unary (per-token keep scores + required tokens) against brute force over keeps, the ILP and joint DD."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dualdecomp.core.component import LengthComponent, capabilities_of
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers.unary import Unary


def random_unary(seed: int, max_n: int = 7, neg_inf: bool = True, min_n: int = 0):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(min_n, max_n + 1))
    w = rng.normal(size=n)
    required = rng.random(n) < 0.25
    if neg_inf and n and rng.random() < 0.4:
        k = int(rng.integers(0, n))
        if not required[k]:
            w[k] = -np.inf
    u = rng.normal(size=n)
    if neg_inf and n and rng.random() < 0.2:
        u[int(rng.integers(0, n))] = -np.inf
    return Unary(w, required), u


def objective(comp: Unary, u: np.ndarray, keep: np.ndarray) -> float:
    own = comp.best_given(keep)
    return own + (float(np.sum(u[keep])) if keep.any() else 0.0)


def brute(comp: Unary, u: np.ndarray) -> dict[int, float]:
    """Best objective for every length (-inf where no keep of that length is allowed)."""
    best = {m: -math.inf for m in range(comp.n + 1)}
    for bits in itertools.product((False, True), repeat=comp.n):
        keep = np.array(bits, dtype=bool)
        m = int(keep.sum())
        best[m] = max(best[m], objective(comp, u, keep))
    return best


def test_best_given_sums_kept_scores_and_enforces_required():
    comp = Unary([1.0, -2.0, 0.5, -np.inf], required=[0, 0, 1, 0])
    assert isinstance(comp, LengthComponent) and capabilities_of(comp).exact_length
    assert comp.best_given([1, 1, 1, 0]) == pytest.approx(-0.5)
    assert comp.best_given([1, 0, 0, 0]) == -np.inf  # required token 3 dropped
    assert comp.best_given([0, 0, 1, 1]) == -np.inf  # token 4 can never be kept
    assert comp.solve().keep.tolist() == [True, False, True, False]


@pytest.mark.parametrize("seed", range(60))
def test_solve_equals_bruteforce(seed):
    comp, u = random_unary(seed)
    best = brute(comp, u)
    opt = max(best.values())
    if opt == -math.inf:
        with pytest.raises(SolverError):
            comp.solve(u)
    else:
        sol = comp.solve(u)
        assert sol.score == pytest.approx(opt, abs=1e-9)
        assert objective(comp, u, sol.keep) == pytest.approx(opt, abs=1e-9)


@pytest.mark.parametrize("seed", range(60))
def test_exact_length_and_every_length_equal_bruteforce(seed):
    comp, u = random_unary(100 + seed)
    best = brute(comp, u)
    table = comp.solve_lengths(u)
    for m in range(comp.n + 1):
        if best[m] == -math.inf:
            assert table.scores[m] == -math.inf
            with pytest.raises(SolverError):
                comp.solve(u, length=m)
            continue
        assert table.scores[m] == pytest.approx(best[m], abs=1e-9)
        sol = comp.solve(u, length=m)
        assert int(sol.keep.sum()) == m
        assert sol.score == pytest.approx(best[m], abs=1e-9)
        assert objective(comp, u, sol.keep) == pytest.approx(best[m], abs=1e-9)
        assert objective(comp, u, table.keeps[m]) == pytest.approx(best[m], abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_to_ilp_equals_bruteforce(seed):
    import pulp

    comp, u = random_unary(1000 + seed, max_n=6, min_n=1)
    u = np.where(np.isfinite(u), u, -5.0)  # pulp coefficients must be finite
    opt = max(brute(comp, u).values())
    prob = pulp.LpProblem("unary", pulp.LpMaximize)
    keep_vars = [pulp.LpVariable(f"keep_{k}", cat=pulp.LpBinary) for k in range(1, comp.n + 1)]
    obj = comp.to_ilp(prob, keep_vars)
    prob += obj + pulp.lpSum(float(u[k]) * keep_vars[k] for k in range(comp.n))
    prob.solve(pulp.PULP_CBC_CMD(msg=False))
    assert pulp.LpStatus[prob.status] == "Optimal"
    assert pulp.value(prob.objective) == pytest.approx(opt, abs=1e-6)
    keep = np.array([round(v.value()) for v in keep_vars], dtype=bool)
    assert objective(comp, u, keep) == pytest.approx(opt, abs=1e-6)
    comp.to_ilp(prob, keep_vars)  # fresh names for a second copy


@pytest.mark.parametrize("length", [None, 3])
def test_joint_decode_with_bigram_and_dependency_is_certified_and_equals_ilp(length):
    """Unary + Bigram + Dependency decoded by DD: certified, and the same optimum as the exact ILP."""
    from dualdecomp import decode, ilp
    from dualdecomp.solvers.bigram import Bigram
    from dualdecomp.solvers.dependency import Dependency

    rng = np.random.default_rng(11)
    n = 6
    for _ in range(4):
        unary = Unary(rng.normal(size=n), required=[0, 1, 0, 0, 0, 0])
        comps = [Bigram(rng.normal(size=(n + 2, n + 2))), Dependency(rng.normal(size=(n + 1, n + 1))), unary]
        result = decode(comps, length=length, max_iterations=5000)
        exact = ilp.decode(comps, length=length)
        assert result.keep[1]  # the required token
        assert length is None or result.length == length
        assert result.certified
        assert result.primal == pytest.approx(exact.primal, abs=1e-7)
        assert result.dual == pytest.approx(result.primal, abs=1e-7)


def test_bad_inputs():
    with pytest.raises(InputError):
        Unary([[0.0, 1.0]])
    with pytest.raises(InputError):
        Unary([0.0, np.nan])
    with pytest.raises(InputError):
        Unary([0.0, np.inf])
    with pytest.raises(InputError):
        Unary([0.0, -np.inf], required=[0, 1])
    with pytest.raises(InputError):
        Unary([0.0, 1.0], required=[1])
    comp = Unary([0.0, 1.0], required=[1, 0])
    with pytest.raises(InputError):
        comp.solve(np.zeros(3))
    with pytest.raises(InputError):
        comp.solve(None, length=3)
    with pytest.raises(SolverError):
        comp.solve(None, length=0)  # the required token makes length 0 infeasible
    with pytest.raises(SolverError):
        comp.solve([-np.inf, 0.0])  # the required token cannot be kept
