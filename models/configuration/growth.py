"""A configuration's measured growth with the sentence length, and the default length limit it gives.

``benchmarks/memory.py --fit --write`` measures each shipped configuration at several lengths and stores
the result as the ``"growth"`` object of its JSON (a configuration with a ``"base"`` inherits its base's)::

    "growth": {"time": {"exponent": 2.2, "coefficient": 1.1e-6},
               "memory": {"exponent": 1.9, "coefficient": 0.0021},
               "baseline_mib": 350.0, "lengths": [100, 200, 400, 800], "exceeded_at": null,
               "budget": {"seconds": 60, "mib": 2048},
               "measured": "2026-11-25, 2-core Intel Xeon ... (CPU time)", "max_tokens": 1700}

``time``: the CPU seconds of one free-length compression (potentials and decoding, parsing excluded) are
``coefficient · n^exponent``. ``memory``: the peak resident memory it adds over the loaded process
(``baseline_mib``: model, spaCy, compiled kernels) is ``coefficient · n^exponent`` MiB; null when the
increment stayed too small to fit (it then never binds within the measured range). ``lengths``: the
lengths measured; ``exceeded_at``: the smallest one whose run passed the budget (stopped by its CPU or
memory cap), if any.

The rule (:func:`limit_from_growth`): the limit is the largest n with
``time(n) <= budget.seconds`` and ``baseline_mib + memory(n) <= budget.mib``, also at most
:data:`EXTRAPOLATION` times the longest length measured and below ``exceeded_at``; it is rounded down to two
significant digits (1,234 → 1,200; below 100 it is kept) and is never below the configuration's
``fallback.max_tokens`` (the length up to which it promises its full decoding). ``max_tokens`` is that
limit, written out for the reader; a value that disagrees with the rule is refused on load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dualdecomp.core.errors import ModelError

EXTRAPOLATION = 2.0
"""The limit is at most this many times the longest length measured (a fit is not trusted further)."""


@dataclass(frozen=True)
class PowerLaw:
    """``coefficient · n^exponent``."""

    exponent: float
    coefficient: float

    def at(self, n: float) -> float:
        """The value at length ``n``."""
        return self.coefficient * n ** self.exponent

    def reaches(self, value: float) -> float:
        """The length at which the law reaches ``value`` (``inf`` for an exponent of 0)."""
        if value <= 0:
            return 0.0
        if self.exponent == 0:
            return math.inf if self.coefficient <= value else 0.0
        return (value / self.coefficient) ** (1.0 / self.exponent)

    def to_json(self) -> dict:
        """The JSON object."""
        return {"exponent": self.exponent, "coefficient": self.coefficient}


@dataclass(frozen=True)
class Growth:
    """A configuration's measured growth (see the module docstring)."""

    time: PowerLaw
    memory: PowerLaw | None
    baseline_mib: float
    lengths: tuple[int, ...]
    budget_seconds: float
    budget_mib: float
    max_tokens: int
    exceeded_at: int | None = None
    measured: str = ""

    def to_json(self) -> dict:
        """The ``"growth"`` object."""
        return {"time": self.time.to_json(), "memory": None if self.memory is None else self.memory.to_json(),
                "baseline_mib": self.baseline_mib, "lengths": list(self.lengths),
                "exceeded_at": self.exceeded_at,
                "budget": {"seconds": self.budget_seconds, "mib": self.budget_mib},
                "measured": self.measured, "max_tokens": self.max_tokens}


def round_down(n: int) -> int:
    """``n`` rounded down to two significant digits (kept below 100): 1,234 → 1,200, 87 → 87."""
    if n < 100:
        return n
    step = 10 ** (len(str(n)) - 2)
    return n // step * step


