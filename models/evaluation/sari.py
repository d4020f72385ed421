"""SARI (Xu, Napoles, Pavlick, Chen & Callison-Burch 2016, TACL 4:401-415), sentence and corpus.

SARI compares a system output O with its input I and r references R_1..R_r, n-gram order by n-gram
order (n = 1..4), for three operations. ``#g(X)`` is the count of the n-gram g in X and
``#g(R') = (#g(R_1) + ... + #g(R_r)) / r`` the reference count averaged over the references (the
paper's R': an n-gram that 2 of 4 references keep once weighs 1/2).

- **ADD** (sets, as in the paper: binary indicators): the n-grams of O that are not in I are the
  output's additions, those of any reference that are not in I the references' additions; an addition
  is right when some reference has it. p = right / output's additions, r = right / references' additions.
- **KEEP** (weighted): summed over the n-grams g of I, kept by the output ``min(#g(I), #g(O))``, kept
  by the references ``min(#g(I), #g(R'))``, kept right ``min(#g(I), #g(O), #g(R'))``;
  p = right / kept by the output, r = right / kept by the references.
- **DELETE** (weighted): deleted by the output ``max(#g(I) - #g(O), 0)``, by the references
  ``max(#g(I) - #g(R'), 0)``, deleted right the smaller of the two; p = right / deleted by the output,
  r = right / deleted by the references.

Each sum is over the n-grams of the sentence (ratio of sums, the paper's equations). Conventions of both
reference implementations (Xu's ``SARI.py`` and EASSE's ``easse/sari.py``), where the paper is silent:
a precision or recall whose denominator is 0 is **0** (nothing added, nothing deleted, a sentence shorter
than n), and F1 is 0 unless both p and r are positive. So a copy of the input scores ADD 0 and DELETE 0,
and every order n that a short sentence lacks counts as 0 in the means.

Sentence SARI (:func:`sari_sentence`): per order n, F_add(n), F_keep(n) and, for deletion, the
precision P_del(n) only (the paper: over-deleting hurts readability much more than not deleting; it
still lowers KEEP's recall); each is averaged over n = 1..4 and
``SARI = (F_add + F_keep + P_del) / 3``. Averaging the per-order F1 scores is what the Java and Python
implementations of the authors (and EASSE's default) do, and what the published numbers use; the paper's
equations instead average precision and recall over n first and take F1 of the means
(``average="paper"``; EASSE's ``use_paper_version=True``).

Corpus SARI (:func:`sari_corpus`), checked against EASSE's ``corpus_sari``, which the literature's
corpus numbers come from and which follows the authors' corpus-level STAR.java: it is **not** the mean
of sentence scores. The counts above are summed over the sentences per order n, and
p, r and F1 are computed once from the sums (``method="pooled"``). EASSE and STAR score deletion by F1 at
corpus level (Xu, cocoxu/simplification issue #9: an arbitrary choice for STAR); that is the default of
the pooled method (``deletion="f1"``). ``method="mean"`` is the mean of :func:`sari_sentence` scores
(deletion by precision), as scripts built on ``SARI.py`` report.

Where this follows one reference implementation over another:

- Ratios of sums (the paper's equations, EASSE), not Xu's ``SARI.py``. That script averages the ratio
  right / total of each distinct n-gram instead (its KEEP recall differs from the paper even when no
  n-gram repeats: cocoxu/simplification issue #6), and counts ``r * (#g(I) - #g(O)) - r * #g(R')``
  deletions right (not the smaller of the two deletions; they differ when an n-gram repeats in the
  input). On the paper's example (input "About 95 species are currently accepted .", output "About 95
  you now get in .") ``SARI.py`` gives 26.83, EASSE and this module 26.95.
- Reference counts are the exact fractions ``#g(R')`` (paper). EASSE multiplies all counts by r
  instead, which is the same for one sentence and for a corpus with the same number of references per
  sentence (ASSET, TurkCorpus), but weighs sentences by their number of references when that varies.
- N-grams are tuples of tokens, not space-joined strings, so a token holding a space cannot merge with
  its neighbour.

Scores are percentages (0..100), as the literature reports them. All counting is exact (integers and
fractions); only the returned numbers are floats.

Tokenisation: a token sequence is used as given; a string is split on whitespace
(``tokenizer="whitespace"``, as ``SARI.py`` does on tokenised text) or first tokenised with sacrebleu's
13a tokenizer (``tokenizer="13a"``, EASSE's default for raw text). ``lowercase=True`` (the default, as
in both reference implementations) lowercases every token. EASSE's standard setting on raw text is
``tokenizer="13a"`` with ``lowercase=True``, applied, as here, to inputs, outputs and references alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from dualdecomp.core.errors import InputError

NGRAM_ORDER = 4
"""The highest n-gram order (the paper's k = 4)."""

TOKENIZERS = ("whitespace", "13a")
"""How a string is split into tokens (a token sequence is used as given)."""

Text = str | Sequence[str]
Tokenizer = Literal["whitespace", "13a"]
Deletion = Literal["precision", "f1"]
Average = Literal["scores", "paper"]
Method = Literal["pooled", "mean"]

_ZERO = Fraction(0)


@dataclass(frozen=True)
class SariScore:
    """SARI and its three parts, as percentages (0..100).

    Attributes
    ----------
    add : float
        F1 of the additions, averaged over the n-gram orders.
    keep : float
        F1 of the kept n-grams, averaged over the n-gram orders.
    delete : float
        Precision of the deletions (F1 where asked for: the pooled corpus score by default), averaged
        over the n-gram orders.
    sari : float
        ``(add + keep + delete) / 3``.
    """

    add: float
    keep: float
    delete: float
    sari: float


@dataclass(frozen=True)
class _Counts:
    """Counts of one operation at one n-gram order: right, by the output, by the references."""

    right: Fraction
    output: Fraction
    reference: Fraction

    def __add__(self, other: _Counts) -> _Counts:
        return _Counts(self.right + other.right, self.output + other.output,
                       self.reference + other.reference)

    def precision(self) -> Fraction:
        return self.right / self.output if self.output > 0 else _ZERO

    def recall(self) -> Fraction:
        return self.right / self.reference if self.reference > 0 else _ZERO


@dataclass(frozen=True)
class _OrderCounts:
    """The ADD, KEEP and DELETE counts of one n-gram order."""

    add: _Counts
    keep: _Counts
    delete: _Counts

    def __add__(self, other: _OrderCounts) -> _OrderCounts:
        return _OrderCounts(self.add + other.add, self.keep + other.keep, self.delete + other.delete)


def _f1(precision: Fraction, recall: Fraction) -> Fraction:
    if precision > 0 and recall > 0:
        return 2 * precision * recall / (precision + recall)
    return _ZERO


def _tokens(text: Text, lowercase: bool, tokenizer: str) -> tuple[str, ...]:
    if isinstance(text, str):
        if tokenizer == "13a":
            text = Tokenizer13a()(text.lower() if lowercase else text)
        tokens: tuple[str, ...] = tuple(text.split())
    elif all(isinstance(t, str) for t in text):
        tokens = tuple(text)
    else:
        raise InputError("SARI takes a string or a sequence of string tokens")
    return tuple(t.lower() for t in tokens) if lowercase else tokens


def _ngrams(tokens: tuple[str, ...], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tokens[i:i + n] for i in range(len(tokens) - n + 1))


def _order_counts(source: tuple[str, ...], output: tuple[str, ...],
                  references: Sequence[tuple[str, ...]], n: int) -> _OrderCounts:
    """The ADD, KEEP and DELETE counts of one sentence at order n (module docstring)."""
    grams_in = _ngrams(source, n)
    grams_out = _ngrams(output, n)
    grams_ref: Counter[tuple[str, ...]] = Counter()
    for ref in references:
        grams_ref.update(_ngrams(ref, n))
    added = grams_out.keys() - grams_in.keys()
    add = _Counts(Fraction(len(added & grams_ref.keys())), Fraction(len(added)),
                  Fraction(len(grams_ref.keys() - grams_in.keys())))
    # KEEP and DELETE counted in integers times r (the reference total is r * #g(R')), divided once
    r = len(references)
    keep_right = keep_out = keep_ref = delete_right = delete_out = delete_ref = 0
    for gram, count_in in grams_in.items():
        scaled_in, scaled_out, total_ref = r * count_in, r * grams_out[gram], grams_ref[gram]
        keep_right += min(scaled_in, scaled_out, total_ref)
        keep_out += min(scaled_in, scaled_out)
        keep_ref += min(scaled_in, total_ref)
        deleted_out, deleted_ref = max(scaled_in - scaled_out, 0), max(scaled_in - total_ref, 0)
        delete_right += min(deleted_out, deleted_ref)
        delete_out += deleted_out
        delete_ref += deleted_ref
    keep = _Counts(Fraction(keep_right, r), Fraction(keep_out, r), Fraction(keep_ref, r))
    delete = _Counts(Fraction(delete_right, r), Fraction(delete_out, r), Fraction(delete_ref, r))
    return _OrderCounts(add, keep, delete)


def _sentence_counts(source: Text, output: Text, references: Sequence[Text], lowercase: bool,
                     tokenizer: str) -> tuple[_OrderCounts, ...]:
    if tokenizer not in TOKENIZERS:
        raise InputError(f"unknown SARI tokenizer {tokenizer!r} (choose from {', '.join(TOKENIZERS)})")
    if isinstance(references, str) or len(references) == 0:
        raise InputError("SARI needs a sequence of at least one reference per source")
    src = _tokens(source, lowercase, tokenizer)
    out = _tokens(output, lowercase, tokenizer)
    refs = [_tokens(ref, lowercase, tokenizer) for ref in references]
    return tuple(_order_counts(src, out, refs, n) for n in range(1, NGRAM_ORDER + 1))


def _mean(values: Sequence[Fraction]) -> Fraction:
    return sum(values, _ZERO) / len(values)


def _operation_score(counts: Sequence[_Counts], f1: bool, average: str) -> Fraction:
    """An operation's score over the orders: mean of per-order scores, or the score of the means."""
    if average == "scores":
        if f1:
            return _mean([_f1(c.precision(), c.recall()) for c in counts])
        return _mean([c.precision() for c in counts])
    precision = _mean([c.precision() for c in counts])
    return _f1(precision, _mean([c.recall() for c in counts])) if f1 else precision


def _score(orders: Sequence[_OrderCounts], deletion: str, average: str) -> SariScore:
    if deletion not in ("precision", "f1"):
        raise InputError(f"unknown SARI deletion score {deletion!r} (choose precision or f1)")
    if average not in ("scores", "paper"):
        raise InputError(f"unknown SARI averaging {average!r} (choose scores or paper)")
    add = _operation_score([o.add for o in orders], True, average)
    keep = _operation_score([o.keep for o in orders], True, average)
    delete = _operation_score([o.delete for o in orders], deletion == "f1", average)
    return SariScore(add=float(100 * add), keep=float(100 * keep), delete=float(100 * delete),
                     sari=float(100 * (add + keep + delete) / 3))


def sari_sentence(source: Text, output: Text, references: Sequence[Text], *, lowercase: bool = True,
                  tokenizer: Tokenizer = "whitespace", deletion: Deletion = "precision",
                  average: Average = "scores") -> SariScore:
    """SARI of one output against its source and references (Xu et al. 2016; module docstring).

    Parameters
    ----------
    source, output : str or sequence of str
        The input sentence and the system's rewrite: a string (tokenised by ``tokenizer``) or tokens.
    references : sequence of (str or sequence of str)
        At least one reference rewrite of ``source``.
    lowercase : bool
        Lowercase every token (default, as the reference implementations do).
    tokenizer : {"whitespace", "13a"}
        How strings are split: on whitespace, or by sacrebleu's 13a tokenizer (EASSE's default).
    deletion : {"precision", "f1"}
        Score deletion by its precision (the paper's SARI, default) or by F1.
    average : {"scores", "paper"}
        Average each operation's per-order scores over n = 1..4 (the authors' code and EASSE, default),
        or average precision and recall over the orders and take F1 of the means (the paper's equations).

    Returns
    -------
    SariScore
        ``add``, ``keep``, ``delete`` and ``sari``, percentages in [0, 100].

    Raises
    ------
    InputError
        No reference, a token that is not a string, or an unknown option.
    """
    return _score(_sentence_counts(source, output, references, lowercase, tokenizer), deletion, average)


def sari_corpus(sources: Sequence[Text], outputs: Sequence[Text],
                references_per_source: Sequence[Sequence[Text]], *, method: Method = "pooled",
                deletion: Deletion | None = None, lowercase: bool = True, tokenizer: Tokenizer = "whitespace",
                average: Average = "scores") -> SariScore:
    """Corpus SARI: pooled counts as EASSE's ``corpus_sari`` (default), or the mean of sentence SARI.

    Parameters
    ----------
    sources, outputs : sequence of (str or sequence of str)
        The inputs and the system's rewrites, one per input.
    references_per_source : sequence of sequences
        For each source, its references (at least one; the number may vary between sources).
    method : {"pooled", "mean"}
        ``"pooled"`` sums each order's ADD, KEEP and DELETE counts over the corpus and scores the sums
        (EASSE ``corpus_sari``, the authors' STAR); ``"mean"`` averages :func:`sari_sentence` scores
        (each of add, keep, delete and sari is the mean of the sentences' values).
    deletion : {"precision", "f1"} or None
        The deletion score; None takes the reference implementation's choice: F1 for ``"pooled"``
        (EASSE and STAR), precision for ``"mean"`` (sentence SARI).
    lowercase, tokenizer, average
        As in :func:`sari_sentence`.

    Returns
    -------
    SariScore
        Percentages in [0, 100].

    Raises
    ------
    InputError
        An empty corpus, sequences of different lengths, a source without reference, or an unknown
        option.
    """
    if method not in ("pooled", "mean"):
        raise InputError(f"unknown corpus SARI method {method!r} (choose pooled or mean)")
    if not (len(sources) == len(outputs) == len(references_per_source)):
        raise InputError(f"corpus SARI needs as many outputs and reference lists as sources: {len(sources)} "
                         f"sources, {len(outputs)} outputs, {len(references_per_source)} reference lists")
    if not sources:
        raise InputError("corpus SARI of an empty corpus is undefined")
    if deletion is None:
        deletion = "f1" if method == "pooled" else "precision"
    counts = [_sentence_counts(s, o, refs, lowercase, tokenizer)
              for s, o, refs in zip(sources, outputs, references_per_source, strict=True)]
    if method == "pooled":
        pooled = counts[0]
        for sentence in counts[1:]:
            pooled = tuple(a + b for a, b in zip(pooled, sentence, strict=True))
        return _score(pooled, deletion, average)
    scores = [_score(sentence, deletion, average) for sentence in counts]
    return SariScore(add=sum(s.add for s in scores) / len(scores),
                     keep=sum(s.keep for s in scores) / len(scores),
                     delete=sum(s.delete for s in scores) / len(scores),
                     sari=sum(s.sari for s in scores) / len(scores))
