"""PuLP variable helpers shared by every ``to_ilp``: fresh name prefixes and binary variables."""

from __future__ import annotations

from typing import Any

__all__ = ["binary_var", "unused_prefix"]


def _names(problem: Any) -> list[str]:
    names = [v.name for v in problem.variables()]
    constraints = problem.constraints
    if callable(constraints):  # PuLP >= 3.3: prob.constraints() is a list
        names.extend(c.name for c in constraints() if c.name)
    else:  # older PuLP: a name -> constraint mapping
        names.extend(constraints.keys())
    return names


def unused_prefix(problem: Any, base: str) -> str:
    """The smallest ``f"{base}{k}_"`` that prefixes no variable or constraint name of a PuLP problem.

    Parameters
    ----------
    problem : pulp.LpProblem
        The problem the new variables go into.
    base : str
        The stem of the prefix (e.g. ``"dep"``).

    Returns
    -------
    str
        A prefix such that every name starting with it is new to ``problem``.
    """
    names = _names(problem)
    k = 0
    while True:
        prefix = f"{base}{k}_"
        if not any(name.startswith(prefix) for name in names):
            return prefix
        k += 1


def binary_var(problem: Any, name: str) -> Any:
    """A new binary PuLP variable (``problem.add_variable`` when this PuLP has it)."""
    import pulp  # lazy: only the ILP paths need PuLP; solvers import this module at start-up

    if hasattr(problem, "add_variable"):
        return problem.add_variable(name, cat=pulp.LpBinary)
    return pulp.LpVariable(name, cat=pulp.LpBinary)
