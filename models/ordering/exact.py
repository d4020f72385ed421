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

from dataclasses import dataclass

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.edge import Edge, can_attach
from dualdecomp.models.ordering.lm_feature import OrderingLM
from dualdecomp.models.ordering.model import OrderingModel
from dualdecomp.solvers.ordering.linearise import Linearisation, best_linearisation

BEAM_METHOD = "tree beam DP (approximate)"
DEFAULT_TREE_BEAM = 64
"""K of the tree beam DP of the CLI's and the benchmark's decoders: the largest K of {4, 8, 16, 32, 64} whose
slowest full-tree sentence of dev 1000-1029 stays within 5 s (README, "The tree beam DP")."""
SECOND_STAGES = ("tree-beam", "linearizer")
LM_BEAM_INPUTS = ("none", "untagged", "applicable")
"""Which inputs the model's LM beam orders: none; those that give no tag and no head outside their units;
every input it can order (no head given outside its units)."""
"""What may order the completed tree of a best-first output (``ExactConfig.second_stage``)."""


@dataclass(frozen=True)
class ExactConfig:
    """Settings of the decoders (``dualdecomp.models.ordering.decoding.decoder.OrderingDecoder.decode``).

    Attributes
    ----------
    max_states : int or None
        Run the exact DP first, with at most this many states before it gives up uncertified; None: no
        exact DP.
    beam : int or None
        K: the tree beam DP (the same DP keeping the K best states per step and the K best subtrees per
        node — APPROXIMATE, always a complete output, certified only when nothing was pruned) decodes the
        full trees the exact DP did not certify, and completes and re-orders best-first outputs of the
        other inputs. None: those are left to best-first search (the paper's method).
    linearizer : bool
        Order full trees the exact DP did not certify with the model's head-domain linearizer (when it has
        one; ``dualdecomp.models.ordering.linearizer``) instead of the tree beam DP.
    second_stage : str
        What orders the completed tree of a best-first output: ``"tree-beam"`` (the tree beam DP, when
        ``beam`` is set) or ``"linearizer"`` (the head-domain linearizer, when the model has one).
    beam_attachments : int or None
        A bound per sentence on the tree beam DP's work that does not depend on the machine: its beam is
        halved (``beam``, ``beam // 2``, ..., 1) until the tree's worst case of attachments
        (:func:`worst_case_attachments`) is within it. None: always ``beam``.
    lm_beam : str
        Which inputs the model's LM beam search orders, when the model has one (one of
        :data:`LM_BEAM_INPUTS`; ``dualdecomp.models.ordering.lm_beam``): the paper model's decoders take
        the others.
    """

    max_states: int | None = 100_000
    beam: int | None = None
    linearizer: bool = False
    second_stage: str = "tree-beam"
    beam_attachments: int | None = None
    lm_beam: str = "none"

    def __post_init__(self) -> None:
        if self.second_stage not in SECOND_STAGES:
            raise ValueError(f"second_stage must be one of {SECOND_STAGES}, not {self.second_stage!r}")
        if self.lm_beam not in LM_BEAM_INPUTS:
            raise ValueError(f"lm_beam must be one of {LM_BEAM_INPUTS}, not {self.lm_beam!r}")
        if self.beam_attachments is not None and self.beam_attachments < 1:
            raise ValueError("beam_attachments must be positive")


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
