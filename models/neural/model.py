"""The neural scorer: per-token keep log-odds from a transformer encoder and a linear head.

For a sentence of n tokens, :meth:`NeuralScorer.keep_logits` gives ``s_k = h_k · w + b`` where ``h_k`` is
the encoder's last hidden state at token k's first word piece (:mod:`~dualdecomp.models.neural.pieces`).
``s_k`` is the model's log-odds that token k is kept, so at weight 1 the free-length decision of the
scorer alone keeps exactly the tokens it thinks more likely kept than not. As a component (kind
``neural``) these are unary scores: :class:`~dualdecomp.solvers.unary.Unary` decodes them exactly, alone
or jointly with the other components.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.neural.pair_head import PairHead, bigram_potentials
from dualdecomp.models.neural.pieces import Pieces

__all__ = ["NeuralScorer"]


class NeuralScorer:
    """Encoder + word pieces + keep head.

    Parameters
    ----------
    encoder : Encoder or OnnxEncoder
        Word-piece ids (T,) → last hidden states (T, hidden).
    pieces : Pieces
    head_weight : numpy.ndarray
        float32 (hidden,).
    head_bias : float
    meta : mapping, optional
        The training record.
    pair : PairHead, optional
        Scores of adjacent kept tokens (:mod:`~dualdecomp.models.neural.pair_head`): with it the
        component is a bigram model (:meth:`bigram_potentials`).
    unary_scale : float, default 1
        With a pair head: the keep log-odds enter the bigram potentials times this, so one encoder pass
        gives a chain model whose keep head weighs more (or less) than its pair head was trained with.
    """

    def __init__(self, encoder: Callable[[np.ndarray], np.ndarray], pieces: Pieces, head_weight: np.ndarray,
                 head_bias: float, meta: Mapping[str, Any] | None = None,
                 pair: PairHead | None = None, unary_scale: float = 1.0) -> None:
        self.encoder = encoder
        self.pieces = pieces
        self.head_weight = np.asarray(head_weight, dtype=np.float32)
        self.head_bias = float(head_bias)
        self.meta = dict(meta or {})
        self.pair = pair
        self.unary_scale = float(unary_scale)

    def hidden_states(self, words: Sequence[str]) -> np.ndarray:
        """The encoder's last hidden state at each token's first piece, float32 (n, hidden)."""
        if len(words) == 0:
            raise InputError("cannot score an empty sentence")
        out = np.empty((len(words), self.head_weight.shape[0]), dtype=np.float32)
        for window in self.pieces.windows(words):
            out[window.start:window.start + len(window.first)] = self.encoder(window.ids)[window.first]
        return out

    def _keep_head(self, hidden: np.ndarray) -> np.ndarray:
        """The keep head's log-odds (float64) of first-piece states."""
        return (hidden @ self.head_weight + self.head_bias).astype(np.float64)

    def keep_logits(self, words: Sequence[str]) -> np.ndarray:
        """The keep log-odds of each token.

        Parameters
        ----------
        words : sequence of str
            The tokens (at least one).

        Returns
        -------
        numpy.ndarray
            float64 (n,).
        """
        return self._keep_head(self.hidden_states(words))

    def potentials(self, sentence: Sentence) -> np.ndarray:
        """The potentials of a parsed sentence: its tokens' keep log-odds (n,), or with a pair head the
        (n+2, n+2) bigram potentials (:meth:`bigram_potentials`)."""
        if self.pair is None:
            return self.keep_logits(sentence.tokens)
        return self.bigram_potentials(sentence.tokens)

    def bigram_potentials(self, words: Sequence[str]) -> np.ndarray:
        """The chain model's (n+2, n+2) bigram potentials (needs a pair head), its keep log-odds times
        :attr:`unary_scale`."""
        if self.pair is None:
            raise InputError("this neural scorer has no pair head")
        hidden = self.hidden_states(words)
        unary = self._keep_head(hidden)
        if self.unary_scale != 1:
            unary = self.unary_scale * unary
        return bigram_potentials(self.pair, hidden, unary)
