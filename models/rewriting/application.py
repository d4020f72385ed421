"""Per-application features of the rewriting model: what one hyperedge does to *this* source tree.

A rule's own features (:mod:`~dualdecomp.models.rewriting.features`) are the same wherever it applies;
these depend on the source tokens it meets, so the chart's hypergraph computes them per hyperedge
(:func:`application_values`, one row per hyperedge, columns in :data:`APPLICATION` order):

* ``dropped`` — the source tokens the hyperedge deletes (its deleted words and every leaf under its
  deleted variables); ``words`` — the target words it writes (the length bias);
* ``dropped.C`` — the deleted tokens whose POS tag falls in class C (:data:`POS_CLASSES`, from the
  preterminal's fine tag): deleting a determiner and deleting a verb are not the same edit;
* ``dropped_head.C`` — 1 when the hyperedge deletes the lexical head of the node it rewrites (the
  dependency head that projects it, ``Tree.head``) while keeping some of that node's tokens, C the head's
  class. Deleting a whole phrase happens at its parent (a deleted variable); deleting its head and keeping
  its dependents leaves a headless phrase ("have been adapted to" → "have been to"), which the flat trees
  of :func:`dualdecomp.data.trees.from_dependency` cannot tell from deleting an auxiliary without it.

Trees without heads (``Tree.head == -1``) never fire ``dropped_head``. All values are sums over
hyperedges, so the chart stays exact.
"""

from __future__ import annotations

import numpy as np

from dualdecomp.solvers.rewriting import OPERATIONS, RewriteHypergraph, RewriteRule
from dualdecomp.solvers.transducer import WORD, Frag

__all__ = ["APPLICATION", "CONTENT_TAGS", "HEAD_COLUMNS", "POS_CLASSES", "application_values", "bias_counts",
           "hyperedge_counts", "lexical_substitutions", "pos_class"]

POS_CLASSES = ("noun", "proper", "verb", "adj", "adv", "num", "pron", "det", "adp", "conj", "punct",
               "other")
"""Coarse classes of the fine (PTB) tags."""

_TAG_CLASS = {
    "NN": "noun", "NNS": "noun", "NNP": "proper", "NNPS": "proper",
    "VB": "verb", "VBD": "verb", "VBG": "verb", "VBN": "verb", "VBP": "verb", "VBZ": "verb", "MD": "verb",
    "JJ": "adj", "JJR": "adj", "JJS": "adj", "RB": "adv", "RBR": "adv", "RBS": "adv", "WRB": "adv",
    "CD": "num", "PRP": "pron", "PRP$": "pron", "WP": "pron", "WP$": "pron", "EX": "pron",
    "DT": "det", "PDT": "det", "WDT": "det", "IN": "adp", "TO": "adp", "RP": "adp", "CC": "conj",
    ",": "punct", ".": "punct", ":": "punct", "``": "punct", "''": "punct", "-LRB-": "punct",
    "-RRB-": "punct", "HYPH": "punct", "NFP": "punct",
}
_CLASS_ID = {c: i for i, c in enumerate(POS_CLASSES)}

APPLICATION = (("dropped", "words") + tuple(f"dropped.{c}" for c in POS_CLASSES)
               + tuple(f"dropped_head.{c}" for c in POS_CLASSES))
"""Names of the per-application features, the columns of :func:`application_values`."""
_CLASS_COL = 2
_HEAD_COL = 2 + len(POS_CLASSES)
HEAD_COLUMNS = range(_HEAD_COL, _HEAD_COL + len(POS_CLASSES))
"""The columns of the ``dropped_head`` features."""


def pos_class(tag: str) -> str:
    """The coarse class of a fine POS tag (``other`` for tags outside :data:`POS_CLASSES`' map)."""
    return _TAG_CLASS.get(tag, "other")


def hyperedge_counts(hg: RewriteHypergraph) -> tuple[np.ndarray, np.ndarray]:
    """Per hyperedge: the source tokens it deletes and the target words it writes (float64)."""
    dropped = np.diff(hg.drop_ptr).astype(np.float64)
    words = np.concatenate(([0], np.cumsum(hg.item_code >= 0)))  # word items up to each position
    written = (words[hg.item_ptr[1:]] - words[hg.item_ptr[:-1]]).astype(np.float64)
    return dropped, written


CONTENT_TAGS = ("NN", "VB", "JJ", "RB")
"""Prefixes of the Penn tags of content words (nouns, verbs, adjectives, adverbs)."""


