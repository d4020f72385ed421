"""Search error or model error? The gold ordering of a sentence scored under the model, against an output.

For a full-tree input (every head and tag given) the gold ordering is one of the outputs the decoders
search over when the gold tree is projective. Scoring its canonical derivation (right dependents
inside-out, then left ones, as every decoder builds it) under the same model tells what went wrong
when a decoder's output is not the gold ordering: a **search error** when the gold ordering scores
higher (a better search would have found something at least as good), a **model error** when the output
scores at least as high (the model prefers it; only better weights help). Scores are the unscaled F of
goal edges, which all have size 2n - 1 for a full tree, so they compare.
"""

from __future__ import annotations

from collections.abc import Sequence

from dualdecomp.data.ordering.inputs import OrderingInput
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Edge, can_attach
from dualdecomp.models.ordering.paper.model import OrderingModel

GOLD, SEARCH_ERROR, MODEL_ERROR = "gold", "search error", "model error"


def gold_derivation(model: OrderingModel, inp: OrderingInput, order: Sequence[int],
                    lm: OrderingLM | None = None) -> Edge | None:
    """The goal edge of the gold ordering ``order`` of a full-tree input under ``model``.

    Parameters
    ----------
    model : OrderingModel
    inp : OrderingInput
        Every head and every POS tag given.
    order : sequence of int
        The input index of each word of the gold sentence, in surface order.
    lm : OrderingLM, optional
        The LM term the decoders add to the model's scores (the same score as theirs).

    Returns
    -------
    Edge or None
        None when the gold ordering is not a projective linearisation of the tree (no derivation builds
        it) or a gold tag is not one the model allows.

    Raises
    ------
    ValueError
        A head or tag is not given, or ``order`` is not a permutation of the input.
    """
    n = len(inp)
    if any(h is None for h in inp.heads) or any(p is None for p in inp.pos):
        raise ValueError("the gold derivation needs every head and tag")
    if sorted(order) != list(range(n)):
        raise ValueError("order must be a permutation of the input's word indices")
    ctx = model.context(inp)
    position = {w: k for k, w in enumerate(order)}
    leaves = {leaf.head: leaf for leaf in model.leaves(ctx, lm=lm)}  # one leaf per word: its given tag
    kids = inp.given_children()

    def build(h: int) -> Edge | None:
        edge = leaves.get(h)
        right = sorted((k for k in kids[h] if position[k] > position[h]), key=position.__getitem__)
        left = sorted((k for k in kids[h] if position[k] < position[h]), key=position.__getitem__,
                      reverse=True)
        for on_right, dependents in ((True, right), (False, left)):
            for m in dependents:
                child = build(m)
                if edge is None or child is None or not can_attach(ctx, edge, child, on_right):
                    return None
                edge = model.attach(ctx, edge, child, on_right, with_phi=False, lm=lm)
        return edge

    gold = build(inp.given_root())
    if gold is None or gold.words != tuple(order):
        return None
    return gold


def error_kind(gold: Edge, output: Edge) -> str:
    """:data:`GOLD` when ``output`` is the gold ordering, else :data:`SEARCH_ERROR` if the gold one scores
    higher, else :data:`MODEL_ERROR` (both goal edges of the same full-tree input and model)."""
    if output.words == gold.words:
        return GOLD
    return SEARCH_ERROR if gold.score > output.score + 1e-9 else MODEL_ERROR
