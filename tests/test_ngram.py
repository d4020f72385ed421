"""Tests specific to the exact trigram solver (contract 2) and its component (contract 4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers import bigram, ngram
from tests.oracles import bruteforce
from tests.sequence_cases import ilp_argmax, instances

# the tests use PuLP's bundled CBC on purpose (PuLP >= 3.3 deprecates the name, not the solver)
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")

# --------------------------------------------------------------------------------------------------
# ILP formulation (CBC) against brute force (the shared checks are in test_path_solvers.py)
# --------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(instances(max_n=5, ndim=3), st.integers(0, 2**32 - 1))
def test_to_ilp_bigram_plus_trigram(inst_t, seed):
    """Two different components linked through the shared keep variables."""
    T, u, _ = inst_t
    n = T.shape[0] - 2
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n + 2, n + 2))
    B[rng.random(B.shape) < 0.2] = -np.inf
    keep, value = ilp_argmax([ngram.Trigram(T), bigram.Bigram(B)], n, u, None)
    scores = [
        bruteforce.trigram_score(T, k, u) + bruteforce.bigram_score(B, k) for k in bruteforce.kept_subsets(n)
    ]
    best = max(scores)
    if best == -np.inf:
        assert keep is None
        return
    assert keep is not None
    assert bruteforce.trigram_score(T, keep, u) + bruteforce.bigram_score(B, keep) == pytest.approx(
        best, rel=1e-9, abs=1e-6
    )
    assert value == pytest.approx(best, rel=1e-9, abs=1e-6)


# --------------------------------------------------------------------------------------------------
# edge and error cases
# --------------------------------------------------------------------------------------------------


def test_empty_sentence():
    T = np.zeros((2, 2, 2))
    T[0, 0, 1] = 1.5
    sol = ngram.solve(T)
    assert sol.keep.shape == (0,) and sol.score == 1.5
    assert ngram.solve(T, np.zeros(0), 0).score == 1.5
    assert ngram.Trigram(T).best_given(np.zeros(0, dtype=bool)) == 1.5
    assert ngram.solve_lengths(T).scores.tolist() == [1.5]


def test_known_instance_and_first_word_context():
    n = 3
    T = np.full((n + 2,) * 3, -np.inf)
    # 0 -> 2 -> 3 -> end: T[0,0,2] + T[0,2,3] + T[2,3,4]
    T[0, 0, 2], T[0, 2, 3], T[2, 3, 4] = 1.0, 2.0, 4.0
    T[0, 0, 4] = 6.5  # empty compression
    T[0, 0, 1], T[0, 1, 4] = 0.0, 3.0  # keep only token 1
    sol = ngram.solve(T)
    assert sol.keep.tolist() == [False, True, True] and sol.score == 7.0
    assert ngram.solve(T, length=0).score == 6.5
    assert ngram.solve(T, length=1).keep.tolist() == [True, False, False]
    assert ngram.solve(T, u=np.array([4.0, 0.0, 0.0])).keep.tolist() == [True, False, False]
    with pytest.raises(SolverError, match="no feasible compression"):
        ngram.solve(T, length=3)
    assert ngram.solve_lengths(T).scores.tolist() == [6.5, 3.0, 7.0, -np.inf]
    # T[a, b, c] with a >= b (other than the start 0, 0) is never read
    T2 = T.copy()
    T2[1, 1, 2] = T2[2, 1, 3] = 1e9
    assert ngram.solve(T2).score == 7.0


def test_all_forbidden_raises_solver_error():
    T = np.full((6, 6, 6), -np.inf)
    with pytest.raises(SolverError, match="no feasible compression"):
        ngram.solve(T)
    with pytest.raises(SolverError):
        ngram.Trigram(T).solve(np.zeros(4), length=2)
    assert np.all(ngram.solve_lengths(T).scores == -np.inf)
    assert ngram.Trigram(T).best_given(np.ones(4, dtype=bool)) == -np.inf


@pytest.mark.parametrize(
    "T",
    [
        np.zeros((4, 4)),
        np.zeros((3, 3, 4)),
        np.zeros((1, 1, 1)),
        np.zeros((3, 3, 3, 3)),
        np.where(np.eye(3, dtype=bool)[None], np.nan, 0.0) * np.ones((3, 3, 3)),
        np.full((3, 3, 3), np.inf),
    ],
)
def test_bad_potentials(T):
    with pytest.raises(InputError):
        ngram.solve(T)
    with pytest.raises(InputError):
        ngram.solve_lengths(T)
    with pytest.raises(InputError):
        ngram.Trigram(T)


def test_dp_updates_counts():
    assert ngram.dp_updates(0) == 2  # (0,0) -> (0,1), then the final scan
    assert ngram.dp_updates(0, length=0) == 1
    assert ngram.dp_updates(30, length=15) < ngram.dp_updates(30, all_lengths=True)
