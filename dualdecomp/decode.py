"""``decode``: the public entry point of the decoders (contract 5).

With a single component that has an exact DP (with exact length support when ``length`` is given), the
problem is solved exactly in one call and the certificate is immediate: the DP's optimum is both the
primal value and the dual bound. Joint decoding of several components by subgradient dual decomposition
is issue 3 and not implemented yet: asking for it raises :class:`~dualdecomp.errors.SolverError`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from dualdecomp.errors import InputError, SolverError
from dualdecomp.result import Result, TraceStep, is_certified


def decode(components: Sequence, length: int | None = None, **options) -> Result:
    """Maximise the sum of the components' scores subject to agreement (and an exact length).

    Parameters
    ----------
    components : sequence of components (contract 4)
        The components, all over the same n tokens.
    length : int, optional
        Exact number of kept tokens.
    **options
        Reserved for the dual-decomposition engine.

    Returns
    -------
    Result

    Raises
    ------
    InputError
        On an empty component list, components of different sizes or an impossible length.
    SolverError
        When several components are given (joint decoding is not implemented yet).
    """
    start = time.perf_counter()
    if not components:
        raise InputError("decode needs at least one component")
    n = components[0].n
    if any(c.n != n for c in components):
        raise InputError("all components must be over the same number of tokens")
    if length is not None and not (isinstance(length, int | np.integer) and 0 <= length <= n):
        raise InputError(f"length must be an integer in [0, {n}], got {length!r}")
    if len(components) > 1:
        raise SolverError("joint decoding of several components (dual decomposition) is not implemented "
                          "yet; decode one component at a time")
    comp = components[0]
    u = np.zeros(n)
    sol = comp.solve(u, length=length) if length is not None else comp.solve(u)
    primal = float(comp.best_given(sol.keep))
    dual = float(sol.score)
    seconds = time.perf_counter() - start
    return Result(keep=np.asarray(sol.keep, dtype=bool), primal=primal, dual=dual,
                  gap=max(0.0, dual - primal),
                  certified=is_certified(primal, dual), iterations=1, lam=None,
                  trace=(TraceStep(1, dual, primal, 0.0, 0, None),), seconds=seconds)
