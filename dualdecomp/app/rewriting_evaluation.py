"""``dualdecomp evaluate --task rewrite``: read a rewriting corpus and a system's predictions, match them by
id, and score them with :func:`dualdecomp.models.evaluation.rewriting.evaluate_rewrites`.

The references file is the shared rewriting format: one JSON object per line,
``{"id", "text" (raw source), "references": {"asset": [...], "turkcorpus": [...]}}``.

A prediction row has an ``id`` and the system's text in the first of these fields that it has:
``rewrite`` (``dualdecomp rewrite``), ``output`` (``dualdecomp compress`` on raw text: the compression
detokenised with the original spacing) or ``compression`` (``dualdecomp compress``: the kept tokens joined
by spaces). A row's ``text`` is never read as the prediction: in a ``compress`` row it is the source. A
row carrying ``error`` (a line the system failed on) counts as failed and is scored as an empty output,
so that failures lower the scores instead of leaving the corpus. Every reference id needs exactly one
prediction row and every prediction row a reference id: missing, extra or repeated ids are input errors.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import read_jsonl_numbered
from dualdecomp.data.locations import CHECKOUT_ROOT
from dualdecomp.models.evaluation.rewriting import RewriteScores, evaluate_rewrites

__all__ = ["DEFAULT_SETS", "PREDICTION_FIELDS", "RewriteCorpus", "RewriteReport", "default_references_path",
           "evaluate_rewrite_files", "format_rewrite_report", "match_predictions", "parse_sets",
           "read_predictions", "read_rewrite_corpus"]

DEFAULT_SETS = ("asset", "turkcorpus")
"""The reference sets scored unless told otherwise."""

PREDICTION_FIELDS = ("rewrite", "output", "compression")
"""Fields of a prediction row holding the system's text, in order of preference."""

_SHOWN = 5  # ids named in a missing / extra message


def default_references_path() -> Path:
    """The shared dev corpus beside the checkout: ``../shared/data/rewriting/dev.jsonl``."""
    return CHECKOUT_ROOT.parent / "shared" / "data" / "rewriting" / "dev.jsonl"


@dataclass(frozen=True)
class RewriteCorpus:
    """Sources and references of a rewriting corpus, in file order.

    Attributes
    ----------
    ids : tuple of str
    sources : tuple of str
        The raw source sentences.
    references : dict of str to tuple of tuple of str
        For each reference set asked for, the references of each source.
    """

    ids: tuple[str, ...]
    sources: tuple[str, ...]
    references: dict[str, tuple[tuple[str, ...], ...]]


