"""The hypergraph of a rewriting STSG's target derivations over one source tree.

A vertex is a pair (source node v, target category Y); a hyperedge is one :class:`RewriteRule` matched at
v (:func:`dualdecomp.solvers.transducer.match_frag`) rewriting it into Y. Unlike the deletion-only
hypergraph of :mod:`dualdecomp.solvers.transducer.solver`, a hyperedge here carries its *target
sequence*: the items of the rule's target frontier, in target order, each an emitted word (an id into the
sentence's target vocabulary) or a reference to a tail vertex. Its tails are listed in target order too
(the rule's ``links`` map them back to the source variables, which may be reordered). A derivation's
target yield is the concatenation of its root hyperedge's items, tails expanded recursively.

Per hyperedge the hypergraph also records the source token positions it deletes (the rule's deleted words
and every leaf under its deleted variables) and its operations (``RewriteRule.operations()`` with the
words under deleted variables added to ``deleted``).

For the exact chart (:mod:`dualdecomp.solvers.rewriting.chart`) it precomputes, per vertex, the words its
yield can start and end with and whether its yield can be empty (one bottom-up pass over the hyperedges).

Rules are a plain sequence, indexed here by ``rule.production()``. ``coverage(node)`` (e.g.
:func:`dualdecomp.solvers.rewriting.grammar.rewriting_coverage_rules`) adds rules for each internal node
(those whose key is already among ``rules`` are skipped); ``fallback`` records whether they were needed.
Hyperedge order: nodes bottom-up (reverse preorder), then the given rules in their order, then coverage
rules; hyperedges that are not derivable or not reachable from the root vertex are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree
from dualdecomp.solvers.rewriting.rules import OPERATIONS, Operations, RewriteRule
from dualdecomp.solvers.rewriting.text import text_chars
from dualdecomp.solvers.transducer import VAR, WORD, match_frag

__all__ = ["Coverage", "RewriteHypergraph", "build_rewrite_hypergraph"]

Coverage = Callable[[Tree], Sequence[RewriteRule]]
"""Rules added at every internal source node (e.g. copy and deletion rules)."""


@dataclass(frozen=True)
class RewriteHypergraph:
    """The target-derivation forest of one source tree (arrays in bottom-up hyperedge order).

    Attributes
    ----------
    tree : IndexedTree
        The source tree.
    words : tuple of str
        The source tokens.
    rules : tuple of RewriteRule
        Rules used by the hyperedges (local ids, ``hyperedge_rule``).
    vertex_node, vertex_label : tuple
        Source node id and target category of each vertex.
    root : int
        Root vertex id: (root node, root label).
    hyperedge_node, hyperedge_rule, hyperedge_head : numpy.ndarray of int64
    tail_ptr, tail_idx : numpy.ndarray of int64
        CSR tails of each hyperedge, in target order.
    item_ptr, item_code : numpy.ndarray of int64
        CSR target sequence of each hyperedge: ``code >= 0`` emits vocabulary word ``code``; ``code < 0``
        expands tail vertex ``-code - 1``.
    drop_ptr, drop_idx : numpy.ndarray of int64
        CSR source token positions (0-based) each hyperedge deletes.
    operations : numpy.ndarray of int64
        (hyperedges, 5): the operation counts of each hyperedge, in ``OPERATIONS`` order.
    vocab : tuple of str
        The words hyperedges can emit (ids 0..V-1); the LM matrix adds ``bos = V`` and ``eos = V + 1``.
    first_ptr, first_idx, last_ptr, last_idx : numpy.ndarray of int64
        CSR, per vertex, the vocabulary ids its yield can start / end with (ascending).
    can_be_empty : numpy.ndarray of bool
        Per vertex, whether its yield can be empty (everything deleted).
    fallback : bool
        The given rules alone could not derive the tree; coverage rules were needed.
    """

    tree: IndexedTree
    words: tuple[str, ...]
    rules: tuple[RewriteRule, ...]
    vertex_node: tuple[int, ...]
    vertex_label: tuple[str, ...]
    root: int
    hyperedge_node: np.ndarray
    hyperedge_rule: np.ndarray
    hyperedge_head: np.ndarray
    tail_ptr: np.ndarray
    tail_idx: np.ndarray
    item_ptr: np.ndarray
    item_code: np.ndarray
    drop_ptr: np.ndarray
    drop_idx: np.ndarray
    operations: np.ndarray
    vocab: tuple[str, ...]
    first_ptr: np.ndarray
    first_idx: np.ndarray
    last_ptr: np.ndarray
    last_idx: np.ndarray
    can_be_empty: np.ndarray
    fallback: bool

    @property
    def n(self) -> int:
        """Number of source tokens."""
        return len(self.words)

    @property
    def num_hyperedges(self) -> int:
        """Number of hyperedges."""
        return int(self.hyperedge_head.shape[0])

    @property
    def num_vertices(self) -> int:
        """Number of vertices."""
        return len(self.vertex_node)

    @property
    def bos(self) -> int:
        """Row of the sentence start in the LM matrix (``len(vocab)``)."""
        return len(self.vocab)

    @property
    def eos(self) -> int:
        """Column of the sentence end in the LM matrix (``len(vocab) + 1``)."""
        return len(self.vocab) + 1

    @property
    def source_chars(self) -> int:
        """Characters of the source, detokenised by :func:`~dualdecomp.solvers.rewriting.text.joins_left`."""
        return text_chars(self.words)

    def tails(self, e: int) -> np.ndarray:
        """Tail vertex ids of hyperedge ``e``, in target order."""
        return self.tail_idx[self.tail_ptr[e]:self.tail_ptr[e + 1]]

    def items(self, e: int) -> np.ndarray:
        """Target sequence codes of hyperedge ``e`` (see ``item_code``)."""
        return self.item_code[self.item_ptr[e]:self.item_ptr[e + 1]]

    def dropped(self, e: int) -> np.ndarray:
        """Source token positions hyperedge ``e`` deletes."""
        return self.drop_idx[self.drop_ptr[e]:self.drop_ptr[e + 1]]

    def rule(self, e: int) -> RewriteRule:
        """The rule of hyperedge ``e``."""
        return self.rules[int(self.hyperedge_rule[e])]

    def hyperedge_operations(self, e: int) -> Operations:
        """The operations of hyperedge ``e`` (words under its deleted variables included)."""
        return Operations(*(int(x) for x in self.operations[e]))


def build_rewrite_hypergraph(tree: Tree, rules: Sequence[RewriteRule],
                             coverage: Coverage | None = None) -> RewriteHypergraph:
    """Match rewriting rules against a source tree (module docstring).

    Parameters
    ----------
    tree : Tree
        The source tree; leaves indexed 0..n-1 left to right.
    rules : sequence of RewriteRule
    coverage : callable, optional
        ``coverage(node)``: rules added at every internal node.

    Returns
    -------
    RewriteHypergraph

    Raises
    ------
    InputError
        Bad leaf indices.
    SolverError
        The rules cannot derive the tree into its root label.
    """
    T = IndexedTree(tree)
    n = len(tree.leaves())
    if tree.indices() != list(range(n)):
        raise InputError("source tree leaves must be indexed 0..n-1 left to right")
    index: dict[str, list[RewriteRule]] = {}
    keys: set[str] = set()
    for r in rules:
        if r.key not in keys:
            keys.add(r.key)
            index.setdefault(r.production(), []).append(r)
    local: dict[str, int] = {}
    used_rules: list[RewriteRule] = []
    vocab_id: dict[str, int] = {}
    leaves_under = [T.leaf_indices(i) for i in range(len(T))]
    # raw hyperedge: node, rule id, target label, tails (target order), items, dropped, ops, added
    raw: list[tuple[int, int, str, list[tuple[int, str]], list[object], list[int], tuple[int, ...],
                    bool]] = []
    for i in range(len(T) - 1, -1, -1):
        node = T.nodes[i]
        if node.is_leaf:
            continue
        cands = [(r, False) for r in index.get(node.production(), [])]
        if coverage is not None:
            cands += [(r, True) for r in coverage(node) if r.key not in keys]
        for rule, added in cands:
            fr: list[int] = []
            if not match_frag(rule.source, T, i, fr):
                continue
            linked: list[int] = []
            dropped: list[int] = []
            under = 0
            for f, j in zip(rule.source.frontier(), fr, strict=True):
                if f.kind == WORD:
                    if not f.kept:
                        dropped.append(T.nodes[j].index)
                elif f.kept:
                    linked.append(j)
                else:
                    dropped.extend(leaves_under[j])
                    under += len(leaves_under[j])
            tails: list[tuple[int, str]] = []
            items: list[object] = []
            for f in rule.target.frontier():
                if f.kind == VAR:
                    tail = (linked[rule.links[len(tails)]], f.label)
                    tails.append(tail)
                    items.append(tail)
                else:
                    items.append(vocab_id.setdefault(f.label, len(vocab_id)))
            ops = rule.operations()
            if rule.key not in local:
                local[rule.key] = len(used_rules)
                used_rules.append(rule)
            op_row = tuple(getattr(ops, k) + (under if k == "deleted" else 0) for k in OPERATIONS)
            raw.append((i, local[rule.key], rule.target_root, tails, items, sorted(dropped), op_row, added))
    root_key = (0, T.nodes[0].label)
    fallback = coverage is not None and not _derivable(raw, root_key, grammar_only=True)
    useful = _useful(raw, root_key)
    if not useful:
        raise SolverError("the rewriting rules cannot derive this source tree")
    vid: dict[tuple[int, str], int] = {}

    def vertex(key: tuple[int, str]) -> int:
        return vid.setdefault(key, len(vid))

    root = vertex(root_key)
    e_node, e_rule, e_head, ops_rows = [], [], [], []
    t_ptr, t_idx, i_ptr, i_code, d_ptr, d_idx = [0], [], [0], [], [0], []
    for k in useful:
        i, r, y, tails, items, dropped, op_row, _ = raw[k]
        e_node.append(i)
        e_rule.append(r)
        e_head.append(vertex((i, y)))
        t_idx.extend(vertex(t) for t in tails)
        t_ptr.append(len(t_idx))
        i_code.extend(it if isinstance(it, int) else -vertex(it) - 1 for it in items)  # type: ignore[arg-type]
        i_ptr.append(len(i_code))
        d_idx.extend(dropped)
        d_ptr.append(len(d_idx))
        ops_rows.append(op_row)
    arr = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    keys_by_id = sorted(vid, key=vid.get)  # type: ignore[arg-type]
    vocab = tuple(sorted(vocab_id, key=vocab_id.get))  # type: ignore[arg-type]
    head, i_ptr_a, i_code_a = arr(e_head), arr(i_ptr), arr(i_code)
    first, last, empty = _domains(len(vid), head, i_ptr_a, i_code_a)
    f_ptr, f_idx = _csr(first)
    l_ptr, l_idx = _csr(last)
    return RewriteHypergraph(
        tree=T, words=tuple(tree.words()), rules=tuple(used_rules),
        vertex_node=tuple(k[0] for k in keys_by_id), vertex_label=tuple(k[1] for k in keys_by_id), root=root,
        hyperedge_node=arr(e_node), hyperedge_rule=arr(e_rule), hyperedge_head=head,
        tail_ptr=arr(t_ptr), tail_idx=arr(t_idx), item_ptr=i_ptr_a, item_code=i_code_a,
        drop_ptr=arr(d_ptr), drop_idx=arr(d_idx),
        operations=np.asarray(ops_rows, dtype=np.int64).reshape(len(useful), len(OPERATIONS)),
        vocab=vocab, first_ptr=f_ptr, first_idx=f_idx, last_ptr=l_ptr, last_idx=l_idx,
        can_be_empty=np.asarray(empty, dtype=bool), fallback=fallback)


def _domains(nv: int, head: np.ndarray, item_ptr: np.ndarray, item_code: np.ndarray
             ) -> tuple[list[set[int]], list[set[int]], list[bool]]:
    """Per vertex: the words a yield can start with, end with, and whether it can be empty (bottom-up)."""
    first: list[set[int]] = [set() for _ in range(nv)]
    last: list[set[int]] = [set() for _ in range(nv)]
    empty = [False] * nv
    for e in range(head.shape[0]):
        h = int(head[e])
        codes = item_code[item_ptr[e]:item_ptr[e + 1]].tolist()
        all_empty = _scan(codes, first[h], first, empty)
        _scan(codes[::-1], last[h], last, empty)
        empty[h] = empty[h] or all_empty
    return first, last, empty


def _scan(codes: list[int], out: set[int], ends: list[set[int]], empty: list[bool]) -> bool:
    """Add to ``out`` the words a sequence can start with (``ends``: the vertices' start words); return
    whether the whole sequence can be empty."""
    for c in codes:
        if c >= 0:
            out.add(c)
            return False
        out |= ends[-c - 1]
        if not empty[-c - 1]:
            return False
    return True


def _csr(sets: list[set[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = [0]
    idx: list[int] = []
    for s in sets:
        idx.extend(sorted(s))
        ptr.append(len(idx))
    return np.asarray(ptr, dtype=np.int64), np.asarray(idx, dtype=np.int64)


def _derivable(raw, root, grammar_only: bool) -> bool:
    ok: set[tuple[int, str]] = set()
    for i, _, y, tails, *_rest, added in raw:  # bottom-up order
        if grammar_only and added:
            continue
        if all(t in ok for t in tails):
            ok.add((i, y))
    return root in ok


def _useful(raw, root) -> list[int]:
    """Indices of the hyperedges that are derivable bottom-up and reachable from the root."""
    ok: set[tuple[int, str]] = set()
    derivable = []
    for k, (i, _, y, tails, *_rest) in enumerate(raw):
        if all(t in ok for t in tails):
            ok.add((i, y))
            derivable.append(k)
    if root not in ok:
        return []
    reach = {root}
    used = set()
    for k in sorted(derivable, key=lambda k: raw[k][0]):  # top-down (preorder ids increase downwards)
        i, _, y, tails, *_ = raw[k]
        if (i, y) in reach:
            used.add(k)
            reach.update(tails)
    return [k for k in derivable if k in used]
