"""The head-domain lineariser as the second stage of best-first search (APPROXIMATE).

For inputs without a full tree the best-first output's tree is completed over every input word exactly
as for the tree beam DP (``dualdecomp.models.ordering.paper.refine.completed_input``: given heads
restored, the output's arcs and tags kept, missing parts attached by the paper's model's arc scores) and
the lineariser orders that tree — its output replaces the best-first one (the two models' scores do not
compare). Approximate (the tree is the search's), and labelled so.
"""

from __future__ import annotations

import time

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.lineariser.decoding import linearised_result
from dualdecomp.models.ordering.lineariser.model import METHOD_NAME, Lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.refine import completed_tree

REFINED_METHOD = f"best-first + {METHOD_NAME} (approximate)"


def relinearise(model: OrderingModel, lineariser: Lineariser, inp: OrderingInput, first: OrderingResult,
                deadline: Deadline | None = None, lm: OrderingLM | None = None,
                lineariser_lm: OrderingLM | None = None) -> OrderingResult:
    """The second stage with the lineariser: complete the best-first output's tree and order it.

    Parameters
    ----------
    model : OrderingModel
        The paper's model (it scores the arcs that complete the tree).
    lineariser : Lineariser
    inp : OrderingInput
    first : OrderingResult
        The best-first output for ``inp``.
    deadline : Deadline, optional
        The input's deadline (``paper.refine.completed_tree``, ``Lineariser.linearise``).
    lm : OrderingLM, optional
        The LM term of the paper model's arc scores (the one the search decoded with).
    lineariser_lm : OrderingLM, optional
        The lineariser's LM term (the decoder's ``lineariser_lm``; None: the lineariser alone).

    Returns
    -------
    OrderingResult
        Every input word, the given tags and heads kept; method ``"best-first + head-domain lineariser
        (approximate)"``; seconds include the first stage; ``stopped``: the first stage's, then this one's.
    """
    start = time.perf_counter()
    tree, completion = completed_tree(model, inp, first, deadline, lm)
    found = lineariser.linearise(tree.words, tree.pos, tree.heads, units=tree.units, deadline=deadline,
                                 lm=lineariser_lm)
    result = linearised_result(inp, tree, found, first.seconds + time.perf_counter() - start,
                               first.expansions, REFINED_METHOD)
    return result.after(first.stopped + completion)
