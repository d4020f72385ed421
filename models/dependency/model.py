"""The dependency compression model: hashed arc, keep and sibling weights for the skip-bigram parsers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.dependency.features import DependencyFeatures, dependency_features
from dualdecomp.solvers.dependency import SiblingScores


@dataclass(frozen=True)
class DependencyModel:
    """Weights of the dependency model and how its features are made.

    Attributes
    ----------
    weights : numpy.ndarray of float64, shape (2**hash_bits,)
        Feature weights (index 0, the padding feature, is always 0).
    hash_bits : int
        log2 of the weight-vector size.
    second_order : bool
        Whether the model has sibling features (and :meth:`potentials` returns S).
    lexical : bool
        Whether word-identity features are used.
    meta : dict
        Training metadata (corpora, epochs, dev scores, gold-tree statistics), saved with the model.
    """

    weights: np.ndarray
    hash_bits: int = 22
    second_order: bool = False
    lexical: bool = True
    meta: dict = field(default_factory=dict)

    def features(self, sentence: Sentence, deadline: Deadline | None = None) -> DependencyFeatures:
        """The hashed features of ``sentence`` under this model's settings (``deadline`` checked between
        feature templates)."""
        return dependency_features(sentence, hash_bits=self.hash_bits, lexical=self.lexical,
                                   second_order=self.second_order, deadline=deadline)

    def potentials(self, sentence: Sentence,
                   deadline: Deadline | None = None) -> tuple[np.ndarray, SiblingScores | None]:
        """The potentials of contract 3 for ``sentence``.

        Parameters
        ----------
        sentence : Sentence
            The parsed source sentence.
        deadline : Deadline, optional
            The sentence's deadline, checked inside the feature scoring (a
            :class:`~dualdecomp.core.deadline.TimeLimitError` once passed).

        Returns
        -------
        A : numpy.ndarray
            (n+1, n+1) arc scores (keep scores folded in); feed to
            ``dualdecomp.solvers.dependency.solver.solve(A, S=S)``
            or ``dualdecomp.solvers.dependency.solver.Dependency(A, S=S)``.
        S : SiblingScores or None
            The (n+1, n+1, n+1) sibling scores of a second-order model in factored form
            (``dualdecomp.solvers.dependency.siblings.SiblingScores``, O(n²) memory), else None.
        """
        features = self.features(sentence, deadline)
        if deadline is not None:
            deadline.check("computing the dependency potentials (weights of the features)")
        return features.potentials(self.weights)
