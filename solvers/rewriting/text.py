"""The text of a rewrite: which target words attach to the left, the detokenised output and its length.

A rewrite's words are not the source's tokens (substituted, inserted and reordered words have no
original spacing), so the output is detokenised by one rule, :func:`joins_left`: a word is written
after the previous one with a single space, except a word that *attaches to the left* (closing
punctuation such as ``,`` ``.`` ``;`` ``:`` ``!`` ``?`` ``)`` ``%``, and the clitics ``'s`` ``n't``
``'re`` ``'ve`` ``'ll`` ``'d`` ``'m``), which is written with no space before it. The first word never
has a space before it.

The character count of a rewrite (:func:`text_chars`) is the length of that detokenised text: the sum
of the word lengths plus one per word after the first that does not attach to the left. The space
before a word depends only on that word, which is what makes a character budget exact in the chart of
:mod:`dualdecomp.solvers.rewriting.chart` (its state carries the count of the yield so far; appending
a yield adds its own count plus :func:`space_before` of its first word).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CLITICS", "CLOSING", "detokenise_words", "joins_left", "sentence_case", "space_before",
           "text_chars"]

CLOSING = frozenset(",.;:!?)]}%…")
"""Characters of closing punctuation: a word made only of these attaches to the left."""

CLITICS = frozenset({"'s", "n't", "'re", "'ve", "'ll", "'d", "'m", "'", "''",
                     "’s", "n’t", "’re", "’ve", "’ll", "’d", "’m", "’"})
"""Clitic and closing-quote tokens (lower-cased) that attach to the left."""


def joins_left(word: str) -> bool:
    """Whether ``word`` is written with no space before it (module docstring).

    Parameters
    ----------
    word : str
        A token.

    Returns
    -------
    bool
        True for closing punctuation (a non-empty word made only of :data:`CLOSING` characters) and for
        the clitics of :data:`CLITICS` (case-insensitive).
    """
    if not word:
        return False
    return word.lower() in CLITICS or all(ch in CLOSING for ch in word)


def space_before(word: str) -> int:
    """1 when a space separates ``word`` from a previous word, else 0 (``not joins_left(word)``)."""
    return 0 if joins_left(word) else 1


def detokenise_words(words: Sequence[str]) -> str:
    """The words joined by the rule of :func:`joins_left`.

    Parameters
    ----------
    words : sequence of str

    Returns
    -------
    str
        e.g. ``["He", "did", "n't", "go", "."]`` → ``"He didn't go."``.
    """
    parts: list[str] = []
    for t, w in enumerate(words):
        if t and not joins_left(w):
            parts.append(" ")
        parts.append(w)
    return "".join(parts)


def text_chars(words: Sequence[str]) -> int:
    """Length of :func:`detokenise_words` of ``words``, computed without building the text."""
    return sum(len(w) for w in words) + sum(space_before(w) for w in list(words)[1:])


def sentence_case(rewrite: str, source: str) -> str:
    """``rewrite`` with its first letter upper-cased when the source's first letter is upper-case.

    The rewriting model and its LM read lower-cased words, so a rewrite may start with a lower-cased
    copy (``the`` for ``The``) or a moved word; the output takes the source's sentence case. The length
    does not change, so a character budget still holds.
    """
    first = next((ch for ch in source if ch.isalpha()), "")
    if not first.isupper():
        return rewrite
    for i, ch in enumerate(rewrite):
        if ch.isalpha():
            return rewrite[:i] + ch.upper() + rewrite[i + 1:] if ch.islower() else rewrite
    return rewrite
