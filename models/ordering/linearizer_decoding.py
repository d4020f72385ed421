"""The head-domain linearizer as a decoder: full trees directly, other inputs after best-first search.

For a full tree the linearizer orders the given tree (``Linearizer.linearise``). For other inputs the
best-first output's tree is completed over every input word exactly as for the tree beam DP
(``dualdecomp.models.ordering.refine.completed_input``: given heads restored, the output's arcs and tags
kept, missing parts attached by the paper's model's arc scores) and the linearizer orders that tree —
its output replaces the best-first one (the two models' scores do not compare). Approximate for inputs
without a full tree (the tree is the search's), and labelled so.
"""

from __future__ import annotations

import time

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.linearizer import Linearised, Linearizer
from dualdecomp.models.ordering.lm_feature import OrderingLM
from dualdecomp.models.ordering.model import OrderingModel
from dualdecomp.models.ordering.refine import completed_tree

REFINED_METHOD = "best-first + head-domain linearizer (approximate)"


def linearised_result(inp: OrderingInput, tree: OrderingInput, found: Linearised, seconds: float,
                      expansions: int = 0, method: str | None = None) -> OrderingResult:
    """The ``OrderingResult`` of a linearizer output for ``inp`` (``tree``: the full tree it ordered).

    With a ``method`` of its own (the second stage) the result is never certified: the tree it ordered
    was the search's, not the input's. What the deadline cut short (``found.stopped``) is kept.
    """
    position = {w: k for k, w in enumerate(found.order)}
    heads = tuple(0 if tree.heads[w] == ROOT else position[tree.heads[w]] + 1 for w in found.order)
    return OrderingResult(order=found.order, words=tuple(inp.words[w] for w in found.order),
                          pos=tuple(found.tags[w] for w in found.order), heads=heads, complete=True,
                          score=found.score, recovered=1.0, expansions=expansions, seconds=seconds,
                          method=method or found.method, certified=found.certified and method is None,
                          stopped=(found.stopped,) if found.stopped else ())


def linearise_tree(linearizer: Linearizer, inp: OrderingInput, deadline: Deadline | None = None
                   ) -> OrderingResult:
    """Order a full-tree input with the linearizer (certified when exact, see ``Linearised``; ``deadline``:
    the input's, see ``Linearizer.linearise``)."""
    start = time.perf_counter()
    found = linearizer.linearise(inp.words, inp.pos, inp.heads, units=inp.units, deadline=deadline)
    return linearised_result(inp, inp, found, time.perf_counter() - start)


def relinearise(model: OrderingModel, linearizer: Linearizer, inp: OrderingInput, first: OrderingResult,
                deadline: Deadline | None = None, lm: OrderingLM | None = None) -> OrderingResult:
    """The second stage with the linearizer: complete the best-first output's tree and order it.

    Parameters
    ----------
    model : OrderingModel
        The paper's model (it scores the arcs that complete the tree).
    linearizer : Linearizer
    inp : OrderingInput
    first : OrderingResult
        The best-first output for ``inp``.
    deadline : Deadline, optional
        The input's deadline (``refine.completed_tree``, ``Linearizer.linearise``).
    lm : OrderingLM, optional
        The LM term of the paper model's arc scores (the one the search decoded with).

    Returns
    -------
    OrderingResult
        Every input word, the given tags and heads kept; method ``"best-first + head-domain linearizer
        (approximate)"``; seconds include the first stage; ``stopped``: the first stage's, then this one's.
    """
    start = time.perf_counter()
    tree, completion = completed_tree(model, inp, first, deadline, lm)
    found = linearizer.linearise(tree.words, tree.pos, tree.heads, units=tree.units, deadline=deadline)
    result = linearised_result(inp, tree, found, first.seconds + time.perf_counter() - start,
                               first.expansions, REFINED_METHOD)
    return result.after(first.stopped + completion)
