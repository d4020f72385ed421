"""The input of word ordering (a bag of words with optional POS and heads) and its validation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import is_valid_unicode

ROOT = -1
"""Head value of the root word (0-based indices; CoNLL-U head 0 becomes -1)."""


@dataclass(frozen=True)
class OrderingInput:
    """A bag of words to order, with optional hard constraints.

    Attributes
    ----------
    words : tuple of str
        The bag (its order carries no information for the decoder).
    pos : tuple of (str or None)
        Given POS tag of each word, ``None`` where not given.
    heads : tuple of (int or None)
        Given head of each word as a 0-based index into ``words``, ``ROOT`` (-1) for the root, ``None``
        where not given.
    ident : str
        An identifier (sentence id) for reports.
    units : tuple of tuple of int
        Ordered units (e.g. the base NPs the paper keeps as atoms): each the indices of two or more words
        in the order they must appear, contiguously, in the output. A unit is one subtree of given heads:
        every word but one (its head) has its head given inside the unit, in an order that crosses no
        arc of the unit, and only the unit's head may take dependents from outside it.
    """

    words: tuple[str, ...]
    pos: tuple[str | None, ...]
    heads: tuple[int | None, ...]
    ident: str = ""
    units: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        validate(self.words, self.pos, self.heads, self.ident)
        try:  # any sequence of sequences is accepted and stored as tuples
            units = tuple(tuple(u) for u in self.units)
        except TypeError:
            raise InputError(f"{'sentence ' + self.ident if self.ident else 'input'}: units must be "
                             "sequences of word indices") from None
        object.__setattr__(self, "units", units)
        validate_units(units, self.heads, self.ident)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def full_tree(self) -> bool:
        """Whether every head and every POS tag is given (the tree-linearisation condition)."""
        return all(h is not None for h in self.heads) and all(p is not None for p in self.pos)

    def given_root(self) -> int | None:
        """The word given as the root (head ``ROOT``), or None."""
        return next((m for m, h in enumerate(self.heads) if h == ROOT), None)

    def unit_heads(self) -> tuple[int, ...]:
        """The head of each unit (its one word whose head is not given inside it)."""
        return tuple(unit_head(u, self.heads) for u in self.units)

    def closed_words(self) -> frozenset[int]:
        """The words of units other than their heads: they take no dependent from outside their unit."""
        return frozenset(w for u, h in zip(self.units, self.unit_heads(), strict=True) for w in u if w != h)

    def given_children(self) -> tuple[tuple[int, ...], ...]:
        """For each word, the words whose given head it is."""
        kids: list[list[int]] = [[] for _ in self.words]
        for m, h in enumerate(self.heads):
            if h is not None and h != ROOT:
                kids[h].append(m)
        return tuple(tuple(k) for k in kids)


@dataclass(frozen=True)
class OrderingExample:
    """A gold sentence: the words in their original order with their POS and dependency tree.

    Attributes
    ----------
    words : tuple of str
        The sentence in its original order (the reference).
    pos : tuple of str
        Gold POS of each word.
    heads : tuple of int
        Gold head of each word (0-based, ``ROOT`` for the root); a tree.
    ident : str
        Sentence id.
    deprels : tuple of str
        Gold dependency relation of each word (UD labels; empty when not read): base NPs need them.
    """

    words: tuple[str, ...]
    pos: tuple[str, ...]
    heads: tuple[int, ...]
    ident: str = ""
    deprels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        validate(self.words, self.pos, self.heads, self.ident)
        if any(p is None for p in self.pos) or any(h is None for h in self.heads):
            raise InputError(f"sentence {self.ident or '?'}: a gold example needs every POS tag and head")
        if sum(1 for h in self.heads if h == ROOT) != 1:
            raise InputError(f"sentence {self.ident or '?'}: a gold tree needs exactly one root")

    def __len__(self) -> int:
        return len(self.words)

    def as_input(self, pos_share: float = 0.0, dep_share: float = 0.0, seed: int = 0,
                 units: tuple[tuple[int, ...], ...] = ()) -> OrderingInput:
        """The bag of this sentence with a random share of gold POS tags and heads given (Table 7 inputs).

        Parameters
        ----------
        pos_share, dep_share : float
            Share (0 to 1) of the words whose gold POS tag / gold head is given; the words are sampled
            independently for POS and heads, ``round(share * n)`` of each.
        seed : int
            Seed of the sampling (and of the shuffle of the bag).
        units : tuple of tuple of int
            Phrases of the sentence (original word indices, in order; e.g. its base NPs, the paper's
            input: ``dualdecomp.data.ordering.base_np``) given as ordered units with their internal
            heads. They draw nothing at random: the bag and the sampled constraints are those of the
            same call without them.

        Returns
        -------
        OrderingInput
            The words shuffled (so nothing can use the original order), with the constraints remapped.
        """
        return self.shuffled(pos_share, dep_share, seed, units)[0]

    def shuffled(self, pos_share: float = 0.0, dep_share: float = 0.0, seed: int = 0,
                 units: tuple[tuple[int, ...], ...] = ()) -> tuple[OrderingInput, tuple[int, ...]]:
        """:meth:`as_input` and the gold order: the input index of each word of the original sentence."""
        n = len(self.words)
        rng = np.random.default_rng(seed)
        perm = rng.permutation(n)  # new position k holds old word perm[k]
        inverse = np.empty(n, dtype=np.int64)
        inverse[perm] = np.arange(n)
        pos_given = set(rng.choice(n, size=round(pos_share * n), replace=False).tolist())
        dep_given = set(rng.choice(n, size=round(dep_share * n), replace=False).tolist())
        dep_given |= self._inside_units(units)
        words = tuple(self.words[int(old)] for old in perm)
        pos = tuple(self.pos[int(old)] if int(old) in pos_given else None for old in perm)
        heads = tuple(
            (ROOT if self.heads[int(old)] == ROOT else int(inverse[self.heads[int(old)]]))
            if int(old) in dep_given else None for old in perm)
        given_units = tuple(tuple(int(inverse[u]) for u in unit) for unit in units)
        return OrderingInput(words, pos, heads, self.ident, given_units), tuple(int(k) for k in inverse)

    def _inside_units(self, units: tuple[tuple[int, ...], ...]) -> set[int]:
        """The words of the units whose gold head is inside their unit (all but each unit's head)."""
        return {u for unit in units for u in unit if self.heads[u] in unit}

    def identity_input(self, units: tuple[tuple[int, ...], ...] = ()) -> OrderingInput:
        """The bag in its original order with no constraints (for training, where the order is gold).

        ``units`` (word indices, in order) are given as ordered units with their internal heads, as in
        :meth:`as_input`.
        """
        inside = self._inside_units(units)
        heads = tuple(h if m in inside else None for m, h in enumerate(self.heads))
        return OrderingInput(self.words, (None,) * len(self.words), heads, self.ident, units)


def validate(words, pos, heads, ident: str = "") -> None:
    """Check a bag with constraints; raise ``InputError`` with one clear line if it is invalid.

    Parameters
    ----------
    words : sequence of str
    pos : sequence of (str or None)
    heads : sequence of (int or None)
        0-based heads, ``ROOT`` for the root, ``None`` for unknown.
    ident : str
        Sentence id used in the message.

    Raises
    ------
    InputError
        Empty bag, empty words, length mismatch, head out of range, a word its own head, more than one
        given root, or a cycle among the given heads.
    """
    where = f"sentence {ident}" if ident else "input"
    n = len(words)
    if n == 0:
        raise InputError(f"{where}: the bag of words is empty")
    if len(pos) != n or len(heads) != n:
        raise InputError(f"{where}: {n} words but {len(pos)} POS tags and {len(heads)} heads")
    for k, w in enumerate(words):
        if not isinstance(w, str) or not w.strip() or any(c.isspace() for c in w):
            raise InputError(f"{where}: word {k + 1} is empty or contains white space: {w!r}")
        if not is_valid_unicode(w):
            raise InputError(f"{where}: word {k + 1} is not valid Unicode (an unpaired surrogate): {w!r}")
    for k, p in enumerate(pos):
        if p is not None and (not isinstance(p, str) or not p.strip() or not is_valid_unicode(p)):
            raise InputError(f"{where}: POS of word {k + 1} is not a tag: {p!r}")
    roots = 0
    for k, h in enumerate(heads):
        if h is None:
            continue
        if isinstance(h, bool) or not isinstance(h, int | np.integer) or not (ROOT <= h < n):
            raise InputError(f"{where}: head of word {k + 1} is out of range: {h!r} (n = {n})")
        if h == k:
            raise InputError(f"{where}: word {k + 1} is given as its own head")
        roots += h == ROOT
    if roots > 1:
        raise InputError(f"{where}: {roots} words are given as the root; at most one can be")
    for start in range(n):  # follow given heads; a repeat means a cycle
        seen = set()
        k: int | None = start
        while k is not None and k != ROOT:
            if k in seen:
                raise InputError(f"{where}: the given heads contain a cycle through word {k + 1}")
            seen.add(k)
            k = heads[k]


def unit_tops(unit: tuple[int, ...], heads) -> list[int]:
    """The words of a unit whose head is not given inside it (exactly one, its head, in a valid unit)."""
    members = set(unit)
    return [w for w in unit if heads[w] is None or heads[w] not in members]


def unit_head(unit: tuple[int, ...], heads) -> int:
    """The head of a (valid) unit."""
    return unit_tops(unit, heads)[0]


def unit_is_projective(unit: tuple[int, ...], heads, top: int) -> bool:
    """Whether a unit's arcs (every word but ``top`` to its head) in the unit's order cross no other arc
    of the unit and do not pass over ``top``."""
    place = {w: k for k, w in enumerate(unit)}
    arcs = [tuple(sorted((place[w], place[heads[w]]))) for w in unit if w != top]
    at = place[top]
    return not any(a < c < b < d for a, b in arcs for c, d in arcs) and not any(a < at < b for a, b in arcs)


def is_projective(heads: tuple[int, ...]) -> bool:
    """Whether a tree (0-based heads, ROOT = -1) is projective in its word order."""
    n = len(heads)
    for m, h in enumerate(heads):
        if h == ROOT:
            continue
        lo, hi = min(h, m), max(h, m)
        for k in range(lo + 1, hi):
            a = k
            while a != ROOT and a != h:
                a = heads[a]
            if a != h:
                return False
    return n > 0


def validate_units(units, heads, ident: str = "") -> None:
    """Check ordered units (``OrderingInput.units``); raise ``InputError`` with one clear line if invalid.

    Parameters
    ----------
    units : sequence of sequence of int
        0-based word indices, each unit in its output order.
    heads : sequence of (int or None)
        The given heads (already validated).
    ident : str
        Sentence id used in the message.

    Raises
    ------
    InputError
        A unit of fewer than two words, an index out of range or in two units, a unit that is not one
        subtree of given heads, an order that crosses the unit's arcs, or a word inside a unit (not its
        head) given a dependent outside it.
    """
    where = f"sentence {ident}" if ident else "input"
    n = len(heads)
    seen: set[int] = set()
    for number, unit in enumerate(units, 1):
        name = f"{where}: unit {number}"
        if len(unit) < 2:
            raise InputError(f"{name} must list at least two words")
        for w in unit:
            if isinstance(w, bool) or not isinstance(w, int | np.integer) or not 0 <= w < n:
                raise InputError(f"{name}: word {w!r} is out of range (n = {n})")
            if w in seen:
                raise InputError(f"{name}: word {w + 1} is in two units (or twice in one)")
            seen.add(w)
        members = set(unit)
        tops = unit_tops(unit, heads)
        if len(tops) != 1:
            raise InputError(f"{name} must be one subtree: every word but one needs its head given inside "
                             f"the unit ({len(tops)} words have none there)")
        if not unit_is_projective(unit, heads, tops[0]):
            raise InputError(f"{name}: its order crosses its own arcs (it cannot be a projective phrase)")
        for k, h in enumerate(heads):
            if h is not None and h in members and h != tops[0] and k not in members:
                raise InputError(f"{name}: word {h + 1} is inside the unit but is given the head of word "
                                 f"{k + 1} outside it (only the unit's head may take outside dependents)")
