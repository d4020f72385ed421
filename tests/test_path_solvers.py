"""Property tests shared by the path solvers — bigram (contract 1) and trigram (contract 2) — and their
components (contract 4), parametrised over one table of solvers. Solver-specific cases (known instances,
shapes of bad potentials, DP sizes) stay in ``test_bigram.py`` and ``test_ngram.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pulp
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var
from dualdecomp.solvers import bigram, ngram
from tests.oracles import bruteforce
from tests.sequence_cases import check, ilp_argmax, instances, solve_or_none
from tests.sequence_cases import table as oracle_table

# the tests use PuLP's bundled CBC on purpose (PuLP >= 3.3 deprecates the name, not the solver)
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")


@dataclass(frozen=True)
class PathSolver:
    """One row of the table: a solver module, its component, its brute-force oracle."""

    name: str
    ndim: int
    module: object
    component: Callable
    score: Callable
    oracle: Callable
    prefix: str

    def __str__(self) -> str:
        return self.name


SOLVERS = [
    PathSolver("bigram", 2, bigram, bigram.Bigram, bruteforce.bigram_score, bruteforce.bigram, "bigram"),
    PathSolver("trigram", 3, ngram, ngram.Trigram, bruteforce.trigram_score, bruteforce.trigram, "trigram"),
]
BY_NAME = pytest.mark.parametrize("case", SOLVERS, ids=str)


@BY_NAME
@settings(max_examples=2000, deadline=None, derandomize=True)
@given(data=st.data())
def test_solve_matches_bruteforce(case, data):
    P, u, integral = data.draw(instances(ndim=case.ndim))
    n = P.shape[0] - 2
    table = oracle_table(case.score, P, u)
    comp = case.component(P)
    lengths = case.module.solve_lengths(P, u)
    assert lengths.scores.shape == (n + 1,) and lengths.keeps.shape == (n + 1, n)
    for length in [None, *range(n + 1)]:
        sol = solve_or_none(case.module.solve, P, u, length)
        check(case.score, sol, table, length, P, u, integral)
        sol_c = solve_or_none(comp.solve, u, length=length)
        assert (sol is None) == (sol_c is None)
        if sol is not None:
            assert sol_c.score == sol.score and np.array_equal(sol_c.keep, sol.keep)
            # best_given: own score of that yield (no u)
            assert comp.best_given(sol.keep) == pytest.approx(case.score(P, sol.keep), rel=1e-12, abs=1e-12)
        if length is not None:
            if sol is None:
                assert lengths.scores[length] == -np.inf and not lengths.keeps[length].any()
                with pytest.raises(SolverError):
                    lengths.solution(length)
            else:  # same DP, same tie-break
                assert lengths.scores[length] == sol.score
                assert np.array_equal(lengths.keeps[length], sol.keep)
    # the oracle itself agrees with the table (free length)
    check(case.score, solve_or_none(case.oracle, P, u), table, None, P, u, False)
    # best_given on every yield, including -inf ones
    for keep, _ in table[:: max(1, len(table) // 8)]:
        assert comp.best_given(keep) == pytest.approx(case.score(P, keep), rel=1e-12)
    with pytest.raises(InputError):
        case.module.solve(P, u, n + 1)


@BY_NAME
@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data())
def test_to_ilp_matches_bruteforce(case, data):
    P, u, _ = data.draw(instances(max_n=6, ndim=case.ndim))
    n = P.shape[0] - 2
    length = data.draw(st.one_of(st.none(), st.integers(0, n)))
    keep, value = ilp_argmax([case.component(P)], n, u, length)
    oracle = solve_or_none(case.oracle, P, u, length)
    event(f"ilp feasible: {oracle is not None}")
    if oracle is None:
        assert keep is None
        return
    assert keep is not None
    assert case.score(P, keep, u) == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    assert value == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    if length is not None:
        assert int(keep.sum()) == length


@BY_NAME
def test_to_ilp_names_are_unique_and_prefix_respected(case):
    P = np.zeros((5,) * case.ndim)
    prob = pulp.LpProblem("names", pulp.LpMaximize)
    keep_vars = [binary_var(prob, f"keep_{k}") for k in range(1, 4)]
    comp = case.component(P)
    first, second = comp.to_ilp(prob, keep_vars), comp.to_ilp(prob, keep_vars)
    prob += first + second + comp.to_ilp(prob, keep_vars, "mine_")
    names = [v.name for v in prob.variables()]
    assert len(names) == len(set(names))
    assert any(name.startswith(f"{case.prefix}0_") for name in names)
    assert any(name.startswith(f"{case.prefix}1_") for name in names)
    assert any(name.startswith("mine_") for name in names)
    with pytest.raises(InputError):
        comp.to_ilp(prob, keep_vars[:2])


@BY_NAME
@pytest.mark.parametrize(
    ("u", "length"),
    [
        (np.zeros(2), None),
        (np.array([0.0, np.nan, 0.0]), None),
        (np.array([np.inf, 0.0, 0.0]), None),
        (None, 4),
        (None, -1),
        (None, 0.5),
        (None, True),
    ],
)
def test_bad_u_or_length(case, u, length):
    P = np.zeros((5,) * case.ndim)
    with pytest.raises(InputError):
        case.module.solve(P, u, length)
    with pytest.raises(InputError):
        case.component(P).solve(u, length=length)


@BY_NAME
def test_bad_keep_for_best_given(case):
    comp = case.component(np.zeros((5,) * case.ndim))
    with pytest.raises(InputError):
        comp.best_given(np.zeros(2, dtype=bool))
    with pytest.raises(InputError):
        comp.best_given([0, 3, 1])


@BY_NAME
def test_component_copies_its_potentials(case):
    P = np.zeros((5,) * case.ndim)
    comp = case.component(P)
    P[...] = -np.inf
    assert np.isfinite(comp.solve().score)


@BY_NAME
def test_component_declares_exact_length(case):
    from dualdecomp.core.component import Component, LengthComponent, capabilities_of

    comp = case.component(np.zeros((4,) * case.ndim))
    assert isinstance(comp, Component) and isinstance(comp, LengthComponent)
    assert capabilities_of(comp).exact_length
