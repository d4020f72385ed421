"""Phrase-structure trees and the dependency → phrase-structure conversion (docs/architecture.md §1).

A :class:`Tree` node is either a *leaf* (a terminal: ``label`` is the word, ``index`` its 0-based token
position, no children) or an internal node (``label`` a non-terminal, ``index == -1``, at least one child).
Preterminals are internal nodes whose single child is a leaf; their label is the fine (PTB) POS tag.
Every tree built here has a ``TOP`` root.

The conversion of a spaCy dependency parse (:func:`from_dependency`): each token with dependents projects
a phrase whose children are its dependents' projections and its own preterminal, in surface order; the
phrase label comes from the head's universal POS (``PHRASE_LABELS``: NOUN/PROPN/PRON→NP, VERB/AUX→VP,
ADJ→ADJP, ADV→ADVP, ADP→PP, ...). A verb with a subject dependent is a clause head: it projects
``[S <left dependents up to and including the subject> [VP <rest, head, right dependents>] <final
punctuation>]``. A token without dependents is just its preterminal. Several roots (spaCy may split the
input into sentences) become several children of ``TOP``. Non-projective arcs are lifted (the dependent is
re-attached to its head's head until every subtree is contiguous) so leaves stay in surface order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from dualdecomp.core.errors import InputError
from dualdecomp.data.sentence import Sentence

__all__ = ["PHRASE_LABELS", "ROOT_LABEL", "Tree", "from_dependency", "leaf", "preterminal", "reindex"]

ROOT_LABEL = "TOP"

PTB_ESCAPES = {"(": "-LRB-", ")": "-RRB-"}
"""Words written with Penn-Treebank escapes (and unescaped by :mod:`dualdecomp.data.ptb`)."""

PHRASE_LABELS = {
    "NOUN": "NP", "PROPN": "NP", "PRON": "NP", "NUM": "QP", "DET": "NP", "SYM": "NP",
    "VERB": "VP", "AUX": "VP",
    "ADJ": "ADJP", "ADV": "ADVP", "ADP": "PP", "SCONJ": "SBAR", "CCONJ": "UCP", "PART": "PRT",
    "INTJ": "INTJ", "PUNCT": "FRAG", "X": "FRAG", "SPACE": "FRAG",
}
"""Phrase label projected by a head, from its universal POS (anything else: ``FRAG``)."""

SUBJECT_LABELS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


@dataclass(frozen=True)
class Tree:
    """A phrase-structure tree node.

    Attributes
    ----------
    label : str
        Non-terminal label, or the word for a leaf.
    children : tuple of Tree
        Children in surface order (empty for a leaf).
    index : int
        For a leaf, the 0-based token position it stands for; -1 for internal nodes.
    head : int
        For an internal node built from a dependency parse (:func:`from_dependency`), the token position
        of its lexical head (the dependency head that projects it); -1 when unknown (other trees, and
        ``TOP`` over several roots). Not part of equality: two trees with the same labels are equal.
    relation : str
        For a node built from a dependency parse, the dependency relation of the token that projects it
        (its ``head``) to that token's governor (spaCy's label, ``ROOT`` for a root); ``""`` when unknown
        (leaves, ``TOP``, other trees). Not part of equality either.
    """

    label: str
    children: tuple[Tree, ...] = ()
    index: int = -1
    head: int = field(default=-1, compare=False)
    relation: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.index >= 0 and self.children:
            raise InputError("a leaf (index >= 0) cannot have children")
        if self.index < 0 and not self.children:
            raise InputError(f"internal node {self.label!r} without children")

    @property
    def is_leaf(self) -> bool:
        """Whether this node is a terminal."""
        return self.index >= 0

    @property
    def is_preterminal(self) -> bool:
        """Whether this node has exactly one child and that child is a leaf."""
        return len(self.children) == 1 and self.children[0].is_leaf

    def leaves(self) -> list[Tree]:
        """The leaves, left to right."""
        if self.is_leaf:
            return [self]
        out: list[Tree] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                out.append(node)
            else:
                stack.extend(reversed(node.children))
        return out

    def words(self) -> list[str]:
        """The words of the leaves, left to right."""
        return [lf.label for lf in self.leaves()]

    def indices(self) -> list[int]:
        """The token positions of the leaves, left to right."""
        return [lf.index for lf in self.leaves()]

    def preorder(self) -> Iterator[Tree]:
        """All nodes (internal and leaves), parents before children, left to right."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def production(self) -> str:
        """The CFG production at this node, e.g. ``'NP -> DT NN'`` (words are JSON-quoted)."""

        kids = [json.dumps(c.label) if c.is_leaf else c.label for c in self.children]
        return f"{self.label} -> {' '.join(kids)}"

    def size(self) -> int:
        """Number of nodes, leaves included."""
        return sum(1 for _ in self.preorder())

    def __str__(self) -> str:
        return write_tree(self)


