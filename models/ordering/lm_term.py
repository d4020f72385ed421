"""A KenLM n-gram language model as one more term of the ordering score, exact under concatenation.

The score of an edge becomes ``F(e) + weight * LM(e)``, where LM(e) is the log10 probability of the
edge's word string read from a null context (a phrase may end up anywhere in the sentence) minus the
unigram log10 probabilities of its words — for a goal edge, the probability of the whole sentence with
``<s>`` and ``</s>`` minus the same unigrams. Every output of one bag holds the same words, so the unigram
sum is one constant per input: it changes no ranking of complete outputs, and it keeps the scaled
scores of small and large partial edges comparable (a leaf's LM term is 0, and a concatenation adds how
much likelier the words are in context than alone), which the best-first agenda needs.

Concatenating phrases L and R changes only the scores of R's first ``order - 1`` words (they now see L's
last words): :meth:`OrderingLM.join` adds exactly that difference, and a goal edge adds the sentence start
and end. So the sum over any derivation is the weight times (KenLM score of the output sentence − the
unigram scores of its words) — tested against KenLM's own per-word scores.

Everything these terms read from an edge (its first and last two words, for a trigram) is part of the
exact DP's signature (``dualdecomp.models.ordering.paper.exact.signature``), so the exact decoder stays exact
with the LM; LMs of order above 3 are refused for that reason. The LM is a decoding-time term: the
trainer learns the syntax model alone, and the weight is chosen on dev (docs/word-ordering.md).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from copy import copy

from dualdecomp.core.errors import InputError
from dualdecomp.models.lm import LanguageModel

MAX_ORDER = 3
"""Highest n-gram order whose terms the exact DP's signature covers (first/last two words)."""


class OrderingLM:
    """The weighted LM terms of edges (see the module docstring).

    Parameters
    ----------
    lm : LanguageModel
    weight : float
        Multiplies every log10 term (0 < weight).

    Raises
    ------
    InputError
        An LM of order below 2 or above :data:`MAX_ORDER`, or a weight that is not a positive finite number.
    """

    def __init__(self, lm: LanguageModel, weight: float) -> None:
        if not 2 <= lm.order <= MAX_ORDER:
            raise InputError(f"word ordering takes an LM of order 2 to {MAX_ORDER} (got {lm.order}): the "
                             "exact decoder's signature covers the first and last two words")
        if not 0 < weight < float("inf"):
            raise InputError(f"the LM weight must be a positive number (got {weight})")
        self.lm = lm
        self.weight = float(weight)
        self.k = lm.order - 1
        self._lm_words: dict[str, str] = {}
        self._cache: dict[tuple, float] = {}

    def with_weight(self, weight: float) -> OrderingLM:
        """The same LM terms at another weight, sharing this one's caches (they hold unweighted scores).

        Raises
        ------
        InputError
            A weight that is not a positive finite number.
        """
        if not 0 < weight < float("inf"):
            raise InputError(f"the LM weight must be a positive number (got {weight})")
        other = copy(self)
        other.weight = float(weight)
        return other

    def words(self, ctx_words: Sequence[str], indices: Sequence[int]) -> tuple[str, ...]:
        """The LM words of some input words."""
        out = []
        for k in indices:
            token = ctx_words[k]
            word = self._lm_words.get(token)
            if word is None:
                word = self._lm_words[token] = self.lm.lm_word(token)
            out.append(word)
        return tuple(out)

    def context_key(self, ctx_words: Sequence[str], indices: Sequence[int]) -> Hashable:
        """What a later word's term reads of the word string ``indices`` (input indices) before it: the
        LM's minimised state of its last ``k`` words (``LanguageModel.context_key``)."""
        return self.lm.context_key(self.words(ctx_words, tuple(indices)[-self.k:]))

    def _logprob(self, words: tuple[str, ...], context: tuple[str, ...] | None, eos: bool = False) -> float:
        key = (words, context, eos)
        value = self._cache.get(key)
        if value is None:
            if len(self._cache) > 1_000_000:
                self._cache.clear()
            value = self._cache[key] = self.lm.phrase_logprob(words, context, eos)
        return value

    def phrase(self, ctx_words: Sequence[str], indices: Sequence[int], sentence: bool = False) -> float:
        """The weighted log10 probability of some input words read from a null context, or, with
        ``sentence``, as a whole sentence between ``<s>`` and ``</s>``."""
        words = self.words(ctx_words, indices)
        if sentence:
            return self.weight * self._logprob(words, ("<s>",), eos=True)
        return self.weight * self._logprob(words, None)

    def leaf(self, ctx_words: Sequence[str], k: int, goal: bool) -> float:
        """The term of the one-word edge of word ``k`` (a goal edge when the input has one word)."""
        return self.weight * self._ends(self.words(ctx_words, (k,))) if goal else 0.0

    def join(self, ctx_words: Sequence[str], left: Sequence[int], right: Sequence[int], goal: bool) -> float:
        """The term added by concatenating the word strings ``left`` then ``right`` (input indices)."""
        k = self.k
        first = self.words(ctx_words, right[:k])
        delta = self._logprob(first, self.words(ctx_words, left[-k:])) - self._logprob(first, None)
        return self.weight * delta + (self.ends(ctx_words, (*left, *right)) if goal else 0.0)

    def ends(self, ctx_words: Sequence[str], indices: Sequence[int]) -> float:
        """The term that makes the word string ``indices`` a whole sentence (``<s>`` before, ``</s>``
        after)."""
        k = self.k
        idx = tuple(indices)
        ends = (*idx[:k], *idx[-k:]) if len(idx) > 2 * k else idx
        return self.weight * self._ends(self.words(ctx_words, ends))

    def _ends(self, words: tuple[str, ...]) -> float:
        """Sentence start and end of a full sentence given by its first and last ``k`` words (or all)."""
        k = self.k
        start = words[:k]
        before_end = words[-k:] if len(words) > k else ("<s>", *words)
        return (self._logprob(start, ("<s>",)) - self._logprob(start, None)
                + self._logprob((), before_end, eos=True))
