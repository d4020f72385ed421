"""The text of a rewrite: which target words attach to the left, the detokenised output and its length.

A rewrite's words are not the source's tokens (substituted, inserted and reordered words have no
original spacing), so the output is detokenised by one pairwise rule, :func:`space_between`: a word is
written after the previous one with a single space, except when the word *attaches to the left*
(:func:`joins_left`: closing punctuation such as ``,`` ``.`` ``;`` ``:`` ``!`` ``?`` ``)`` ``%``, the
clitics ``'s`` ``n't`` ``'re`` ``'ve`` ``'ll`` ``'d`` ``'m``, and the hyphen ``-``) or the previous word
*attaches to the right* (:func:`joins_right`: opening brackets ``(`` ``[`` ``{``, currency signs ``$``
``£`` ``€`` ``¥``, and the hyphen ``-``): then no space. So ``well - known`` is written ``well-known``,
``( 1819 )`` ``(1819)`` and ``US $ 750`` ``US $750``. The first word never has a space before it.
(The hyphen rule follows the corpus: in the rewriting sources a hyphen between words is unspaced 324
times and spaced 43 times. Straight double quotes are left spaced: whether ``"`` opens or closes
depends on how many came before, which no pairwise rule sees.)

The character count of a rewrite (:func:`text_chars`) is the length of that detokenised text: the sum
of the word lengths plus :func:`space_between` of every adjacent pair. The space depends only on the two
adjacent words, which is what makes a character budget exact in the chart of
:mod:`dualdecomp.solvers.rewriting.chart`: its state carries the count of a yield and its first and last
words (for the LM), so appending a yield adds its own count plus the space between the last word so far
and the yield's first word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["CLITICS", "CLOSING", "OPENING", "SENTENCE_BREAKS", "detokenise_words", "function_words",
           "joins_left", "joins_right", "rewrite_text", "rule_word_case", "sentence_case", "space_between",
           "text_chars"]

CLOSING = frozenset(",.;:!?)]}%…")
"""Characters of closing punctuation: a word made only of these attaches to the left."""

CLITICS = frozenset({"'s", "n't", "'re", "'ve", "'ll", "'d", "'m", "'", "''",
                     "’s", "n’t", "’re", "’ve", "’ll", "’d", "’m", "’"})
"""Clitic and closing-quote tokens (lower-cased) that attach to the left."""

OPENING = frozenset({"(", "[", "{", "$", "£", "€", "¥", "-"})
"""Tokens that attach to the right (no space after them): opening brackets, currency signs, the hyphen."""

HYPHENS = frozenset({"-"})
"""Tokens that attach on both sides (also in :data:`OPENING`)."""

SENTENCE_BREAKS = frozenset({".", "!", "?", ":", ";", '"', "``", "''", "(", "“"})
"""Tokens after which a capital may start a sentence or a quotation (:func:`rule_word_case`)."""


def joins_left(word: str) -> bool:
    """Whether ``word`` is written with no space before it (module docstring).

    Parameters
    ----------
    word : str
        A token.

    Returns
    -------
    bool
        True for closing punctuation (a non-empty word made only of :data:`CLOSING` characters), for
        the clitics of :data:`CLITICS` (case-insensitive) and for the hyphen.
    """
    if not word:
        return False
    return word in HYPHENS or word.lower() in CLITICS or all(ch in CLOSING for ch in word)


def joins_right(word: str) -> bool:
    """Whether the word after ``word`` is written with no space before it: ``word`` is one of
    :data:`OPENING` (an opening bracket, a currency sign, the hyphen)."""
    return word in OPENING


def space_between(previous: str, word: str) -> int:
    """1 when a space separates ``word`` from the ``previous`` word, else 0 (module docstring)."""
    return 0 if joins_left(word) or joins_right(previous) else 1


def detokenise_words(words: Sequence[str]) -> str:
    """The words joined by the rule of :func:`joins_left`.

    Parameters
    ----------
    words : sequence of str

    Returns
    -------
    str
        e.g. ``["He", "did", "n't", "go", "."]`` → ``"He didn't go."``, ``["a", "well", "-", "known",
        "(", "1819", ")"]`` → ``"a well-known (1819)"``.
    """
    parts: list[str] = []
    for t, w in enumerate(words):
        if t and space_between(words[t - 1], w):
            parts.append(" ")
        parts.append(w)
    return "".join(parts)


def text_chars(words: Sequence[str]) -> int:
    """Length of :func:`detokenise_words` of ``words``, computed without building the text."""
    words = list(words)
    return sum(len(w) for w in words) + sum(space_between(a, b) for a, b in zip(words, words[1:],
                                                                                strict=False))


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


@functools.cache
def function_words() -> frozenset[str]:
    """spaCy's English stop words (lower-cased): the function words of :func:`rule_word_case` and of the
    rewriting model's content-word counts."""
    import spacy.lang.en.stop_words  # lazy: spaCy (slow to import) is needed only for these words
    return frozenset(spacy.lang.en.stop_words.STOP_WORDS)


