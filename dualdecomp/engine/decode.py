"""``decode``: the public entry point of the decoders (contract 5).

With a single component that has an exact DP (with exact length support when ``length`` is given), the
problem is solved exactly in one call and the certificate is immediate: the DP's optimum is both the
primal value and the dual bound. Several components (or one component without an exact-length DP and a
``length``) go to the dual-decomposition engine (:mod:`dualdecomp.engine`): subgradient dual
decomposition over the agreement constraints, bisection on the length multiplier, primal recovery with
``best_given``, and tightening by branch and bound. The exact ILP oracle is :func:`dualdecomp.ilp.decode`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from dualdecomp.core.checks import check_components
from dualdecomp.core.component import capabilities_of
from dualdecomp.core.result import Result, TraceStep, is_certified
from dualdecomp.engine.driver import solve_joint
from dualdecomp.engine.options import make_options


def decode(components: Sequence, length: int | None = None, **options) -> Result:
    """Maximise the sum of the components' scores subject to agreement (and an exact length).

    Parameters
    ----------
    components : sequence of components (contract 4)
        The components, all over the same n tokens.
    length : int, optional
        Exact number of kept tokens.
    **options
        Options of the dual-decomposition engine, see :class:`dualdecomp.engine.options.DecodeOptions`:
        ``max_iterations`` (1000), ``step`` ("rush-collins", "polyak", "constant", "1/k"), ``step_size``
        (None: automatic), ``time_limit`` (seconds, None), ``tighten`` (True), ``tighten_after`` (50),
        ``node_iterations`` (30), ``length_method`` ("bisection" or "exact"), ``lambda_iterations`` (50),
        ``bisection_steps`` (40), ``polyak_patience`` (10). Unused by the single-component exact path.

    Returns
    -------
    Result
        ``certified`` is True only when ``keep`` is proved optimal (primal == dual within 1e-9
        relative). Without a certificate ``keep`` is the best feasible keep found, ``dual`` the best
        bound proved; ``length_gap`` and ``notes`` say why.

    Raises
    ------
    InputError
        On an empty component list, components of different sizes, an impossible length or a bad option.
    SolverError
        When the problem is infeasible (proved).
    """
    start = time.perf_counter()
    n, length = check_components(components, length)
    opts = make_options(**options)
    comp = components[0]
    if len(components) > 1 or (length is not None and not capabilities_of(comp).exact_length):

        return solve_joint(components, length, opts, start)
    u = np.zeros(n)
    sol = comp.solve(u, length=length) if length is not None else comp.solve(u)
    primal = float(comp.best_given(sol.keep))
    dual = float(sol.score)
    seconds = time.perf_counter() - start
    return Result(keep=np.asarray(sol.keep, dtype=bool), primal=primal, dual=dual,
                  gap=float(max(0.0, dual - primal)),
                  certified=bool(is_certified(primal, dual)), iterations=1, lam=None,
                  trace=(TraceStep(1, dual, primal, 0.0, 0, None),), seconds=seconds)