def _word_tags(frag: Frag, parent: str = "") -> list[str]:
    """The label of the node above each ``WORD`` of an elementary tree, left to right."""
    if frag.kind == WORD:
        return [parent]
    return [t for c in frag.children for t in _word_tags(c, frag.label)]


def lexical_substitutions(rule: RewriteRule, content_only: bool = False) -> int:
    """The rule's substituted words that differ from their source word in more than case (``the`` →
    ``The`` is a substitution in :meth:`RewriteRule.operations` but not here); with ``content_only``,
    only those whose source word's preterminal is a content tag (:data:`CONTENT_TAGS`)."""
    source = [f.label for f in rule.source.frontier() if f.kind == WORD]
    target = [f.label for f in rule.target.frontier() if f.kind == WORD]
    changed = [j for w, j in zip(target, rule.word_links, strict=True)
               if j is not None and source[j].lower() != w.lower()]
    if content_only and changed:  # the tags only when asked (bias_counts runs once per decode)
        tags = _word_tags(rule.source)
        changed = [j for j in changed if tags[j].startswith(CONTENT_TAGS)]
    return len(changed)


def bias_counts(hg: RewriteHypergraph, content_only: bool = False) -> np.ndarray:
    """Per hyperedge (rows): the counts the decode biases multiply (columns in the order of
    :data:`~dualdecomp.models.rewriting.decode_settings.BIASES`): target words written, source words
    substituted by another word (:func:`lexical_substitutions`: a change of case alone is not counted;
    ``content_only``: content words only), target words inserted (float64, shape ``(hyperedges, 3)``)."""
    out = np.empty((len(hg.hyperedge_rule), 3), dtype=np.float64)
    out[:, 0] = hyperedge_counts(hg)[1]
    per_rule = np.array([lexical_substitutions(r, content_only) for r in hg.rules], dtype=np.float64)
    out[:, 1] = per_rule[hg.hyperedge_rule] if len(per_rule) else 0.0
    out[:, 2] = hg.operations[:, OPERATIONS.index("inserted")]
    return out


def _token_classes(hg: RewriteHypergraph) -> np.ndarray:
    """The POS class id of every source token (its preterminal's tag)."""
    out = np.full(hg.n, _CLASS_ID["other"], dtype=np.int64)
    tree = hg.tree
    for i, node in enumerate(tree.nodes):
        if node.is_leaf and tree.parent[i] >= 0:
            out[node.index] = _CLASS_ID[pos_class(tree.nodes[tree.parent[i]].label)]
    return out


def application_values(hg: RewriteHypergraph, full: bool = True) -> np.ndarray:
    """The per-application features of every hyperedge.

    Parameters
    ----------
    hg : RewriteHypergraph
    full : bool
        All columns; False: only ``dropped`` and ``words`` (what a model without the ``deletion-pos``
        feature group reads), without computing the others.

    Returns
    -------
    numpy.ndarray
        float64 of shape (hyperedges, len(APPLICATION)) (full) or (hyperedges, 2), columns in
        :data:`APPLICATION` order.
    """
    m = hg.num_hyperedges
    out = np.zeros((m, len(APPLICATION) if full else 2), dtype=np.float64)
    out[:, 0], out[:, 1] = hyperedge_counts(hg)
    if not full or m == 0 or hg.drop_idx.size == 0:
        return out
    classes = _token_classes(hg)
    edge_of = np.repeat(np.arange(m), np.diff(hg.drop_ptr))
    np.add.at(out, (edge_of, _CLASS_COL + classes[hg.drop_idx]), 1.0)
    tree = hg.tree
    heads = np.array([node.head for node in tree.nodes], dtype=np.int64)
    leaves = np.concatenate(([0], np.cumsum([node.is_leaf for node in tree.nodes])))  # in preorder
    sizes = leaves[np.asarray(tree.end)] - leaves[:-1]  # leaves under each node: nodes[i:end[i]]
    edge_head = heads[hg.hyperedge_node]
    hit = hg.drop_idx == edge_head[edge_of]  # the dropped token is its hyperedge's node's head
    partial = np.diff(hg.drop_ptr) < sizes[hg.hyperedge_node]  # the hyperedge keeps part of its node
    edges = np.unique(edge_of[hit])
    edges = edges[partial[edges]]
    out[edges, _HEAD_COL + classes[edge_head[edges]]] = 1.0
    return out
