"""Property tests of the exact trigram solver (contract 2) and its component (contract 4)."""

from __future__ import annotations

import numpy as np
import pulp
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var
from dualdecomp.solvers import bigram, ngram
from tests.oracles import bruteforce
from tests.sequence_cases import check, instances, solve_or_none
from tests.sequence_cases import table as oracle_table

# the tests use PuLP's bundled CBC on purpose (PuLP >= 3.3 deprecates the name, not the solver)
pytestmark = pytest.mark.filterwarnings("ignore:PULP_CBC_CMD is deprecated:DeprecationWarning")

# --------------------------------------------------------------------------------------------------
# exactness against the brute-force oracle
# --------------------------------------------------------------------------------------------------


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(instances(ndim=3))
def test_solve_matches_bruteforce(inst):
    T, u, integral = inst
    n = T.shape[0] - 2
    table = oracle_table(bruteforce.trigram_score, T, u)
    comp = ngram.Trigram(T)
    lengths = ngram.solve_lengths(T, u)
    assert lengths.scores.shape == (n + 1,) and lengths.keeps.shape == (n + 1, n)
    for length in [None, *range(n + 1)]:
        sol = solve_or_none(ngram.solve, T, u, length)
        check(bruteforce.trigram_score, sol, table, length, T, u, integral)
        sol_c = solve_or_none(comp.solve, u, length=length)
        assert (sol is None) == (sol_c is None)
        if sol is not None:
            assert sol_c.score == sol.score and np.array_equal(sol_c.keep, sol.keep)
            own = bruteforce.trigram_score(T, sol.keep)
            assert comp.best_given(sol.keep) == pytest.approx(own, rel=1e-12, abs=1e-12)
        if length is not None:
            if sol is None:
                assert lengths.scores[length] == -np.inf and not lengths.keeps[length].any()
                with pytest.raises(SolverError):
                    lengths.solution(length)
            else:  # same DP, same tie-break
                assert lengths.scores[length] == sol.score
                assert np.array_equal(lengths.keeps[length], sol.keep)
    oracle = solve_or_none(bruteforce.trigram, T, u)
    check(bruteforce.trigram_score, oracle, table, None, T, u, False)
    for keep, _ in table[:: max(1, len(table) // 8)]:
        assert comp.best_given(keep) == pytest.approx(bruteforce.trigram_score(T, keep), rel=1e-12)
    with pytest.raises(InputError):
        ngram.solve(T, u, n + 1)


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
@given(instances(max_n=6, ndim=3), st.data())
def test_to_ilp_matches_bruteforce(inst, data):
    T, u, _ = inst
    n = T.shape[0] - 2
    length = data.draw(st.one_of(st.none(), st.integers(0, n)))
    keep, value = _ilp([ngram.Trigram(T)], n, u, length)
    oracle = solve_or_none(bruteforce.trigram, T, u, length)
    event(f"ilp feasible: {oracle is not None}")
    if oracle is None:
        assert keep is None
        return
    assert keep is not None
    assert bruteforce.trigram_score(T, keep, u) == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    assert value == pytest.approx(oracle.score, rel=1e-9, abs=1e-6)
    if length is not None:
        assert int(keep.sum()) == length


@settings(max_examples=40, deadline=None, derandomize=True)
@given(instances(max_n=5, ndim=3), st.integers(0, 2**32 - 1))
def test_to_ilp_bigram_plus_trigram(inst_t, seed):
    """Two different components linked through the shared keep variables."""
    T, u, _ = inst_t
    n = T.shape[0] - 2
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n + 2, n + 2))
    B[rng.random(B.shape) < 0.2] = -np.inf
    keep, value = _ilp([ngram.Trigram(T), bigram.Bigram(B)], n, u, None)
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


def test_to_ilp_names_are_unique():
    T = np.zeros((5, 5, 5))
    prob = pulp.LpProblem("names", pulp.LpMaximize)
    keep_vars = [binary_var(prob, f"keep_{k}") for k in range(1, 4)]
    comp = ngram.Trigram(T)
    prob += comp.to_ilp(prob, keep_vars) + comp.to_ilp(prob, keep_vars)
    names = [v.name for v in prob.variables()]
    assert len(names) == len(set(names))
    assert any(name.startswith("trigram0_") for name in names)
    assert any(name.startswith("trigram1_") for name in names)
    with pytest.raises(InputError):
        comp.to_ilp(prob, keep_vars[:2])


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


@pytest.mark.parametrize(
    ("u", "length"),
    [
        (np.zeros(2), None),
        (np.array([0.0, np.nan, 0.0]), None),
        (np.array([np.inf, 0.0, 0.0]), None),
        (None, 4),
        (None, -1),
        (None, 0.5),
    ],
)
def test_bad_u_or_length(u, length):
    T = np.zeros((5, 5, 5))
    with pytest.raises(InputError):
        ngram.solve(T, u, length)
    with pytest.raises(InputError):
        ngram.Trigram(T).solve(u, length=length)


def test_bad_keep_for_best_given():
    comp = ngram.Trigram(np.zeros((5, 5, 5)))
    with pytest.raises(InputError):
        comp.best_given(np.zeros(2, dtype=bool))
    with pytest.raises(InputError):
        comp.best_given([0, 3, 1])


def test_dp_updates_counts():
    assert ngram.dp_updates(0) == 2  # (0,0) -> (0,1), then the final scan
    assert ngram.dp_updates(0, length=0) == 1
    assert ngram.dp_updates(30, length=15) < ngram.dp_updates(30, all_lengths=True)
