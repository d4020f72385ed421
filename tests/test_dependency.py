"""Tests of the skip-bigram dependency parsers (``solvers/dependency.py``) against brute force."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pulp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.solution import Solution
from dualdecomp.solvers import dependency as dep
from tests.oracles import dependency as bf

MAIN = settings(max_examples=2000, deadline=None, derandomize=True)
MEDIUM = settings(max_examples=400, deadline=None, derandomize=True)
ILP = settings(max_examples=100, deadline=None, derandomize=True)

# n = 8 is ~30x slower to enumerate than n = 7: drawn about once in 17 examples.
SIZES = [*range(8), *range(8), 8]


def noncrossing_trees(L: int) -> int:
    """Number of projective trees over root + L words (root with any number of children)."""
    return math.comb(3 * L, L) // (2 * L + 1)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@dataclass(frozen=True)
class Instance:
    n: int
    A: np.ndarray
    B: np.ndarray | None
    S: np.ndarray | None
    u: np.ndarray
    lam: float
    keep: np.ndarray  # a random yield, for best_given


@st.composite
def instances(
    draw: st.DrawFn, bigram: bool, sibling: bool, sizes: list[int] = SIZES, u_inf: bool = True
) -> Instance:
    """Random potentials: small integers (ties), floats, zeros, -1e6 and -inf entries, random u and lam."""
    n = draw(st.sampled_from(sizes))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["int", "float", "mixed"]))
    p_zero = draw(st.sampled_from([0.0, 0.3]))
    p_big = draw(st.sampled_from([0.0, 0.1]))
    p_inf = draw(st.sampled_from([0.0, 0.05, 0.2]))
    p_inf_u = draw(st.sampled_from([0.0, 0.2] if u_inf else [0.0]))
    lam_kind = draw(st.sampled_from(["zero", "int", "float"]))
    rng = np.random.default_rng(seed)

    def array(shape: tuple[int, ...], p_inf: float) -> np.ndarray:
        ints = rng.integers(-3, 4, shape).astype(np.float64)
        floats = rng.normal(size=shape) * 2
        x = {"int": ints, "float": floats, "mixed": np.where(rng.random(shape) < 0.5, ints, floats)}[kind]
        x[rng.random(shape) < p_zero] = 0.0
        x[rng.random(shape) < p_big] = -1e6
        x[rng.random(shape) < p_inf] = -np.inf
        return x

    A = array((n + 1, n + 1), p_inf)
    B = array((n + 2, n + 2), p_inf) if bigram else None
    S = array((n + 1, n + 1, n + 1), p_inf) if sibling else None
    u = array((n,), p_inf_u)
    lam = {"zero": 0.0, "int": float(rng.integers(-3, 4)), "float": float(rng.normal())}[lam_kind]
    keep = rng.random(n) < rng.random()
    return Instance(n, A, B, S, u, lam, keep)


def check_solution(sol: Solution, ref: Solution | None, inst: Instance, lam: float, u) -> None:
    """``sol`` has the oracle's score and its structure achieves it under the oracle's scoring."""
    assert ref is not None
    assert close(sol.score, ref.score), (sol, ref)
    assert sol.keep.dtype == bool and sol.keep.shape == (inst.n,)
    assert sol.heads.dtype.kind == "i" and sol.heads.shape == (inst.n,)
    assert np.array_equal(sol.keep, sol.heads >= 0)
    assert close(bf.score(inst.A, inst.B, inst.S, u, lam, sol.keep, sol.heads), sol.score)


def oracle(inst: Instance, *, keep: np.ndarray | None = None, lam: float | None = None, u=None):
    try:
        return bf.dependency(
            inst.A, inst.B, inst.S, inst.u if u is None else u, inst.lam if lam is None else lam, keep=keep
        )
    except SolverError:
        return None


def check_solve(inst: Instance) -> None:
    ref = oracle(inst)
    if ref is None:
        with pytest.raises(SolverError):
            dep.solve(inst.A, inst.B, inst.S, inst.u, inst.lam)
        return
    sol = dep.solve(inst.A, inst.B, inst.S, inst.u, inst.lam)
    check_solution(sol, ref, inst, inst.lam, inst.u)


def check_parse(inst: Instance) -> None:
    ref = oracle(inst, keep=np.ones(inst.n, dtype=bool), lam=0.0, u=np.zeros(inst.n))
    if ref is None:
        with pytest.raises(SolverError):
            dep.parse(inst.A, inst.S)
        return
    sol = dep.parse(inst.A, inst.S)
    assert sol.keep.all()
    check_solution(sol, ref, inst, 0.0, np.zeros(inst.n))


# ------------------------------------------------------------------------------------------------
# the oracle itself


def test_tree_generator_matches_filter() -> None:
    for L in range(6):
        filtered = {
            (-1, *h)
            for h in itertools.product(range(L + 1), repeat=L)
            if bf.is_projective_tree(np.array((-1, *h)))
        }
        generated = [tuple(t) for t in bf.projective_trees(L).tolist()]
        assert len(generated) == len(set(generated))
        assert set(generated) == filtered


def test_tree_generator_counts() -> None:
    for L in range(9):
        assert len(bf.projective_trees(L)) == noncrossing_trees(L)


def test_siblings_from_definition() -> None:
    # root -> 3; 3 -> 1, 2 (left, 2 closest), 4, 5 (right, 4 closest)
    heads = np.array([-1, 3, 3, 0, 3, 3])
    assert bf.siblings(heads).tolist() == [-1, 2, 3, 0, 3, 4]


def test_score_by_hand() -> None:
    A = np.arange(16.0).reshape(4, 4)
    B = np.arange(25.0).reshape(5, 5) / 10
    S = np.arange(64.0).reshape(4, 4, 4) / 100
    u = np.array([1.0, 2.0, 4.0])
    keep = np.array([True, False, True])
    heads = np.array([3, -1, 0])  # 0 -> 3 -> 1
    want = A[0, 3] + A[3, 1] + S[0, 0, 3] + S[3, 3, 1] + B[0, 1] + B[1, 3] + B[3, 4] + (1 + 4) - 2 * 0.5
    assert close(bf.score(A, B, S, u, 0.5, keep, heads), want)
    assert close(
        dep.solve(A, B, S, np.array([1.0, -np.inf, 4.0]), 0.5).score,
        bf.dependency(A, B, S, np.array([1.0, -np.inf, 4.0]), 0.5).score,
    )


# ------------------------------------------------------------------------------------------------
# solve / parse against brute force, one test per parser variant


@MAIN
@given(instances(bigram=False, sibling=False))
def test_parse_first_order(inst: Instance) -> None:
    check_parse(inst)


@MAIN
@given(instances(bigram=False, sibling=True))
def test_parse_second_order(inst: Instance) -> None:
    check_parse(inst)


@MAIN
@given(instances(bigram=False, sibling=False))
def test_skip(inst: Instance) -> None:
    check_solve(inst)


@MAIN
@given(instances(bigram=True, sibling=False))
def test_skip_bigram(inst: Instance) -> None:
    check_solve(inst)


@MAIN
@given(instances(bigram=False, sibling=True))
def test_second_order_skip(inst: Instance) -> None:
    check_solve(inst)


@MAIN
@given(instances(bigram=True, sibling=True))
def test_second_order_skip_bigram(inst: Instance) -> None:
    check_solve(inst)


# ------------------------------------------------------------------------------------------------
# one derivation per structure: the counting semiring against brute-force counts


@pytest.mark.parametrize("second_order", [False, True])
def test_counts_without_masks(second_order: bool) -> None:
    for n in range(9):
        A = np.zeros((n + 1, n + 1))
        S = np.zeros((n + 1,) * 3) if second_order else None
        skip = sum(math.comb(n, L) * noncrossing_trees(L) for L in range(n + 1))
        assert dep.count_derivations(A, S=S) == skip
        assert dep.count_derivations(A, np.zeros((n + 2, n + 2)), S) == skip
        assert dep.count_derivations(A, S=S, drop=False) == noncrossing_trees(n)


@MEDIUM
@given(
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_counts_with_masks(bigram: bool, sibling: bool, drop: bool, data: st.DataObject) -> None:
    inst = data.draw(instances(bigram=bigram, sibling=sibling, sizes=list(range(8))))
    got = dep.count_derivations(inst.A, inst.B, inst.S, inst.u, inst.lam, drop=drop)
    want = bf.count_structures(inst.n, inst.A, inst.B, inst.S, inst.u, inst.lam, drop=drop)
    assert got == want


@pytest.mark.parametrize("second_order", [False, True])
def test_hypergraph_is_unambiguous(second_order: bool) -> None:
    """The ILP's hypergraph, evaluated in the counting semiring, counts structures exactly."""
    for n in range(6):
        A = np.zeros((n + 1, n + 1))
        S = np.zeros((n + 1,) * 3) if second_order else None
        P = np.where(np.triu(np.ones((n + 1, n + 1))) > 0, 0.0, -np.inf)
        for prune in (False, True):
            count: dict = {}
            for head, tails, weight, _ in dep.hyperedges(A, S, P, prune=prune):
                if weight == -np.inf:
                    continue
                c = math.prod(count.get(t, 0) for t in tails)
                count[head] = count.get(head, 0) + c
            assert count[("CR", 0, n)] == bf.count_structures(n)


