"""Contract 2: the trigram path solver and its component (``solve``, ``Trigram``)."""

from dualdecomp.solvers.ngram.packed import PackedTrigram
from dualdecomp.solvers.ngram.solver import LengthTable, Trigram, dp_updates, solve, solve_lengths

__all__ = ["LengthTable", "PackedTrigram", "Trigram", "dp_updates", "solve", "solve_lengths"]
