"""Contract 3: skip-bigram dependency parsing that drops words (``solve``, ``Dependency``)."""

from dualdecomp.solvers.dependency.siblings import SiblingScores
from dualdecomp.solvers.dependency.solver import Dependency, count_derivations, hyperedges, parse, solve

__all__ = ["Dependency", "SiblingScores", "count_derivations", "hyperedges", "parse", "solve"]
