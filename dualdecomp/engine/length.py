r"""Exact length by bisection on the Lagrange multiplier λ of Σ keep = m.

Relation to the Lagrangian dual. With D(λ) = max_z [F(z) − λ|z|] (F = Σ_c f_c over agreeing keeps; in
practice D(λ) is itself the agreement dual min_u L(u, λ) − λm of :mod:`dualdecomp.engine.subgradient`), the
Lagrangian dual of the length constraint is

    min_λ h(λ),   h(λ) = D(λ) + λ m ≥ max_{|z| = m} F(z).

h is convex and piecewise linear: every keep z contributes the line F(z) − λ(|z| − m) and h is their
upper envelope, with slope m − |z(λ)| at λ (z(λ) the relaxed optimum). Bisection on the sign of that
subgradient is therefore a bisection for the minimiser λ* of h: |z(λ)| > m means λ < λ*, |z(λ)| < m
means λ > λ*. Each value L(u, λ) + λm computed on the way is a valid upper bound, so the bound reported
is the minimum over every λ tried.

The pivot. Once the bracket [λ_lo, λ_hi] is known (relaxed optima with more than m tokens at λ_lo,
fewer at λ_hi) and exact relaxed optima z_lo (|z_lo| > m) and z_hi (|z_hi| < m) are known on either
side, the next λ is the point where their lines cross, λ_x = (F(z_lo) − F(z_hi)) / (|z_lo| − |z_hi|),
when it lies inside the bracket. If the relaxed optimum at λ_x lies on those lines, λ_x = λ* is the
exact minimiser of h (h ≥ max of the two lines + λm, whose minimum is at λ_x): when that optimum keeps m
tokens it is certified optimal (complementary slackness: F(z) = h(λ*)); otherwise **no λ gives exactly
m tokens** — a duality gap — and h(λ*) is the Lagrangian bound. (If the lines cross exactly at an end
already evaluated, that end is λ* and the same conclusion holds.) If the optimum at λ_x lies above both
lines it replaces one end of the bracket; there are finitely many lines, so this ends. Otherwise (no
exact optimum on one side) the next λ is the midpoint of the bracket: plain bisection. When the inner
dual decomposition does not agree at some λ the sign is read from the mean length of the components'
keeps (after three such λ the bisection stops and tightening takes over). Before a bracket exists, λ
moves in the needed direction to where the last exact line meets the line of the best keep of length m
known so far (if that moves it), else by a doubling step (at most 12).

Gap or not, the best keep with exactly m tokens seen so far is the answer; components with an
exact-length DP provide one at every λ (their exact-length solution under the current multipliers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.solution import Solution
from dualdecomp.engine.options import DecodeOptions
from dualdecomp.engine.problem import DecompositionProblem
from dualdecomp.engine.subgradient import offer_exact_length, run_subgradient
from dualdecomp.engine.tracker import Node, Tracker

MAX_EXPANSIONS = 12  # doubling steps before a bracket: the length may be out of reach (or infeasible)
MAX_UNAGREED = 3  # values of λ whose inner decomposition does not agree before the bisection gives up


@dataclass(frozen=True)
class Line:
    """A relaxed solution at λ: D(λ') ≥ value − λ'·size for every λ' when ``value`` is known."""

    lam: float
    size: float
    value: float | None
    keep: np.ndarray | None


@dataclass(frozen=True)
class Bisection:
    """Outcome of :func:`bisect`.

    Attributes
    ----------
    status : str
        ``"settled"`` (the node's bound reached the incumbent: certified for the node), ``"gap"`` (λ* found
        and no relaxed optimum keeps m tokens), ``"unconverged"`` (the inner decomposition did not agree,
        or the bracket became inconsistent or too narrow), ``"steps"`` (``bisection_steps`` used up),
        ``"budget"`` or ``"infeasible"`` (a component has no structure at all, or none of the length).
    lam : float
        The last λ (λ* for a gap).
    """

    status: str
    lam: float


def search_exact_multiplier(solve: Callable[[float], Solution], length: int,
                            max_solves: int = 60) -> tuple[Solution, float, list[Solution]]:
    """The multiplier search above for one *exact* solver of ``max_z F(z) − λ|z|`` (no decomposition).

    Doubling steps bracket the length, then the crossing points of the bracketing optima's lines
    ``F(z) − λ|z|`` are tried (:func:`_cross`). Stops at an optimum of the right length, on a duality gap
    (the optimum at a crossing lies on both lines, or the lines cross at an evaluated end), or after
    ``max_solves`` calls. Used where a model trains against one exact solver (the dependency parser).

    Parameters
    ----------
    solve : callable
        ``solve(lam) -> Solution``: an exact optimum of ``F(z) − lam·|z|`` (``.score`` includes the
        ``−lam·|z|`` term; ``.length`` is |z|).
    length : int
        Required number of kept tokens.
    max_solves : int
        Cap on ``solve`` calls.

    Returns
    -------
    solution : Solution
        The optimum of the right length if found, else the one of the closest length (ties: longer).
    lam : float
        The multiplier it was found at.
    seen : list of Solution
        Every optimum computed (``len(seen)`` calls).
    """
    seen: list[tuple[float, Solution]] = []

    def run(lam: float) -> tuple[Line, Solution]:
        sol = solve(lam)
        seen.append((lam, sol))
        return Line(lam, float(sol.length), sol.score + lam * sol.length, None), sol  # own score F(z)

    def done(lam: float, sol: Solution) -> tuple[Solution, float, list[Solution]]:
        return sol, lam, [x for _, x in seen]

    line, sol = run(0.0)
    lo = line if sol.length > length else None  # optimum longer than wanted: λ too small
    hi = line if sol.length < length else None
    if lo is None and hi is None:
        return done(0.0, sol)
    step = 1.0
    while (lo is None or hi is None) and len(seen) < max_solves:
        lam = (lo.lam + step) if hi is None else (hi.lam - step)
        step *= 2.0
        line, sol = run(lam)
        if sol.length == length:
            return done(lam, sol)
        if sol.length > length:
            lo = line
        else:
            hi = line
    while lo is not None and hi is not None and len(seen) < max_solves:
        lam = _cross(lo, hi)
        if not lo.lam < lam < hi.lam:
            break  # the lines cross at an evaluated end: that end is the dual minimiser (a gap)
        line, sol = run(lam)
        if sol.length == length:
            return done(lam, sol)
        if sol.score <= lo.value - lam * lo.size + _tol(sol.score):
            break  # the optimum at the crossing lies on both lines: no λ gives the length (a gap)
        if sol.length > length:
            lo = line
        else:
            hi = line
    lam, sol = min(seen, key=lambda ls: (abs(ls[1].length - length), -ls[1].length))
    return done(lam, sol)


def _tol(x: float) -> float:
    return 1e-9 * max(1.0, abs(x))


def _cross(a: Line, b: Line) -> float:
    """λ where the lines of two exact solutions of different sizes meet."""
    return (a.value - b.value) / (a.size - b.size)  # type: ignore[operator]  # exact lines: value set


def bisect(problem: DecompositionProblem, tracker: Tracker, node: Node, options: DecodeOptions,
           big: float, iterations: int | None = None) -> Bisection:
    """Search λ so that the relaxed problem keeps exactly ``problem.length`` tokens (updates ``node``).

    Parameters
    ----------
    problem : DecompositionProblem
        With ``length`` set.
    tracker : Tracker
        Incumbent, bound, trace, budget.
    node : Node
        The node (its ``lam`` is the starting λ, 0 at the root).
    options : DecodeOptions
        ``lambda_iterations`` (inner iterations per λ) and ``bisection_steps``.
    big : float
        The forcing constant M of the node's fixings.
    iterations : int, optional
        Cap on the iterations of this bisection (status ``"budget"`` when reached).

    Returns
    -------
    Bisection
    """
    m = problem.length
    assert m is not None
    n = problem.n
    lam = 0.0 if node.lam is None else float(node.lam)
    lo_lam, hi_lam = -math.inf, math.inf  # bracket: sizes > m at lo_lam, < m at hi_lam
    lo: Line | None = None  # exact line of the largest λ with size > m
    hi: Line | None = None  # exact line of the smallest λ with size < m
    pivot: float | None = None  # λ chosen as the crossing of the lo and hi lines
    expand: float | None = None
    expansions = 0
    unagreed = 0
    stop = math.inf if iterations is None else tracker.iterations + iterations
    for _ in range(options.bisection_steps):
        if tracker.iterations >= stop:
            return Bisection("budget", lam)
        node.lam = lam
        node.schedule.forget_reference()
        inner = int(min(options.lambda_iterations, stop - tracker.iterations))
        out = run_subgradient(problem, tracker, node, inner, big)
        if out.status == "infeasible":
            return Bisection("infeasible", lam)
        if not offer_exact_length(problem, tracker, node, big):
            node.bound = -math.inf
            return Bisection("infeasible", lam)
        if tracker.settled(node.bound):
            return Bisection("settled", lam)
        if out.status == "budget" or tracker.exhausted():
            return Bisection("budget", lam)
        if out.status == "agreed":
            line = Line(lam, float(out.sizes[0]), out.value, out.keep)
        else:
            unagreed += 1
            if unagreed >= MAX_UNAGREED:
                return Bisection("unconverged", lam)
            line = Line(lam, float(out.sizes.mean()), None, None)
        if line.size == m:  # agreed with m tokens would have settled: here the components disagree
            return Bisection("unconverged", lam)
        if pivot is not None and line.value is not None and lo is not None and hi is not None:
            # λ = pivot is the crossing of the lo and hi lines: is the relaxed optimum on them?
            on_lines = lo.value - pivot * lo.size  # type: ignore[operator]
            if line.value - pivot * line.size <= on_lines + _tol(on_lines):
                return _gap(tracker, node, lo, hi, pivot, m)
        pivot = None
        if line.size > m:
            lo_lam = max(lo_lam, lam)
            if line.value is not None and (lo is None or lam >= lo.lam):
                lo = line
        else:
            hi_lam = min(hi_lam, lam)
            if line.value is not None and (hi is None or lam <= hi.lam):
                hi = line
        if expand is None:
            expand = max(1e-3, (abs(out.bound) + 1.0) / (n + 1))
        if lo_lam > -math.inf and hi_lam < math.inf:
            if lo_lam >= hi_lam or hi_lam - lo_lam <= 1e-12 * max(1.0, abs(lo_lam), abs(hi_lam)):
                return Bisection("unconverged", lam)
            if lo is not None and hi is not None:
                x = _cross(lo, hi)
                if lo_lam + _tol(lo_lam) < x < hi_lam - _tol(hi_lam):
                    pivot = lam = x
                    continue
                for end in (lo, hi):  # the lines cross at an end already evaluated: that end is λ*
                    if abs(x - end.lam) <= _tol(end.lam):
                        return _gap(tracker, node, lo, hi, end.lam, m)
            lam = 0.5 * (lo_lam + hi_lam)
            continue
        if expansions >= MAX_EXPANSIONS:
            return Bisection("unconverged", lam)
        upward = hi_lam == math.inf
        lam = _expand(lo if upward else hi, lam, m, tracker.primal, expand, upward)
        expand *= 2.0
        expansions += 1
    return Bisection("steps", lam)


def _gap(tracker: Tracker, node: Node, lo: Line, hi: Line, lam_star: float, m: int) -> Bisection:
    """Record a length gap at λ* (the crossing of the exact lines of ``lo`` and ``hi``)."""
    node.gap_positions = lo.keep != hi.keep  # type: ignore[operator]
    node.lam = lam_star
    tracker.length_gap = True
    tracker.annotate(f"length-gap: no multiplier gives exactly {m} tokens (lambda*={lam_star:.6g}: "
                     f"{int(lo.size)} or {int(hi.size)} tokens)")
    return Bisection("gap", lam_star)


def _expand(line: Line | None, lam: float, m: int, primal: float, expand: float, upward: bool) -> float:
    """Next λ before a bracket exists: where ``line`` meets the incumbent's line, else a doubling step."""
    if line is not None and line.value is not None and math.isfinite(primal) and line.size != m:
        x = (line.value - primal) / (line.size - m)
        if upward and x > lam + _tol(lam):
            return x
        if not upward and x < lam - _tol(lam):
            return x
    return lam + expand if upward else lam - expand
