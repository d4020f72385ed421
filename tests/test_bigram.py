"""Property tests of the exact bigram solver (contract 1) and its component (contract 4)."""

from __future__ import annotations

import numpy as np
import pulp
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var
from dualdecomp.solvers import bigram
from tests.oracles import bruteforce
from tests.sequence_cases import check, instances, solve_or_none
from tests.sequence_cases import table as oracle_table

# the tests use PuLP's bundled CBC on purpose (PuLP >= 3.3 deprecates the name, not the solver)
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")

# --------------------------------------------------------------------------------------------------
# exactness against the brute-force oracle
# --------------------------------------------------------------------------------------------------


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(instances())
def test_solve_matches_bruteforce(inst):
    B, u, integral = inst
    n = B.shape[0] - 2
    table = oracle_table(bruteforce.bigram_score, B, u)
    comp = bigram.Bigram(B)
    lengths = bigram.solve_lengths(B, u)
    assert lengths.scores.shape == (n + 1,) and lengths.keeps.shape == (n + 1, n)
    for length in [None, *range(n + 1)]:
        sol = solve_or_none(bigram.solve, B, u, length)
        check(bruteforce.bigram_score, sol, table, length, B, u, integral)
        sol_c = solve_or_none(comp.solve, u, length=length)
        assert (sol is None) == (sol_c is None)
        if sol is not None:
            assert sol_c.score == sol.score and np.array_equal(sol_c.keep, sol.keep)
            # best_given: own score of that yield (no u)
            own = bruteforce.bigram_score(B, sol.keep)
            assert comp.best_given(sol.keep) == pytest.approx(own, rel=1e-12, abs=1e-12)
        if length is not None:
            if sol is None:
                assert lengths.scores[length] == -np.inf and not lengths.keeps[length].any()
                with pytest.raises(SolverError):
                    lengths.solution(length)
            else:  # same DP, same tie-break
                assert lengths.scores[length] == sol.score
                assert np.array_equal(lengths.keeps[length], sol.keep)
    # the oracle itself agrees with the table (free length)
    oracle = solve_or_none(bruteforce.bigram, B, u)
    check(bruteforce.bigram_score, oracle, table, None, B, u, False)
    # best_given on every yield, including -inf ones
    for keep, _ in table[:: max(1, len(table) // 8)]:
        assert comp.best_given(keep) == pytest.approx(bruteforce.bigram_score(B, keep), rel=1e-12)
    with pytest.raises(InputError):
        bigram.solve(B, u, n + 1)


# --------------------------------------------------------------------------------------------------
# ILP formulation (CBC) against brute force
# --------------------------------------------------------------------------------------------------


def _ilp(components, n, u, length):
    prob = pulp.LpProblem("test", pulp.LpMaximize)
    keep_vars = [binary_var(prob, f"keep_{k}") for k in range(1, n + 1)]
    objective = pulp.lpSum(c.to_ilp(prob, keep_vars) for c in components)
    if u is not None:
        objective += pulp.lpSum(float(u[k]) * keep_vars[k] for k in range(n) if np.isfinite(u[k]))
        for k in range(n):
            if u[k] == -np.inf:
                prob += keep_vars[k] == 0
    if length is not None:
        prob += pulp.lpSum(keep_vars) == length
    prob += objective
    status = prob.solve(pulp.PULP_CBC_CMD(msg=False))
    if pulp.LpStatus[status] == "Infeasible":
        return None, None
    assert pulp.LpStatus[status] == "Optimal"
    keep = np.array([round(v.value()) == 1 for v in keep_vars], dtype=bool)
    value = pulp.value(objective)
    return keep, 0.0 if value is None else float(value)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(instances(max_n=6), st.data())
def test_to_ilp_matches_bruteforce(inst, data):
    B, u, _ = inst
    n = B.shape[0] - 2
    length = data.draw(st.one_of(st.none(), st.integers(0, n)))
    keep, value = _ilp([bigram.Bigram(B)], n, u, length)
    oracle = solve_or_none(bruteforce.bigram, B, u, length)
    event(f"ilp feasible: {oracle is not None}")
    if oracle is None:
        assert keep is None
        return
    assert keep is not None
    assert bruteforce.bigram_score(B, keep, u) == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    assert value == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    if length is not None:
        assert int(keep.sum()) == length


def test_to_ilp_two_components_share_a_problem():
    rng = np.random.default_rng(7)
    n = 5
    B1, B2 = rng.normal(size=(n + 2, n + 2)), rng.normal(size=(n + 2, n + 2))
    keep, value = _ilp([bigram.Bigram(B1), bigram.Bigram(B2)], n, None, None)
    oracle = bruteforce.bigram(B1 + B2)
    assert np.array_equal(keep, oracle.keep)
    assert value == pytest.approx(oracle.score, abs=1e-6)


def test_to_ilp_names_are_unique_and_prefix_respected():
    B = np.zeros((5, 5))
    prob = pulp.LpProblem("names", pulp.LpMaximize)
    keep_vars = [binary_var(prob, f"keep_{k}") for k in range(1, 4)]
    comp = bigram.Bigram(B)
    first, second = comp.to_ilp(prob, keep_vars), comp.to_ilp(prob, keep_vars)
    prob += first + second + comp.to_ilp(prob, keep_vars, "mine_")
    names = [v.name for v in prob.variables()]
    assert len(names) == len(set(names))
    assert any(name.startswith("bigram0_") for name in names)
    assert any(name.startswith("bigram1_") for name in names)
    assert any(name.startswith("mine_") for name in names)
    with pytest.raises(InputError):
        comp.to_ilp(prob, keep_vars[:2])


# --------------------------------------------------------------------------------------------------
# edge and error cases
# --------------------------------------------------------------------------------------------------


def test_empty_sentence():
    B = np.array([[0.0, 2.5], [0.0, 0.0]])
    sol = bigram.solve(B)
    assert sol.keep.shape == (0,) and sol.score == 2.5
    assert bigram.solve(B, np.zeros(0), 0).score == 2.5
    assert bigram.Bigram(B).best_given(np.zeros(0, dtype=bool)) == 2.5
    assert bigram.solve_lengths(B).scores.tolist() == [2.5]


def test_known_instance_and_lower_triangle_ignored():
    n = 3
    B = np.full((n + 2, n + 2), -np.inf)
    B[0, 1], B[1, 3], B[3, 4] = 1.0, 1.0, 1.0  # 0 -> 1 -> 3 -> end
    B[0, 4] = 0.5
    B[np.tril_indices(n + 2)] = 100.0  # never read
    sol = bigram.solve(B)
    assert sol.keep.tolist() == [True, False, True] and sol.score == 3.0
    assert bigram.solve(B, u=np.array([0.0, 0.0, -3.0])).keep.tolist() == [False, False, False]
    assert bigram.solve(B, length=0).score == 0.5
    with pytest.raises(SolverError, match="no feasible compression"):
        bigram.solve(B, length=1)
    table = bigram.solve_lengths(B)
    assert table.scores.tolist() == [0.5, -np.inf, 3.0, -np.inf]
    assert table.solution(2).keep.tolist() == [True, False, True]
    with pytest.raises(InputError):
        table.solution(4)


def test_all_forbidden_raises_solver_error():
    B = np.full((6, 6), -np.inf)
    with pytest.raises(SolverError, match="no feasible compression"):
        bigram.solve(B)
    with pytest.raises(SolverError):
        bigram.Bigram(B).solve(np.zeros(4))
    assert np.all(bigram.solve_lengths(B).scores == -np.inf)
    assert bigram.Bigram(B).best_given(np.ones(4, dtype=bool)) == -np.inf


def test_integer_and_list_inputs_are_converted():
    B = [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    sol = bigram.solve(B, [1])
    assert sol.keep.tolist() == [True] and sol.score == 4.0
    assert bigram.solve(np.array(B, dtype=np.float32), length=np.int64(0)).score == 0.0


@pytest.mark.parametrize(
    "B",
    [
        np.zeros(4),
        np.zeros((3, 4)),
        np.zeros((1, 1)),
        np.zeros((0, 0)),
        np.zeros((3, 3, 3)),
        np.array([[0.0, np.nan], [0.0, 0.0]]),
        np.array([[0.0, np.inf], [0.0, 0.0]]),
        np.array([[0.0, 1j], [0.0, 0.0]]),
        [["a", "b"], ["c", "d"]],
    ],
)
def test_bad_potentials(B):
    with pytest.raises(InputError):
        bigram.solve(B)
    with pytest.raises(InputError):
        bigram.solve_lengths(B)
    with pytest.raises(InputError):
        bigram.Bigram(B)


@pytest.mark.parametrize(
    ("u", "length"),
    [
        (np.zeros(2), None),
        (np.zeros((3, 1)), None),
        (np.array([0.0, np.nan, 0.0]), None),
        (np.array([0.0, np.inf, 0.0]), None),
        (None, 4),
        (None, -1),
        (None, 1.5),
        (None, 2.0),
        (None, True),
        (None, "2"),
    ],
)
def test_bad_u_or_length(u, length):
    B = np.zeros((5, 5))
    with pytest.raises(InputError):
        bigram.solve(B, u, length)
    with pytest.raises(InputError):
        bigram.Bigram(B).solve(u, length=length)


def test_bad_keep_for_best_given():
    comp = bigram.Bigram(np.zeros((5, 5)))
    with pytest.raises(InputError):
        comp.best_given(np.zeros(4, dtype=bool))
    with pytest.raises(InputError):
        comp.best_given(np.array([0, 2, 1]))
    assert comp.best_given(np.array([0, 1, 1])) == 0.0


def test_component_copies_its_potentials():
    B = np.zeros((4, 4))
    comp = bigram.Bigram(B)
    B[0, 3] = -np.inf
    assert comp.best_given(np.zeros(2, dtype=bool)) == 0.0
    assert comp.n == 2


def test_dp_updates_counts():
    assert bigram.dp_updates(0) == 1
    assert bigram.dp_updates(3) == 10  # (n+1)(n+2)/2 relaxations
    # exact length n forces every token: one chain of single updates plus the final transition
    assert bigram.dp_updates(4, length=4) == 4 + 1
    assert bigram.dp_updates(30, length=15) < bigram.dp_updates(30, all_lengths=True)
