"""Random instances, oracle checks and an ILP harness shared by the path-solver tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pulp
import pytest
from hypothesis import event
from hypothesis import strategies as st

from dualdecomp.core.errors import SolverError
from dualdecomp.core.ilp_vars import binary_var
from tests.oracles import bruteforce

Score = Callable[..., float]

# random instances: hypothesis draws the size and the "style", numpy fills the arrays from a seed


def fill(rng: np.random.Generator, shape: tuple[int, ...], style: dict) -> np.ndarray:
    if style["values"] == "int":
        arr = rng.integers(-style["range"], style["range"] + 1, size=shape).astype(np.float64)
    elif style["values"] == "float":
        arr = rng.normal(scale=style["range"], size=shape)
    else:  # mixed: half the entries integer, half float
        arr = np.where(
            rng.random(shape) < 0.5,
            rng.integers(-style["range"], style["range"] + 1, size=shape),
            rng.normal(scale=style["range"], size=shape),
        )
    r = rng.random(shape)
    arr[r < style["p_zero"]] = 0.0
    arr[(r >= style["p_zero"]) & (r < style["p_zero"] + style["p_big"])] = -1e6
    arr[rng.random(shape) < style["p_inf"]] = -np.inf
    return arr


@st.composite
def instances(draw, max_n: int = 8, ndim: int = 2):
    """(potentials of shape (n+2,)*ndim, u or None, whether all values are integers)."""
    n = draw(st.integers(0, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    style = {
        "values": draw(st.sampled_from(["int", "float", "mixed"])),
        "range": draw(st.sampled_from([1, 2, 3, 10])),
        "p_zero": draw(st.sampled_from([0.0, 0.2])),
        "p_big": draw(st.sampled_from([0.0, 0.1])),
        "p_inf": draw(st.sampled_from([0.0, 0.05, 0.2, 0.5])),
    }
    u_style = draw(st.sampled_from(["none", "zero", "int", "float", "neginf"]))
    rng = np.random.default_rng(seed)
    P = fill(rng, (n + 2,) * ndim, style)
    if u_style == "none":
        u = None
    elif u_style == "zero":
        u = np.zeros(n)
    elif u_style == "int":
        u = rng.integers(-3, 4, size=n).astype(np.float64)
    else:
        u = rng.normal(scale=2.0, size=n)
        if u_style == "neginf":
            u[rng.random(n) < 0.2] = -np.inf
    integral = style["values"] == "int" and u_style in ("none", "zero", "int")
    return P, u, integral


def table(score: Score, P: np.ndarray, u: np.ndarray | None) -> list[tuple[np.ndarray, float]]:
    """Every keep vector with its oracle score."""
    n = P.shape[0] - 2
    return [(keep, score(P, keep, u)) for keep in bruteforce.kept_subsets(n)]


def tie_key(keep: np.ndarray) -> tuple[int, ...]:
    """Documented tie-break: kept positions (with s_0 = 0) read right to left, smallest first."""
    return tuple(reversed([0, *(np.flatnonzero(keep) + 1).tolist()]))


def check(score: Score, sol, table, length, P, u, integral) -> None:
    """The solver's answer ``sol`` (None: SolverError) against the oracle table."""
    cands = [(k, s) for k, s in table if length is None or int(k.sum()) == length]
    best = max(s for _, s in cands)
    event("free length" if length is None else "exact length")
    if best == -np.inf:
        event("infeasible")
        assert sol is None, f"expected SolverError, got {sol}"
        return
    assert sol is not None, "solver raised SolverError on a feasible instance"
    assert sol.keep.dtype == np.bool_ and sol.keep.shape == (P.shape[0] - 2,)
    assert sol.score == pytest.approx(best, rel=1e-9, abs=1e-9)
    # the returned keep achieves the returned score under the oracle's scoring
    assert score(P, sol.keep, u) == pytest.approx(sol.score, rel=1e-9, abs=1e-9)
    if length is not None:
        assert sol.length == length
    near = [k for k, s in cands if s >= best - 1e-9 * max(1.0, abs(best))]
    event(f"optimum unique: {len(near) == 1}; integral: {integral}")
    if len(near) == 1:
        assert np.array_equal(sol.keep, near[0])
    if integral:  # exact arithmetic: the documented tie-break is checkable
        exact = [k for k, s in cands if s == best]
        assert np.array_equal(sol.keep, min(exact, key=tie_key))


def solve_or_none(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except SolverError:
        return None


def ilp_argmax(components, n: int, u: np.ndarray | None, length: int | None):
    """(keep, objective) of the components' ``to_ilp`` formulations plus ``u`` solved by CBC; (None, None)
    if infeasible."""
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
