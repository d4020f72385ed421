"""Typed results of the decoders (DESIGN.md §2, contract 5)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CERTIFICATE_RTOL = 1e-9


@dataclass(frozen=True)
class TraceStep:
    """One iteration of a decoder: bounds, step size, disagreements and length multiplier."""

    iteration: int
    dual: float
    primal: float
    step: float
    disagreements: int
    lam: float | None = None


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

    @property
    def length(self) -> int:
        """Number of kept tokens."""
        return int(np.count_nonzero(self.keep))


def is_certified(primal: float, dual: float, rtol: float = CERTIFICATE_RTOL) -> bool:
    """Whether ``primal`` equals ``dual`` within ``rtol`` relative (both finite)."""
    if not (np.isfinite(primal) and np.isfinite(dual)):
        return False
    return abs(dual - primal) <= rtol * max(1.0, abs(dual), abs(primal))
