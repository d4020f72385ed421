"""The compression pipeline: a model, a parsed sentence and a length request → a certified compression."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from data.detokenize import detokenize
from data.sentence import Sentence
from dualdecomp.decode import decode
from dualdecomp.errors import InputError
from dualdecomp.result import Result
from models.bigram_model import BigramModel
from models.store import load_model
from solvers.bigram import Bigram


@dataclass(frozen=True)
class Compression:
    """A compression of one sentence and its certificate.

    Attributes
    ----------
    sentence : Sentence
        The parsed source sentence.
    result : Result
        The decoder's result (keep, primal, dual, gap, certified, ...).
    """

    sentence: Sentence
    result: Result

    @property
    def keep(self) -> np.ndarray:
        """bool (n,): kept tokens."""
        return self.result.keep

    @property
    def tokens(self) -> list[str]:
        """The kept tokens."""
        return [t for t, k in zip(self.sentence.tokens, self.result.keep, strict=True) if k]

    @property
    def compression(self) -> str:
        """The kept tokens separated by single spaces."""
        return " ".join(self.tokens)

    @property
    def text(self) -> str:
        """The kept tokens with the original spacing (detokenised)."""
        return detokenize(self.sentence, self.result.keep)

    def to_json(self) -> dict:
        """The fields of one output line of ``dualdecomp compress`` (DESIGN.md §3)."""
        r = self.result
        return {"compression": self.compression, "keep": [int(k) for k in r.keep],
                "primal": _num(r.primal), "dual": _num(r.dual), "gap": _num(r.gap),
                "certified": bool(r.certified), "seconds": round(r.seconds, 6)}


def _num(x: float) -> float | None:
    """A JSON-safe float (None for infinities and NaN)."""
    return float(x) if np.isfinite(x) else None


class Compressor:
    """Compress parsed sentences with a trained model.

    Parameters
    ----------
    model : BigramModel or path, optional
        A loaded model or a model directory; the embedded default model when None.
    """

    def __init__(self, model: BigramModel | str | os.PathLike[str] | None = None) -> None:
        self.model = model if isinstance(model, BigramModel) else load_model(model)

    def components(self, sentence: Sentence) -> list:
        """The decoding components of ``sentence`` under the model."""
        return [Bigram(self.model.potentials(sentence))]

    def compress(self, sentence: Sentence, length: int | None = None) -> Compression:
        """Compress one sentence, optionally to exactly ``length`` tokens.

        Raises
        ------
        InputError
            When ``length`` is negative or larger than the sentence.
        """
        if length is not None and not 0 <= length <= sentence.n:
            raise InputError(f"requested length {length} is impossible for a sentence of {sentence.n} tokens")
        if sentence.n == 0:
            raise InputError("empty sentence: nothing to compress")
        return Compression(sentence, decode(self.components(sentence), length=length))

    def compress_text(self, text: str, length: int | None = None, ratio: float | None = None) -> Compression:
        """Tokenise and parse raw text with spaCy and compress it.

        Parameters
        ----------
        text : str
            Raw text (one sentence or a short passage, compressed as one unit).
        length : int, optional
            Exact number of kept tokens.
        ratio : float, optional
            Keep round(ratio · n) tokens (0 < ratio <= 1).
        """
        from data.parsing import parse_text
        from dualdecomp.lengths import parse_length

        sentence = parse_text(text)
        lengths = parse_length(length=length, ratio=ratio).for_sentence(sentence.n, 0)
        return self.compress(sentence, lengths[0])

    def compress_tokens(self, tokens: Sequence[str], length: int | None = None) -> Compression:
        """Parse pre-tokenised text (never re-tokenised) and compress it."""
        from data.parsing import parse_tokens

        if not tokens:
            raise InputError("empty sentence: nothing to compress")
        return self.compress(parse_tokens([list(tokens)])[0], length)