# ------------------------------------------------------------------------------------------------
# the component (contract 4)


@MEDIUM
@given(st.booleans(), st.booleans(), st.data())
def test_component_solve(bigram: bool, sibling: bool, data: st.DataObject) -> None:
    inst = data.draw(instances(bigram=bigram, sibling=sibling))
    comp = dep.Dependency(inst.A, inst.B, inst.S)
    assert comp.n == inst.n
    ref = oracle(inst, lam=0.0)
    if ref is None:
        with pytest.raises(SolverError):
            comp.solve(inst.u)
        return
    check_solution(comp.solve(inst.u), ref, inst, 0.0, inst.u)


@MAIN
@given(st.booleans(), st.booleans(), st.data())
def test_best_given(bigram: bool, sibling: bool, data: st.DataObject) -> None:
    inst = data.draw(instances(bigram=bigram, sibling=sibling))
    comp = dep.Dependency(inst.A, inst.B, inst.S)
    got = comp.best_given(inst.keep)
    want = bf.best_given(inst.A, inst.B, inst.S, inst.keep)
    assert got == want == -np.inf or close(got, want)
    assert comp.best_given(inst.keep.astype(int)) == got


def test_best_given_is_consistent_with_solve() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(0, 12))
        A, B = rng.normal(size=(n + 1, n + 1)), rng.normal(size=(n + 2, n + 2))
        S = rng.normal(size=(n + 1,) * 3)
        u = rng.normal(size=n)
        comp = dep.Dependency(A, B, S)
        sol = comp.solve(u)
        assert close(comp.best_given(sol.keep) + float(u[sol.keep].sum()), sol.score)


