"""Detokenisation of a compression of raw text."""

from __future__ import annotations

import numpy as np

from dualdecomp.data.sentence import Sentence


def detokenise(sentence: Sentence, keep: np.ndarray) -> str:
    """Join the kept tokens with the spacing of the original text.

    A kept token b is preceded by a space exactly when it was in the original text (token b-1 was
    followed by whitespace): a token keeps its own attachment to the left. Dropping ``,`` from
    ``Hello, world`` gives ``Hello world``, and dropping ``, world`` from ``Hello, world!`` gives
    ``Hello!``.
    """
    kept = np.flatnonzero(np.asarray(keep, dtype=bool))
    parts: list[str] = []
    for t, k in enumerate(kept):
        if t:
            if sentence.spaces[k - 1]:
                parts.append(" ")
        parts.append(sentence.tokens[k])
    return "".join(parts)
