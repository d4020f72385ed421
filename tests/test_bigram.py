"""Tests specific to the exact bigram solver (contract 1) and its component (contract 4)."""

from __future__ import annotations

import numpy as np
import pytest

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers import bigram
from tests.oracles import bruteforce
from tests.sequence_cases import ilp_argmax

# the tests use PuLP's bundled CBC on purpose (PuLP >= 3.3 deprecates the name, not the solver)
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")

# --------------------------------------------------------------------------------------------------
# ILP formulation (CBC) against brute force (the shared checks are in test_path_solvers.py)
# --------------------------------------------------------------------------------------------------


def test_to_ilp_two_components_share_a_problem():
    rng = np.random.default_rng(7)
    n = 5
    B1, B2 = rng.normal(size=(n + 2, n + 2)), rng.normal(size=(n + 2, n + 2))
    keep, value = ilp_argmax([bigram.Bigram(B1), bigram.Bigram(B2)], n, None, None)
    oracle = bruteforce.bigram(B1 + B2)
    assert np.array_equal(keep, oracle.keep)
    assert value == pytest.approx(oracle.score, abs=1e-6)


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


def test_dp_updates_counts():
    assert bigram.dp_updates(0) == 1
    assert bigram.dp_updates(3) == 10  # (n+1)(n+2)/2 relaxations
    # exact length n forces every token: one chain of single updates plus the final transition
    assert bigram.dp_updates(4, length=4) == 4 + 1
    assert bigram.dp_updates(30, length=15) < bigram.dp_updates(30, all_lengths=True)
