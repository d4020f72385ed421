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

SARI scores n-grams up to 4, and a bag of words cannot tell "have been adapted to" from "have been to".
An optional **bigram** term (weight α, ``bigram_weight`` of the trainer) adds, for each bigram ``a b`` the
output writes (sentence boundaries included), ``α (1 − r(a b) − β r(a b) [a b is a bigram of the
source])`` with ``r(a b)`` the share of references that contain it: a written junction that no
reference has costs α, and a source bigram the references keep earns back, each time it is written, the
``β r(a b)`` its loss would cost (the deletion side of the unigram loss, for bigrams, up to a constant;
without it the term prices only what is written and its oracle deletes nearly everything). It is a
function of consecutive written words, as the target LM is, so the chart adds it exactly as a second
bigram matrix (:meth:`ReferenceShares.bigram_costs`).

An optional **add reward** (weight λ, ``add_weight``) lowers the cost of writing a word that is not among
the source's words (lower-cased) to ``1 − r(w) − λ r(w)``: the references that *add* the word count
λ + 1 times, as SARI's ADD part — a small score, which each correct addition moves far more than a kept
word moves KEEP — rewards it. It depends on the word and the source only, so it stays a sum over
hyperedges. The bigram term has its own (weight μ, ``bigram_add_weight``): a written bigram that is not
among the source's bigrams costs ``α (1 − r(a b) − μ r(a b))``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["BOS", "EOS", "ReferenceShares", "bounded_bigrams", "reference_shares"]

BOS, EOS = "<s>", "</s>"


@dataclass(frozen=True)
class ReferenceShares:
    """``r(w)`` for one source: the share of its references that contain each (lower-cased) word.

    Attributes
    ----------
    shares : dict
        Lower-cased word → share in (0, 1].
    references : int
        Number of references.
    bigrams : dict
        Lower-cased (word, word) → share of references with that bigram (``<s>`` and ``</s>`` mark the
        sentence boundaries).
    """

    shares: dict[str, float]
    references: int
    bigrams: dict[tuple[str, str], float] = field(default_factory=dict)

    def share(self, word: str) -> float:
        """``r(word)`` (0 for a word no reference has)."""
        return self.shares.get(word.lower(), 0.0)

    def write_costs(self, words: Sequence[str], source: Sequence[str] = (), add_weight: float = 0.0
                    ) -> np.ndarray:
        """``1 − r(w)`` for each word (the loss of writing it), minus ``λ r(w)`` (λ = ``add_weight``) for
        a word that is not among the (lower-cased) ``source`` tokens."""
        own = {w.lower() for w in source}
        return np.array([1.0 - self.share(w) - (add_weight * self.share(w) if w.lower() not in own else 0.0)
                         for w in words], dtype=np.float64)

    def delete_costs(self, source: Sequence[str]) -> np.ndarray:
        """``r(x_k)`` for each source token (the loss of deleting it)."""
        return np.array([self.share(w) for w in source], dtype=np.float64)

    def bigram_cost(self, a: str, b: str, source_bigrams: frozenset[tuple[str, str]] = frozenset(),
                    delete_weight: float = 0.0, add_weight: float = 0.0) -> float:
        """The cost of writing the bigram ``a b`` (lower-cased): ``1 − r(a b)``, minus ``β r(a b)`` if it
        is one of ``source_bigrams`` (β = ``delete_weight``), else minus ``μ r(a b)`` (μ =
        ``add_weight``)."""
        share = self.bigrams.get((a, b), 0.0)
        return 1.0 - share - (delete_weight if (a, b) in source_bigrams else add_weight) * share

    def bigram_costs(self, vocab: Sequence[str], source: Sequence[str] = (), delete_weight: float = 0.0,
                     add_weight: float = 0.0) -> np.ndarray:
        """The (V + 2, V + 2) matrix of :meth:`bigram_cost` over a chart's vocabulary (the layout of the
        target LM's bigram matrix: row V is ``<s>``, column V + 1 is ``</s>``; 0 into ``<s>`` and out of
        ``</s>``), for the source tokens ``source``."""
        V = len(vocab)
        words = [w.lower() for w in vocab]
        pairs = bounded_bigrams(source) if source else frozenset()
        out = np.zeros((V + 2, V + 2), dtype=np.float64)
        cols = [*range(V), V + 1]
        for i, a in enumerate([*words, BOS]):
            for j, b in zip(cols, [*words, EOS], strict=True):
                out[i, j] = self.bigram_cost(a, b, pairs, delete_weight, add_weight)
        return out

    def loss(self, source: Sequence[str], written: Sequence[str], deleted: Sequence[int],
             bigram_weight: float = 0.0, delete_weight: float = 1.0, add_weight: float = 0.0,
             bigram_add_weight: float = 0.0) -> float:
        """``Δ`` of an output that writes ``written`` and deletes the source positions ``deleted``: β
        (``delete_weight``) times the deletion side, plus ``bigram_weight`` × the bigram term, with the
        add rewards λ = ``add_weight`` and μ = ``bigram_add_weight`` (bigrams)."""
        out = float(self.write_costs(written, source, add_weight).sum()
                    + delete_weight * self.delete_costs(source)[list(deleted)].sum())
        if bigram_weight:
            bounded = [BOS, *(w.lower() for w in written), EOS]
            pairs = bounded_bigrams(source)
            out += bigram_weight * sum(self.bigram_cost(a, b, pairs, delete_weight, bigram_add_weight)
                                       for a, b in zip(bounded, bounded[1:], strict=False))
        return out


def bounded_bigrams(tokens: Sequence[str]) -> frozenset[tuple[str, str]]:
    """The lower-cased bigrams of ``<s> tokens </s>``."""
    bounded = [BOS, *(w.lower() for w in tokens), EOS]
    return frozenset(zip(bounded, bounded[1:], strict=False))


def reference_shares(references: Sequence[Sequence[str]], weights: Sequence[float] | None = None
                     ) -> ReferenceShares:
    """:class:`ReferenceShares` of tokenised references (a word counts once per reference).

    Parameters
    ----------
    references : sequence of sequence of str
        At least one tokenised reference.
    weights : sequence of float, optional
        One weight >= 0 per reference (normalised to sum 1; at least one positive): ``r(w)`` is then the
        weighted share of the references that contain ``w``. None: every reference weighs the same.

    Returns
    -------
    ReferenceShares

    Raises
    ------
    ValueError
        No reference, or weights of another length, negative or all 0.
    """
    if not references:
        raise ValueError("reference_shares needs at least one reference")
    if weights is None:
        weights = [1.0] * len(references)
    if len(weights) != len(references) or min(weights) < 0 or sum(weights) <= 0:
        raise ValueError("reference_shares needs one weight >= 0 per reference, not all 0")
    total = float(sum(weights))  # with equal weights every sum is a whole number: c / m, exactly
    seen: Counter[str] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    for ref, weight in zip(references, weights, strict=True):
        seen.update(dict.fromkeys({w.lower() for w in ref}, float(weight)))
        pairs.update(dict.fromkeys(bounded_bigrams(ref), float(weight)))
    return ReferenceShares({w: c / total for w, c in seen.items() if c > 0}, len(references),
                           {p: c / total for p, c in pairs.items() if c > 0})
