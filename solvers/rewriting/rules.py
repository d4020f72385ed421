"""Rules of the rewriting STSG (Cohn & Lapata 2008, "Sentence compression beyond word deletion").

A rewriting rule ⟨X, Y⟩ → ⟨α, γ, links⟩ generalises the deletion-only rule of
:mod:`dualdecomp.solvers.transducer.grammar`: its target side may *substitute* words (a source word
rewritten into another), *insert* words (target words aligned to no source word), *reorder* the linked
variables, and change categories; the source side may *delete* words and whole subtrees (``~`` items),
as before.

Both sides are :class:`~dualdecomp.solvers.transducer.Frag` trees (``NODE``/``VAR``/``WORD``):

* ``source`` (α) is rooted at a ``NODE`` labelled X. A source ``VAR`` is *linked* (``kept=True``: its
  subtree is rewritten by another rule) or deleted (``kept=False``: its whole subtree is dropped). A source
  ``WORD`` is *used* (``kept=True``: some target word is aligned to it — copied or substituted) or deleted.
* ``target`` (γ) is a ``NODE`` or a bare ``VAR``, labelled Y. Its ``VAR`` items are the linked variables,
  in target order; its ``WORD`` items are the words the rule writes.
* ``links[j]`` is, for the j-th target ``VAR`` (target frontier order), the index of its source variable
  among the source's *linked* ``VAR`` items (source frontier order). Every linked source variable is used
  exactly once, so ``links`` is a permutation; it is increasing unless the rule reorders.
* ``word_links[j]`` is, for the j-th target ``WORD`` (target frontier order), the index of the source
  ``WORD`` item (among all source ``WORD`` items, frontier order) it is aligned to, or ``None`` for an
  inserted word. A used source word has at least one target word aligned to it; a deleted one has none.

The operations of one application (:meth:`RewriteRule.operations`) count, over target words: ``kept``
(aligned to a source word with the same text), ``substituted`` (aligned, different text), ``inserted``
(aligned to none), ``reordered`` (1 per target variable out of source order, see
:func:`reordered_count`); and over source words: ``deleted`` (the rule's deleted words; the words under
deleted variables are counted by the chart, which knows their subtrees).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from dualdecomp.core.errors import ModelError
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag, format_frag

__all__ = ["OPERATIONS", "Operations", "RewriteRule", "reordered_count"]

OPERATIONS = ("kept", "deleted", "substituted", "reordered", "inserted")
"""The operation counts of a rewrite, in the order of the ``operations`` row field."""


@dataclass(frozen=True)
class Operations:
    """Counts of rewrite operations (words), as reported in an output row's ``operations``."""

    kept: int = 0
    deleted: int = 0
    substituted: int = 0
    reordered: int = 0
    inserted: int = 0

    def __add__(self, other: Operations) -> Operations:
        return Operations(*(getattr(self, k) + getattr(other, k) for k in OPERATIONS))

    def as_dict(self) -> dict[str, int]:
        """``{"kept": ..., "deleted": ..., ...}`` in :data:`OPERATIONS` order."""
        return {k: getattr(self, k) for k in OPERATIONS}


def reordered_count(links: Sequence[int]) -> int:
    """Variables moved out of source order: ``len(links)`` minus its longest increasing subsequence."""
    tails: list[int] = []
    for x in links:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo == len(tails):
            tails.append(x)
        else:
            tails[lo] = x
    return len(links) - len(tails)


@dataclass(frozen=True)
class RewriteRule:
    """A rewriting rule ⟨X, Y⟩ → ⟨α, γ, links, word_links⟩ (module docstring).

    Attributes
    ----------
    source : Frag
        α, a ``NODE`` labelled X.
    target : Frag
        γ, a ``NODE`` or a bare ``VAR``, labelled Y.
    links : tuple of int
        Target variable j ↔ linked source variable ``links[j]`` (a permutation).
    word_links : tuple of (int or None)
        Target word j ↔ source word item ``word_links[j]`` (None: inserted).
    origins : frozenset of str
        Where the rule comes from: ``"train"`` (extracted from aligned pairs), ``"copy"``/``"delete"``
        (coverage of a source production), ``"lexical"``/``"phrasal"`` (paraphrase rules counted over
        the corpus: one word for one word, or short phrases), ``"substitute"`` (a substitution added by
        hand, as the chart benchmark's random ones); ``grammar.ORIGINS`` lists them.
    count : int
        Extraction count (0 for rules never seen in training).
    """

    source: Frag
    target: Frag
    links: tuple[int, ...]
    word_links: tuple[int | None, ...]
    origins: frozenset[str] = field(default=frozenset())
    count: int = 0

    def __post_init__(self) -> None:
        _check(self)

    @cached_property
    def key(self) -> str:
        """The identity of the rule (text form of both sides and both link lists)."""
        links = ",".join(map(str, self.links))
        words = ",".join("-" if w is None else str(w) for w in self.word_links)
        return f"{format_frag(self.source)} => {format_frag(self.target)} | {links} | {words}"

    @property
    def root(self) -> str:
        """X, the source root label."""
        return self.source.label

    @property
    def target_root(self) -> str:
        """Y, the target root label."""
        return self.target.label

    def production(self) -> str:
        """The CFG production at the source root (as ``Tree.production``): the index key for matching."""
        return self.source.production()

    def operations(self) -> Operations:
        """The rule's own operations (words under deleted variables excluded: module docstring)."""
        src_words = [f for f in self.source.frontier() if f.kind == WORD]
        tgt_words = [f for f in self.target.frontier() if f.kind == WORD]
        kept = substituted = inserted = 0
        for w, j in zip(tgt_words, self.word_links, strict=True):
            if j is None:
                inserted += 1
            elif src_words[j].label == w.label:
                kept += 1
            else:
                substituted += 1
        deleted = sum(1 for f in src_words if not f.kept)
        return Operations(kept, deleted, substituted, reordered_count(self.links), inserted)


def _check(rule: RewriteRule) -> None:
    """Validate a rule (ModelError when invalid)."""
    src, tgt = rule.source, rule.target

    def bad(why: str) -> ModelError:
        return ModelError(f"rewriting rule {format_frag(src)} => {format_frag(tgt)}: {why}")

    if src.kind != NODE:
        raise bad("the source must be a tree")
    if tgt.kind == WORD:
        raise bad("the target cannot be a bare word")
    src_frontier, tgt_frontier = src.frontier(), tgt.frontier()
    if any(not f.kept for f in tgt_frontier):
        raise bad("a deleted item in the target")
    linked = [f for f in src_frontier if f.kind == VAR and f.kept]
    tvars = [f for f in tgt_frontier if f.kind == VAR]
    if sorted(rule.links) != list(range(len(linked))) or len(tvars) != len(linked):
        raise bad(f"links {rule.links} are not a permutation of the {len(linked)} linked variables")
    src_words = [f for f in src_frontier if f.kind == WORD]
    tgt_words = [f for f in tgt_frontier if f.kind == WORD]
    if len(rule.word_links) != len(tgt_words):
        raise bad(f"{len(rule.word_links)} word links for {len(tgt_words)} target words")
    used = {j for j in rule.word_links if j is not None}
    if any(j < 0 or j >= len(src_words) for j in used):
        raise bad(f"word link out of range: {rule.word_links}")
    for j, f in enumerate(src_words):
        if f.kept != (j in used):
            raise bad(f"source word {f.label!r} is {'used' if f.kept else 'deleted'} but "
                      f"{'no' if f.kept else 'a'} target word is aligned to it")
