"""Base noun phrases of a gold UD tree: the ordered units of the paper's word-ordering input (§5).

Zhang & Clark (2015) keep the base NPs of the Penn Treebank as atomic units when they prepare the input
("for fair comparison with Wan et al. 2009"), so their bag-of-words numbers (48.7 BLEU on WSJ test, 42.89
on dev) are for bags of words *and* base NPs. The UD English Web Treebank has no phrase brackets; this
module derives PTB-style base NPs from its dependency trees by a rule fixed before any ordering result was
seen (docs/word-ordering.md, "Word ordering" → "Base NPs"):

* A **candidate head** is a word whose XPOS is a noun, a number or ``$`` (``NOUN_TAGS``), taken top-down
  (breadth-first from the root), skipping words already inside a unit.
* Its **members** are the head and, recursively, the dependents of members by a noun-internal relation
  (``INTERNAL``: det, det:predet, amod, compound, nummod, flat, fixed, goeswith); a possessive or a
  title (``nmod:poss``, ``nmod:desc``) of the head only when it is one word with no dependents ("my
  car", "President Bush", not "John 's car"); the possessive marker (``case`` with XPOS ``POS``:
  "John 's"); a hyphen (``punct`` with XPOS ``HYPH``: "a 15 - year term"); and ``advmod`` of an
  ``amod`` / ``nummod`` member ("a very big car").
* The unit is kept when it has at least two words, covers a contiguous span of the sentence, its
  members other than the head have no dependents outside it, and its arcs cross no other arc of the unit
  (projective). Units never overlap.

The unit is given to the decoder as its words in their original order with their internal heads
(``OrderingInput.units``); the decoder keeps it contiguous and in that order.
"""

from __future__ import annotations

from collections import deque

from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import ROOT, OrderingExample, unit_is_projective

NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "CD", "$"})
"""XPOS tags of the words that may head a base NP."""
INTERNAL = frozenset({"det", "det:predet", "amod", "compound", "nummod", "flat", "flat:foreign", "fixed",
                      "goeswith"})
"""Relations that keep a dependent inside its head's base NP."""


def _joins(example: OrderingExample, children: list[list[int]], member: int, dep: int, head: int) -> bool:
    """Whether ``dep`` (a dependent of ``member``) belongs to the base NP headed by ``head``."""
    rel = example.deprels[dep]
    if rel in INTERNAL:
        return True
    if rel in ("nmod:poss", "nmod:desc"):
        return member == head and not children[dep]
    if rel in ("case", "punct"):
        return example.pos[dep] == ("POS" if rel == "case" else "HYPH")
    if rel == "advmod":
        return member != head and example.deprels[member] in ("amod", "nummod")
    return False


def base_np_units(example: OrderingExample) -> tuple[tuple[int, ...], ...]:
    """The base NPs of a gold sentence (module docstring), as word indices in their original order.

    Parameters
    ----------
    example : OrderingExample
        With ``deprels`` (read from CoNLL-U).

    Returns
    -------
    tuple of tuple of int
        Disjoint units of at least two words, each contiguous and in sentence order.

    Raises
    ------
    InputError
        The example lacks dependency relations.
    """
    n = len(example)
    if len(example.deprels) != n or not all(example.deprels):
        raise InputError(f"sentence {example.ident or '?'}: base NPs need every dependency relation (DEPREL)")
    children: list[list[int]] = [[] for _ in range(n)]
    root = 0
    for m, h in enumerate(example.heads):
        if h == ROOT:
            root = m
        else:
            children[h].append(m)
    order: list[int] = []
    queue = deque([root])
    while queue:  # breadth-first: a phrase's head before the nouns inside it
        h = queue.popleft()
        order.append(h)
        queue.extend(children[h])
    taken: set[int] = set()
    units: list[tuple[int, ...]] = []
    for h in order:
        if h in taken or example.pos[h] not in NOUN_TAGS:
            continue
        members = {h}
        stack = [h]
        while stack:
            u = stack.pop()
            for d in children[u]:
                if d not in taken and _joins(example, children, u, d, h):
                    members.add(d)
                    stack.append(d)
        if _is_unit(example, children, members, h):
            units.append(tuple(sorted(members)))
            taken |= members
    return tuple(sorted(units))


def _is_unit(example: OrderingExample, children: list[list[int]], members: set[int], head: int) -> bool:
    """At least two words, contiguous, closed below the head, and projective inside."""
    if len(members) < 2 or max(members) - min(members) + 1 != len(members):
        return False
    if any(d not in members for u in members if u != head for d in children[u]):
        return False
    return unit_is_projective(tuple(sorted(members)), example.heads, head)
