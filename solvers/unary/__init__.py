"""Per-token keep scores with optional hard keep constraints, and its exact component (``Unary``)."""

from dualdecomp.solvers.unary.solver import Unary

__all__ = ["Unary"]
