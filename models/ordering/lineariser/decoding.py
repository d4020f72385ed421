"""The head-domain lineariser as a decoder of full trees (``Lineariser.linearise``), and the result of
any tree it orders (also the completed tree of a best-first output:
``dualdecomp.models.ordering.decoding.relinearise``)."""

from __future__ import annotations

import time

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.lineariser.model import Linearised, Lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM


def linearised_result(inp: OrderingInput, tree: OrderingInput, found: Linearised, seconds: float,
                      expansions: int = 0, method: str | None = None) -> OrderingResult:
    """The ``OrderingResult`` of a lineariser output for ``inp`` (``tree``: the full tree it ordered).

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


def linearise_tree(lineariser: Lineariser, inp: OrderingInput, deadline: Deadline | None = None,
                   lm: OrderingLM | None = None) -> OrderingResult:
    """Order a full-tree input with the lineariser (certified when exact, see ``Linearised``; ``deadline``:
    the input's, see ``Lineariser.linearise``; ``lm``: its LM term, the decoder's ``lineariser_lm``)."""
    start = time.perf_counter()
    found = lineariser.linearise(inp.words, inp.pos, inp.heads, units=inp.units, deadline=deadline, lm=lm)
    return linearised_result(inp, inp, found, time.perf_counter() - start)
