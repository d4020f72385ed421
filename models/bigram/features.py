"""McDonald (2006) features of the bigram compression model.

A compression is scored by its pairs of adjacent kept positions (i, j) (position 0 is ``<s>``, n+1 is
``</s>``); the words i+1 .. j-1 between them are dropped. Each pair fires

* features of the two kept words: words, fine and coarse POS, dependency labels, their syntactic
  relation (i heads j, j heads i, siblings, none);
* features of the dropped span: its length, first and last dropped tags, whether it is a union of complete
  subtrees and how many subtree roots it has, the label of the constituent it forms and where that
  constituent's head is (i, j or elsewhere), whether it holds a verb, the sentence root or punctuation;
* language-model features (when a KenLM model is given): the real value 0.1 · log10 p(w_j | w_i) (also
  separately for pairs that skip words) and the same log-probability binned in half-units;

and every dropped word k fires word, tag, label, head-tag and depth features. The dropped-word
features of a pair are the sum over its span, so B[i, j] = pair(i, j) + Σ_{i<k<j} drop(k) is computed
with prefix sums. Features are hashed into a weight vector of size 2**hash_bits (index 0 is padding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.hashing import atom, atoms, feature_index
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.bigram.span_stats import all_pairs, span_stats

VERB_POS = frozenset({"VERB", "AUX"})
PUNCT_POS = frozenset({"PUNCT", "SYM"})

PAIR_TEMPLATES = (
    "bias", "pos_pos", "tag_tag", "word_tag", "tag_word", "word_word", "label_label", "gap",
    "gap_tag_tag", "firstdrop_lastdrop", "complete_gap", "constituent_tag", "verb_root_punct",
    "relation_pos_pos", "constituent_head", "nroots_complete", "left_tag_firstdrop", "lastdrop_right_tag",
    "lm_bucket_gap",
)
DROP_TEMPLATES = ("drop_bias", "drop_tag", "drop_label", "drop_label_headtag", "drop_word", "drop_depth",
                  "drop_label_headlabel")
REAL_TEMPLATES = ("lm_bigram", "lm_bigram_gap")
LM_SCALE = 0.1
"""The real-valued LM features are 0.1 · log10 p: the perceptron's updates are then of the size of the
binary features' (log10 probabilities of a pair are typically -1 to -7)."""


def bucket(x: np.ndarray, edges=(0, 1, 2, 3, 4, 6, 10)) -> np.ndarray:
    """Bucket numbers by the given edges (as uint64 bucket indices, for hashing)."""
    return np.searchsorted(np.asarray(edges), x, side="right").astype(np.uint64)


def mix(*parts) -> np.ndarray:
    """Combine several atom arrays into one (uint64)."""
    out = np.asarray(parts[0], dtype=np.uint64)
    for p in parts[1:]:
        out = feature_index(0, out, p, hash_bits=63).astype(np.uint64)
    return out


