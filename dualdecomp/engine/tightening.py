r"""Tightening by branch and bound on the positions the components disagree on.

A node fixes some positions to 0 (u = −inf there, in every component) or to 1 (+M there, minus K·M in
the bound; see :mod:`dualdecomp.engine.subgradient`) and is relaxed by the same dual decomposition (or
bisection on λ), warm-started from its parent's multipliers and step state. Its dual is an upper bound
for that node only; the nodes open or closed at any moment partition the feasible set, so the global
bound is the maximum of their bounds (kept as a running minimum by the tracker). Nodes are explored
best first (largest bound). A node is closed when its bound falls to the incumbent (or it is
infeasible); it is branched after ``node_iterations`` iterations without that. The branching position is
the free position with the highest decayed count of disagreements (or one where the two keeps around a
length gap differ); the child that agrees with the incumbent is explored first. With every position
fixed all components must return the same keep, so the search is complete: it ends with a certificate,
a proof of infeasibility, or when the budget or time limit runs out.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import numpy as np

from dualdecomp.engine.tracker import Node, Tracker


def branching_position(node: Node) -> int | None:
    """The free position to branch on, or None when every position is fixed."""
    free = ~(node.drop | node.force)
    if not free.any():
        return None
    score = np.asarray(node.votes, dtype=np.float64).copy()
    if node.gap_positions.shape == score.shape and node.gap_positions.any():
        score = score + node.gap_positions * (score.max() + 1.0)
    score[~free] = -1.0
    best = int(np.argmax(score))
    if score[best] > 0:
        return best
    if node.last_keeps is not None:
        differ = (node.last_keeps != node.last_keeps[0]).any(axis=0) & free
        if differ.any():
            return int(np.flatnonzero(differ)[0])
    return int(np.flatnonzero(free)[0])


def preferred_value(node: Node, tracker: Tracker, position: int) -> bool:
    """The value of ``position`` to explore first: the incumbent's, else the components' majority."""
    if tracker.keep is not None:
        return bool(tracker.keep[position])
    if node.last_keeps is not None:
        return bool(node.last_keeps[:, position].mean() >= 0.5)
    return True


def branch_and_bound(tracker: Tracker, root: Node, relax: Callable[[Node], bool]) -> None:
    """Branch and bound below ``root`` until certified, exhausted, or every node is closed.

    Parameters
    ----------
    tracker : Tracker
        Holds the incumbent, the open nodes (``root`` must be among them) and the budget.
    root : Node
        A relaxed node that is not settled.
    relax : callable
        ``relax(node) -> bool``: relaxes a node in place (updating its bound) and returns True when the
        node is settled (bound at or below the incumbent, or infeasible).
    """
    counter = itertools.count(1)
    order = itertools.count()
    heap: list[tuple[float, int, Node]] = []

    def leaf(node: Node) -> None:
        # every position fixed: the node holds the single keep node.force, evaluated exactly
        node.bound = min(node.bound, tracker.offer(node.force))
        tracker.close(node)

    def branch(node: Node) -> None:
        k = branching_position(node)
        if k is None:
            leaf(node)
            return
        first = preferred_value(node, tracker, k)
        children = [node.child(next(counter), k, first), node.child(next(counter), k, not first)]
        tracker.open.remove(node)
        for child in children:
            tracker.open.append(child)
            heapq.heappush(heap, (-child.bound, next(order), child))
        tracker.annotate(f"branch: node {node.ident} on position {k + 1}")

    branch(root)
    while heap and not tracker.exhausted():
        if tracker.certified:
            break
        _, _, node = heapq.heappop(heap)
        if tracker.settled(node.bound):
            tracker.close(node)
            continue
        if not (~(node.drop | node.force)).any():
            leaf(node)
            continue
        if relax(node):
            tracker.close(node)
            continue
        if tracker.exhausted():
            break
        branch(node)
