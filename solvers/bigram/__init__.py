"""Contract 1: the bigram path solver and its component (``solve``, ``Bigram``)."""

from dualdecomp.solvers.bigram.kbest import kbest
from dualdecomp.solvers.bigram.solver import (
    Bigram,
    LengthTable,
    PathComponent,
    dp_updates,
    solve,
    solve_lengths,
    token_potentials,
)

__all__ = ["Bigram", "LengthTable", "PathComponent", "dp_updates", "kbest", "solve", "solve_lengths",
           "token_potentials"]
