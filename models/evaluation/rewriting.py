"""Corpus scores of sentence rewrites (compression beyond deletion, W3.3): SARI, BLEU, characters kept.

Each reference set (ASSET, TurkCorpus, ...) is scored separately, as the literature reports them.

- **SARI** (Xu et al. 2016): the project's implementation,
  :func:`dualdecomp.models.evaluation.sari.sari_corpus`, in EASSE's standard setting for raw text:
  counts pooled over the corpus (``method="pooled"``, deletion by F1 at corpus level as EASSE and the
  authors' STAR do), sacrebleu's 13a tokenizer, lowercased (:data:`SARI_SETTINGS`).
  Its add, keep and delete parts are reported too.
- **BLEU**: sacrebleu's corpus BLEU of the outputs against all the references of the set at once (multi-
  reference BLEU), with sacrebleu's defaults, which are also EASSE's: 13a tokenizer, case-sensitive,
  exponential smoothing. The exact settings are in each score's ``bleu_signature`` (sacrebleu's
  signature, e.g. ``nrefs:10|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``). A source with fewer
  references than the most in the set is scored against the ones it has (sacrebleu's variable number of
  references).

The measures that do not depend on references: the share of characters kept
``sum len(output) / sum len(source)`` (characters of the strings as given, spaces included), the mean
number of words (whitespace-separated) per output, and the share of outputs identical to their source
(after collapsing runs of whitespace). For comparison, each reference set also reports the share of
characters its references keep: ``sum len(reference) / (r * sum len(source))`` per reference, i.e. the
mean over the references of each source of their length, summed and divided by the sources' length.

Shares and SARI, BLEU are percentages (0..100) as the literature reports them; ``chars_kept`` and
``identical`` are fractions in [0, 1].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sacrebleu.metrics import BLEU

from dualdecomp.core.errors import InputError
from dualdecomp.models.evaluation.sari import sari_corpus

__all__ = ["BLEU_SETTINGS", "SARI_SETTINGS", "ReferenceSetScores", "RewriteScores", "evaluate_rewrites"]

SARI_SETTINGS = {"method": "pooled", "tokenizer": "13a", "lowercase": True}
"""Keyword arguments of :func:`sari_corpus` for rewrites of raw text (EASSE's ``corpus_sari`` defaults)."""

BLEU_SETTINGS = {"lowercase": False, "smooth_method": "exp"}
"""Keyword arguments of sacrebleu's :class:`~sacrebleu.metrics.BLEU` (its defaults, and EASSE's); the
tokeniser is sacrebleu's default, 13a (``tok:13a`` in the signature, which the tests check)."""


@dataclass(frozen=True)
class ReferenceSetScores:
    """The reference-dependent scores of a system against one reference set.

    Attributes
    ----------
    name : str
        The reference set (e.g. ``"asset"``).
    sari, add, keep, delete : float
        Corpus SARI and its three parts (percentages; :data:`SARI_SETTINGS`).
    bleu : float
        sacrebleu corpus BLEU against all references of the set (percentage).
    bleu_signature : str
        sacrebleu's signature of the BLEU settings (tokenizer, case, smoothing, number of references).
    references : int
        Number of reference rewrites of the set over the corpus.
    reference_chars_kept : float
        Share of the sources' characters that the set's references keep (module docstring), in [0, 1].
    """

    name: str
    sari: float
    add: float
    keep: float
    delete: float
    bleu: float
    bleu_signature: str
    references: int
    reference_chars_kept: float


@dataclass(frozen=True)
class RewriteScores:
    """Scores of a system's rewrites of a corpus.

    Attributes
    ----------
    n : int
        Number of sentences scored.
    chars_kept : float
        ``sum len(output) / sum len(source)``, a fraction (may exceed 1 for a rewrite that adds).
    mean_words : float
        Mean number of whitespace-separated words per output.
    identical : float
        Share of outputs identical to their source (whitespace runs collapsed), in [0, 1].
    sets : tuple of ReferenceSetScores
        One per reference set, in the order asked for.
    """

    n: int
    chars_kept: float
    mean_words: float
    identical: float
    sets: tuple[ReferenceSetScores, ...]

    def by_set(self, name: str) -> ReferenceSetScores:
        """The scores against the reference set ``name``.

        Raises
        ------
        KeyError
            No such set was scored.
        """
        for scores in self.sets:
            if scores.name == name:
                return scores
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the reference-free fields and ``sets`` keyed by set name."""
        row: dict[str, Any] = {"n": self.n, "chars_kept": self.chars_kept, "mean_words": self.mean_words,
                               "identical": self.identical}
        row["sets"] = {s.name: {k: v for k, v in asdict(s).items() if k != "name"} for s in self.sets}
        return row


def _normalise_spaces(text: str) -> str:
    return " ".join(text.split())


def _set_scores(name: str, sources: Sequence[str], predictions: Sequence[str],
                references: Sequence[Sequence[str]]) -> ReferenceSetScores:
    for i, refs in enumerate(references):
        if isinstance(refs, str) or len(refs) == 0 or not all(isinstance(r, str) for r in refs):
            raise InputError(f"reference set {name!r}: sentence {i + 1} needs a list of at least one "
                             "reference string")
    sari = sari_corpus(sources, predictions, references, **SARI_SETTINGS)
    # sacrebleu takes one stream per reference position; None where a source has fewer references
    most = max(len(refs) for refs in references)
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(most)]
    bleu = BLEU(**BLEU_SETTINGS)
    score = bleu.corpus_score(list(predictions), streams)
    source_chars = sum(len(s) for s in sources)
    kept = sum(sum(len(r) for r in refs) / len(refs) for refs in references)
    return ReferenceSetScores(
        name=name, sari=sari.sari, add=sari.add, keep=sari.keep, delete=sari.delete, bleu=score.score,
        bleu_signature=str(bleu.get_signature()), references=sum(len(refs) for refs in references),
        reference_chars_kept=kept / source_chars if source_chars else 0.0)


def evaluate_rewrites(sources: Sequence[str], predictions: Sequence[str],
                      references_by_set: Mapping[str, Sequence[Sequence[str]]]) -> RewriteScores:
    """Score rewrites against each reference set separately (module docstring).

    Parameters
    ----------
    sources : sequence of str
        The input sentences (raw text).
    predictions : sequence of str
        The system's rewrite of each source (raw text), in the same order.
    references_by_set : mapping of str to sequence of sequences of str
        For each reference set, the references of each source (at least one per source), in the order
        of ``sources``. Sets are scored in the mapping's order.

    Returns
    -------
    RewriteScores

    Raises
    ------
    InputError
        An empty corpus, no reference set, a length mismatch, a text that is not a string, or a source
        without reference.
    """
    n = len(sources)
    if n == 0:
        raise InputError("no sentence to evaluate")
    if len(predictions) != n:
        raise InputError(f"{len(predictions)} predictions for {n} sources")
    if not references_by_set:
        raise InputError("no reference set to evaluate against")
    for what, texts in (("source", sources), ("prediction", predictions)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"{what} {i + 1} is not a string")
    for name, refs in references_by_set.items():
        if len(refs) != n:
            raise InputError(f"reference set {name!r} has references for {len(refs)} sentences, not {n}")
    source_chars = sum(len(s) for s in sources)
    sets = tuple(_set_scores(name, sources, predictions, refs) for name, refs in references_by_set.items())
    return RewriteScores(
        n=n,
        chars_kept=sum(len(p) for p in predictions) / source_chars if source_chars else 0.0,
        mean_words=sum(len(p.split()) for p in predictions) / n,
        identical=sum(_normalise_spaces(p) == _normalise_spaces(s) for p, s in zip(predictions, sources,
                                                                                    strict=True)) / n,
        sets=sets)
