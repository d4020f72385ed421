"""Hashed features of the dependency compression model (potentials of contract 3 of docs/architecture.md §2).

A structure is a kept set K with a projective tree over the root 0 and K
(``dualdecomp.solvers.dependency.solver``). Its feature vector is the sum of

* **arc features** of every arc h → m (h in 0..n, m in 1..n; h = 0 is the root): head and modifier words
  (``dualdecomp.data.normalisation.normalise_token``), fine and coarse POS, the source dependency labels of h
  and m, the
  arc's relation to the *source* spaCy tree (h is m's head, grandparent, a further ancestor, m is an
  ancestor of h, h and m are siblings, none of these), direction and distance bucket, the POS context
  around h and m (McDonald et al. 2005), and in-between features: for a few POS classes (verbs,
  punctuation, conjunctions, adpositions, nominals) how many tokens of the class lie strictly between h
  and m (0, 1, 2+), with the two POS of the arc;
* **keep features** of every kept token m: word, tag, label, label + source-head tag or label, depth in
  the source tree, number of source children, position in the sentence, and a bias. Every kept token
  has exactly one incoming arc, so the keep features are folded into the arc scores: ``A[h, m] =
  arc(h, m) + keep(m)``. They are what lets the parser learn what to drop (and the keep bias is the
  free-length rate; at a fixed length it is a constant);
* optionally **sibling features** (second order) of every (h, s, m) the parser scores: the modifier m of
  h with previous (closer) sibling s on the same side, ``s = h`` for the closest modifier. Templates:
  head + sibling + modifier coarse POS; sibling + modifier fine tag; sibling + modifier source label;
  each with the direction, and the "sibling" part replaced by ``<first>`` when ``s = h``.

Everything is hashed into one weight vector of size 2**hash_bits (index 0 is padding) with
``dualdecomp.core.hashing``. Arc and keep indices are computed once per sentence, vectorised over all (h, m);
the sibling features depend only on per-token types, so their weights are looked up in a small table over the
types present in the sentence (heads × siblings × modifiers × direction), which makes S[h, s, m] a
gather instead of O(n^3) hashing — and the potentials never build the (n+1)³ tensor: S is returned in
factored form (``dualdecomp.solvers.dependency.siblings.SiblingScores``: the small tables and two
(n+1, n+1) address arrays per template) and the parser computes each entry inside its chart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.hashing import atom, atoms, feature_index
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.bigram import bucket, mix
from dualdecomp.solvers.dependency import SiblingScores

BETWEEN_CLASSES: tuple[tuple[str, frozenset[str]], ...] = (
    ("verb", frozenset({"VERB", "AUX"})),
    ("punct", frozenset({"PUNCT", "SYM"})),
    ("conj", frozenset({"CCONJ", "SCONJ"})),
    ("adp", frozenset({"ADP"})),
    ("nominal", frozenset({"NOUN", "PROPN", "PRON"})),
)
ARC_TEMPLATES = (
    "dir_dist", "rel", "rel_dir_dist", "rel_label", "rel_label_headpos", "labels_rel", "pos_pos_dir",
    "tag_tag_dir_dist", "pos_pos_rel", "word_tag_dir", "tag_word_dir", "word_word", "headword_headtag_dir",
    "headtag_dir", "context_inner", "context_outer",
    *(f"between_{name}" for name, _ in BETWEEN_CLASSES),
)
KEEP_TEMPLATES = (
    "keep_bias", "keep_word", "keep_tag", "keep_label", "keep_label_headtag", "keep_label_headlabel",
    "keep_label_depth", "keep_word_label", "keep_label_children", "keep_pos_position",
)
SIBLING_TEMPLATES = ("sib_pos_pos_pos", "sib_tag_tag", "sib_label_label")
TEMPLATE_BASE = 64
"""Template numbers start here (``dualdecomp.models.bigram.features`` uses the small ones; the vectors are
separate, but distinct numbers keep the two families apart if they ever share one)."""

ROOT = "<root>"
FIRST = "<first>"
REL_HEAD, REL_GRANDPARENT, REL_ANCESTOR, REL_DESCENDANT, REL_SIBLING, REL_OTHER = range(6)
DIST_EDGES = (1, 2, 3, 4, 6, 11)


def template_number(name: str) -> int:
    """The hashing template number of a feature template (arc, keep or sibling)."""
    return TEMPLATE_BASE + (ARC_TEMPLATES + KEEP_TEMPLATES + SIBLING_TEMPLATES).index(name)


def keep_bias_index(hash_bits: int) -> int:
    """Weight index of the ``keep_bias`` feature (fires once per kept token)."""
    return int(feature_index(template_number("keep_bias"), np.zeros(1, dtype=np.uint64), 0, hash_bits)[0])


def sibling_triples(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (head, previous sibling, modifier) triple of every kept token of a structure.

    Parameters
    ----------
    heads : numpy.ndarray
        int (n,): head of each token (0 = root, -1 = dropped), as in ``Solution.heads``.

    Returns
    -------
    h, s, m : numpy.ndarray of int64
        For every kept m (positions 1..n): its head h and its previous sibling s — the closest modifier
        of h on the same side that is closer to h than m, or ``s = h`` for the closest one.
    """
    heads = np.asarray(heads, dtype=np.int64)
    m = np.flatnonzero(heads >= 0) + 1
    h = heads[m - 1]
    side = m > h
    order = np.lexsort((np.abs(m - h), side, h))
    m, h, side = m[order], h[order], side[order]
    same = np.zeros(len(m), dtype=bool)
    same[1:] = (h[1:] == h[:-1]) & (side[1:] == side[:-1])
    prev = np.concatenate(([0], m[:-1])).astype(np.int64)
    s = np.where(same, prev, h)
    return h, s, m