@dataclass(frozen=True)
class RewriteReport:
    """The scores of a prediction file, with what was read.

    Attributes
    ----------
    scores : RewriteScores
    failed : int
        Prediction rows carrying ``error`` (scored as empty outputs).
    fields : dict of str to int
        How many rows took their text from each prediction field (``rewrite``, ``output``,
        ``compression``).
    """

    scores: RewriteScores
    failed: int
    fields: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the scores, ``failed`` and ``fields``."""
        return {**self.scores.to_dict(), "failed": self.failed, "fields": dict(self.fields)}


def parse_sets(spec: str | None) -> tuple[str, ...]:
    """The reference sets of a ``--sets`` value (comma-separated; None: :data:`DEFAULT_SETS`).

    Raises
    ------
    InputError
        An empty name or a name given twice.
    """
    if spec is None:
        return DEFAULT_SETS
    names = tuple(name.strip() for name in spec.split(","))
    if not names or any(not name for name in names):
        raise InputError(f"--sets {spec!r}: give comma-separated reference set names, e.g. asset,turkcorpus")
    if len(set(names)) != len(names):
        raise InputError(f"--sets {spec!r} names a set twice")
    return names


def _row_id(row: dict[str, Any], where: str) -> str:
    value = row.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InputError(f"{where}: needs an \"id\" (a string)")
    return str(value)


def read_rewrite_corpus(path: str | os.PathLike[str], sets: Sequence[str]) -> RewriteCorpus:
    """Read the sources and the references of ``sets`` from a rewriting corpus (module docstring).

    Raises
    ------
    InputError
        An unreadable file, a row without id, text or references, a repeated id, a set that a row
        lacks (the message names the sets it has), a reference list that is empty or holds a non-string.
    """
    name = os.fspath(path)
    ids: list[str] = []
    sources: list[str] = []
    refs: dict[str, list[tuple[str, ...]]] = {s: [] for s in sets}
    seen: set[str] = set()
    for lineno, row in read_jsonl_numbered(name):
        where = f"{name}:{lineno}"
        row_id = _row_id(row, where)
        if row_id in seen:
            raise InputError(f"{where}: id {row_id!r} appears twice")
        seen.add(row_id)
        text = row.get("text")
        if not isinstance(text, str):
            raise InputError(f"{where}: needs a \"text\" (the source sentence)")
        by_set = row.get("references")
        if not isinstance(by_set, dict):
            raise InputError(f"{where}: needs \"references\" (an object of reference sets)")
        for s in sets:
            if s not in by_set:
                have = ", ".join(sorted(by_set)) or "none"
                raise InputError(f"{where}: no reference set {s!r} (this row has: {have})")
            these = by_set[s]
            if not isinstance(these, list) or not these or not all(isinstance(r, str) for r in these):
                raise InputError(f"{where}: references.{s} must be a non-empty list of strings")
            refs[s].append(tuple(these))
        ids.append(row_id)
        sources.append(text)
    if not ids:
        raise InputError(f"{name}: no sentence")
    return RewriteCorpus(tuple(ids), tuple(sources), {s: tuple(r) for s, r in refs.items()})


def read_predictions(path: str | os.PathLike[str]) -> tuple[dict[str, str | None], dict[str, int]]:
    """The prediction of each id (None for a row carrying ``error``) and the fields read.

    Returns
    -------
    tuple of (dict of str to (str or None), dict of str to int)
        Predictions by id, in file order; how many rows each field of :data:`PREDICTION_FIELDS` gave.

    Raises
    ------
    InputError
        An unreadable file, a row without id, a repeated id, or a row without ``error`` that has no
        prediction field (or one that is not a string).
    """
    name = os.fspath(path)
    predictions: dict[str, str | None] = {}
    fields = dict.fromkeys(PREDICTION_FIELDS, 0)
    for lineno, row in read_jsonl_numbered(name):
        where = f"{name}:{lineno}"
        row_id = _row_id(row, where)
        if row_id in predictions:
            raise InputError(f"{where}: id {row_id!r} appears twice")
        if "error" in row:
            predictions[row_id] = None
            continue
        field = next((f for f in PREDICTION_FIELDS if f in row), None)
        if field is None:
            raise InputError(f"{where}: no prediction: a row needs one of the fields "
                             f"{', '.join(PREDICTION_FIELDS)} (or error)")
        if not isinstance(row[field], str):
            raise InputError(f"{where}: \"{field}\" must be a string")
        predictions[row_id] = row[field]
        fields[field] += 1
    return predictions, fields


def _some(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def match_predictions(ids: Sequence[str], predictions: dict[str, str | None]) -> list[str | None]:
    """The predictions in the order of ``ids``.

    Raises
    ------
    InputError
        Some ids have no prediction, or some predictions have an id that is not in ``ids``: the
        message counts them and names the first few.
    """
    known = set(ids)
    missing = [i for i in ids if i not in predictions]
    extra = [i for i in predictions if i not in known]
    problems = []
    if missing:
        problems.append(f"{len(missing)} reference ids have no prediction ({_some(missing)})")
    if extra:
        problems.append(f"{len(extra)} predictions have an id that is not in the references ({_some(extra)})")
    if problems:
        raise InputError("predictions and references do not match by id: " + "; ".join(problems))
    return [predictions[i] for i in ids]


def evaluate_rewrite_files(predictions_path: str | os.PathLike[str], references_path: str | os.PathLike[str],
                           sets: Sequence[str] = DEFAULT_SETS) -> RewriteReport:
    """Score a prediction file against a rewriting corpus, per reference set.

    Parameters
    ----------
    predictions_path : str or path-like
        JSONL rows with ``id`` and ``rewrite`` (or ``output`` / ``compression``; module docstring).
    references_path : str or path-like
        The rewriting corpus (the shared ``rewriting/dev.jsonl`` format).
    sets : sequence of str
        The reference sets to score against, in this order.

    Returns
    -------
    RewriteReport

    Raises
    ------
    InputError
        Unreadable or malformed files, or ids that do not match (:func:`match_predictions`).
    """
    corpus = read_rewrite_corpus(references_path, sets)
    predictions, fields = read_predictions(predictions_path)
    matched = match_predictions(corpus.ids, predictions)
    failed = sum(p is None for p in matched)
    texts = ["" if p is None else p for p in matched]
    scores = evaluate_rewrites(corpus.sources, texts, corpus.references)
    return RewriteReport(scores=scores, failed=failed, fields={f: c for f, c in fields.items() if c})


def format_rewrite_report(report: RewriteReport) -> str:
    """Plain-text rendering: the reference-free measures, then one line per reference set.

    Parameters
    ----------
    report : RewriteReport

    Returns
    -------
    str
    """
    s = report.scores
    lines = [f"sentences         {s.n}",
             f"failed            {report.failed}",
             f"characters kept   {100 * s.chars_kept:5.1f} %",
             f"mean words        {s.mean_words:5.1f}",
             f"identical         {100 * s.identical:5.1f} %",
             "",
             f"{'set':<12} {'SARI':>6} {'add':>6} {'keep':>6} {'delete':>6} {'BLEU':>6}  refs  "
             "ref chars kept"]
    for r in s.sets:
        lines.append(f"{r.name:<12} {r.sari:6.2f} {r.add:6.2f} {r.keep:6.2f} {r.delete:6.2f} {r.bleu:6.2f}  "
                     f"{r.references:4d}  {100 * r.reference_chars_kept:5.1f} %")
    lines.append("")
    lines.append("SARI: corpus (pooled counts, deletion F1), 13a tokens, lowercased (EASSE's setting)")
    lines.append("BLEU: sacrebleu corpus BLEU against all references of a set, signatures:")
    lines.extend(f"  {r.name}: {r.bleu_signature}" for r in s.sets)
    return "\n".join(lines)
