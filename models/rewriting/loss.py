"""The training loss of the rewriting model: a multi-reference keep/add/delete loss, additive over the
chart's hyperedges (so the loss-augmented argmax is exact in the chart).

Cohn & Lapata (2008) train against one reference with a Hamming loss over target tokens
(``Δ = f + max(l − (t + f), 0)``) or a bag-of-tokens edit distance. Our corpora give every source 18
references (10 ASSET, 8 TurkCorpus) that disagree, and the target measure is SARI, which scores each
output word by whether the references *keep*, *add* or *delete* it. So the loss here generalises the
Hamming loss to many references in SARI's terms: with ``r(w)`` the share of references that contain the
word ``w`` (lower-cased),

``Δ(y) = Σ_{w written by y} (1 − r(w))  +  Σ_{source tokens k deleted by y} r(x_k)``

— a written word costs the share of references without it (a false positive for the others), a deleted
source word costs the share of references that keep it (a false negative). With one reference ``r`` is 0
or 1 and ``Δ`` is the false positives plus the deleted reference words: the Hamming loss without its
length term (which needs no separate term here, since deleting a kept word already costs). Both sums are
over items of single hyperedges (the words a rule writes; the source tokens an application deletes),
hence additive and exact in the chart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ReferenceShares", "reference_shares"]


@dataclass(frozen=True)
class ReferenceShares:
    """``r(w)`` for one source: the share of its references that contain each (lower-cased) word.

    Attributes
    ----------
    shares : dict
        Lower-cased word → share in (0, 1].
    references : int
        Number of references.
    """

    shares: dict[str, float]
    references: int

    def share(self, word: str) -> float:
        """``r(word)`` (0 for a word no reference has)."""
        return self.shares.get(word.lower(), 0.0)

    def write_costs(self, words: Sequence[str]) -> np.ndarray:
        """``1 − r(w)`` for each word (the loss of writing it)."""
        return np.array([1.0 - self.share(w) for w in words], dtype=np.float64)

    def delete_costs(self, source: Sequence[str]) -> np.ndarray:
        """``r(x_k)`` for each source token (the loss of deleting it)."""
        return np.array([self.share(w) for w in source], dtype=np.float64)

    def loss(self, source: Sequence[str], written: Sequence[str], deleted: Sequence[int]) -> float:
        """``Δ`` of an output that writes ``written`` and deletes the source positions ``deleted``."""
        return float(self.write_costs(written).sum() + self.delete_costs(source)[list(deleted)].sum())


def reference_shares(references: Sequence[Sequence[str]]) -> ReferenceShares:
    """:class:`ReferenceShares` of tokenised references (a word counts once per reference).

    Parameters
    ----------
    references : sequence of sequence of str
        At least one tokenised reference.

    Returns
    -------
    ReferenceShares
    """
    if not references:
        raise ValueError("reference_shares needs at least one reference")
    seen: Counter[str] = Counter()
    for ref in references:
        seen.update({w.lower() for w in ref})
    m = len(references)
    return ReferenceShares({w: c / m for w, c in seen.items()}, m)
