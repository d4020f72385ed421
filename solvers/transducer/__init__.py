"""The STSG tree transducer (Cohn & Lapata): grammar, exact chart and component (``Transducer``)."""

from dualdecomp.solvers.transducer.solver import Derivation, Hypergraph, Transducer, build_hypergraph

__all__ = ["Derivation", "Hypergraph", "Transducer", "build_hypergraph"]
