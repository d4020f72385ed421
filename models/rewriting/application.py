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

* ``dropped_rel.R`` and ``dropped_rel_tokens.R`` — what a deletion removes, by dependency relation: the
  tokens a hyperedge deletes fall into *fragments*, a fragment's root being a deleted token whose
  dependency governor the same hyperedge does not delete (the head of a deleted variable's subtree, or a
  deleted word); per fragment, ``dropped_rel.R`` counts 1 and ``dropped_rel_tokens.R`` its tokens, R the
  root's relation (:data:`RELATIONS`, ``Tree.relation``; a label outside them counts as ``dep``). The
  governors are read from the tree's heads (a node's head is governed by its parent's head when the two
  differ), so they are the arcs :func:`dualdecomp.data.trees.from_dependency` built the tree from.

Trees without heads (``Tree.head == -1``) never fire ``dropped_head``, and tokens without a relation
(``Tree.relation == ""``) never fire ``dropped_rel``. All values are sums over hyperedges, so the chart
stays exact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dualdecomp.solvers.rewriting import OPERATIONS, RewriteHypergraph, RewriteRule, function_words
from dualdecomp.solvers.transducer import WORD, Frag

__all__ = ["APPLICATION", "CONTENT_TAGS", "HEAD_COLUMNS", "POS_CLASSES", "POS_COLUMNS", "RELATIONS",
           "RELATION_COLUMNS",
           "application_values", "bias_counts", "content_insertion_counts", "content_insertions",
           "hyperedge_counts", "lexical_substitutions", "per_rule_values", "pos_class"]

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

RELATIONS = ("ROOT", "acl", "acomp", "advcl", "advmod", "agent", "amod", "appos", "attr", "aux", "auxpass",
             "case", "cc", "ccomp", "compound", "conj", "csubj", "csubjpass", "dative", "dep", "det", "dobj",
             "expl", "intj", "mark", "meta", "neg", "nmod", "npadvmod", "nsubj", "nsubjpass", "nummod",
             "oprd", "parataxis", "pcomp", "pobj", "poss", "preconj", "predet", "prep", "prt", "punct",
             "quantmod", "relcl", "xcomp")
"""The dependency labels of the English spaCy parsers (``en_core_web_sm``'s parser labels)."""
_RELATION_ID = {r: i for i, r in enumerate(RELATIONS)}

APPLICATION = (("dropped", "words") + tuple(f"dropped.{c}" for c in POS_CLASSES)
               + tuple(f"dropped_head.{c}" for c in POS_CLASSES)
               + tuple(f"dropped_rel.{r}" for r in RELATIONS)
               + tuple(f"dropped_rel_tokens.{r}" for r in RELATIONS))
"""Names of the per-application features, the columns of :func:`application_values`."""
_CLASS_COL = 2
_HEAD_COL = 2 + len(POS_CLASSES)
HEAD_COLUMNS = range(_HEAD_COL, _HEAD_COL + len(POS_CLASSES))
"""The columns of the ``dropped_head`` features."""
_REL_COL = _HEAD_COL + len(POS_CLASSES)
_REL_TOKENS_COL = _REL_COL + len(RELATIONS)
POS_COLUMNS = range(_CLASS_COL, _REL_COL)
"""The columns of the ``dropped.C`` and ``dropped_head.C`` features (feature group ``deletion-pos``)."""
RELATION_COLUMNS = range(_REL_COL, _REL_TOKENS_COL + len(RELATIONS))
"""The columns of the ``dropped_rel`` and ``dropped_rel_tokens`` features (feature group
``deletion-dep``)."""


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
    out[:, 1] = per_rule_values(hg, lambda rule: lexical_substitutions(rule, content_only))
    out[:, 2] = hg.operations[:, OPERATIONS.index("inserted")]
    return out


def content_insertions(rule: RewriteRule) -> int:
    """The words ``rule`` inserts (target words aligned to no source word) that are content words: their
    lowercased form is not in spaCy's English ``STOP_WORDS`` and has a letter or digit ("the", "was",
    "," are not; "clarinet", "1827" are). A rule that deletes a subtree and writes such words in its place
    fires on any subtree of that shape (the thirty-fifth rule of ``docs/rewriting.md``)."""
    stop = function_words()
    target = [f.label for f in rule.target.frontier() if f.kind == WORD]
    return sum(1 for w, j in zip(target, rule.word_links, strict=True)
               if j is None and w.lower() not in stop and any(c.isalnum() for c in w))


def content_insertion_counts(hg: RewriteHypergraph) -> np.ndarray:
    """Per hyperedge: its rule's :func:`content_insertions` (float64, shape ``(hyperedges,)``)."""
    return per_rule_values(hg, content_insertions)


