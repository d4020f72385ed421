"""Contract 1: the bigram path solver and its component (``solve``, ``Bigram``)."""

from dualdecomp.solvers.bigram.solver import Bigram, LengthTable, dp_updates, solve, solve_lengths

__all__ = ["Bigram", "LengthTable", "dp_updates", "solve", "solve_lengths"]
