"""The McDonald (2006) bigram compression model: hashed feature weights (+ an optional KenLM LM)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualdecomp.data.sentence import Sentence
from dualdecomp.models.bigram.features import BigramFeatures, bigram_features


@dataclass(frozen=True)
class BigramModel:
    """Weights of the bigram model and how its features are made.

    Attributes
    ----------
    weights : numpy.ndarray of float64, shape (2**hash_bits,)
        Feature weights (index 0, the padding feature, is always 0).
    hash_bits : int
        log2 of the weight-vector size.
    lexical : bool
        Whether word-identity features are used.
    lm : dualdecomp.models.lm.model.LanguageModel or None
        The language model of the LM feature, or None for a model trained without it.
    meta : dict
        Training metadata (corpora, epochs, dev scores), saved with the model.
    """

    weights: np.ndarray
    hash_bits: int = 22
    lexical: bool = True
    lm: object | None = None
    meta: dict = field(default_factory=dict)

    def features(self, sentence: Sentence) -> BigramFeatures:
        """The hashed features of ``sentence`` (with the LM feature when the model has an LM)."""
        lm_matrix = self.lm.bigram_matrix(sentence.tokens) if self.lm is not None else None
        return bigram_features(sentence, lm_matrix, hash_bits=self.hash_bits, lexical=self.lexical)

    def potentials(self, sentence: Sentence) -> np.ndarray:
        """The bigram potentials B (n+2, n+2) of contract 1 for ``sentence``."""
        return self.features(sentence).potentials(self.weights)