def limit_from_growth(time: PowerLaw, memory: PowerLaw | None, baseline_mib: float, lengths: tuple[int, ...],
                      budget_seconds: float, budget_mib: float, exceeded_at: int | None = None,
                      floor: int = 1) -> int:
    """The default length limit of a configuration with this growth (the rule of the module docstring).

    Parameters
    ----------
    time, memory : PowerLaw
        CPU seconds and peak MiB over the baseline against the length (``memory`` None: not binding).
    baseline_mib : float
        Resident memory of the loaded process.
    lengths : tuple of int
        The lengths measured (the limit is at most :data:`EXTRAPOLATION` times the longest).
    budget_seconds, budget_mib : float
        The budget: 60 s and 2,048 MiB for the shipped configurations.
    exceeded_at : int, optional
        The smallest measured length whose run passed the budget (the limit is below it).
    floor : int
        The smallest limit allowed (the configuration's ``fallback.max_tokens``).

    Returns
    -------
    int
    """
    n = min(time.reaches(budget_seconds), EXTRAPOLATION * max(lengths))
    if memory is not None:
        n = min(n, memory.reaches(budget_mib - baseline_mib))
    if exceeded_at is not None:
        n = min(n, exceeded_at - 1)
    return max(round_down(max(int(math.floor(n)), 1)), floor, 1)


def _number(value: object, where: str, what: str, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or (value <= 0 if positive else value < 0):
        raise ModelError(f"{where}: growth.{what} must be a {'positive' if positive else 'non-negative'} "
                         f"finite number, not {value!r}")
    return float(value)


def _law(value: object, where: str, what: str) -> PowerLaw:
    if not isinstance(value, dict) or set(value) != {"exponent", "coefficient"}:
        raise ModelError(f"{where}: growth.{what} must be an object with exponent and coefficient")
    return PowerLaw(_number(value["exponent"], where, f"{what}.exponent", positive=False),
                    _number(value["coefficient"], where, f"{what}.coefficient"))


def _count(value: object, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ModelError(f"{where}: growth.{what} must be a positive integer, not {value!r}")
    return value


_KEYS = {"time", "memory", "baseline_mib", "lengths", "exceeded_at", "budget", "measured", "max_tokens"}


def parse_growth(spec: object, where: str, floor: int = 1) -> Growth:
    """Validate a ``"growth"`` object (:class:`~dualdecomp.core.errors.ModelError` naming ``where``).

    ``floor`` is the configuration's ``fallback.max_tokens`` (1 without one): ``max_tokens`` must be what
    :func:`limit_from_growth` gives.
    """
    if not isinstance(spec, dict):
        raise ModelError(f"{where}: growth must be an object")
    unknown = sorted(set(spec) - _KEYS)
    missing = sorted({"time", "baseline_mib", "lengths", "budget", "max_tokens"} - set(spec))
    if unknown or missing:
        raise ModelError(f"{where}: growth has unknown key(s) {unknown} or lacks {missing}")
    time = _law(spec["time"], where, "time")
    memory = None if spec.get("memory") is None else _law(spec["memory"], where, "memory")
    baseline = _number(spec["baseline_mib"], where, "baseline_mib", positive=False)
    lengths = spec["lengths"]
    if not isinstance(lengths, list) or not lengths:
        raise ModelError(f"{where}: growth.lengths must be a non-empty list of lengths")
    lengths = tuple(_count(n, where, "lengths[]") for n in lengths)
    exceeded = spec.get("exceeded_at")
    exceeded = None if exceeded is None else _count(exceeded, where, "exceeded_at")
    budget = spec["budget"]
    if not isinstance(budget, dict) or set(budget) != {"seconds", "mib"}:
        raise ModelError(f"{where}: growth.budget must be an object with seconds and mib")
    seconds = _number(budget["seconds"], where, "budget.seconds")
    mib = _number(budget["mib"], where, "budget.mib")
    measured = spec.get("measured", "")
    if not isinstance(measured, str):
        raise ModelError(f"{where}: growth.measured must be a string")
    stated = _count(spec["max_tokens"], where, "max_tokens")
    rule = limit_from_growth(time, memory, baseline, lengths, seconds, mib, exceeded, floor)
    if stated != rule:
        raise ModelError(f"{where}: growth.max_tokens {stated} disagrees with its measurements (the rule of "
                         f"dualdecomp.models.configuration.growth gives {rule}): rerun benchmarks/memory.py "
                         "--fit --write")
    return Growth(time, memory, baseline, lengths, seconds, mib, stated, exceeded, measured)
