"""The ``neural`` component kind: a transformer scorer's potentials, decoded exactly.

Without a pair head the potentials of a sentence are the scorer's keep log-odds
(:class:`~dualdecomp.models.neural.model.NeuralScorer`) and at weight ``w`` the component is
:class:`~dualdecomp.solvers.unary.Unary` over ``w`` × those scores; with a pair head
(:mod:`~dualdecomp.models.neural.pair_head`) they are the chain model's bigram potentials and the component
is :class:`~dualdecomp.solvers.bigram.Bigram` over ``w`` × them. Both are exact at free and fixed length,
with ``to_ilp``, and combine with the other components by dual decomposition.
"""

import numpy as np

from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.unary import Unary


def weighted_neural(scores: np.ndarray, weight: float) -> Unary | Bigram:
    """The component of ``weight`` × the scorer's potentials (unary (n,) or bigram (n+2, n+2))."""
    if scores.ndim == 2:
        return Bigram(weight * scores, name="neural")
    return Unary(weight * scores, name="neural")


KIND = ComponentKind(
    name="neural",
    load=load_neural_model,
    unit=lambda model, sentence: model.potentials(sentence),
    weighted=weighted_neural,
)
