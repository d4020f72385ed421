"""Metrics of deletion compressions against gold references (docs/architecture.md §4).

Per-sentence metrics of one system compression against one reference (both token sequences, deletion
compressions of the same source):

- **CR**, compression rate: kept tokens / source tokens.
- **token F1**: F1 of the clipped token-count overlap (multiset intersection).
- **bigram F1**: the same over the multisets of adjacent bigrams of the kept tokens, each sequence padded
  with the boundary markers ``<s> … </s>``. The padding is a choice: it gives one-token and empty
  compressions bigrams (``<s> w``, ``w </s>``; ``<s> </s>``), so every compression, including the empty
  one, is scored by the same formula, and it rewards getting the first and the last kept word right
  (like the bigram component of the compression models, docs/architecture.md §2). Markers are represented by
  ``None`` so they can never coincide with a real token. Numbers are therefore somewhat higher than
  unpadded bigram F1, especially on short compressions.
- **GR-F1** (Clarke & Lapata 2006): F1 over the multisets of labelled dependency triples
  ``(head word, dependent word, label)`` of the spaCy parses of the system output and of the reference,
  each parsed as a sentence of its own (pre-tokenised, ``dualdecomp.data.parsing.parse_tokens``). The root
  arc is included with head word ``"ROOT"``. Words are compared exactly (case-sensitive surface forms).
- **ROUGE-1, ROUGE-2, ROUGE-L** F-measures from ``rouge-score`` (``use_stemmer=False``, the package's
  default tokenizer, fed the space-joined tokens). One convention on top of the package: when the
  system and reference token sequences are identical the three scores are 1 (the package scores 0 when
  its tokenizer leaves no n-gram, e.g. ROUGE-2 of a one-word output, or an output made only of
  punctuation).

F1 conventions, shared by token, bigram and GR F1: both multisets empty → 1; exactly one empty → 0.
F1 is symmetric in system and reference.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.data.sentence import Sentence

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROOT = "ROOT"
"""Head word of the root arc in GR triples."""

Tokens = tuple[str, ...]


# --------------------------------------------------------------------------------------------------------
# per-sentence metrics


def compression_rate(source: Sequence[str], compression: Sequence[str]) -> float:
    """Compression rate: kept tokens / source tokens.

    Parameters
    ----------
    source : sequence of str
        The source tokens (non-empty).
    compression : sequence of str
        The kept tokens.

    Returns
    -------
    float
        ``len(compression) / len(source)``.
    """
    if not source:
        raise InputError("compression rate of an empty source is undefined")
    return len(compression) / len(source)


def multiset_f1(system: Counter[Any], reference: Counter[Any]) -> float:
    """F1 of the clipped overlap of two multisets.

    precision = |system ∩ reference| / |system|, recall = |system ∩ reference| / |reference|, where ∩ takes
    the minimum count of each element. Both empty → 1.0; exactly one empty → 0.0.

    Parameters
    ----------
    system, reference : Counter
        Multisets (non-positive counts are ignored).

    Returns
    -------
    float
        F1 in [0, 1]; symmetric in its arguments.
    """
    n_sys = sum(c for c in system.values() if c > 0)
    n_ref = sum(c for c in reference.values() if c > 0)
    if n_sys == 0 and n_ref == 0:
        return 1.0
    if n_sys == 0 or n_ref == 0:
        return 0.0
    overlap = sum((system & reference).values())
    # 2PR / (P + R) with P = o / s and R = o / r simplifies to 2o / (s + r)
    return 2.0 * overlap / (n_sys + n_ref)


def token_f1(system: Sequence[str], reference: Sequence[str]) -> float:
    """Token F1: clipped token-count overlap of a system compression and a reference.

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens.

    Returns
    -------
    float
        F1 in [0, 1] (1 when both are empty, 0 when exactly one is).
    """
    return multiset_f1(Counter(system), Counter(reference))


def padded_bigrams(tokens: Sequence[str]) -> Counter[tuple[str | None, str | None]]:
    """Multiset of adjacent bigrams of ``<s> tokens </s>``.

    The boundary markers are ``None`` (``<s>`` on the left, ``</s>`` on the right), so they never collide
    with a token. A sequence of L tokens has L + 1 bigrams; the empty one has ``(<s>, </s>)``.

    Parameters
    ----------
    tokens : sequence of str
        Kept tokens.

    Returns
    -------
    Counter
        Bigram counts.
    """
    padded: list[str | None] = [None, *tokens, None]
    return Counter(zip(padded[:-1], padded[1:], strict=True))


def bigram_f1(system: Sequence[str], reference: Sequence[str]) -> float:
    """Bigram F1: clipped overlap of the boundary-padded bigram multisets (see :func:`padded_bigrams`).

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens.

    Returns
    -------
    float
        F1 in [0, 1]; 1 when both sequences are empty (both are just ``<s> </s>``).
    """
    return multiset_f1(padded_bigrams(system), padded_bigrams(reference))


def at_reference_lengths(tokens: Sequence[str], references: Iterable[Sequence[str]],
                         decode_at: Callable[[int], Sequence[bool]],
                         metric: Callable[[Sequence[str], Sequence[str]], float] = bigram_f1) -> float:
    """Mean ``metric`` over the references of the compression decoded at each reference's length.

    The gold-length protocol of the project's dev scores: ``decode_at(L)`` returns the keep vector of a
    compression of ``tokens`` with L kept tokens; it is called once per distinct reference length.
    """
    decoded: dict[int, Sequence[bool]] = {}
    scores = []
    for ref in references:
        if len(ref) not in decoded:
            decoded[len(ref)] = decode_at(len(ref))
        kept = [t for t, k in zip(tokens, decoded[len(ref)], strict=True) if k]
        scores.append(metric(kept, ref))
    return sum(scores) / len(scores)


def gr_triples(sentence: Sentence) -> Counter[tuple[str, str, str]]:
    """Labelled dependency triples ``(head word, dependent word, label)`` of a parsed sentence.

    Parameters
    ----------
    sentence : Sentence
        A parse (``dualdecomp.data.parsing.parse_tokens``).

    Returns
    -------
    Counter
        Triple counts; the root arc has head word ``"ROOT"``.
    """
    out: Counter[tuple[str, str, str]] = Counter()
    for tok, head, label in zip(sentence.tokens, sentence.heads, sentence.labels, strict=True):
        out[(ROOT if head == 0 else sentence.tokens[head - 1], tok, label)] += 1
    return out


def gr_f1(system: Sentence, reference: Sentence) -> float:
    """GR-F1 (Clarke & Lapata 2006): F1 over labelled dependency triples of two parses.

    Parameters
    ----------
    system, reference : Sentence
        Parses of the system compression and of the reference, each parsed as its own sentence.

    Returns
    -------
    float
        F1 in [0, 1] (1 when both are empty, 0 when exactly one is).
    """
    return multiset_f1(gr_triples(system), gr_triples(reference))


def make_rouge_scorer():
    """The ROUGE scorer used by the evaluation (ROUGE-1/2/L, no stemming).

    Returns
    -------
    rouge_score.rouge_scorer.RougeScorer
    """
    # lazy: rouge-score (with nltk) is slow to import and only ROUGE needs it
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=False)


def rouge_f1(system: Sequence[str], reference: Sequence[str], scorer=None) -> tuple[float, float, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures of a system compression against one reference.

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens (fed to ``rouge-score`` space-joined).
    scorer : RougeScorer, optional
        A scorer from :func:`make_rouge_scorer` (one is made when omitted).

    Returns
    -------
    tuple of float
        (ROUGE-1, ROUGE-2, ROUGE-L) F-measures in [0, 1]; all 1 when the token sequences are identical.
    """
    if tuple(system) == tuple(reference):
        return (1.0, 1.0, 1.0)
    if scorer is None:
        scorer = make_rouge_scorer()
    scores = scorer.score(" ".join(reference), " ".join(system))  # (target, prediction)
    r1, r2, rl = (float(scores[t].fmeasure) for t in ROUGE_TYPES)
    return (r1, r2, rl)


