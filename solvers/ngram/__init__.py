"""Contract 2: the trigram path solver and its component (``solve``, ``Trigram``)."""

from dualdecomp.solvers.ngram.solver import LengthTable, Trigram, dp_updates, solve, solve_lengths

__all__ = ["LengthTable", "Trigram", "dp_updates", "solve", "solve_lengths"]
