"""Bisection on a monotone rate: where ``rate(c)`` crosses a target (length calibration of a model's bias).

Used by the bigram and dependency trainers and by the joint configurations' length calibration
(:mod:`dualdecomp.models.length_bias.calibration`): the compression rate of a decoder whose per-token
bias is c is monotone in c.
"""

from __future__ import annotations

from collections.abc import Callable


def bisect_rate(rate: Callable[[float], float], target: float, increasing: bool = True,
                start: float = 1.0, iterations: int = 25, bound: float = 1e4) -> float:
    """The point where a monotone ``rate(c)`` crosses ``target``.

    Parameters
    ----------
    rate : callable
        Monotone in c (non-decreasing if ``increasing``, else non-increasing).
    target : float
        The rate wanted.
    increasing : bool
        Direction of the monotonicity.
    start : float
        Initial bracket ``[-start, start]``, doubled until it brackets the target (up to ``bound``).
    iterations : int
        Bisection steps.
    bound : float
        Largest magnitude tried.

    Returns
    -------
    float
        The midpoint of the final bracket.
    """
    sign = 1.0 if increasing else -1.0

    def below(c: float) -> bool:  # the rate at c is on the low side of the target
        return sign * (rate(c) - target) < 0

    lo, hi = -start, start
    while not below(lo) and lo > -bound:
        lo *= 2
    while below(hi) and hi < bound:
        hi *= 2
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if below(mid):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
