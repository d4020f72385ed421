"""The exact oracle of contract 5: the joint problem as one integer linear program (PuLP).

Every component adds its exact formulation linked to shared binary keep variables
(``to_ilp(problem, keep_vars)``), the objective is the sum of their objective expressions, and
``Σ keep = length`` is added when a length is given. Solvers: PuLP's bundled CBC (``"cbc"``) or HiGHS
through its Python API ``highspy`` (``"highs"``, :class:`pulp.HiGHS`). Both are asked for a zero relative
gap (``gapRel=0``) and run single-threaded.

The result's ``primal`` is recomputed as Σ_c best_given_c(keep) from the rounded keep variables (never
the solver's float objective). ``certified`` is True only when the solver proves optimality (status
Optimal with an optimal, not merely feasible, solution; a run stopped by the time limit never is) and
the recomputed primal meets the solver's bound within 1e-9 relative. ``dual`` is the solver's bound:
for a proved optimum its objective value (the optimum within its tolerances), otherwise HiGHS's best
bound (``mip_dual_bound``) or +inf (CBC does not report a bound through PuLP).
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from dualdecomp.core.checks import check_components
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var
from dualdecomp.core.result import Result, TraceStep, is_certified

SOLVERS = ("cbc", "highs")


def _validate(components: Sequence, length: int | None, solver: str, time_limit: float | None) -> int:
    n, _ = check_components(components, length)
    if solver not in SOLVERS:
        raise InputError(f"solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
    if time_limit is not None and not (isinstance(time_limit, int | float) and math.isfinite(time_limit)
                                       and time_limit > 0):
        raise InputError(f"time_limit must be a positive number or None, got {time_limit!r}")
    return n


def _objective(components: Sequence, keep: np.ndarray) -> float:
    total = 0.0
    for comp in components:
        value = float(comp.best_given(keep))
        if value == -math.inf:
            return -math.inf
        total += value
    return total


def _make_solver(solver: str, time_limit: float | None):
    import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

    if solver == "cbc":
        with warnings.catch_warnings():  # PuLP >= 3.3 deprecates the name PULP_CBC_CMD, not the solver
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, gapRel=0.0, threads=1)
    if not pulp.HiGHS().available():
        raise SolverError("HiGHS is not available (install highspy)")
    return pulp.HiGHS(msg=False, timeLimit=time_limit, gapRel=0.0, threads=1)


@contextmanager
def _solver_output_discarded() -> Iterator[None]:
    """The process's standard output (fd 1) points at the null device while a solver runs.

    The solvers are asked for no output (``msg=False``), but highspy writes HiGHS's banner ("Running HiGHS
    ...") to fd 1 from C anyway, into the rows of ``compress --output -`` or a piped JSONL stream.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _highs_bound(problem) -> float:
    """HiGHS's best bound on the maximum (+inf when unavailable)."""
    model = getattr(problem, "solverModel", None)
    if model is None:
        return math.inf
    try:
        bound = float(model.getInfo().mip_dual_bound)
    except (AttributeError, TypeError, ValueError):
        return math.inf
    if not math.isfinite(bound):
        return math.inf
    constant = float(problem.objective.constant) if problem.objective is not None else 0.0
    return -bound + constant  # pulp hands HiGHS the negated objective (it minimises), without constant


def decode(components: Sequence, length: int | None = None, solver: str = "cbc",
           time_limit: float | None = None) -> Result:
    """Solve the joint problem of contract 5 exactly with an ILP solver.

    Parameters
    ----------
    components : sequence of components (contract 4)
        Each with ``to_ilp(problem, keep_vars)``.
    length : int, optional
        Exact number of kept tokens.
    solver : {"cbc", "highs"}
        PuLP's bundled CBC or HiGHS (highspy).
    time_limit : float, optional
        Seconds given to the solver (model building not included).

    Returns
    -------
    Result
        ``keep``, ``primal`` (recomputed with ``best_given``), ``dual`` (the solver's bound),
        ``certified`` (proved optimal), ``iterations`` = 1, a one-step trace, ``seconds`` (building and
        solving).

    Raises
    ------
    InputError
        Bad components, length, solver name or time limit.
    SolverError
        The problem is infeasible, or the solver stopped without a feasible solution or failed.
    """
    import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

    start = time.perf_counter()
    n = _validate(components, length, solver, time_limit)
    prob = pulp.LpProblem("joint_compression", pulp.LpMaximize)
    keep_vars = [binary_var(prob, f"keep_{k}") for k in range(1, n + 1)]
    objective = pulp.lpSum(comp.to_ilp(prob, keep_vars) for comp in components)
    if length is not None:
        prob += pulp.lpSum(keep_vars) == int(length), "length"
    # a zero-weight term on every keep variable makes sure the solver sees each of them
    prob.setObjective(objective + pulp.lpSum(0.0 * v for v in keep_vars))
    try:
        with _solver_output_discarded():
            prob.solve(_make_solver(solver, time_limit))
    except pulp.PulpSolverError as exc:
        raise SolverError(f"the ILP solver ({solver}) failed: {exc}") from None
    status, sol_status = prob.status, prob.sol_status
    if status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        raise SolverError("no feasible compression: the ILP is infeasible")
    if sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible) or any(
            v.varValue is None for v in keep_vars):
        raise SolverError(f"the ILP solver ({solver}) stopped without a feasible solution "
                          f"(status {pulp.LpStatus.get(status, status)})")
    keep = np.array([v.varValue > 0.5 for v in keep_vars], dtype=bool).reshape(n)
    primal = _objective(components, keep)
    proved = status == pulp.LpStatusOptimal and sol_status == pulp.LpSolutionOptimal
    if proved:
        value = pulp.value(prob.objective)
        dual = max(float(value) if value is not None else -math.inf, primal)
    else:
        dual = _highs_bound(prob) if solver == "highs" else math.inf
    certified = proved and is_certified(primal, dual)
    gap = dual - primal if math.isfinite(dual) and math.isfinite(primal) else math.inf
    notes = (f"ilp:{solver}", "proved optimal" if proved else "not proved optimal (time limit)")
    seconds = time.perf_counter() - start
    return Result(keep=keep, primal=float(primal), dual=float(dual), gap=float(max(0.0, gap)),
                  certified=bool(certified), iterations=1,
                  lam=None, trace=(TraceStep(1, dual, primal, 0.0, 0, None),), seconds=seconds,
                  notes=notes)
