"""Step-size rules of the subgradient method.

Every rule returns the step α_k of iteration k for the update u ← u − α_k g_k, given the dual value L_k
of the iterate, the best primal value P and ||g_k||²:

* ``"rush-collins"``: α = c / (t + 1), t = number of past iterations whose dual value rose above the
  previous one (Rush & Collins 2012, as used by Yao et al. 2014): the step only shrinks when the dual
  moves in the wrong direction.
* ``"polyak"``: α = θ (L_k − P) / ||g_k||², the best primal P standing in for the unknown optimum; θ
  starts at c (default 1) and is halved after ``patience`` iterations without a better dual value.
  While no primal is known it falls back to the Rush–Collins rule.
* ``"constant"``: α = c.
* ``"1/k"``: α = c / k.
"""

from __future__ import annotations

import copy
import math


class StepSchedule:
    """Mutable state of one step rule (copied into branch-and-bound children).

    Parameters
    ----------
    rule : str
        One of ``"rush-collins"``, ``"polyak"``, ``"constant"``, ``"1/k"``.
    scale : float or None
        The constant c (θ for Polyak); None until :meth:`calibrate` sets it.
    patience : int
        Polyak: iterations without a better dual before θ is halved.
    """

    def __init__(self, rule: str, scale: float | None, patience: int = 10) -> None:
        self.rule = rule
        self.scale = scale
        self.patience = patience
        self.theta = 1.0 if scale is None else float(scale)
        self.increases = 0
        self.k = 0
        self.previous: float | None = None
        self.best = math.inf
        self.stale = 0

    def copy(self) -> StepSchedule:
        """An independent copy (for a child node)."""
        return copy.copy(self)

    def calibrate(self, dual: float, primal: float, norm2: float, n: int) -> None:
        """Choose the constant c from the first iteration when none was given.

        c = (L − P) / ||g||² (the Polyak step) when a primal is known, else |L| / (n ||g||²); for the
        Polyak rule c only serves the fallback (θ starts at 1).
        """
        if self.scale is not None:
            return
        g2 = max(norm2, 1e-12)
        if math.isfinite(primal) and dual > primal:
            c = (dual - primal) / g2
        else:
            c = max(abs(dual), 1.0) / (max(n, 1) * g2)
        self.scale = c if math.isfinite(c) and c > 0 else 1.0

    def forget_reference(self) -> None:
        """Forget the previous dual value (the objective changed, e.g. a new length multiplier)."""
        self.previous = None
        self.best = math.inf
        self.stale = 0

    def step(self, dual: float, primal: float, norm2: float) -> float:
        """The step of the current iteration (dual value ``dual``, best primal ``primal``)."""
        c = 1.0 if self.scale is None else self.scale
        self.k += 1
        if self.previous is not None and dual > self.previous:
            self.increases += 1
        self.previous = dual
        if dual < self.best:
            self.best = dual
            self.stale = 0
        else:
            self.stale += 1
        if self.rule == "constant":
            return c
        if self.rule == "1/k":
            return c / self.k
        if self.rule == "polyak" and math.isfinite(primal) and dual > primal and norm2 > 0:
            if self.stale >= self.patience:
                self.theta /= 2.0
                self.stale = 0
            return self.theta * (dual - primal) / norm2
        return c / (self.increases + 1)
