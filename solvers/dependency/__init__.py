"""Contract 3: skip-bigram dependency parsing that drops words (``solve``, ``Dependency``)."""

from dualdecomp.solvers.dependency.siblings import SiblingScores, as_sibling_scores
from dualdecomp.solvers.dependency.solver import Dependency, count_derivations, hyperedges, parse, solve

__all__ = ["Dependency", "SiblingScores", "as_sibling_scores", "count_derivations", "hyperedges", "parse",
           "solve"]
