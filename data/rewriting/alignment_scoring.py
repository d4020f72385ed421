"""Scoring word alignments against hand alignments: precision, recall, F1 and AER (Och & Ney 2003).

A gold alignment has *sure* links S and *possible* links P ⊇ S (the file stores the possible-only links;
P is their union with S). For predicted links A, micro-averaged over pairs: precision |A∩P| / |A|,
recall |A∩S| / |S|, F1 their harmonic mean, and the alignment error rate
AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|).

The gold file (``tests/fixtures/rewriting/alignment_gold.jsonl``) is JSONL: a first ``{"note": ...}``
line, then one object per pair with ``id``, ``reference_set``, ``reference_index``, ``source``,
``target`` (raw), ``source_tokens``, ``target_tokens``, ``sure`` and ``possible`` ([source index,
target index] lists, 0-based).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import read_jsonl_numbered

__all__ = ["AlignmentScores", "GoldAlignment", "read_gold_alignments", "score_alignments"]


@dataclass(frozen=True)
class GoldAlignment:
    """A hand-aligned source/rewrite pair.

    Attributes
    ----------
    id, reference_set : str
        The example and the reference set of the rewrite.
    reference_index : int
        The rewrite's index in its set.
    source, target : str
        The raw texts.
    source_tokens, target_tokens : tuple of str
        Their tokens (the indices of the links refer to these).
    sure, possible : frozenset of (int, int)
        Sure links, and the possible-only links (disjoint from ``sure``).
    """

    id: str
    reference_set: str
    reference_index: int
    source: str
    target: str
    source_tokens: tuple[str, ...]
    target_tokens: tuple[str, ...]
    sure: frozenset[tuple[int, int]]
    possible: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class AlignmentScores:
    """Micro-averaged scores of predicted alignments (module docstring)."""

    precision: float
    recall: float
    f1: float
    aer: float
    predicted: int
    sure: int


def _links(value, n: int, m: int, where: str) -> frozenset[tuple[int, int]]:
    if not isinstance(value, list):
        raise InputError(f"{where}: links must be a list of [source, target] pairs")
    out = set()
    for p in value:
        if (not isinstance(p, list) or len(p) != 2 or not all(isinstance(x, int) for x in p)
                or not (0 <= p[0] < n and 0 <= p[1] < m)):
            raise InputError(f"{where}: invalid link {p!r} for {n} source and {m} target tokens")
        out.add((p[0], p[1]))
    return frozenset(out)


def read_gold_alignments(path: str | os.PathLike[str]) -> list[GoldAlignment]:
    """Read a gold alignment file (module docstring; the ``note`` line is skipped).

    Raises
    ------
    InputError
        On a missing field or an out-of-range link (the message names ``path:line``).
    """
    out = []
    for lineno, row in read_jsonl_numbered(path):
        if "note" in row:
            continue
        where = f"{os.fspath(path)}:{lineno}"
        try:
            src, tgt = tuple(row["source_tokens"]), tuple(row["target_tokens"])
            sure = _links(row["sure"], len(src), len(tgt), where)
            possible = _links(row["possible"], len(src), len(tgt), where) - sure
            out.append(GoldAlignment(row["id"], row["reference_set"], int(row["reference_index"]),
                                     row["source"], row["target"], src, tgt, sure, possible))
        except KeyError as exc:
            raise InputError(f"{where}: missing field {exc}") from None
    return out


def score_alignments(gold: Sequence[GoldAlignment],
                     predicted: Iterable[Iterable[tuple[int, int]]]) -> AlignmentScores:
    """Precision, recall, F1 and AER of predicted alignments, micro-averaged over the pairs.

    Parameters
    ----------
    gold : sequence of GoldAlignment
        The hand alignments.
    predicted : iterable of iterables of (int, int)
        The predicted links of each gold pair, in the same order.

    Returns
    -------
    AlignmentScores
    """
    predicted = [frozenset(map(tuple, p)) for p in predicted]
    if len(predicted) != len(gold):
        raise InputError(f"{len(predicted)} predicted alignments for {len(gold)} gold pairs")
    n_a = n_s = a_s = a_p = 0
    for g, a in zip(gold, predicted, strict=True):
        p = g.sure | g.possible
        n_a += len(a)
        n_s += len(g.sure)
        a_s += len(a & g.sure)
        a_p += len(a & p)
    precision = a_p / n_a if n_a else 0.0
    recall = a_s / n_s if n_s else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    aer = 1.0 - (a_s + a_p) / (n_a + n_s) if n_a + n_s else 0.0
    return AlignmentScores(precision, recall, f1, aer, n_a, n_s)
