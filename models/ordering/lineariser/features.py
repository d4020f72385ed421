"""Features of the head-domain lineariser: one head domain (a head and its dependents) of a given tree.

A domain's elements are the head and its dependents; a dependent stands for its whole subtree. Its
features (each a tuple of Python ints hashed to ``hash(tuple) mod (2**bits - 1) + 1``, index 0 being the
padding of the weight files: CPython's hash of a tuple of ints is not salted, and the string atoms come
from BLAKE2b, ``dualdecomp.core.hashing.atom``) fill the score tables of
``dualdecomp.solvers.ordering.domain_order``:

* side (dependent d before / after the head h): d's tag and word with h's tag or word, with the tag of
  h's own head (``ROOT`` for the root), with d's number of dependents (binned) and with the set of its
  dependents' tags;
* pair (element b directly after element a): their tags and words (each marked head or dependent),
  with h's tag or word, h's head's tag, their numbers of dependents and their dependents' tag sets;
* start / end (the first / the last element): its tag or word with h's tag or word and h's head's tag.

Nothing reads the input order, so the score of an ordered tree is a sum over its domains' orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from dualdecomp.core.hashing import atom
from dualdecomp.data.ordering.inputs import ROOT

ROOT_TAG_ATOM = atom("tag:<root>")


@dataclass(frozen=True)
class Domain:
    """One head domain with its hashed features.

    Attributes
    ----------
    head : int
        The head word (input index).
    elements : tuple of int
        The head and its dependents (input indices, ascending).
    head_index : int
        Position of the head in ``elements``.
    index : numpy.ndarray of int64
        Weight index of each feature occurrence.
    cell : numpy.ndarray of int64
        The score-table cell each occurrence adds to (:func:`cell_count` cells: side ``2d + s``, pair
        ``2n + a·n + b``, start ``2n + n² + e``, end ``3n + n² + e``).
    """

    head: int
    elements: tuple[int, ...]
    head_index: int
    index: np.ndarray
    cell: np.ndarray

    def __len__(self) -> int:
        return len(self.elements)


def cell_count(n: int) -> int:
    """Number of score cells of a domain of ``n`` elements."""
    return 3 * n + n * n + n


def _bin(count: int) -> int:
    return count if count <= 3 else (4 if count <= 6 else 5)


def sentence_domains(words: Sequence[str], tags: Sequence[str], heads: Sequence[int], mask: int
                     ) -> list[Domain]:
    """The head domains of a complete tree, children before parents (bottom-up).

    Parameters
    ----------
    words, tags : sequence of str
        Every word with a tag.
    heads : sequence of int
        0-based heads, ``ROOT`` for the root (a tree).
    mask : int
        ``2**hash_bits - 1`` (indices fall in ``[1, mask]``).

    Returns
    -------
    list of Domain
        One per word with dependents.
    """
    n = len(words)
    children: list[list[int]] = [[] for _ in range(n)]
    for d, h in enumerate(heads):
        if h != ROOT:
            children[h].append(d)
    word_atom = [atom("word:" + w.lower()) for w in words]
    tag_atom = [atom("tag:" + t) for t in tags]
    kids_bin = [_bin(len(c)) for c in children]
    kid_tags = [atom("tags:" + "|".join(sorted({tags[c] for c in kids}))) for kids in children]
    depth = [0] * n
    for d in range(n):
        h = heads[d]
        while h != ROOT:
            depth[d] += 1
            h = heads[h]
    out = []
    for h in sorted((h for h in range(n) if children[h]), key=lambda h: -depth[h]):
        elements = tuple(sorted([h, *children[h]]))
        grand = ROOT_TAG_ATOM if heads[h] == ROOT else tag_atom[heads[h]]
        index, cell = _domain_features(h, elements, grand, word_atom, tag_atom, kids_bin, kid_tags)
        out.append(Domain(h, elements, elements.index(h),
                          np.array(index, dtype=np.int64) % mask + 1, np.array(cell, dtype=np.int64)))
    return out


def _domain_features(h: int, elements: tuple[int, ...], grand: int, wa, ta, kids_bin, kid_tags
                     ) -> tuple[list[int], list[int]]:
    """Feature hashes and cells of one domain (templates in the module docstring)."""
    n = len(elements)
    th, wh = ta[h], wa[h]
    role = [int(x == h) for x in elements]
    tag = [ta[x] for x in elements]
    word = [wa[x] for x in elements]
    kb = [0 if x == h else kids_bin[x] for x in elements]
    kt = [0 if x == h else kid_tags[x] for x in elements]
    index: list[int] = []
    cell: list[int] = []

    def add(at: int, feats: list[tuple]) -> None:
        index.extend(hash(f) for f in feats)
        cell.extend([at] * len(feats))

    for j in range(n):
        if role[j]:
            continue
        for s in (0, 1):
            add(2 * j + s, [(1, tag[j], th, s), (2, word[j], th, s), (3, tag[j], wh, s), (4, word[j], wh, s),
                            (5, tag[j], th, s, kb[j]), (6, tag[j], th, grand, s), (7, tag[j], th, s, kt[j]),
                            (8, word[j], tag[j], th, s)])
    for a in range(n):
        ra, ta_, wa_ = role[a], tag[a], word[a]
        for b in range(n):
            if a == b:
                continue
            rb, tb, wb = role[b], tag[b], word[b]
            add(2 * n + a * n + b, [(11, ra, ta_, rb, tb, th), (12, ra, wa_, rb, tb, th),
                                    (13, ra, ta_, rb, wb, th), (14, ra, wa_, rb, wb),
                                    (15, ra, ta_, rb, tb, wh), (16, ra, ta_, rb, tb, th, grand),
                                    (17, ra, ta_, rb, tb, th, kb[a], kb[b]),
                                    (18, ra, ta_, rb, tb, th, kt[a], kt[b]),
                                    (19, ra, wa_, ta_, rb, tb, th), (20, ra, ta_, rb, wb, tb, th)])
    for j in range(n):
        r = role[j]
        add(2 * n + n * n + j, [(21, r, tag[j], th), (22, r, word[j], th), (23, r, tag[j], th, grand),
                                    (24, r, tag[j], wh)])
        add(3 * n + n * n + j, [(31, r, tag[j], th), (32, r, word[j], th), (33, r, tag[j], th, grand),
                                (34, r, tag[j], wh)])
    return index, cell


def domain_tables(weights: np.ndarray, domain: Domain
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The side, pair, start and end score tables of a domain under ``weights``."""
    n = len(domain)
    scores = np.bincount(domain.cell, weights=weights[domain.index], minlength=cell_count(n))
    return (scores[:2 * n].reshape(n, 2), scores[2 * n:2 * n + n * n].reshape(n, n),
            scores[2 * n + n * n:3 * n + n * n], scores[3 * n + n * n:])


