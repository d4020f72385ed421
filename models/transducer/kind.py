"""The ``transducer`` component kind: the T3 tree transducer (Cohn & Lapata 2009) over the sentence's
phrase-structure tree; weighting scales every hyperedge's rule score."""

from dualdecomp.models.registry import ComponentKind
from dualdecomp.models.transducer.model import load_t3
from dualdecomp.solvers.transducer import Transducer

KIND = ComponentKind(
    name="transducer",
    load=load_t3,
    unit=lambda t3, sentence: t3.component(sentence),
    weighted=lambda unit, weight: Transducer.from_hypergraph(unit.hypergraph, weight * unit.edge_score),
)
