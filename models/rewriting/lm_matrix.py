"""The target bigram LM of one sentence's chart: KenLM log10 probabilities over the words its hyperedges
can write (``RewriteHypergraph.vocab``) plus the sentence boundaries.

Each entry is ``log10 p(w_j | w_i)`` with a one-word context, read from the KenLM model through the
project's LM wrapper (``dualdecomp.models.lm``: normalisation, unknown words as ``<rare>``); a trigram
model gives its backed-off bigram probabilities here. The chart adds ``lm_weight`` × this matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import kenlm
import numpy as np

from dualdecomp.models.lm import LanguageModel

__all__ = ["bigram_matrix", "scaled_lm", "unigram_scorer"]


def bigram_matrix(lm: LanguageModel, vocab: Sequence[str]) -> np.ndarray:
    """The (V + 2, V + 2) bigram matrix of a chart's vocabulary.

    Parameters
    ----------
    lm : LanguageModel
    vocab : sequence of str
        The V words (raw tokens) a chart can write; row/column V is ``<s>``, V + 1 is ``</s>``.

    Returns
    -------
    numpy.ndarray
        ``[i, j] = log10 p(vocab[j] | vocab[i])``, row V the sentence start, column V + 1 the end;
        ``-inf`` into ``<s>`` and out of ``</s>``.
    """
    V = len(vocab)
    words = lm.lm_words(vocab)
    model = lm.kenlm_model
    out = np.full((V + 2, V + 2), -np.inf, dtype=np.float64)
    targets = [*words, "</s>"]
    cols = [*range(V), V + 1]
    scratch = kenlm.State()
    begin = kenlm.State()
    model.BeginSentenceWrite(begin)
    states = [lm.context_key((w,)) for w in words]
    for i, state in enumerate([*states, begin]):
        row = out[i]
        for j, target in zip(cols, targets, strict=True):
            row[j] = model.BaseScore(state, target, scratch)
    return out


def unigram_scorer(lm: LanguageModel) -> Callable[[str], float]:
    """``log10 p(w)`` of a raw token with no context (the LM's unigram, through the project's wrapper:
    unknown words as ``<rare>``), cached per token: how common a word is, the rewriting model's
    simplicity features (:mod:`~dualdecomp.models.rewriting.features`)."""
    model = lm.kenlm_model
    cache: dict[str, float] = {}

    def score(token: str) -> float:
        hit = cache.get(token)
        if hit is None:
            hit = cache[token] = float(model.score(lm.lm_word(token), bos=False, eos=False))
        return hit

    return score


def scaled_lm(matrix: np.ndarray | None, weight: float) -> np.ndarray | None:
    """``weight`` × a bigram matrix, its forbidden (−inf) entries kept forbidden whatever the sign of
    ``weight`` (None for no matrix or weight 0)."""
    if matrix is None or weight == 0.0:
        return None
    finite = np.isfinite(matrix)
    return np.where(finite, weight * np.where(finite, matrix, 0.0), -np.inf)