def unit_chain(domain: Domain, units: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The domain's elements inside the ordered unit that holds its head, in the unit's order.

    They must come out adjacent and in that order (each dependent stands for its subtree, which lies
    inside the unit: only a unit's head takes dependents from outside it); empty when the head is in no
    unit. Together the chains of a unit's words keep it contiguous and in order.
    """
    for unit in units:
        if domain.head in unit:
            place = {w: k for k, w in enumerate(unit)}
            inside = [e for e, w in enumerate(domain.elements) if w in place]
            return tuple(sorted(inside, key=lambda e: place[domain.elements[e]]))
    return ()


def constrained_tables(weights: np.ndarray, domain: Domain, units: Sequence[Sequence[int]] = ()
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`domain_tables` with every order that breaks an ordered unit scored ``-inf``.

    Along the unit's chain (:func:`unit_chain`) an element may be followed only by the next one, and
    the next one only preceded by it; only the chain's first element may start the domain and only its
    last may end it. The best order under these tables is the best order that keeps the units.
    """
    side, pair, start, end = domain_tables(weights, domain)
    chain = unit_chain(domain, units)
    for a, b in pairwise(chain):
        keep = pair[a, b]
        pair[a, :] = -np.inf
        pair[:, b] = -np.inf
        pair[a, b] = keep
        start[b] = -np.inf
        end[a] = -np.inf
    return side, pair, start, end


def order_cells(domain: Domain, order: Sequence[int]) -> list[int]:
    """The cells an order of the domain (element indices) uses."""
    n = len(domain)
    cells = [2 * n + n * n + int(order[0]), 3 * n + n * n + int(order[-1])]
    after = False
    for k, e in enumerate(order):
        if e == domain.head_index:
            after = True
        else:
            cells.append(2 * int(e) + int(after))
        if k:
            cells.append(2 * n + int(order[k - 1]) * n + int(e))
    return cells


def order_features(domain: Domain, order: Sequence[int]) -> np.ndarray:
    """Weight indices (with repeats) of the features of one order of the domain."""
    return domain.index[np.isin(domain.cell, order_cells(domain, order))]
