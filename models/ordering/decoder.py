"""The decoder a user calls: exact DP, tree beam DP or best-first search, by input and settings."""

from __future__ import annotations

import time

from dualdecomp.models.ordering.exact import BEAM_METHOD, ExactConfig, exact_linearisation
from dualdecomp.models.ordering.instance import OrderingInput
from dualdecomp.models.ordering.model import OrderingModel
from dualdecomp.models.ordering.refine import refine
from dualdecomp.models.ordering.search import OrderingResult, SearchConfig, best_first, goal_result


def decode(model: OrderingModel, inp: OrderingInput, search: SearchConfig | None = None,
           exact: ExactConfig | None = None) -> OrderingResult:
    """Decode one input: the exact DP when asked and every head is given, else best-first search.

    With ``exact.beam`` set, the tree beam DP decodes every full tree (method ``"tree beam DP
    (approximate)"``, or ``"exact DP"`` and certified when nothing was pruned), and the other inputs'
    best-first outputs are completed and re-ordered by it (``dualdecomp.models.ordering.refine``).

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
        if found.best is not None and (found.certified or exact.beam is not None):
            return goal_result(model.context(inp), found.best, found.states, time.perf_counter() - start,
                               method="exact DP" if found.certified else BEAM_METHOD,
                               certified=found.certified)
    first = best_first(model, inp, search or SearchConfig())
    if exact is not None and exact.beam is not None:
        return refine(model, inp, first, exact.beam)
    return first
