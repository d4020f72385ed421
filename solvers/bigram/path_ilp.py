"""The exact ILP formulation of a bigram path (contract 1), shared by :class:`~dualdecomp.solvers.bigram.
solver.Bigram` and :class:`~dualdecomp.solvers.bigram.char_budget.CharBudgetBigram`."""

from __future__ import annotations

from typing import Any

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.core.ilp_vars import binary_var

__all__ = ["add_path_ilp"]


def add_path_ilp(B: np.ndarray, problem: Any, keep_vars: list[Any], pre: str) -> Any:
    """Add the path formulation of the potentials ``B`` to a pulp problem; return its objective (without u).

    Binary arc variables x[i, j] (i < j, B[i, j] finite) with one arc out of 0, one arc into n+1 and,
    for every token k, Σ_i x[i, k] = keep_k = Σ_j x[k, j]. The arcs only go forward, so any integer
    solution is a single path from 0 to n+1 through exactly the kept tokens.

    Parameters
    ----------
    B : numpy.ndarray
        Validated bigram potentials (n+2, n+2).
    problem : pulp.LpProblem
        The shared problem (constraints are added to it).
    keep_vars : list of pulp.LpVariable
        n binary variables, ``keep_vars[k-1]`` for token k.
    pre : str
        Name prefix of the new variables and constraints.

    Returns
    -------
    pulp.LpAffineExpression
        Σ B[i, j] x[i, j].

    Raises
    ------
    InputError
        ``keep_vars`` does not have n variables.
    """
    import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

    n = B.shape[0] - 2
    if len(keep_vars) != n:
        raise InputError(f"keep_vars must have {n} variables, got {len(keep_vars)}")
    x: dict[tuple[int, int], Any] = {}
    for i in range(n + 1):
        for j in range(i + 1, n + 2):
            if np.isfinite(B[i, j]):
                x[i, j] = binary_var(problem, f"{pre}x_{i}_{j}")
    outgoing: list[list[Any]] = [[] for _ in range(n + 2)]
    incoming: list[list[Any]] = [[] for _ in range(n + 2)]
    for (i, j), var in x.items():
        outgoing[i].append(var)
        incoming[j].append(var)
    problem += pulp.lpSum(outgoing[0]) == 1, f"{pre}start"
    problem += pulp.lpSum(incoming[n + 1]) == 1, f"{pre}end"
    for k in range(1, n + 1):
        problem += pulp.lpSum(incoming[k]) - keep_vars[k - 1] == 0, f"{pre}in_{k}"
        problem += pulp.lpSum(outgoing[k]) - keep_vars[k - 1] == 0, f"{pre}out_{k}"
    return pulp.lpSum(float(B[i, j]) * var for (i, j), var in x.items())
