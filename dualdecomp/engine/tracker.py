"""Bookkeeping of one decode: best primal, best proved bound, open nodes, trace and budget.

The proved upper bound is maintained as a running minimum of valid bounds. At any moment the nodes of
the branch-and-bound tree that are open (including the one being relaxed) together with the closed ones
partition the feasible set, so max(open bounds, closed bounds) is a valid bound on the optimum; before
any branching the only node is the root, whose bound is the plain Lagrangian dual.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.result import TraceStep, is_certified
from dualdecomp.engine.problem import DecompositionProblem
from dualdecomp.engine.steps import StepSchedule


@dataclass(eq=False)
class Node:
    """Mutable state of one relaxation (the root or a branch-and-bound node).

    Attributes
    ----------
    ident : int
        0 for the root.
    drop, force : numpy.ndarray
        bool (n,): positions fixed to 0 / to 1 in this branch.
    u : numpy.ndarray
        float (K, n): agreement multipliers, every column summing to 0.
    lam : float or None
        Length multiplier (None without a relaxed length).
    exact : bool
        Whether components with an exact-length DP enforce the length in this node.
    bound : float
        Best valid upper bound on the optimum inside this node.
    votes : numpy.ndarray
        float (n,): exponentially decayed count of disagreements per position (branching scores).
    gap_positions : numpy.ndarray
        bool (n,): positions where the two keeps bracketing a length-gap differ.
    """

    ident: int
    drop: np.ndarray
    force: np.ndarray
    u: np.ndarray
    lam: float | None
    exact: bool
    schedule: StepSchedule
    bound: float = math.inf
    votes: np.ndarray = field(default_factory=lambda: np.zeros(0))
    gap_positions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    last_keeps: np.ndarray | None = None

    def child(self, ident: int, position: int, value: bool) -> Node:
        """A copy of this node with ``position`` fixed to ``value`` (multipliers and step state inherited)."""
        drop = self.drop.copy()
        force = self.force.copy()
        (force if value else drop)[position] = True
        return Node(ident=ident, drop=drop, force=force, u=self.u.copy(), lam=self.lam, exact=self.exact,
                    schedule=self.schedule.copy(), bound=self.bound,
                    votes=self.votes.copy(), gap_positions=np.zeros_like(self.gap_positions),
                    last_keeps=self.last_keeps)


class Tracker:
    """Incumbent, proved bound, trace and budget of one decode.

    Parameters
    ----------
    problem : DecompositionProblem
        The problem (its ``value`` evaluates candidates).
    max_iterations : int
        Iteration budget.
    time_limit : float or None
        Seconds from ``start``.
    start : float
        ``time.perf_counter()`` at the start of the decode.
    """

    def __init__(self, problem: DecompositionProblem, max_iterations: int, time_limit: float | None,
                 start: float) -> None:
        self.problem = problem
        self.max_iterations = max_iterations
        self.deadline = None if time_limit is None else start + time_limit
        self.primal = -math.inf
        self.keep: np.ndarray | None = None
        self.dual = math.inf
        self.iterations = 0
        self.trace: list[TraceStep] = []
        self.open: list[Node] = []
        self.closed_max = -math.inf
        self.notes: list[str] = []
        self.timed_out = False
        self.length_gap = False

    # --- budget ----------------------------------------------------------------------------------------

    def exhausted(self) -> bool:
        """Whether the iteration budget or the time limit is used up."""
        if self.iterations >= self.max_iterations:
            return True
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            self.timed_out = True
            return True
        return False

    # --- primal ------------------------------------------------------------------------------------------

    def offer(self, keep: np.ndarray) -> float:
        """Evaluate a candidate keep under all components; keep it if it is the best so far."""
        value = self.problem.value(keep)
        if value > self.primal:
            self.primal = value
            self.keep = keep.copy()
        return value

    def settled(self, bound: float) -> bool:
        """Whether a node with this upper bound can hold nothing better than the incumbent."""
        if bound == -math.inf:
            return True
        return bound <= self.primal or is_certified(self.primal, bound)

    # --- dual --------------------------------------------------------------------------------------------

    def close(self, node: Node) -> None:
        """Mark ``node`` closed (its bound no better than the incumbent, or infeasible)."""
        if node in self.open:
            self.open.remove(node)
        self.closed_max = max(self.closed_max, node.bound)
        self.refresh()

    def refresh(self) -> None:
        """Lower the proved bound to max(open nodes' bounds, closed nodes' bounds) when that is smaller."""
        frontier = max([self.closed_max, *(nd.bound for nd in self.open)])
        if frontier < self.dual:
            self.dual = frontier

    @property
    def certified(self) -> bool:
        """Whether the incumbent is proved optimal."""
        return is_certified(self.primal, self.dual)

    # --- trace -------------------------------------------------------------------------------------------

    def record(self, step: float, disagreements: int, lam: float | None, node: int, note: str = "") -> None:
        """Count one iteration and append its trace step (after the bounds were updated)."""
        self.iterations += 1
        self.refresh()
        self.trace.append(TraceStep(self.iterations, float(self.dual), float(self.primal), float(step),
                                    int(disagreements), None if lam is None else float(lam), node, note))

    def annotate(self, note: str) -> None:
        """Attach ``note`` to the last trace step and to the result's notes."""
        self.notes.append(note)
        if self.trace:
            last = self.trace[-1]
            text = note if not last.note else f"{last.note}; {note}"
            self.trace[-1] = TraceStep(last.iteration, last.dual, last.primal, last.step, last.disagreements,
                                       last.lam, last.node, text)
