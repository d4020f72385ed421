"""The ``lm`` component kind: a KenLM trigram language model as a trigram path (contract 2)."""

from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.ngram import Trigram

KIND = ComponentKind(
    name="lm",
    load=load_lm,
    unit=lambda lm, sentence: lm.trigram_tensor(sentence.tokens),
    weighted=lambda T, weight: Trigram(weight * T),
)
