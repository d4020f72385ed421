"""Article agreement in rewrites: "a" before a consonant sound, "an" before a vowel sound.

A rewrite can substitute the source's "an" by "a" or join an article to a word it did not precede
("a epithet", "a eagle"). :func:`forbid_article_disagreement` forbids those bigrams in a chart's bigram
matrix (``-inf``, as the chart's own forbidden bigrams are), so the search stays exact: the best rewrite
among those that agree. A bigram the source itself has (compared lower-cased) stays allowed, so a
rewrite never has to change what the source wrote.

Which article a word takes is inflect's (PyPI ``inflect``, MIT; ``engine().a(word)``: "an hour",
"a university", "an FBI", "a one"), for a token that begins with a letter; any other token (a number, a
symbol, a quotation mark), and an article itself, is left free. inflect decorates its methods with
typeguard's run-time type checks, which take about 2 s to instrument at import; :func:`_engine` imports
it with that decorator replaced by the identity for the length of the import (the checks only validate
argument types, and this module passes non-empty strings), which takes 0.1 s.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

__all__ = ["ARTICLES", "article_disagreements", "disagrees", "forbid_article_disagreement",
           "indefinite_article"]

ARTICLES = ("a", "an")
"""The indefinite articles (lower-cased)."""


@functools.cache
def _engine():
    """inflect's engine, imported without typeguard's instrumentation (module docstring)."""
    # lazy: typeguard and inflect load at the first article check, not when a model loads
    import typeguard

    checked = typeguard.typechecked

    def identity(target=None, **_options):
        return target if target is not None else (lambda t: t)

    typeguard.typechecked = identity
    try:
        # lazy: inflect must be imported while typeguard's decorator is the identity
        import inflect
    finally:
        typeguard.typechecked = checked
    return inflect.engine()


@functools.lru_cache(maxsize=1 << 16)
def indefinite_article(word: str) -> str | None:
    """The indefinite article ``word`` takes: ``"a"`` or ``"an"``; None for a token that does not begin
    with a letter (left free).

    Parameters
    ----------
    word : str
        A raw token (case matters: "an FBI", "a fib").

    Returns
    -------
    str or None
    """
    if not word[:1].isalpha():
        return None
    article = _engine().a(word).split(" ", 1)[0].lower()
    return article if article in ARTICLES else None


def disagrees(first: str, second: str) -> bool:
    """Whether the bigram ``first second`` is an article before a word that takes the other article
    ("a epithet", "An cat"; any case). A word that does not begin with a letter, or is an article
    itself, agrees with both."""
    article = first.lower()
    if article not in ARTICLES or second.lower() in ARTICLES:
        return False
    takes = indefinite_article(second)
    return takes is not None and takes != article


def _lower_bigrams(tokens: Sequence[str]) -> set[tuple[str, str]]:
    """The lower-cased bigrams of ``tokens`` (those a rewrite may keep even when they disagree)."""
    return {(a.lower(), b.lower()) for a, b in zip(tokens, tokens[1:], strict=False)}


def article_disagreements(words: Sequence[str], source: Sequence[str]) -> list[tuple[str, str]]:
    """The bigrams of ``words`` that :func:`disagrees` finds and ``source`` does not have (lower-cased):
    what :func:`forbid_article_disagreement` keeps out of a rewrite."""
    in_source = _lower_bigrams(source)
    return [(a, b) for a, b in zip(words, words[1:], strict=False)
            if disagrees(a, b) and (a.lower(), b.lower()) not in in_source]


def forbid_article_disagreement(matrix: np.ndarray | None, vocab: Sequence[str],
                                source: Sequence[str]) -> np.ndarray | None:
    """A chart's bigram matrix with the article disagreements forbidden (module docstring).

    Parameters
    ----------
    matrix : numpy.ndarray or None
        The (V + 2, V + 2) bigram scores over ``vocab`` + BOS + EOS (None: no LM, all zeros).
    vocab : sequence of str
        The V words the chart can write.
    source : sequence of str
        The source tokens: their own bigrams stay allowed.

    Returns
    -------
    numpy.ndarray or None
        A new matrix with ``-inf`` at every ("a"/"an", word) pair whose word takes the other article and
        that the source does not have; ``matrix`` itself when there is none (None stays None).
    """
    articles = [i for i, w in enumerate(vocab) if w.lower() in ARTICLES]
    if not articles:
        return matrix
    in_source = _lower_bigrams(source)
    pairs = [(i, j) for i in articles for j, word in enumerate(vocab)
             if disagrees(vocab[i], word) and (vocab[i].lower(), word.lower()) not in in_source]
    if not pairs:
        return matrix
    V = len(vocab)
    out = np.zeros((V + 2, V + 2)) if matrix is None else matrix.copy()
    if matrix is None:  # the chart's structural bans: nothing into <s>, nothing out of </s>
        out[:, V] = -np.inf
        out[V + 1, :] = -np.inf
    rows, cols = zip(*pairs, strict=True)
    out[list(rows), list(cols)] = -np.inf
    return out