@dataclass(frozen=True)
class BigramFeatures:
    """Hashed features of every candidate pair and every droppable word of one sentence.

    Attributes
    ----------
    n : int
        Number of tokens.
    pair_i, pair_j : numpy.ndarray of int64, shape (P,)
        The candidate pairs (i < j) of adjacent kept positions.
    pair_idx : numpy.ndarray of int64, shape (P, len(PAIR_TEMPLATES))
        Weight indices of the binary pair features.
    real_idx : numpy.ndarray of int64, shape (R,)
        Weight index of each real-valued feature.
    pair_real : numpy.ndarray of float64, shape (P, R)
        Values of the real-valued features.
    drop_idx : numpy.ndarray of int64, shape (n, len(DROP_TEMPLATES))
        Weight indices of the dropped-word features of tokens 1..n.
    """

    n: int
    pair_i: np.ndarray
    pair_j: np.ndarray
    pair_idx: np.ndarray
    real_idx: np.ndarray
    pair_real: np.ndarray
    drop_idx: np.ndarray

    def potentials(self, weights: np.ndarray) -> np.ndarray:
        """The bigram potentials B (n+2, n+2) of contract 1 under ``weights`` (-inf where i >= j)."""
        n = self.n
        pair_score = weights[self.pair_idx].sum(axis=1) + self.pair_real @ weights[self.real_idx]
        drop = weights[self.drop_idx].sum(axis=1)
        cum = np.concatenate(([0.0], np.cumsum(drop)))  # cum[k] = Σ_{t<=k} drop(t), k = 0..n
        span = cum[self.pair_j - 1] - cum[self.pair_i]
        B = np.full((n + 2, n + 2), -np.inf)
        B[self.pair_i, self.pair_j] = pair_score + span
        return B

    def vector(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The feature vector of the compression ``keep`` as (indices, values), indices may repeat."""
        keep = np.asarray(keep, dtype=bool)
        seq = np.concatenate(([0], np.flatnonzero(keep) + 1, [self.n + 1]))
        rows = self._pair_rows(seq[:-1], seq[1:])
        dropped = np.flatnonzero(~keep)
        idx = np.concatenate((self.pair_idx[rows].ravel(), np.repeat(self.real_idx[None, :], len(rows), 0)
                              .ravel(), self.drop_idx[dropped].ravel()))
        val = np.concatenate((np.ones(self.pair_idx[rows].size), self.pair_real[rows].ravel(),
                              np.ones(self.drop_idx[dropped].size)))
        return idx, val

    def _pair_rows(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        # rows of all_pairs are laid out row by row: offset(i) = Σ_{r<i} (n+1-r)
        n = self.n
        offset = i * (n + 1) - i * (i - 1) // 2
        return offset + (j - i - 1)


def bigram_features(sentence: Sentence, lm_matrix: np.ndarray | None = None, hash_bits: int = 22,
                    lexical: bool = True) -> BigramFeatures:
    """Compute the hashed McDonald features of a sentence.

    Parameters
    ----------
    sentence : Sentence
        The parsed sentence.
    lm_matrix : numpy.ndarray, optional
        (n+2, n+2) matrix of log10 p(w_j | w_i) (``LanguageModel.bigram_matrix``); no LM feature if None.
    hash_bits : int
        log2 of the weight-vector size.
    lexical : bool
        Whether to include word-identity features.

    Returns
    -------
    BigramFeatures
    """
    n = sentence.n
    words = ["<s>", *(normalise_token(t) for t in sentence.tokens), "</s>"]
    tags = ["<s>", *sentence.tags, "</s>"]
    pos = ["<s>", *sentence.pos, "</s>"]
    labels = ["<s>", *sentence.labels, "</s>"]
    heads = np.array([0, *sentence.heads, 0], dtype=np.int64)
    spans = np.zeros((n + 2, 2), dtype=np.int64)
    if n:
        spans[1:n + 1] = np.array(sentence.subtree_spans(), dtype=np.int64)
    is_verb = np.array([False, *(p in VERB_POS for p in sentence.pos), False])
    is_punct = np.array([False, *(p in PUNCT_POS for p in sentence.pos), False])
    depth = np.zeros(n + 2, dtype=np.int64)
    for k in range(1, n + 1):
        d, h, seen = 0, k, 0
        while h != 0 and seen <= n:
            h = heads[h]
            d += 1
            seen += 1
        depth[k] = d

    W, T, P, L = atoms(words), atoms(tags), atoms(pos), atoms(labels)
    if not lexical:
        W = np.full_like(W, atom("<word>"))
    pi, pj = all_pairs(n)
    complete, nroots, single, has_verb, has_root, has_punct = span_stats(heads, spans, is_verb, is_punct)
    gap = pj - pi - 1
    gapb = bucket(gap)
    has_gap = gap > 0
    none = np.uint64(atom("<none>"))
    first_drop = np.where(has_gap, T[np.minimum(pi + 1, n + 1)], none)
    last_drop = np.where(has_gap, T[np.maximum(pj - 1, 0)], none)
    relation = np.where(heads[pj] == pi, 1, np.where(heads[pi] == pj, 2,
                        np.where((heads[pi] == heads[pj]) & (pi > 0) & (pj <= n), 3, 0))).astype(np.uint64)
    rel_root = np.where(single >= 0, heads[np.maximum(single, 0)], -1)
    cons_head = np.where(single < 0, 0, np.where(rel_root == pi, 1, np.where(rel_root == pj, 2, 3)))
    cons_label = np.where(single >= 0, L[np.maximum(single, 0)], none)
    flags = (has_verb.astype(np.uint64) | (has_root.astype(np.uint64) << np.uint64(1))
             | (has_punct.astype(np.uint64) << np.uint64(2)) | (has_gap.astype(np.uint64) << np.uint64(3)))
    completeness = np.where(has_gap, complete.astype(np.uint64) + 1, 0).astype(np.uint64)
    nroot_b = np.minimum(nroots, 3).astype(np.uint64)

    if lm_matrix is not None:
        lmv = np.asarray(lm_matrix, dtype=np.float64)[pi, pj]
        lm_bucket = (np.clip(np.floor(-2.0 * lmv), 0, 16) + 1).astype(np.uint64)
    else:
        lmv = np.zeros(len(pi))
        lm_bucket = np.zeros(len(pi), dtype=np.uint64)
    parts = [
        np.zeros_like(pi, dtype=np.uint64),
        mix(P[pi], P[pj]),
        mix(T[pi], T[pj]),
        mix(W[pi], T[pj]),
        mix(T[pi], W[pj]),
        mix(W[pi], W[pj]),
        mix(L[pi], L[pj]),
        gapb,
        mix(gapb, T[pi], T[pj]),
        mix(first_drop, last_drop),
        mix(completeness, gapb),
        mix(cons_label, T[pi], completeness),
        flags,
        mix(relation, P[pi], P[pj]),
        mix(cons_head.astype(np.uint64), cons_label),
        mix(nroot_b, completeness),
        mix(T[pi], first_drop),
        mix(last_drop, T[pj]),
        mix(lm_bucket, has_gap.astype(np.uint64)),
    ]
    assert len(parts) == len(PAIR_TEMPLATES)
    pair_idx = np.stack([feature_index(t, p, 0, hash_bits) for t, p in enumerate(parts)], axis=1)

    tok = np.arange(1, n + 1)
    head_of = heads[tok]
    d_parts = [
        np.zeros(n, dtype=np.uint64),
        T[tok],
        L[tok],
        mix(L[tok], T[head_of]),
        W[tok],
        mix(bucket(depth[tok], (1, 2, 3, 4, 6)), P[tok]),
        mix(L[tok], L[head_of]),
    ]
    base = len(PAIR_TEMPLATES)
    drop_idx = (np.stack([feature_index(base + t, p, 0, hash_bits) for t, p in enumerate(d_parts)], axis=1)
                if n else np.zeros((0, len(DROP_TEMPLATES)), dtype=np.int64))

    base += len(DROP_TEMPLATES)
    if lm_matrix is not None:
        real_idx = np.array([feature_index(base + t, np.uint64(0), 0, hash_bits)
                             for t in range(len(REAL_TEMPLATES))], dtype=np.int64).ravel()
        scaled = LM_SCALE * lmv
        pair_real = np.stack([scaled, np.where(has_gap, scaled, 0.0)], axis=1)
    else:
        real_idx = np.zeros(0, dtype=np.int64)
        pair_real = np.zeros((len(pi), 0))
    return BigramFeatures(n, pi, pj, pair_idx, real_idx, pair_real, drop_idx)
