"""Options of the dual-decomposition engine (``dualdecomp.decode(..., **options)``)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields

from dualdecomp.core.errors import InputError

STEP_RULES = ("rush-collins", "polyak", "constant", "1/k")
LENGTH_METHODS = ("bisection", "exact", "auto")


@dataclass(frozen=True)
class DecodeOptions:
    """Configuration of :func:`dualdecomp.decode` for several components (or a relaxed length).

    Attributes
    ----------
    max_iterations : int
        Total budget of subgradient iterations (one iteration = one solve of every component), over all
        length multipliers and branch-and-bound nodes.
    step : str
        Step rule: ``"rush-collins"`` (c / (t + 1), t = number of past iterations where the dual rose;
        Yao et al. 2014 after Rush & Collins 2012), ``"polyak"`` (θ (L - P) / ||g||² with P the best
        primal, θ halved after ``polyak_patience`` iterations without a better dual), ``"constant"`` (c)
        or ``"1/k"`` (c / k).
    step_size : float or None
        The constant c (θ for Polyak). None: chosen from the first iteration (the Polyak step
        (L - P) / ||g||² when a primal is known, else |L| / (n ||g||²)).
    time_limit : float or None
        Wall-clock limit in seconds (checked between iterations); None for no limit.
    tighten : bool
        When the relaxation gives no certificate, move the length constraint into the components with an
        exact-length DP and then branch and bound on the positions the components disagree on.
    tighten_after : int
        Iterations of the root relaxation before tightening starts.
    node_iterations : int
        Iterations per branch-and-bound node before it is branched again.
    length_method : str
        ``"bisection"`` (relax the length with a multiplier λ found by bisection; default), ``"exact"``
        (start directly with the length inside the components that support ``solve(u, length=m)``) or
        ``"auto"`` (exact when some component supports it, else bisection).
    lambda_iterations : int
        Iterations of the inner dual decomposition for one value of λ during the bisection.
    bisection_steps : int
        Maximal number of λ values tried per bisection.
    polyak_patience : int
        Polyak rule: iterations without a better dual before θ is halved.
    """

    max_iterations: int = 1000
    step: str = "rush-collins"
    step_size: float | None = None
    time_limit: float | None = None
    tighten: bool = True
    tighten_after: int = 50
    node_iterations: int = 30
    length_method: str = "bisection"
    lambda_iterations: int = 50
    bisection_steps: int = 40
    polyak_patience: int = 10

    def __post_init__(self) -> None:
        for name in ("max_iterations", "tighten_after", "node_iterations", "lambda_iterations",
                     "bisection_steps", "polyak_patience"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise InputError(f"option {name} must be a positive integer, got {value!r}")
        if self.step not in STEP_RULES:
            raise InputError(f"option step must be one of {', '.join(STEP_RULES)}; got {self.step!r}")
        if self.length_method not in LENGTH_METHODS:
            raise InputError(f"option length_method must be one of {', '.join(LENGTH_METHODS)}; "
                             f"got {self.length_method!r}")
        for name in ("step_size", "time_limit"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
                    or value <= 0:
                raise InputError(f"option {name} must be a positive finite number or None, got {value!r}")
        if not isinstance(self.tighten, bool):
            raise InputError(f"option tighten must be a bool, got {self.tighten!r}")


def make_options(**options: object) -> DecodeOptions:
    """Validate keyword options into a :class:`DecodeOptions` (unknown names are an ``InputError``).

    Parameters
    ----------
    **options
        Any field of :class:`DecodeOptions`.

    Returns
    -------
    DecodeOptions

    Raises
    ------
    InputError
        Unknown option or invalid value.
    """
    known = {f.name for f in fields(DecodeOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"unknown decode option(s): {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")
    return DecodeOptions(**options)  # type: ignore[arg-type]