def per_rule_values(hg: RewriteHypergraph, value: Callable[[RewriteRule], float]) -> np.ndarray:
    """Per hyperedge: ``value`` of its rule, computed once per rule of ``hg`` (float64, shape
    ``(hyperedges,)``)."""
    per_rule = np.array([value(r) for r in hg.rules], dtype=np.float64)
    return per_rule[hg.hyperedge_rule] if len(per_rule) else np.zeros(len(hg.hyperedge_rule))


def _token_classes(hg: RewriteHypergraph) -> np.ndarray:
    """The POS class id of every source token (its preterminal's tag)."""
    out = np.full(hg.n, _CLASS_ID["other"], dtype=np.int64)
    tree = hg.tree
    for i, node in enumerate(tree.nodes):
        if node.is_leaf and tree.parent[i] >= 0:
            out[node.index] = _CLASS_ID[pos_class(tree.nodes[tree.parent[i]].label)]
    return out


def _token_arcs(hg: RewriteHypergraph) -> tuple[np.ndarray, np.ndarray]:
    """Per source token: its governor's position (-1: none known, or a root) and its relation's index in
    :data:`RELATIONS` (-1: unknown), read from the tree (module docstring)."""
    tree = hg.tree
    governor = np.full(hg.n, -1, dtype=np.int64)
    relation = np.full(hg.n, -1, dtype=np.int64)
    for i, node in enumerate(tree.nodes):
        p = tree.parent[i]
        if node.is_leaf:
            label = tree.nodes[p].relation if p >= 0 else ""
            if label:
                relation[node.index] = _RELATION_ID.get(label, _RELATION_ID["dep"])
        elif p >= 0 and node.head >= 0 and tree.nodes[p].head >= 0 and node.head != tree.nodes[p].head:
            governor[node.head] = tree.nodes[p].head
    return governor, relation


def _relation_values(hg: RewriteHypergraph, out: np.ndarray, edge_of: np.ndarray) -> None:
    """Add the ``dropped_rel`` and ``dropped_rel_tokens`` counts of every hyperedge to ``out``
    (``edge_of``: the hyperedge of each entry of ``hg.drop_idx``)."""
    governor, relation = _token_arcs(hg)
    n = max(hg.n, 1)
    keys = np.sort(edge_of * n + hg.drop_idx)  # (hyperedge, deleted token) pairs

    def deleted_by_same(tokens: np.ndarray) -> np.ndarray:
        found = np.searchsorted(keys, edge_of * n + tokens).clip(max=keys.size - 1)
        return (tokens >= 0) & (keys[found] == edge_of * n + tokens)

    root = hg.drop_idx.copy()  # climb each deleted token to its fragment's root
    while True:
        up = deleted_by_same(governor[root])
        if not up.any():
            break
        root = np.where(up, governor[root], root)
    rel = relation[root]
    known = rel >= 0
    is_root = known & (root == hg.drop_idx)
    np.add.at(out, (edge_of[is_root], _REL_COL + rel[is_root]), 1.0)
    np.add.at(out, (edge_of[known], _REL_TOKENS_COL + rel[known]), 1.0)


def application_values(hg: RewriteHypergraph, pos: bool = True, relations: bool = True) -> np.ndarray:
    """The per-application features of every hyperedge.

    Parameters
    ----------
    hg : RewriteHypergraph
    pos : bool
        Compute the ``dropped.C`` and ``dropped_head.C`` columns (:data:`POS_COLUMNS`).
    relations : bool
        Compute the ``dropped_rel`` and ``dropped_rel_tokens`` columns (:data:`RELATION_COLUMNS`).

    Returns
    -------
    numpy.ndarray
        float64 of shape (hyperedges, len(APPLICATION)), columns in :data:`APPLICATION` order (those not
        computed are 0); with neither ``pos`` nor ``relations``, (hyperedges, 2): ``dropped`` and ``words``
        only (what a model without the ``deletion-pos`` and ``deletion-dep`` feature groups reads).
    """
    m = hg.num_hyperedges
    out = np.zeros((m, len(APPLICATION) if pos or relations else 2), dtype=np.float64)
    out[:, 0], out[:, 1] = hyperedge_counts(hg)
    if not (pos or relations) or m == 0 or hg.drop_idx.size == 0:
        return out
    edge_of = np.repeat(np.arange(m), np.diff(hg.drop_ptr))
    if relations:
        _relation_values(hg, out, edge_of)
    if not pos:
        return out
    classes = _token_classes(hg)
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
