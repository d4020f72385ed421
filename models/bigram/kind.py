"""The ``bigram`` component kind: McDonald's (2006) bigram model (contract 1)."""

from dualdecomp.models.bigram.store import load_model
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.bigram import Bigram

KIND = ComponentKind(
    name="bigram",
    load=load_model,
    unit=lambda model, sentence: model.potentials(sentence),
    weighted=lambda B, weight: Bigram(weight * B),
)
