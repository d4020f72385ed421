"""The neural scorer (a transformer encoder and a keep head): its public surface for other components."""

from dualdecomp.models.neural.model import NeuralScorer
from dualdecomp.models.neural.store import load_neural_model

__all__ = ["NeuralScorer", "load_neural_model"]
