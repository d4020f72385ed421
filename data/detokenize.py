"""Detokenisation of a compression of raw text."""

from __future__ import annotations

import numpy as np

from data.sentence import Sentence


def detokenize(sentence: Sentence, keep: np.ndarray) -> str:
    """Join the kept tokens with the spacing of the original text.

    Between two kept tokens a < b a space is written when the original text had whitespace anywhere
    between them (after any of the tokens a .. b-1), so dropping ``,`` from ``Hello , world`` gives
    ``Hello world``, not ``Helloworld``.
    """
    kept = np.flatnonzero(np.asarray(keep, dtype=bool))
    parts: list[str] = []
    for t, k in enumerate(kept):
        if t:
            prev = kept[t - 1]
            if any(sentence.spaces[prev:k]):
                parts.append(" ")
        parts.append(sentence.tokens[k])
    return "".join(parts)
