"""Exact projective linearisation of a dependency tree by dynamic programming over partial subtrees.

Model-agnostic: the caller supplies the states (partial ordered subtrees), how a complete child subtree
is attached to a partial head subtree on one side, the score of a state, and a *signature* of a state:
everything any later scoring step can read from it. States of one head with the same set of attached
children and the same signature are interchangeable for the future, so only the best of them is kept
(dynamic programming); with a complete signature the result is the exact maximum over every
projective linearisation that ``attach`` allows, which is what ``certified=True`` asserts. The search is
exponential in the number of children of a node (subsets of attached children), so it stops
uncertified when more than ``max_states`` states would be built.

With ``beam=K`` the same DP keeps only the K best states after each attachment step of a head (all of
them have the same number of attached children, so their scores are comparable) and the K best
complete subtrees of each node: an APPROXIMATE decoder whose cost is linear in the sentence length
(about K² × c² attachments for a node with c children), which always returns a complete tree. It is
still ``certified`` when no state was ever pruned.

With a ``Deadline`` the DP checks it before every attachment. The exact DP then gives up as it does at
``max_states`` (no output); the beam DP finishes greedily — each node not yet complete keeps its best
state and attaches its remaining children one at a time, each time the first of them (in ``children``
order) that attaches, on its better side — so it still returns a complete tree, after at most two
attachments per remaining child. Either result has ``timed_out`` set and is not certified.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError

S = TypeVar("S")


@dataclass(frozen=True)
class Linearisation(Generic[S]):
    """The outcome of :func:`best_linearisation`.

    Attributes
    ----------
    best : object or None
        The best complete state of the root (None when not certified or nothing is feasible).
    score : float
        Its score (``-inf`` if none).
    certified : bool
        True iff the search finished: ``best`` is the maximum over all allowed linearisations.
    states : int
        States built.
    timed_out : bool
        The deadline stopped the search (the exact DP: no output; the beam DP: finished greedily).
    """

    best: S | None
    score: float
    certified: bool
    states: int
    timed_out: bool = False


def best_linearisation(children: Sequence[Sequence[int]], root: int, leaves: Callable[[int], list[S]],
                       attach: Callable[[S, S, bool], S | None], score: Callable[[S], float],
                       signature: Callable[[S], Hashable], max_states: int = 200_000,
                       beam: int | None = None, finish: Callable[[S, bool], S] | None = None,
                       deadline: Deadline | None = None) -> Linearisation[S]:
    """The highest-scoring complete ordered tree, by DP over (attached children, signature).

    Parameters
    ----------
    children : sequence of sequence of int
        ``children[h]``: the dependents of node h in the tree.
    root : int
        The root node.
    leaves : callable
        ``h -> list of states``: node h alone (e.g. one state per POS tag).
    attach : callable
        ``(head_state, complete_child_state, on_right) -> state or None`` (None: not allowed).
    score : callable
        ``state -> float``; additive along ``attach`` in the caller's model.
    signature : callable
        ``state -> hashable``; equal signatures must mean equal future score contributions.
    max_states : int
        Give up (``certified=False``) after building this many states (ignored when ``beam`` is set).
    beam : int or None
        None: exact. K: keep the K best states per step and the K best complete subtrees per node
        (approximate; ``certified`` only when nothing was pruned).
    finish : callable, optional
        ``(state with every child attached, is_root) -> state``: terms a model adds once a subtree is
        complete (e.g. for its first and last element); its signature then describes what a parent reads.
    deadline : Deadline, optional
        Checked before every attachment; at the deadline the exact DP gives up and the beam DP finishes
        greedily (module docstring).

    Returns
    -------
    Linearisation

    Raises
    ------
    InputError
        ``children`` is not a tree rooted at ``root``.
    """
    n = len(children)
    order: list[int] = []
    stack, seen = [root], set()
    while stack:  # pre-order; reversed it visits children before parents
        h = stack.pop()
        if h in seen or not 0 <= h < n:
            raise InputError("the dependency structure is not a tree")
        seen.add(h)
        order.append(h)
        stack.extend(children[h])
    if len(seen) != n:
        raise InputError("the dependency structure is not a tree (some nodes are not under the root)")
    if beam is not None and beam < 1:
        raise ValueError("beam must be at least 1")
    complete: dict[int, list[S]] = {}
    states = 0
    pruned = False
    late = False

    def expired() -> bool:
        nonlocal late
        late = late or (deadline is not None and deadline.expired())
        return late

    def prune(table: dict[Hashable, tuple[int, S]]) -> dict[Hashable, tuple[int, S]]:
        nonlocal pruned
        if beam is None or len(table) <= beam:
            return table
        pruned = True
        return dict(heapq.nlargest(beam, table.items(), key=lambda item: score(item[1][1])))

    for h in reversed(order):
        layer: dict[Hashable, tuple[int, S]] = {}
        for st in leaves(h):
            _keep(layer, (0, signature(st)), 0, st, score)
        layer = prune(layer)
        states += len(layer)
        kids = list(children[h])
        for _ in kids:
            if late:
                break
            nxt: dict[Hashable, tuple[int, S]] = {}
            for attached, st in layer.values():
                if late:
                    break
                for bit, c in enumerate(kids):
                    if attached >> bit & 1 or late:
                        continue
                    for child in complete[c]:
                        if expired():
                            break
                        for right in (True, False):
                            new = attach(st, child, right)
                            if new is None:
                                continue
                            states += 1
                            if beam is None and states > max_states:
                                return Linearisation(None, float("-inf"), False, states)
                            done = attached | 1 << bit
                            _keep(nxt, (done, signature(new)), done, new, score)
            if late:  # this step was cut short: its states are dropped
                break
            layer = prune(nxt)
        if late:
            if beam is None:
                return Linearisation(None, float("-inf"), False, states, timed_out=True)
            layer, built = _finish_greedily(layer, kids, complete, attach, score, signature)
            states += built
        finals: dict[Hashable, tuple[int, S]] = {}
        for attached, st in layer.values():
            done = st if finish is None else finish(st, h == root)
            _keep(finals, signature(done), attached, done, score)
        complete[h] = [st for _, st in prune(finals).values()]
        for c in kids:
            del complete[c]
    certified = not pruned and not late
    if not complete[root]:
        return Linearisation(None, float("-inf"), certified, states, late)
    best = max(complete[root], key=score)
    return Linearisation(best, score(best), certified, states, late)


def _finish_greedily(layer: dict, kids: list[int], complete: dict, attach, score, signature
                     ) -> tuple[dict, int]:
    """A node's states after the deadline: its best state of ``layer`` with the remaining children
    attached one at a time (the first in ``kids`` order that attaches, on its better side, its best
    complete subtree); ``({}, built)`` when none is left or the node is stuck. Also: states built."""
    if not layer:
        return {}, 0
    attached, st = max(layer.values(), key=lambda item: score(item[1]))
    built = 0
    while attached != (1 << len(kids)) - 1:
        for bit, c in enumerate(kids):
            if attached >> bit & 1 or not complete[c]:
                continue
            child = max(complete[c], key=score)
            options = [new for right in (True, False) if (new := attach(st, child, right)) is not None]
            built += len(options)
            if options:
                st = max(options, key=score)
                attached |= 1 << bit
                break
        else:
            return {}, built
    return {(attached, signature(st)): (attached, st)}, built


def _keep(table: dict, key: Hashable, attached: int, state, score) -> None:
    old = table.get(key)
    if old is None or score(state) > score(old[1]):
        table[key] = (attached, state)
