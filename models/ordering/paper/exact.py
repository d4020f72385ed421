"""The exact decoder (and its beam version) for the full-tree condition.

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

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Edge, can_attach
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.solvers.ordering import Linearisation, best_linearisation

BEAM_METHOD = "tree beam DP (approximate)"
def worst_case_attachments(children, beam: int) -> int:
    """The most attachments the tree beam DP with beam K can try on a tree: K² c (c + 1) summed over
    the nodes (c = a node's number of children; at step s each of at most K states tries each of the
    c − s + 1 children left, each of its at most K subtrees, on both sides)."""
    return beam * beam * sum(len(kids) * (len(kids) + 1) for kids in children)


def budgeted_beam(children, beam: int, attachments: int | None) -> int:
    """The largest of ``beam``, ``beam // 2``, ..., 1 whose worst case of attachments on the tree is
    within ``attachments`` (1 when none is; ``beam`` when ``attachments`` is None)."""
    if attachments is None:
        return beam
    while beam > 1 and worst_case_attachments(children, beam) > attachments:
        beam //= 2
    return beam


def signature(e: Edge) -> tuple:
    """Everything a later feature can read from an edge (see the module docstring)."""
    hp = e.head_pos
    tags = e.tags
    return (e.head_tag, hp, len(tags), e.left[-2:], len(e.left), e.right[-2:], len(e.right),
            tuple(sorted(tags[:hp])), tuple(sorted(tags[hp + 1:])),
            tags[hp - 1] if hp > 0 else -1, tags[hp + 1] if hp + 1 < len(tags) else -1,
            e.words[:2], tags[:3], e.words[-2:], tags[-3:])


def exact_linearisation(model: OrderingModel, inp: OrderingInput, max_states: int = 100_000,
                        beam: int | None = None, beam_attachments: int | None = None,
                        deadline: Deadline | None = None, lm: OrderingLM | None = None
                        ) -> Linearisation[Edge]:
    """The model's best projective linearisation of the input's complete tree, by exact DP.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
        Every head given (POS tags may be missing: the DP then also chooses them).
    max_states : int
        The exact DP gives up uncertified after this many states (unused with ``beam``).
    beam : int or None
        None: exact; K: the tree beam DP (approximate; certified only when nothing was pruned).
    beam_attachments : int or None
        With ``beam``: the bound of :func:`budgeted_beam` on this tree's worst case of attachments.
    deadline : Deadline, optional
        The input's deadline: the exact DP gives up there, the beam DP finishes greedily
        (``dualdecomp.solvers.ordering.linearise``); either is then ``timed_out``.
    lm : OrderingLM, optional
        The LM term added to every edge's score (exact under concatenation: the signature covers it).

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
    children = inp.given_children()
    root = inp.given_root()
    leaves = model.leaves(ctx, lm=lm)

    def leaf(h: int) -> list[Edge]:
        return [e for e in leaves if e.head == h]

    def attach(head: Edge, dep: Edge, right: bool) -> Edge | None:
        if not can_attach(ctx, head, dep, right):
            return None
        return model.attach(ctx, head, dep, right, with_phi=False, lm=lm)

    if beam is not None:
        beam = budgeted_beam(children, beam, beam_attachments)
    return best_linearisation(children, ROOT if root is None else root, leaf, attach, lambda e: e.score,
                              signature, max_states, beam, deadline=deadline)