@dataclass(frozen=True)
class PairScores:
    """Metrics of one system compression against one reference (all fractions in [0, 1]).

    Attributes
    ----------
    cr : float
        Compression rate of the system compression.
    token_f1, bigram_f1, gr_f1, rouge1, rouge2, rougeL : float
        See the module docstring.
    """

    cr: float
    token_f1: float
    bigram_f1: float
    gr_f1: float
    rouge1: float
    rouge2: float
    rougeL: float  # the name rouge-score uses


METRICS = tuple(f.name for f in fields(PairScores))


def score_pair(source: Sequence[str], system: Sequence[str], reference: Sequence[str],
               system_parse: Sentence, reference_parse: Sentence, scorer=None) -> PairScores:
    """All metrics of one system compression against one reference.

    Parameters
    ----------
    source : sequence of str
        The source tokens.
    system, reference : sequence of str
        Kept tokens of the system output and of the reference.
    system_parse, reference_parse : Sentence
        spaCy parses of ``system`` and ``reference`` (each as its own sentence).
    scorer : RougeScorer, optional
        From :func:`make_rouge_scorer`.

    Returns
    -------
    PairScores
    """
    r1, r2, rl = rouge_f1(system, reference, scorer)
    return PairScores(
        cr=compression_rate(source, system),
        token_f1=token_f1(system, reference),
        bigram_f1=bigram_f1(system, reference),
        gr_f1=gr_f1(system_parse, reference_parse),
        rouge1=r1,
        rouge2=r2,
        rougeL=rl,
    )


def mean_scores(scores: Sequence[PairScores]) -> PairScores:
    """Field-wise mean of several ``PairScores``.

    Parameters
    ----------
    scores : sequence of PairScores
        Non-empty.

    Returns
    -------
    PairScores
    """
    if not scores:
        raise InputError("mean of no scores")
    return PairScores(**{m: math.fsum(getattr(s, m) for s in scores) / len(scores) for m in METRICS})