@dataclass(frozen=True)
class SiblingTable:
    """Weight indices of one sibling template over the token types of a sentence.

    ``grid`` has shape (kh, ks + 1, km, 2): head type, sibling type (``ks`` = ``<first>``), modifier type,
    direction (1 = right). For positions h, s, m the flat index into ``grid`` is
    ``hs[h, s] + md[h, m]`` (``hs[h, h]`` points at ``<first>``; ``md`` holds the direction of h → m).
    """

    grid: np.ndarray
    hs: np.ndarray
    md: np.ndarray

    def indices(self, h: np.ndarray, s: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Weight indices of the triples (h, s, m)."""
        return self.grid.ravel()[self.hs[h, s] + self.md[h, m]]


@dataclass(frozen=True)
class DependencyFeatures:
    """Hashed features of every candidate arc, kept token and sibling triple of one sentence.

    Attributes
    ----------
    n : int
        Number of tokens.
    arc_idx : numpy.ndarray of int32, shape (n+1, n, len(ARC_TEMPLATES))
        Weight indices of the arc h → m (row h in 0..n, column m - 1).
    keep_idx : numpy.ndarray of int32, shape (n, len(KEEP_TEMPLATES))
        Weight indices of the keep features of tokens 1..n.
    siblings : tuple of SiblingTable
        One table per sibling template; empty for a first-order model.
    """

    n: int
    arc_idx: np.ndarray
    keep_idx: np.ndarray
    siblings: tuple[SiblingTable, ...] = ()

    @property
    def second_order(self) -> bool:
        """Whether sibling features are present."""
        return bool(self.siblings)

    def potentials(self, weights: np.ndarray) -> tuple[np.ndarray, SiblingScores | None]:
        """The potentials (A, S) of contract 3 under ``weights``.

        Parameters
        ----------
        weights : numpy.ndarray
            Weight vector of size 2**hash_bits.

        Returns
        -------
        A : numpy.ndarray
            (n+1, n+1): ``A[h, m]`` = arc(h, m) + keep(m); -inf on the diagonal and in the unused column 0.
        S : SiblingScores or None
            The (n+1, n+1, n+1) sibling scores in factored form (None for a first-order model):
            ``S[h, s, m]`` is the sum over the templates of ``weights[grid]`` at ``hs[h, s] + md[h, m]``,
            O(n²) memory instead of the dense tensor (``S.dense()`` builds it). Entries that are not a
            valid (head, previous sibling, modifier) triple are meaningless (the parser never reads them).
        """
        n = self.n
        A = np.full((n + 1, n + 1), -np.inf)
        if n:
            keep = weights[self.keep_idx].sum(axis=1)
            A[:, 1:] = weights[self.arc_idx].sum(axis=2) + keep[None, :]
            A[np.arange(1, n + 1), np.arange(1, n + 1)] = -np.inf
        if not self.siblings:
            return A, None
        tables = [weights[t.grid].ravel() for t in self.siblings]
        offsets = np.cumsum([0, *(len(t) for t in tables[:-1])])
        dtype = np.int32 if sum(len(t) for t in tables) < 2**31 else np.int64
        hs = np.stack([(t.hs.astype(np.int64) + off).astype(dtype) for t, off in
                       zip(self.siblings, offsets, strict=True)])
        md = np.stack([t.md for t in self.siblings]).astype(dtype)
        return A, SiblingScores(np.concatenate(tables), hs, md)

    def vector(self, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The feature vector of a structure as (indices, values); indices may repeat.

        Parameters
        ----------
        heads : numpy.ndarray
            int (n,): head of each token (0 = root), -1 for dropped tokens (``Solution.heads``).

        Returns
        -------
        indices : numpy.ndarray of int64
        values : numpy.ndarray of float64
            All ones (every feature is binary); the dot product with the weights equals the structure's
            score Σ A + Σ S under :meth:`potentials`.
        """
        heads = np.asarray(heads, dtype=np.int64)
        kept = np.flatnonzero(heads >= 0)
        parts = [self.arc_idx[heads[kept], kept].ravel(), self.keep_idx[kept].ravel()]
        if self.siblings:
            h, s, m = sibling_triples(heads)
            parts.extend(table.indices(h, s, m) for table in self.siblings)
        idx = np.concatenate(parts).astype(np.int64)
        return idx, np.ones(len(idx))


def _combine(*parts) -> np.ndarray:
    """``dualdecomp.models.bigram.features._mix`` of atom arrays of broadcastable shapes (the result has the
    full shape)."""
    shape = np.broadcast_shapes(*(np.shape(p) for p in parts))
    return mix(np.broadcast_to(np.asarray(parts[0], dtype=np.uint64), shape), *parts[1:])


def ancestry(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Depths and ancestor distances in a tree over positions 0..n.

    Parameters
    ----------
    heads : numpy.ndarray
        int (n+1,): head of every position, ``heads[0] = -1`` (0 is the root); -1 also marks a position
        outside the tree.

    Returns
    -------
    depth : numpy.ndarray
        int (n+1,): number of arcs from each position up to the root (0 for the root and outsiders).
    up : numpy.ndarray
        int (n+1, n+1): ``up[h, m]`` = number of arcs from m up to its proper ancestor h, 0 if h is not an
        ancestor of m. A cycle stops after n steps.
    """
    N = len(heads)
    up = np.zeros((N, N), dtype=np.int64)
    cur = heads.copy()
    nodes = np.arange(N)
    for step in range(1, N):
        live = np.flatnonzero(cur >= 0)
        if not len(live):
            break
        a, m = cur[live], nodes[live]
        up[a, m] = np.where(up[a, m] == 0, step, up[a, m])  # the first (closest) visit wins on a cycle
        cur[live] = heads[a]
    depth = up[0].copy()
    return depth, up


def _type_codes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct atoms of ``x`` and the code of every entry."""
    uniq, codes = np.unique(x, return_inverse=True)
    return uniq, codes.astype(np.int64)


def _sibling_table(template: int, head: np.ndarray, sib: np.ndarray, mod: np.ndarray, right: np.ndarray,
                   hash_bits: int) -> SiblingTable:
    """The table of one sibling template; ``head``/``sib``/``mod`` are per-position atoms (n+1,)."""
    N = len(head)
    uh, ch = _type_codes(head)
    us, cs = _type_codes(sib)
    um, cm = _type_codes(mod)
    us = np.concatenate((us, [np.uint64(atom(FIRST))]))
    kh, ks, km = len(uh), len(us) - 1, len(um)
    grid_atoms = _combine(uh[:, None, None, None], us[None, :, None, None], um[None, None, :, None],
                      np.array([0, 1], dtype=np.uint64)[None, None, None, :])
    grid = feature_index(template, grid_atoms, 0, hash_bits).astype(np.int32)
    sc = np.broadcast_to(cs[None, :], (N, N)).copy()
    np.fill_diagonal(sc, ks)
    hs = ((ch[:, None] * (ks + 1) + sc) * (km * 2)).astype(np.int32)
    md = (cm[None, :] * 2 + right.astype(np.int64)).astype(np.int32)
    assert grid.shape == (kh, ks + 1, km, 2)
    return SiblingTable(grid, hs, md)


def dependency_features(sentence: Sentence, hash_bits: int = 22, lexical: bool = True,
                        second_order: bool = False, deadline: Deadline | None = None) -> DependencyFeatures:
    """Compute the hashed features of a sentence for the dependency model.

    Parameters
    ----------
    sentence : Sentence
        The parsed source sentence (its spaCy tree gives the source-tree features).
    hash_bits : int
        log2 of the weight-vector size (at most 31: indices are stored as int32).
    lexical : bool
        Whether to include word-identity features.
    second_order : bool
        Whether to compute the sibling features (for S).
    deadline : Deadline, optional
        The sentence's deadline, checked before each feature template (every O(n²) work).

    Returns
    -------
    DependencyFeatures

    Raises
    ------
    TimeLimitError
        When ``deadline`` passes while the features are computed.
    """

    def check(stage: str) -> None:
        if deadline is not None:
            deadline.check(f"computing the dependency potentials ({stage})")

    if not 1 <= hash_bits <= 31:
        raise ValueError(f"hash_bits must be in [1, 31], got {hash_bits}")
    n = sentence.n
    N = n + 1
    words = [ROOT, *(normalise_token(t) for t in sentence.tokens)]
    W = atoms(words)
    if not lexical:
        W = np.full_like(W, atom("<word>"))
    T = atoms([ROOT, *sentence.tags])
    P = atoms([ROOT, *sentence.pos])
    L = atoms([ROOT, *sentence.labels])
    src = np.array([-1, *sentence.heads], dtype=np.int64)
    check("source tree")
    depth, up = ancestry(src)
    nchildren = np.bincount(src[1:], minlength=N) if n else np.zeros(N, dtype=np.int64)
    # padded coarse POS over positions -1..n+1 (for the context features)
    Pp = np.concatenate(([np.uint64(atom("<s>"))], P, [np.uint64(atom("</s>"))]))

    hh = np.arange(N)[:, None]  # head positions 0..n (rows)
    mm = np.arange(1, N)[None, :]  # modifier positions 1..n (columns)
    right = (mm > hh).astype(np.uint64)
    dist = np.where(hh == 0, 0, np.abs(mm - hh))
    distb = bucket(dist, DIST_EDGES)
    dd = _combine(right, distb)
    upd = up[hh, mm]  # distance from m up to h, 0 if h is no ancestor of m
    rel = np.full((N, n), REL_OTHER, dtype=np.int64)
    rel[(src[hh] == src[mm]) & (hh > 0)] = REL_SIBLING
    rel[up[mm, hh] > 0] = REL_DESCENDANT
    rel[upd >= 3] = REL_ANCESTOR
    rel[upd == 2] = REL_GRANDPARENT
    rel[upd == 1] = REL_HEAD
    rel = rel.astype(np.uint64)
    Wh, Wm, Th, Tm, Ph, Pm, Lh, Lm = W[hh], W[mm], T[hh], T[mm], P[hh], P[mm], L[hh], L[mm]
    lo, hi = np.minimum(hh, mm), np.maximum(hh, mm)
    # context: POS just inside the arc (h+1 / m-1 in the head's direction) and just outside it
    inner_h = Pp[np.where(mm > hh, hh + 2, hh)]  # h+1 if right arc else h-1  (Pp is shifted by one)
    inner_m = Pp[np.where(mm > hh, mm, mm + 2)]  # m-1 if right arc else m+1
    outer_h = Pp[np.where(mm > hh, hh, hh + 2)]
    outer_m = Pp[np.where(mm > hh, mm + 2, mm)]
    parts = [
        dd,
        rel,
        _combine(rel, dd),
        _combine(rel, Lm),
        _combine(rel, Lm, Ph),
        _combine(Lh, Lm, rel),
        _combine(Ph, Pm, right),
        _combine(Th, Tm, dd),
        _combine(Ph, Pm, rel),
        _combine(Wh, Tm, right),
        _combine(Th, Wm, right),
        _combine(Wh, Wm),
        _combine(Wh, Th, right),
        _combine(Th, right),
        _combine(Ph, inner_h, inner_m, Pm),
        _combine(outer_h, Ph, Pm, outer_m),
    ]
    pos_list = [ROOT, *sentence.pos]
    for _, members in BETWEEN_CLASSES:
        member = np.array([p in members for p in pos_list], dtype=np.int64)
        cum = np.concatenate(([0], np.cumsum(member)))  # cum[k] = Σ_{t<k} member[t]
        count = cum[hi] - cum[np.minimum(lo + 1, hi)]
        parts.append(_combine(np.minimum(count, 2).astype(np.uint64), Ph, Pm, right))
    assert len(parts) == len(ARC_TEMPLATES)
    arc_idx = np.empty((N, n, len(ARC_TEMPLATES)), dtype=np.int32)
    for k, (name, p) in enumerate(zip(ARC_TEMPLATES, parts, strict=True)):
        check(f"arc feature {name}")
        arc_idx[:, :, k] = feature_index(template_number(name), np.broadcast_to(p, (N, n)), 0, hash_bits)

    tok = np.arange(1, N)
    head_of = src[tok]
    position = (5 * (tok - 1) // max(n, 1)).astype(np.uint64)
    position[-1:] = 5  # the last token is its own bucket
    k_parts = [
        np.zeros(n, dtype=np.uint64),
        W[tok],
        T[tok],
        L[tok],
        _combine(L[tok], T[head_of]),
        _combine(L[tok], L[head_of]),
        _combine(L[tok], bucket(depth[tok], (1, 2, 3, 4, 6))),
        _combine(W[tok], L[tok]),
        _combine(L[tok], np.minimum(nchildren[tok], 3).astype(np.uint64)),
        _combine(P[tok], position),
    ]
    assert len(k_parts) == len(KEEP_TEMPLATES)
    keep_idx = (np.stack([feature_index(template_number(name), p, 0, hash_bits)
                          for name, p in zip(KEEP_TEMPLATES, k_parts, strict=True)], axis=1).astype(np.int32)
                if n else np.zeros((0, len(KEEP_TEMPLATES)), dtype=np.int32))

    siblings: tuple[SiblingTable, ...] = ()
    if second_order:
        pos_right = np.arange(N)[None, :] > np.arange(N)[:, None]
        none = np.full(N, atom("<any>"), dtype=np.uint64)
        check("sibling features")
        siblings = tuple(
            _sibling_table(template_number(name), head, sib, mod, pos_right, hash_bits)
            for name, head, sib, mod in zip(SIBLING_TEMPLATES, (P, none, none), (P, T, L), (P, T, L),
                                            strict=True))
    return DependencyFeatures(n, arc_idx, keep_idx, siblings)