def _ilp_value(components: list[dep.Dependency], u: np.ndarray) -> float | None:
    n = components[0].n
    problem = pulp.LpProblem("dependency", pulp.LpMaximize)
    keep = [pulp.LpVariable(f"keep_{k}", cat=pulp.LpBinary) for k in range(n)]
    objective = pulp.lpSum(c.to_ilp(problem, keep) for c in components)
    problem += objective + pulp.lpSum(float(u[k]) * keep[k] for k in range(n))
    status = problem.solve(pulp.PULP_CBC_CMD(msg=False))
    if pulp.LpStatus[status] == "Infeasible":
        return None
    assert pulp.LpStatus[status] == "Optimal"
    return float(pulp.value(objective) or 0.0) + sum(float(u[k]) * keep[k].varValue for k in range(n))


@pytest.mark.slow
@pytest.mark.parametrize(("bigram", "sibling"), list(itertools.product([False, True], repeat=2)))
def test_to_ilp(bigram: bool, sibling: bool) -> None:
    @ILP
    @given(instances(bigram=bigram, sibling=sibling, sizes=list(range(7)), u_inf=False))
    def run(inst: Instance) -> None:
        ref = oracle(inst, lam=0.0)
        got = _ilp_value([dep.Dependency(inst.A, inst.B, inst.S)], inst.u)
        if ref is None:
            assert got is None
        else:
            assert got is not None and math.isclose(got, ref.score, rel_tol=1e-7, abs_tol=1e-6)

    run()


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.data())
def test_to_ilp_two_components_share_keep(data: st.DataObject) -> None:
    """Two components in one problem (unique variable names): max_keep Σ_c best_given_c(keep) + u·keep."""
    first = data.draw(instances(bigram=True, sibling=False, sizes=list(range(5)), u_inf=False))
    n = first.n
    rng = np.random.default_rng(n)
    A2 = rng.integers(-3, 4, (n + 1, n + 1)).astype(float)
    second = dep.Dependency(A2, S=rng.normal(size=(n + 1,) * 3))
    comps = [dep.Dependency(first.A, first.B), second]
    want = max(sum(c.best_given(k) for c in comps) + float(first.u[k].sum()) for k in bf.kept_subsets(n))
    got = _ilp_value(comps, first.u)
    if want == -np.inf:
        assert got is None
    else:
        assert got is not None and math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-6)


