"""Edges (hypotheses) of dependency-based word ordering and the sentence context they are built in.

An edge is an ordered phrase with a projective dependency tree over it (§4.2 of the paper). Edges are
built bottom-up: a leaf is one word with one POS tag; two edges with disjoint words are concatenated and
the head of one becomes a dependent of the head of the other. To remove spurious ambiguity (several
derivations of one ordered tree) a head takes its dependents inside-out, all right dependents before
any left dependent; every projective ordered tree still has exactly one derivation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.hashing import atom
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.paper.feature_kernel import lanes

NONE_ATOM = 0
"""Atom of a missing word or tag (a sentence boundary, no sibling, no dependent)."""


@dataclass(frozen=True)
class Context:
    """Everything about one input the features and constraints need.

    Attributes
    ----------
    words : tuple of str
    word_atoms : tuple of int
        Stable 64-bit atom of each word.
    tag_names : tuple of str
        The tag set of the model (tag ids index it).
    tag_atoms : tuple of int
        Atom of each tag id.
    leaf_tags : tuple of tuple of int
        Tag ids each word may take (the given tag, else the tag dictionary's).
    given_head : tuple of (int or None)
        Given head of each word (``ROOT`` = -1, ``None`` = free).
    kids_mask : tuple of int
        Bit mask of the words whose given head each word is.
    full : int
        Bit mask of all words.
    unit_right, unit_left : tuple of tuple of int
        For each word, its children inside its ordered unit (``OrderingInput.units``) on the right / left,
        nearest first: it must take exactly these, in this order, before any other dependent on that side.
    closed : int
        Bit mask of the unit words other than the units' heads (they take no other dependent).
    word_lanes, tag_lanes : numpy.ndarray
        uint64 hash of each word atom / tag atom as a tuple hash mixes it in (the compiled features,
        ``dualdecomp.models.ordering.paper.feature_kernel``).
    lm_terms : dict
        The LM terms of concatenations computed for this input (``OrderingModel.attach_score``): the
        same concatenation of the same word ends recurs many times in a search.
    """

    words: tuple[str, ...]
    word_atoms: tuple[int, ...]
    tag_names: tuple[str, ...]
    tag_atoms: tuple[int, ...]
    leaf_tags: tuple[tuple[int, ...], ...]
    given_head: tuple[int | None, ...]
    kids_mask: tuple[int, ...]
    full: int
    unit_right: tuple[tuple[int, ...], ...] = ()
    unit_left: tuple[tuple[int, ...], ...] = ()
    closed: int = 0
    word_lanes: np.ndarray = field(default=None, compare=False, repr=False)
    tag_lanes: np.ndarray = field(default=None, compare=False, repr=False)
    lm_terms: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.word_lanes is None:
            object.__setattr__(self, "word_lanes", lanes(self.word_atoms))
        if self.tag_lanes is None:
            object.__setattr__(self, "tag_lanes", lanes(self.tag_atoms))

    @property
    def n(self) -> int:
        """Number of words."""
        return len(self.words)


def make_context(inp: OrderingInput, tag_names: tuple[str, ...], tag_index: dict[str, int],
                 dictionary_tags) -> Context:
    """Build the context of an input.

    Parameters
    ----------
    inp : OrderingInput
    tag_names : tuple of str
        The model's tag set.
    tag_index : dict
        Tag name → tag id (a given tag unknown to the model gets a new id appended to ``tag_names``).
    dictionary_tags : callable
        ``word -> tuple of tag ids`` for words without a given tag.

    Returns
    -------
    Context
    """
    names = list(tag_names)
    index = dict(tag_index)
    leaf_tags = []
    for word, tag in zip(inp.words, inp.pos, strict=True):
        if tag is None:
            leaf_tags.append(tuple(dictionary_tags(word)))
        else:
            if tag not in index:
                index[tag] = len(names)
                names.append(tag)
            leaf_tags.append((index[tag],))
    kids = [0] * len(inp.words)
    for m, h in enumerate(inp.heads):
        if h is not None and h != ROOT:
            kids[h] |= 1 << m
    right: list[tuple[int, ...]] = [()] * len(inp.words)
    left: list[tuple[int, ...]] = [()] * len(inp.words)
    for unit in inp.units:
        for k, w in enumerate(unit):
            right[w] = tuple(m for m in unit[k + 1:] if inp.heads[m] == w)
            left[w] = tuple(m for m in reversed(unit[:k]) if inp.heads[m] == w)
    closed = sum(1 << w for w in inp.closed_words())
    return Context(words=inp.words, word_atoms=tuple(atom("w:" + w) for w in inp.words),
                   tag_names=tuple(names), tag_atoms=tuple(atom("p:" + t) for t in names),
                   leaf_tags=tuple(leaf_tags), given_head=inp.heads, kids_mask=tuple(kids),
                   full=(1 << len(inp.words)) - 1,
                   unit_right=tuple(right) if inp.units else (), unit_left=tuple(left) if inp.units else (),
                   closed=closed)


class Edge:
    """A hypothesis: an ordered phrase with its dependency tree (mutable only in ``score``).

    Attributes
    ----------
    mask : int
        Bit mask of the input words covered.
    words : tuple of int
        Word indices in surface order.
    tags : tuple of int
        Tag id of each word of ``words``.
    head, head_pos, head_tag : int
        The head word, its position in ``words`` and its tag id.
    left, right : tuple of (int, int)
        (word, tag id) of the head's left / right dependents in attachment order (inside-out).
    size : int
        Number of actions that built the edge (2k - 1 for k words): the divisor of the scaled score.
    local : numpy.ndarray
        Feature indices of the top action.
    phi : numpy.ndarray or None
        Feature indices of every action of the edge (with repetition): the feature vector (None in
        decoding, where only the trainer's updates would need it).
    kids : tuple or None
        ``(head_edge, dependent_edge, dependent_on_right)`` or ``None`` for a leaf.
    gold : bool
        Whether the edge is a sub-structure of the gold tree (training only).
    score : float
        The unscaled score F(e) = phi . theta (kept current by the trainer).
    packed : numpy.ndarray
        The edge as the compiled features read it (``feature_kernel.pack_leaf`` / ``pack_join``).
    """

    __slots__ = ("mask", "words", "tags", "head", "head_pos", "head_tag", "left", "right", "size",
                 "local", "phi", "kids", "gold", "score", "packed")

    def __init__(self, mask, words, tags, head, head_pos, head_tag, left, right, size, local, phi, kids,
                 gold, score, packed):
        self.mask = mask
        self.words = words
        self.tags = tags
        self.head = head
        self.head_pos = head_pos
        self.head_tag = head_tag
        self.left = left
        self.right = right
        self.size = size
        self.local = local
        self.phi = phi
        self.kids = kids
        self.gold = gold
        self.score = score
        self.packed = packed

    @property
    def scaled(self) -> float:
        """The scaled score F(e) / |e| that orders the agenda (§3.3)."""
        return self.score / self.size

    def arcs(self) -> dict[int, int]:
        """Head of every word of the edge (the edge's head maps to ``ROOT``)."""
        out = {self.head: ROOT}
        stack = [self]
        while stack:
            e = stack.pop()
            if e.kids is not None:
                h, m, _ = e.kids
                out[m.head] = h.head
                stack.append(h)
                stack.append(m)
        return out


def can_attach(ctx: Context, head: Edge, dep: Edge, right: bool) -> bool:
    """Whether ``dep``'s head may become a dependent of ``head``'s head on the given side.

    The rules: disjoint words; canonical order (no right dependent after a left one); the dependent's
    given head, if any, is the head; the dependent's given dependents are all inside it (it is
    complete once attached); the new head's given head is not inside the new edge; a head in an ordered
    unit takes its unit children first on each side, nearest first, and a unit word other than the
    unit's head takes nothing else (so every unit comes out contiguous and in its given order).
    """
    if head.mask & dep.mask:
        return False
    if right and head.left:
        return False
    m = dep.head
    g = ctx.given_head[m]
    if g is not None and g != head.head:
        return False
    if ctx.kids_mask[m] & ~dep.mask:
        return False
    gh = ctx.given_head[head.head]
    if gh is not None and gh != ROOT and (head.mask | dep.mask) >> gh & 1:
        return False
    return not ctx.unit_right or unit_order_allows(ctx, head, m, right)


def unit_order_allows(ctx: Context, head: Edge, m: int, right: bool) -> bool:
    """The ordered-unit rule of :func:`can_attach` for word ``m`` becoming ``head``'s next dependent."""
    h = head.head
    inner_right, inner_left = ctx.unit_right[h], ctx.unit_left[h]
    if right:
        attached, inner, other = len(head.right), inner_right, inner_left
    else:
        if len(head.right) < len(inner_right):
            return False
        attached, inner, other = len(head.left), inner_left, inner_right
    if attached < len(inner):
        return m == inner[attached]
    return not (ctx.closed >> h & 1) and m not in other


def empty_phi() -> np.ndarray:
    """An empty feature-index array."""
    return np.zeros(0, dtype=np.int64)
