"""The dependency compression model: hashed arc, keep and sibling weights for the skip-bigram parsers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualdecomp.data.sentence import Sentence
from dualdecomp.models.dependency.features import DependencyFeatures, dependency_features


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

    def features(self, sentence: Sentence) -> DependencyFeatures:
        """The hashed features of ``sentence`` under this model's settings."""
        return dependency_features(sentence, hash_bits=self.hash_bits, lexical=self.lexical,
                                   second_order=self.second_order)

    def potentials(self, sentence: Sentence) -> tuple[np.ndarray, np.ndarray | None]:
        """The potentials of contract 3 for ``sentence``.

        Parameters
        ----------
        sentence : Sentence
            The parsed source sentence.

        Returns
        -------
        A : numpy.ndarray
            (n+1, n+1) arc scores (keep scores folded in); feed to
            ``dualdecomp.solvers.dependency.solver.solve(A, S=S)``
            or ``dualdecomp.solvers.dependency.solver.Dependency(A, S=S)``.
        S : numpy.ndarray or None
            (n+1, n+1, n+1) sibling scores for a second-order model, else None.
        """
        return self.features(sentence).potentials(self.weights)