# ------------------------------------------------------------------------------------------------
# inputs and edge cases


def test_empty_sentence() -> None:
    sol = dep.solve(np.zeros((1, 1)), np.full((2, 2), 1.5))
    assert sol.keep.shape == (0,) and sol.heads.shape == (0,) and sol.score == 1.5
    assert dep.parse(np.zeros((1, 1)), np.zeros((1, 1, 1))).score == 0.0
    assert dep.Dependency(np.zeros((1, 1))).best_given(np.zeros(0, dtype=bool)) == 0.0


def test_infeasible_raises_solver_error() -> None:
    n = 3
    A = np.full((n + 1, n + 1), -np.inf)
    B = np.zeros((n + 2, n + 2))
    B[0, n + 1] = -np.inf  # forbids the empty compression; every arc is forbidden
    with pytest.raises(SolverError):
        dep.solve(A, B)
    with pytest.raises(SolverError):
        dep.parse(A)
    assert dep.Dependency(A, B).best_given(np.zeros(n, dtype=bool)) == -np.inf
    assert dep.count_derivations(A, B) == 0


def test_dropping_can_be_forbidden_by_u() -> None:
    n = 4
    rng = np.random.default_rng(0)
    A = rng.normal(size=(n + 1, n + 1))
    u = np.array([-np.inf, 0.0, -np.inf, 0.0])
    sol = dep.solve(A, u=u, lam=100.0)  # dropping everything is best, and tokens 1 and 3 are forbidden
    assert not sol.keep.any()
    assert dep.solve(A, u=np.zeros(n), lam=-100.0).keep.all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"A": np.zeros((3, 4))},
        {"A": np.zeros((0, 0))},
        {"A": np.zeros(3)},
        {"A": [[0.0, np.nan], [0.0, 0.0]]},
        {"A": [[0.0, np.inf], [0.0, 0.0]]},
        {"A": [["a", "b"], ["c", "d"]]},
        {"A": np.zeros((3, 3)), "B": np.zeros((3, 3))},
        {"A": np.zeros((3, 3)), "B": np.full((4, 4), np.nan)},
        {"A": np.zeros((3, 3)), "S": np.zeros((3, 3))},
        {"A": np.zeros((3, 3)), "S": np.full((3, 3, 3), np.nan)},
        {"A": np.zeros((3, 3)), "u": np.zeros(3)},
        {"A": np.zeros((3, 3)), "u": [np.nan, 0.0]},
        {"A": np.zeros((3, 3)), "lam": np.nan},
        {"A": np.zeros((3, 3)), "lam": np.inf},
    ],
)
def test_invalid_input(kwargs: dict) -> None:
    with pytest.raises(InputError):
        dep.solve(**kwargs)


def test_invalid_component_input() -> None:
    with pytest.raises(InputError):
        dep.Dependency(np.zeros((3, 3)), S=np.zeros((2, 2, 2)))
    with pytest.raises(InputError):
        dep.parse(np.zeros((3, 3)), np.full((3, 3, 3), np.nan))
    comp = dep.Dependency(np.zeros((3, 3)))
    with pytest.raises(InputError):
        comp.best_given(np.zeros(3, dtype=bool))
    with pytest.raises(InputError):
        comp.best_given(np.array([0, 2]))
    with pytest.raises(InputError):
        comp.to_ilp(pulp.LpProblem("p", pulp.LpMaximize), [])


def test_component_copies_its_arrays() -> None:
    A = np.zeros((3, 3))
    comp = dep.Dependency(A)
    A[:] = -np.inf
    assert comp.solve(np.ones(2)).score == 2.0
