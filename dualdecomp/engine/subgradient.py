r"""Subgradient dual decomposition over the agreement constraints of K components.

Lagrangian (one node of the search, fixings F0 = ``node.drop``, F1 = ``node.force``, optional length m
relaxed with the multiplier λ)::

    L(u, λ) = Σ_c max_z [ f_c(z) + (u_c − λ/K + φ)·z ] − K·M·|F1| + λ·m,      Σ_c u_c = 0,

where φ_k = −inf on F0, +M on F1 and 0 elsewhere. For every keep z that all components can yield, that
respects the fixings and (when λ is used) keeps exactly m tokens, the bracket summed over c is at least
Σ_c f_c(z) + K·M·|F1| − λ·m, so L(u, λ) is an upper bound on the optimum of the node for every u with
Σ_c u_c = 0, every λ and every M (a larger M only makes it tighter). Without a length, or when the
length is enforced inside the components (``node.exact``), λ is None and drops out.

Each component's term is evaluated as best_given_c(z_c) + (u_c − λ/K)·z_c − M·|F1 \ z_c| (no M on the
tokens the component kept, so no rounding from M), or from the solver's own score when that is larger.

Subgradient with respect to u_c (projected onto Σ_c u_c = 0): g_c = z_c − mean_c z_c; the update is
u_c ← u_c − α g_c, with α from :mod:`dualdecomp.engine.steps`. When all components return the same keep the
relaxation is exact for this (u, λ): the keep is optimal for the node (and, with a length, for the
penalised problem at λ).

Primal recovery: every component's keep of every iteration is evaluated under all components with
``best_given`` (:meth:`~dualdecomp.engine.tracker.Tracker.offer`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import SolverError
from dualdecomp.engine.problem import DecompositionProblem
from dualdecomp.engine.tracker import Node, Tracker

VOTE_DECAY = 0.9


@dataclass(frozen=True)
class Relaxation:
    """Outcome of :func:`run_subgradient`.

    Attributes
    ----------
    status : str
        ``"agreed"`` (all components returned the same keep), ``"settled"`` (the node's bound fell to
        the incumbent), ``"infeasible"`` (a component has no feasible structure in this node),
        ``"iterations"`` (iterations given are used up) or ``"budget"`` (global budget or time limit).
    keep : numpy.ndarray or None
        The agreed keep.
    value : float
        Σ_c best_given_c of the agreed keep (-inf otherwise).
    sizes : numpy.ndarray
        int (K,): number of kept tokens of every component at the last iteration.
    bound : float
        Smallest L(u, λ) of this run.
    """

    status: str
    keep: np.ndarray | None
    value: float
    sizes: np.ndarray
    bound: float


def fixing_vector(node: Node, big: float) -> np.ndarray:
    """φ: -inf on the positions fixed to 0, ``big`` on those fixed to 1, 0 elsewhere."""
    phi = np.zeros(node.drop.shape[0])
    phi[node.force] = big
    phi[node.drop] = -np.inf
    return phi


def run_subgradient(problem: DecompositionProblem, tracker: Tracker, node: Node, iterations: int,
                    big: float) -> Relaxation:
    """Run at most ``iterations`` subgradient iterations on ``node`` (updating it in place).

    Parameters
    ----------
    problem : DecompositionProblem
        The components.
    tracker : Tracker
        Incumbent, global bound, trace and budget (updated).
    node : Node
        The node: fixings, multipliers ``u`` (updated), λ, exact-length flag, step schedule.
    iterations : int
        Maximal number of iterations of this run.
    big : float
        The constant M that forces the positions of ``node.force``.

    Returns
    -------
    Relaxation
    """
    K, n = problem.K, problem.n
    phi = fixing_vector(node, big)
    lam = node.lam
    shift = 0.0 if lam is None else -lam / K
    lam_m = 0.0 if lam is None else lam * problem.length  # type: ignore[operator]
    force = node.force
    nforce = int(np.count_nonzero(force))
    schedule = node.schedule
    best = math.inf
    sizes = np.zeros(K, dtype=np.int64)
    keeps = np.zeros((K, n), dtype=bool)
    if node.votes.shape != (n,):
        node.votes = np.zeros(n)
    for _ in range(iterations):
        if tracker.exhausted():
            return Relaxation("budget", None, -math.inf, sizes, best)
        total = lam_m
        for c in range(K):
            w = node.u[c] + phi + shift
            try:
                sol = problem.solve(c, w, node.exact)
            except SolverError:
                node.bound = -math.inf
                tracker.record(0.0, 0, lam, node.ident, "infeasible")
                return Relaxation("infeasible", None, -math.inf, sizes, -math.inf)
            z = np.asarray(sol.keep, dtype=bool)
            keeps[c] = z
            kept = int(np.count_nonzero(z))
            sizes[c] = kept
            own = problem.scores(z)[c]
            missing = nforce - int(np.count_nonzero(z & force))
            recomputed = own + float(node.u[c][z].sum()) + shift * kept - big * missing
            from_solver = float(sol.score) - big * nforce
            total += max(recomputed, from_solver)
        best = min(best, total)
        node.bound = min(node.bound, total)
        first = keeps[0]
        disagree = (keeps != first).any(axis=0)
        d = int(np.count_nonzero(disagree))
        tracker.offer(first)
        if d:
            seen = [first.tobytes()]
            for c in range(1, K):
                key = keeps[c].tobytes()
                if key not in seen:
                    seen.append(key)
                    tracker.offer(keeps[c])
        node.votes = VOTE_DECAY * node.votes + disagree
        node.last_keeps = keeps.copy()
        if d == 0:
            value = float(problem.scores(first).sum())
            in_node = nforce == int(np.count_nonzero(first & force))
            if in_node and (lam is None or sizes[0] == problem.length) and math.isfinite(value):
                node.bound = min(node.bound, value)  # the relaxation is exact: the node's optimum is value
            tracker.record(0.0, 0, lam, node.ident)
            return Relaxation("agreed", first.copy(), value, sizes.copy(), best)
        if tracker.settled(node.bound):
            tracker.record(0.0, d, lam, node.ident)
            return Relaxation("settled", None, -math.inf, sizes.copy(), best)
        g = keeps - keeps.mean(axis=0)
        norm2 = float((g * g).sum())
        schedule.calibrate(total, tracker.primal, norm2, n)
        alpha = schedule.step(total, tracker.primal, norm2)
        node.u -= alpha * g
        tracker.record(alpha, d, lam, node.ident)
    return Relaxation("iterations", None, -math.inf, sizes.copy(), best)


def offer_exact_length(problem: DecompositionProblem, tracker: Tracker, node: Node, big: float) -> bool:
    """Offer, as primal candidates, the exact-length solutions of the components that have such a DP
    under the node's current multipliers (used when the length is relaxed by λ).

    Returns False when one of them has no structure of that length avoiding the node's dropped
    positions (then the node is infeasible), True otherwise.
    """
    if problem.length is None:
        return True
    phi = fixing_vector(node, big)
    shift = 0.0 if node.lam is None else -node.lam / problem.K
    for c in range(problem.K):
        if not problem.exact_capable[c]:
            continue
        try:
            sol = problem.solve(c, node.u[c] + phi + shift, exact=True)
        except SolverError:
            return False
        tracker.offer(np.asarray(sol.keep, dtype=bool))
    return True