def _source_spellings(source: str) -> tuple[set[str], set[str]]:
    """The alphabetic runs of ``source`` inside its sentences (a title in quotes counts), and those that
    start one of its sentences (first, or after ".", "!" or "?"), whose capital says nothing."""
    inside, starting = set(), set()
    for match in re.finditer(r"[^\W\d_]+", source):
        before = source[:match.start()].rstrip()
        (inside if before and before[-1] not in ".!?" else starting).add(match.group())
    return inside, starting


def rule_word_case(words: Sequence[str], source: str) -> tuple[str, ...]:
    """The rewrite's words with the case a rule brought from a reference mended.

    A rule's target words keep the case they had in the reference they were learnt from, so a word that
    began a reference sentence ("Also, ...", "By contrast, ...") is written capitalised wherever the rule
    fires ("was Also used", "made By the Governor-General", "the biggest Known"), a reference written in
    capitals brings "THAT", and a careless one "july". A word neither first nor written after a sentence
    break or an opening quotation or bracket (:data:`SENTENCE_BREAKS`), and not written that way inside a
    sentence of ``source`` (so a copied word keeps its case; a word that starts a source sentence,
    capitalised for that, does not count: "On September 17, ..." lets a rule's "On" be lowered), is

    - written as the source writes it inside a sentence when the source has exactly one spelling of it
      there ("Known" → "known", "july" → "July"), unless it is all capitals of one or two letters other
      than the article "A" (the acronyms "US", "IT", "I" and "C" stay), the source starts a sentence
      with it as written ("Year-Round School ... the calendar year" leaves "Year" alone) or it is a
      function word in lower case (the modal "may" stays beside the month "May");
    - else lower-cased when it is a function word (spaCy's English stop words, "I" excepted) that is
      capitalised (its first letter upper-case, the others lower-case, or the article "A") or all
      capitals of three letters or more (so "US" and "IT" stay acronyms).

    Lengths do not change, so a character budget still holds.

    Parameters
    ----------
    words : sequence of str
        The rewrite's words (the chart's yield).
    source : str
        The source sentence as given.

    Returns
    -------
    tuple of str
        e.g. ``("He", "has", "Also", "won")`` with source ``"He has won."`` → ``("He", "has", "also",
        "won")``.
    """
    stop = function_words()
    out = list(words)
    in_source, starting = _source_spellings(source)
    spellings: dict[str, set[str]] = {}
    for w in in_source:
        spellings.setdefault(w.lower(), set()).add(w)
    for t in range(1, len(out)):
        w = out[t]
        if (not w.isalpha() or w in in_source or out[t - 1] in SENTENCE_BREAKS
                or (w.isupper() and len(w) <= 2 and w != "A")):  # "US", "IT", "I", "C": left as written
            continue
        source_spelling = spellings.get(w.lower(), set())
        raises = w.islower() and w in stop  # "may" is not "May": a function word is never capitalised
        if len(source_spelling) == 1 and w not in starting and not raises:
            out[t] = next(iter(source_spelling))
            continue
        capitalised = w == "A" or (len(w) > 1 and w[0].isupper() and w[1:].islower())
        capitals = len(w) >= 3 and w.isupper()
        if (capitalised or capitals) and w.lower() in stop:
            out[t] = w.lower()
    return tuple(out)


def rewrite_text(words: Sequence[str], source: str) -> str:
    """The text of a rewrite as it is written out: :func:`rule_word_case`, then
    :func:`detokenise_words`, then :func:`sentence_case` (same length as ``detokenise_words(words)``).

    Parameters
    ----------
    words : sequence of str
        The rewrite's words.
    source : str
        The source sentence as given.

    Returns
    -------
    str
    """
    return sentence_case(detokenise_words(rule_word_case(words, source)), source)