def leaf(word: str, index: int) -> Tree:
    """A leaf for ``word`` at token position ``index`` (0-based)."""
    if index < 0:
        raise InputError(f"leaf index must be >= 0, got {index}")
    return Tree(word, (), index)


def preterminal(tag: str, word: str, index: int, relation: str = "") -> Tree:
    """A preterminal ``(tag word)`` (its head is its word's position; ``relation``: its word's dependency
    relation, when known)."""
    return Tree(tag, (leaf(word, index),), head=index, relation=relation)


def reindex(tree: Tree, mapping: Sequence[int]) -> Tree:
    """A copy of ``tree`` whose leaf ``i`` gets index ``mapping[i]`` (e.g. target → source positions).

    Parameters
    ----------
    tree : Tree
        A tree whose leaves have indices 0..m-1.
    mapping : sequence of int
        New index for each old index.

    Returns
    -------
    Tree
    """
    if tree.is_leaf:
        return Tree(tree.label, (), int(mapping[tree.index]))
    head = int(mapping[tree.head]) if tree.head >= 0 else -1
    return Tree(tree.label, tuple(reindex(c, mapping) for c in tree.children), head=head,
                relation=tree.relation)


def _projective_heads(sentence: Sentence) -> list[int]:
    """Heads (1-based, 0 root) after lifting non-projective arcs."""
    n = sentence.n
    heads = list(sentence.heads)

    def ancestors_ok(h: int, m: int) -> bool:
        lo, hi = min(h, m), max(h, m)
        for k in range(lo + 1, hi):
            a = k
            seen = 0
            while a != 0 and a != h and seen <= n:
                a = heads[a - 1]
                seen += 1
            if a != h:
                return False
        return True

    changed = True
    guard = 0
    while changed and guard < n * n + 1:
        changed = False
        guard += 1
        for m in range(1, n + 1):
            h = heads[m - 1]
            if h != 0 and not ancestors_ok(h, m):
                heads[m - 1] = heads[h - 1]
                changed = True
    # also roots: the span between two roots is fine; a token between a root and its descendants is not
    return heads


def from_dependency(sentence: Sentence) -> Tree:
    """Convert a dependency parse into a phrase-structure tree rooted at ``TOP``.

    Parameters
    ----------
    sentence : Sentence
        A parsed sentence (n >= 1).

    Returns
    -------
    Tree
        Leaves are the tokens (indices 0..n-1) in order; preterminals carry the fine POS tags.
    """
    n = sentence.n
    if n == 0:
        raise InputError("cannot build a tree for an empty sentence")
    heads = _projective_heads(sentence)
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    for k, h in enumerate(heads, start=1):
        kids[h].append(k)

    def pre(k: int) -> Tree:
        tag = sentence.tags[k - 1] or "XX"
        return preterminal(tag, sentence.tokens[k - 1], k - 1, sentence.labels[k - 1])

    def build(k: int) -> Tree:
        deps = kids[k]
        if not deps:
            return pre(k)
        left = [d for d in deps if d < k]
        right = [d for d in deps if d > k]
        pos, rel = sentence.pos[k - 1], sentence.labels[k - 1]
        label = PHRASE_LABELS.get(pos, "FRAG")
        subj = [i for i, d in enumerate(left) if sentence.labels[d - 1] in SUBJECT_LABELS]
        if pos in ("VERB", "AUX") and subj:
            s = subj[-1]
            tail = len(right)
            while tail > 0 and sentence.pos[right[tail - 1] - 1] == "PUNCT":
                tail -= 1
            vp = [build(d) for d in left[s + 1:]] + [pre(k)] + [build(d) for d in right[:tail]]
            items = [build(d) for d in left[: s + 1]] + [Tree("VP", tuple(vp), head=k - 1, relation=rel)]
            items += [build(d) for d in right[tail:]]
            return Tree("S", tuple(items), head=k - 1, relation=rel)
        items = [build(d) for d in left] + [pre(k)] + [build(d) for d in right]
        return Tree(label, tuple(items), head=k - 1, relation=rel)

    roots = kids[0]
    tree = Tree(ROOT_LABEL, tuple(build(r) for r in roots), head=roots[0] - 1 if len(roots) == 1 else -1)
    if tree.indices() != list(range(n)):  # pragma: no cover - guarded by the lifting above
        raise InputError(f"sentence {sentence.id!r}: dependency tree could not be made projective")
    return tree


def write_tree(tree: Tree) -> str:
    """Write a tree in PTB brackets on one line.

    Parameters
    ----------
    tree : Tree

    Returns
    -------
    str
    """
    if tree.is_leaf:
        return PTB_ESCAPES.get(tree.label, tree.label)
    return "(" + tree.label + " " + " ".join(write_tree(c) for c in tree.children) + ")"
