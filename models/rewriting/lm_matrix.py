"""The target bigram LM of one sentence's chart: KenLM log10 probabilities over the words its hyperedges
can write (``RewriteHypergraph.vocab``) plus the sentence boundaries.

Each entry is ``log10 p(w_j | w_i)`` with a one-word context, read from the KenLM model through the
project's LM wrapper (``dualdecomp.models.lm``: normalisation, unknown words as ``<rare>``); a trigram
model gives its backed-off bigram probabilities here. The chart adds ``lm_weight`` × this matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import kenlm
import numpy as np

from dualdecomp.models.lm import LanguageModel

__all__ = ["bigram_matrix", "scaled_lm"]


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


def scaled_lm(matrix: np.ndarray | None, weight: float) -> np.ndarray | None:
    """``weight`` × a bigram matrix, its forbidden (−inf) entries kept forbidden whatever the sign of
    ``weight`` (None for no matrix or weight 0)."""
    if matrix is None or weight == 0.0:
        return None
    finite = np.isfinite(matrix)
    return np.where(finite, weight * np.where(finite, matrix, 0.0), -np.inf)
