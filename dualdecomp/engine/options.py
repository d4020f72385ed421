"""Options of the dual-decomposition engine (``dualdecomp.decode(..., **options)``) and the :class:`Option`
rule every decoder's option schema is made of (:mod:`dualdecomp.engine.decoders`)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from dualdecomp.core.errors import InputError

STEP_RULES = ("rush-collins", "polyak", "constant", "1/k")
LENGTH_METHODS = ("bisection", "exact", "auto")


@dataclass(frozen=True)
class Option:
    """One key of a decoder's options: its default and the values it accepts.

    Attributes
    ----------
    name : str
        The key (in ``config.json``'s ``"decode"`` block, or a keyword of the decoder).
    default : object
        The value when the key is not given.
    accepts : str
        The values it accepts, in words (``"a positive integer"``, ``"one of cbc, highs"``): the error
        messages and the documentation say it.
    valid : callable
        ``valid(value) -> bool``.
    """

    name: str
    default: Any
    accepts: str
    valid: Callable[[Any], bool]

    def message(self, value: Any, label: str = "option ") -> str:
        """``"<label><name> must be <accepts>, got <value>"`` (``;`` before ``got`` after choices)."""
        sep = ";" if self.accepts.startswith("one of ") else ","
        return f"{label}{self.name} must be {self.accepts}{sep} got {value!r}"


def positive_int(value: Any) -> bool:
    """An integer >= 1 (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, numbers.Integral) and value >= 1


def positive_finite_or_none(value: Any) -> bool:
    """None, or a real number > 0 and finite (not a bool)."""
    return value is None or (not isinstance(value, bool) and isinstance(value, numbers.Real)
                             and math.isfinite(value) and value > 0)


def one_of(choices: tuple[str, ...]) -> Callable[[Any], bool]:
    """``valid`` of an option taking one of ``choices``."""
    return lambda value: isinstance(value, str) and value in choices


_POSITIVE_INT = "a positive integer"
_POSITIVE_OR_NONE = "a positive finite number or None"


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
        for option in DD_OPTIONS:
            value = getattr(self, option.name)
            if not option.valid(value):
                raise InputError(option.message(value))


_DEFAULTS = {f.name: f.default for f in fields(DecodeOptions)}

DD_OPTIONS: tuple[Option, ...] = (
    *(Option(name, _DEFAULTS[name], _POSITIVE_INT, positive_int)
      for name in ("max_iterations", "tighten_after", "node_iterations", "lambda_iterations",
                   "bisection_steps", "polyak_patience")),
    Option("step", _DEFAULTS["step"], f"one of {', '.join(STEP_RULES)}", one_of(STEP_RULES)),
    Option("length_method", _DEFAULTS["length_method"], f"one of {', '.join(LENGTH_METHODS)}",
           one_of(LENGTH_METHODS)),
    Option("step_size", _DEFAULTS["step_size"], _POSITIVE_OR_NONE, positive_finite_or_none),
    Option("time_limit", _DEFAULTS["time_limit"], _POSITIVE_OR_NONE, positive_finite_or_none),
    Option("tighten", _DEFAULTS["tighten"], "a bool", lambda value: isinstance(value, bool)),
)
"""The schema of the ``dd`` decoder's options: every field of :class:`DecodeOptions` with its default and
the values it accepts, in the order they are checked."""


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
