"""The exact decoder for the full-tree condition, and the decoder that picks exact or best-first.

When every head is given, the outputs are the projective linearisations of that tree; under the
canonical derivation (right dependents inside-out, then left ones) each has one derivation, so its
score F is a function of the ordered tree and the goal edge maximising F/|e| (|e| = 2n - 1 for every
goal) maximises F. ``dualdecomp.solvers.ordering.linearise`` finds that maximum exactly by DP; the signature
below lists everything a later feature reads from an edge (head tag and position, last two dependents and
valency on each side, the multiset of tags on each side of the head, the tags next to the head, the
first and last two words and three tags), so the DP is exact for this feature set. Tests check it against
brute-force enumeration.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dualdecomp.models.ordering.edge import Edge, can_attach
from dualdecomp.models.ordering.instance import ROOT, OrderingInput
from dualdecomp.models.ordering.model import OrderingModel
from dualdecomp.models.ordering.search import OrderingResult, SearchConfig, best_first, goal_result
from dualdecomp.solvers.ordering.linearise import Linearisation, best_linearisation


@dataclass(frozen=True)
class ExactConfig:
    """Settings of the exact decoder.

    Attributes
    ----------
    max_states : int
        DP states at most before giving up uncertified (then best-first search decodes).
    """

    max_states: int = 100_000


def signature(e: Edge) -> tuple:
    """Everything a later feature can read from an edge (see the module docstring)."""
    hp = e.head_pos
    tags = e.tags
    return (e.head_tag, hp, len(tags), e.left[-2:], len(e.left), e.right[-2:], len(e.right),
            tuple(sorted(tags[:hp])), tuple(sorted(tags[hp + 1:])),
            tags[hp - 1] if hp > 0 else -1, tags[hp + 1] if hp + 1 < len(tags) else -1,
            e.words[:2], tags[:3], e.words[-2:], tags[-3:])


def exact_linearisation(model: OrderingModel, inp: OrderingInput,
                        config: ExactConfig = ExactConfig()) -> Linearisation[Edge]:
    """The model's best projective linearisation of the input's complete tree, by exact DP.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
        Every head given (POS tags may be missing: the DP then also chooses them).
    config : ExactConfig

    Returns
    -------
    Linearisation
        ``best`` is the goal edge (score F; scaled score ``best.scaled``).

    Raises
    ------
    ValueError
        Some head is not given.
    """
    if any(h is None for h in inp.heads):
        raise ValueError("the exact decoder needs every head")
    ctx = model.context(inp)
    children: list[list[int]] = [[] for _ in range(ctx.n)]
    root = ROOT
    for m, h in enumerate(inp.heads):
        if h == ROOT:
            root = m
        else:
            children[h].append(m)
    leaves = model.leaves(ctx)

    def leaf(h: int) -> list[Edge]:
        return [e for e in leaves if e.head == h]

    def attach(head: Edge, dep: Edge, right: bool) -> Edge | None:
        if not can_attach(ctx, head, dep, right):
            return None
        return model.attach(ctx, head, dep, right, with_phi=False)

    return best_linearisation(children, root, leaf, attach, lambda e: e.score, signature, config.max_states)


def decode(model: OrderingModel, inp: OrderingInput, search: SearchConfig | None = None,
           exact: ExactConfig | None = None) -> OrderingResult:
    """Decode one input: the exact DP when asked and every head is given, else best-first search.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
    search : SearchConfig, optional
        Settings of the best-first search (used when the exact decoder is not used or gives up).
    exact : ExactConfig or None
        None: always best-first search.

    Returns
    -------
    OrderingResult
        ``certified`` is True only when the DP finished (the output is the model's optimum).
    """
    if exact is not None and all(h is not None for h in inp.heads):
        start = time.perf_counter()
        found = exact_linearisation(model, inp, exact)
        if found.certified and found.best is not None:
            ctx = model.context(inp)
            return goal_result(ctx, found.best, found.states, time.perf_counter() - start,
                               method="exact DP", certified=True)
    return best_first(model, inp, search or SearchConfig())
