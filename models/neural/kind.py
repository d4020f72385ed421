"""The ``neural`` component kind: a transformer scorer's per-token keep log-odds, decoded exactly.

The unit potentials of a sentence are the scorer's keep log-odds (:class:`NeuralScorer`); at weight ``w``
the component is :class:`~dualdecomp.solvers.unary.Unary` over ``w`` × those scores (exact at free and
fixed length, with ``to_ilp``), combined with the other components by dual decomposition.
"""

from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.unary import Unary

KIND = ComponentKind(
    name="neural",
    load=load_neural_model,
    unit=lambda model, sentence: model.potentials(sentence),
    weighted=lambda scores, weight: Unary(weight * scores, name="neural"),
)
