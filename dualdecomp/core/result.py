"""Typed results of the decoders (docs/architecture.md §2, contract 5)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CERTIFICATE_RTOL = 1e-9


@dataclass(frozen=True)
class TraceStep:
    """One iteration of a decoder: bounds, step size, disagreements and length multiplier.

    Attributes
    ----------
    iteration : int
        1-based count of subgradient iterations (component-solve rounds) so far.
    dual : float
        Best upper bound proved so far on the optimum of the whole problem (non-increasing).
    primal : float
        Best objective of a feasible keep found so far (non-decreasing; -inf while none is known).
    step : float
        Step size used after this iteration (0 when no update was made).
    disagreements : int
        Number of positions on which the components' keeps differ in this iteration.
    lam : float or None
        Length multiplier of this iteration (None without a length constraint).
    node : int
        Branch-and-bound node of this iteration (0 = root).
    note : str
        Event of this iteration, e.g. ``"branch"``, ``"length-gap"``, ``"exact-length"``.
    """

    iteration: int
    dual: float
    primal: float
    step: float
    disagreements: int
    lam: float | None = None
    node: int = 0
    note: str = ""

    def to_json(self) -> dict:
        """A JSON-safe dict (infinities and NaN become None; ``node``/``note`` only when set)."""
        row = {"iteration": int(self.iteration), "dual": json_float(self.dual),
               "primal": json_float(self.primal), "step": json_float(self.step),
               "disagreements": int(self.disagreements),
               "lam": None if self.lam is None else json_float(self.lam)}
        if self.node:
            row["node"] = int(self.node)
        if self.note:
            row["note"] = self.note
        return row


@dataclass(frozen=True)
class Result:
    """A decoded compression with its certificate.

    Attributes
    ----------
    keep : numpy.ndarray
        bool (n,): the compression.
    primal : float
        Objective of ``keep`` under all components.
    dual : float
        Best upper bound proved on the optimum.
    gap : float
        ``dual - primal`` (>= 0).
    certified : bool
        True only when primal == dual within 1e-9 relative: ``keep`` is proved optimal.
    iterations : int
        Number of iterations (1 for a single exact solve).
    lam : float or None
        The length multiplier, when a length constraint was relaxed.
    trace : tuple of TraceStep
        Per-iteration record.
    seconds : float
        Wall-clock time of the decode.
    length_gap : bool
        True when the bisection on the length multiplier showed a duality gap: no multiplier makes the
        relaxed problem keep exactly ``length`` tokens.
    notes : tuple of str
        Human-readable events of the decode (method used, gaps, tightening, limits reached).
    """

    keep: np.ndarray
    primal: float
    dual: float
    gap: float
    certified: bool
    iterations: int = 1
    lam: float | None = None
    trace: tuple[TraceStep, ...] = field(default=())
    seconds: float = 0.0
    length_gap: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def length(self) -> int:
        """Number of kept tokens."""
        return int(np.count_nonzero(self.keep))


def json_float(x: float) -> float | None:
    """A JSON-safe float: None for infinities and NaN."""
    x = float(x)
    return x if np.isfinite(x) else None


def is_certified(primal: float, dual: float, rtol: float = CERTIFICATE_RTOL) -> bool:
    """Whether ``primal`` equals ``dual`` within ``rtol`` relative (both finite)."""
    if not (np.isfinite(primal) and np.isfinite(dual)):
        return False
    return abs(dual - primal) <= rtol * max(1.0, abs(dual), abs(primal))
