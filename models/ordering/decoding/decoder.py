"""The decoder a user calls: the models saved in a word-order model directory, together, and the choice
among their decoders (LM beam, exact DP, lineariser, tree beam DP or best-first search) by input and
settings; the decoders themselves are registered in ``dualdecomp.models.ordering.decoding.registry``."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.models.ordering.bag_lm.search import LMBeam, lm_beam_applies
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.registry import (
    ORDERING_DECODERS,
    SECOND_STAGE_DECODERS,
    GaveUp,
    decode_with,
)
from dualdecomp.models.ordering.lineariser.model import Lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.search import SearchConfig

WARM_UP_INPUTS = (
    OrderingInput(("the", "dog", "ran", "."), (None,) * 4, (None,) * 4, "warm-up bag"),
    OrderingInput(("the", "dog", "ran", "."), ("DT", "NN", "VBD", "."), (1, 2, ROOT, 2), "warm-up tree"),
)
"""What :meth:`OrderingDecoder.warm_up` decodes: a bag without tags and a full tree with its tags."""


@dataclass(frozen=True)
class OrderingDecoder:
    """The models that decode word ordering together: the paper's model (its weights), the KenLM term
    added to its scores, the head-domain lineariser with its LM term and the LM beam search — the bundle
    every registered decoder reads (``decoding.registry``).

    Loaded from a model directory by ``dualdecomp.models.ordering.decoding.load.load_decoder``, with the LM
    terms at the weights chosen on dev by ``load.with_decoding_lm``.

    Attributes
    ----------
    model : OrderingModel
        The paper's model (weights, tag dictionary, settings).
    lm : OrderingLM or None
        The LM term added to every edge's score by the paper model's decoders (None: the model alone).
    units_lm : OrderingLM or None
        The LM term in place of ``lm`` for inputs with ordered units (``OrderingInput.units``), whose
        weight was chosen on dev with base NPs as units (``meta["decode"]["units"]``; :meth:`lm_for`);
        None: ``lm`` for every input.
    lineariser : Lineariser or None
        The head-domain lineariser saved beside the model (``linearizer.json``), if any (its weights and
        settings): the default decoder of full trees, and on request the second stage
        (``dualdecomp.models.ordering.lineariser.model``).
    lm_beam : LMBeam or None
        The LM beam search saved beside the model (its LM files and settings in
        ``meta["decode"]["lm_beam"]``), if any: the decoder of inputs without given heads outside their
        units when its ``default`` says so (``dualdecomp.models.ordering.bag_lm.search``).
    lineariser_lm : OrderingLM or None
        The lineariser's LM term, its weight the lineariser's ``lm_weight`` (``load.with_decoding_lm``);
        None: the lineariser alone (exact).
    """

    model: OrderingModel
    lm: OrderingLM | None = None
    units_lm: OrderingLM | None = None
    lineariser: Lineariser | None = None
    lm_beam: LMBeam | None = None
    lineariser_lm: OrderingLM | None = None

    def lm_for(self, inp: OrderingInput) -> OrderingLM | None:
        """The LM term of the paper model's decoders for ``inp``: ``units_lm`` when ``inp`` has ordered
        units and there is one, else ``lm``."""
        return self.units_lm if inp.units and self.units_lm is not None else self.lm

    def warm_up(self, search: SearchConfig | None = None, exact: ExactConfig | None = None) -> None:
        """Decode :data:`WARM_UP_INPUTS` with these settings and no time limit, for their side effect: the
        decoders' numba kernels are compiled (or loaded from numba's cache) here, not inside the first
        input's deadline. On a cold cache that takes seconds, which a 5 s limit would spend compiling
        (the first input came back timed out, ordered at random). A few milliseconds once compiled.

        Parameters
        ----------
        search : SearchConfig, optional
            As :meth:`decode` (its time limit is lifted for the warm-up).
        exact : ExactConfig or None
            As :meth:`decode`.
        """
        untimed = replace(search or SearchConfig(), timeout=None)
        for inp in WARM_UP_INPUTS:
            self.decode(inp, untimed, exact)

    @property
    def linearizer(self) -> Lineariser | None:  # old spelling kept (the W2.3 notebook used it)
        """:attr:`lineariser` under its old name (deprecated)."""
        warnings.warn("OrderingDecoder.linearizer is deprecated: use .lineariser",  # old spelling kept
                      DeprecationWarning, stacklevel=2)
        return self.lineariser

    def decode(self, inp: OrderingInput, search: SearchConfig | None = None, exact: ExactConfig | None = None,
               deadline: Deadline | None = None) -> OrderingResult:
        """Decode one input with the decoders ``exact`` asks for.

        A full tree (every head given): the exact DP when ``exact.max_states`` is set (certified when it
        finishes); then, if it gave up or was not asked, the tree beam DP when ``exact.beam`` is set
        (method ``"tree beam DP (approximate)"``, or ``"exact DP"`` and certified when nothing was
        pruned). Other inputs, and full trees no DP decoded: best-first search, whose output the tree beam
        DP completes and re-orders when ``exact.beam`` is set (``dualdecomp.models.ordering.paper.refine``).

        When the decoder has a head-domain lineariser (``dualdecomp.models.ordering.lineariser.decoding``),
        ``exact.lineariser`` makes it order the full trees the exact DP did not certify, and
        ``exact.second_stage == "lineariser"`` makes it order the completed tree of a best-first output,
        in place of the tree beam DP. When the decoder has an LM beam search
        (``dualdecomp.models.ordering.bag_lm.search``), ``exact.lm_beam`` says which inputs it orders instead
        (:func:`lm_beam_takes`). Every decoder keeps the ordered units (``OrderingInput.units``); the
        paper model's decoders use the LM term for inputs with units (:meth:`lm_for`).

        ``deadline`` is one time limit for the whole input, shared by every stage: each decoder checks it
        (the best-first search before each pop, the DPs before each attachment, the LM beam before each
        state, the lineariser before each head domain and each step of a domain's beam search, the second
        stage before each arc score) and returns what it has at the deadline, finished greedily where it
        can be (the DPs, the lineariser, the LM beam) — so one input takes about the limit plus one such
        step and the greedy finishing, which is linear in the number of words for the DPs (O(n²) array
        work for the lineariser, n²/2 LM queries for the LM beam). The exact DPs give up there (no output)
        and the next decoder goes on. A result the deadline touched is not certified and lists the stages
        it cut short in ``OrderingResult.stopped`` (``"timed_out": true`` and a ``"note"`` in its row).
        Without a deadline each stage runs as before (best-first search until ``search.timeout``).

        Parameters
        ----------
        inp : OrderingInput
        search : SearchConfig, optional
            Settings of the best-first search (used when the exact decoder is not used or gives up).
        exact : ExactConfig or None
            None: best-first search only (the paper's method).
        deadline : Deadline, optional
            The input's time limit, shared by all stages (above).

        Returns
        -------
        OrderingResult
            ``certified`` is True only when the DP finished (the output is the model's optimum).
        """
        if exact is not None and self.lm_beam is not None and lm_beam_takes(exact.lm_beam, inp):
            return ORDERING_DECODERS.spec("lm-beam").decode(self, inp, {}, deadline)
        start = time.perf_counter()
        full_tree = all(h is not None for h in inp.heads)
        stopped: tuple[str, ...] = ()  # the stages before the one that gives the output, cut short
        if exact is not None and full_tree:
            if exact.max_states is not None:
                found = ORDERING_DECODERS.spec("exact-dp").decode(
                    self, inp, {"max_states": exact.max_states}, deadline, start=start)
                if not isinstance(found, GaveUp):
                    return found
                stopped = found.stopped
            if exact.lineariser and self.lineariser is not None:
                return ORDERING_DECODERS.spec("lineariser").decode(self, inp, {}, deadline).after(stopped)
            if exact.beam is not None:
                found = ORDERING_DECODERS.spec("tree-beam").decode(
                    self, inp, _beam_options(exact), deadline, start=start)
                if not isinstance(found, GaveUp):
                    return found.after(stopped)
                stopped += found.stopped
        first = ORDERING_DECODERS.spec("best-first").decode(
            self, inp, _search_options(search or SearchConfig()), deadline).after(stopped)
        if exact is not None and exact.second_stage == "lineariser" and self.lineariser is not None:
            return SECOND_STAGE_DECODERS.spec("lineariser").decode(self, inp, first, {}, deadline)
        if exact is not None and exact.beam is not None:
            return SECOND_STAGE_DECODERS.spec("tree-beam").decode(self, inp, first, _beam_options(exact),
                                                                  deadline)
        return first

    def decode_with(self, name: str, inp: OrderingInput, deadline: Deadline | None = None,
                    **options: Any) -> OrderingResult | GaveUp:
        """Decode one input with one registered decoder (``registry.decode_with``: ``name`` one of
        ``ORDERING_DECODERS.names()``, ``options`` checked against its schema; InputError otherwise)."""
        return decode_with(self, name, inp, options, deadline)

def lm_beam_takes(inputs: str, inp: OrderingInput) -> bool:
    """Whether the LM beam orders an input, for an ``ExactConfig.lm_beam`` setting.

    Parameters
    ----------
    inputs : str
        ``"none"``, ``"untagged"`` (inputs that give no tag and no head outside their units) or
        ``"applicable"`` (every input without a given head outside its units).
    inp : OrderingInput

    Returns
    -------
    bool
    """
    if inputs == "none" or not lm_beam_applies(inp):
        return False
    return inputs == "applicable" or all(tag is None for tag in inp.pos)



def _beam_options(exact: ExactConfig) -> Mapping[str, Any]:
    """The tree beam DP's options of an ``ExactConfig`` (first or second stage)."""
    return {"beam": exact.beam, "beam_attachments": exact.beam_attachments}


def _search_options(search: SearchConfig) -> Mapping[str, Any]:
    """The best-first decoder's options of a ``SearchConfig``."""
    return {f.name: getattr(search, f.name) for f in fields(search)}
