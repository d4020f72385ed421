"""The dual-decomposition engine: root relaxation, length handling, tightening, result.

Phases (each bound computed on the way is valid for the whole problem, the reported dual is their
minimum):

1. Root relaxation. Without a length: subgradient dual decomposition over the agreement constraints
   (:mod:`dualdecomp.engine.subgradient`). With ``length=m``: bisection on the length multiplier λ with an
   inner dual decomposition at every λ (:mod:`dualdecomp.engine.length`), or, with ``length_method="exact"``,
   the length enforced inside the components that have an exact-length DP.
2. Tightening (``tighten=True``) when the root gives no certificate: a bisection without a certificate
   (a length gap, or no agreement) moves the length constraint into the exact-length components, when
   there are any, and runs the agreement decomposition again, warm-started; then branch and bound on
   disagreeing positions (:mod:`dualdecomp.engine.tightening`) until certified, the iteration budget or the
   time limit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.result import Result
from dualdecomp.engine.length import bisect
from dualdecomp.engine.options import DecodeOptions
from dualdecomp.engine.problem import DecompositionProblem
from dualdecomp.engine.steps import StepSchedule
from dualdecomp.engine.subgradient import run_subgradient
from dualdecomp.engine.tightening import branch_and_bound
from dualdecomp.engine.tracker import Node, Tracker

BIG_FACTOR = 1e4


def _root(problem: DecompositionProblem, lam: float | None, exact: bool, options: DecodeOptions) -> Node:
    n = problem.n
    return Node(ident=0, drop=np.zeros(n, dtype=bool), force=np.zeros(n, dtype=bool),
                u=np.zeros((problem.K, n)), lam=lam, exact=exact,
                schedule=StepSchedule(options.step, options.step_size, options.polyak_patience),
                votes=np.zeros(n), gap_positions=np.zeros(n, dtype=bool))


def _fallback_keep(problem: DecompositionProblem, node: Node) -> np.ndarray:
    """A keep of the right length when no feasible candidate was found (its value may be -inf)."""
    n = problem.n
    if node.last_keeps is None:
        mean = np.zeros(n)
    else:
        mean = node.last_keeps.mean(axis=0)
    if problem.length is None:
        return mean >= 0.5
    order = np.argsort(-mean, kind="stable")
    keep = np.zeros(n, dtype=bool)
    keep[order[: problem.length]] = True
    return keep


def solve_joint(components: Sequence, length: int | None, options: DecodeOptions, start: float) -> Result:
    """Decode several components (or one with a relaxed length) by dual decomposition.

    Parameters
    ----------
    components : sequence of components (contract 4)
        Validated: non-empty, same n.
    length : int or None
        Exact number of kept tokens (validated).
    options : DecodeOptions
        Engine options.
    start : float
        ``time.perf_counter()`` at the start of the decode (for ``seconds`` and the time limit).

    Returns
    -------
    Result

    Raises
    ------
    InputError
        ``length_method="exact"`` without any component with an exact-length DP.
    SolverError
        When the problem is proved infeasible.
    """
    problem = DecompositionProblem(components, length)
    tracker = Tracker(problem, options.max_iterations, options.time_limit, start)
    exact = length is not None and (options.length_method == "exact"
                                    or (options.length_method == "auto" and problem.has_exact_length))
    if exact and not problem.has_exact_length:
        raise InputError("length_method='exact' needs a component whose solve() accepts length=")
    bisection = length is not None and not exact
    root = _root(problem, 0.0 if bisection else None, exact, options)
    tracker.open = [root]
    tracker.notes.append("bisection on the length multiplier" if bisection else
                         "length inside the exact-length components" if exact else "dual decomposition")
    first_budget = options.tighten_after if options.tighten else options.max_iterations

    if bisection:
        outcome = bisect(problem, tracker, root, options, big=0.0, iterations=first_budget).status
    else:
        outcome = run_subgradient(problem, tracker, root, first_budget, big=0.0).status
    if outcome == "infeasible":
        raise SolverError("no feasible compression: a component has no feasible structure"
                          + ("" if length is None else f" of length {length}"))
    settled = tracker.settled(root.bound)
    lam_out = root.lam
    big = BIG_FACTOR * (1.0 + abs(root.bound if math.isfinite(root.bound) else 0.0)
                        + abs(tracker.primal if math.isfinite(tracker.primal) else 0.0))

    if not settled and options.tighten and not tracker.exhausted():
        if bisection and problem.has_exact_length:
            tracker.annotate("tightening: length moved into the exact-length components")
            node = Node(ident=0, drop=root.drop, force=root.force, u=root.u.copy(), lam=root.lam, exact=True,
                        schedule=root.schedule.copy(), bound=tracker.dual,
                        votes=root.votes.copy(), gap_positions=root.gap_positions.copy(),
                        last_keeps=root.last_keeps)
            node.schedule.forget_reference()
            tracker.open = [node]
            root, bisection = node, False
            if run_subgradient(problem, tracker, root, options.tighten_after, big).status == "infeasible":
                raise SolverError(f"no feasible compression of length {length}")
            settled = tracker.settled(root.bound)
        if not settled and not tracker.exhausted():
            tracker.notes.append("tightening: branch and bound")

            def relax(node: Node) -> bool:
                if bisection:
                    bisect(problem, tracker, node, options, big)
                else:
                    run_subgradient(problem, tracker, node, options.node_iterations, big)
                return tracker.settled(node.bound)

            branch_and_bound(tracker, root, relax)
    if tracker.settled(root.bound) and root in tracker.open:
        tracker.close(root)
    tracker.refresh()

    if tracker.keep is None:
        if not tracker.open and tracker.dual == -math.inf:
            raise SolverError("no feasible compression: the components cannot agree on any keep"
                              + ("" if length is None else f" of length {length}"))
        keep = _fallback_keep(problem, root)
        tracker.notes.append("no feasible keep found: returning a best-effort keep")
    else:
        keep = tracker.keep
    primal = problem.value(keep)
    dual = tracker.dual
    if math.isfinite(primal) and dual < primal:  # rounding: the bound met the incumbent
        dual = primal
    if tracker.timed_out:
        tracker.notes.append("time limit reached")
    elif not tracker.certified and tracker.iterations >= options.max_iterations:
        tracker.notes.append("iteration limit reached")
    gap = dual - primal if math.isfinite(dual) and math.isfinite(primal) else math.inf
    return Result(keep=keep.copy(), primal=float(primal), dual=float(dual), gap=float(max(0.0, gap)),
                  certified=bool(tracker.certified), iterations=tracker.iterations,
                  lam=None if lam_out is None else float(lam_out),
                  trace=tuple(tracker.trace), seconds=time.perf_counter() - start,
                  length_gap=tracker.length_gap, notes=tuple(tracker.notes))
