"""Word ordering's decoders, registered as compression's are (``dualdecomp.engine.decoders``): each by name,
with the schema of its options (:class:`~dualdecomp.engine.options.Option`) and whether it is exact.

:data:`ORDERING_DECODERS` — the decoders of one input, each called as
``decode(bundle, inp, options, deadline)`` (``bundle``: an ``OrderingDecoder``, :class:`DecodingBundle`)
and returning an :class:`~dualdecomp.data.ordering.result.OrderingResult`, or :class:`GaveUp` when it has
no output:

- ``lm-beam`` — the bag-of-words LM beam search (APPROXIMATE: certified for the LMs alone only when
  nothing was pruned);
- ``exact-dp`` — the paper model's exact DP over the linearisations of a full tree (exact: certified, or
  it gives up);
- ``tree-beam`` — the same DP with a beam (APPROXIMATE, certified only when nothing was pruned);
- ``lineariser`` — the head-domain lineariser on a full tree (APPROXIMATE with its LM term; exact and
  certified for its own score without one);
- ``best-first`` — the paper's best-first search (APPROXIMATE, never certified).

Each decoder names the model its certificate holds for (``OrderingResult.certified_for``, the output
row's ``"certified_for"``): :data:`PAPER_MODEL`, :data:`PAPER_MODEL_LM`, :data:`LM_ALONE`,
:data:`LINEARISER`, :data:`LINEARISER_LM`; None when not certified.

:data:`SECOND_STAGE_DECODERS` — what re-orders the completed tree of a best-first output
(``ExactConfig.second_stage``), called as ``decode(bundle, inp, first, options, deadline)``: ``tree-beam``
and ``lineariser`` (both APPROXIMATE: the tree is the search's).

``OrderingDecoder.decode`` chains them by input and settings; :func:`decode_with` runs one by name, its
options checked against its schema.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import OrderingInput
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.engine.decoders import DecoderRegistry, DecoderSpec
from dualdecomp.engine.options import Option, positive_finite_or_none, positive_int
from dualdecomp.models.ordering.bag_lm.search import LMBeam, lm_beam_applies
from dualdecomp.models.ordering.decoding.config import DEFAULT_TREE_BEAM
from dualdecomp.models.ordering.decoding.relinearise import relinearise
from dualdecomp.models.ordering.lineariser.decoding import linearise_tree
from dualdecomp.models.ordering.lineariser.model import Lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Edge
from dualdecomp.models.ordering.paper.exact import BEAM_METHOD, exact_linearisation
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.refine import refine
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first, goal_result
from dualdecomp.solvers.ordering import Linearisation

__all__ = ["ORDERING_DECODERS", "SECOND_STAGE_DECODERS", "DecodingBundle", "GaveUp", "decode_with"]


class DecodingBundle(Protocol):
    """What a decoder reads of its bundle (``dualdecomp.models.ordering.decoding.decoder.OrderingDecoder``):
    the paper's model, its LM terms, the lineariser with its LM term, the LM beam."""

    model: OrderingModel
    lineariser: Lineariser | None
    lineariser_lm: OrderingLM | None
    lm_beam: LMBeam | None

    def lm_for(self, inp: OrderingInput) -> OrderingLM | None:
        """The LM term of the paper model's decoders for ``inp``."""


@dataclass(frozen=True)
class GaveUp:
    """No output: a decoder gave up (the exact DP over its state limit or at the deadline).

    Attributes
    ----------
    stopped : tuple of str
        What the deadline cut short (``OrderingResult.stopped`` of the next stage's output); empty when it
        gave up at its own limit.
    """

    stopped: tuple[str, ...] = ()


def _positive_int_or_none(value: Any) -> bool:
    return value is None or positive_int(value)


_MAX_STATES = Option("max_states", 100_000, "a positive integer", positive_int)
_BEAM = Option("beam", DEFAULT_TREE_BEAM, "a positive integer", positive_int)
_BEAM_ATTACHMENTS = Option("beam_attachments", None, "a positive integer or None", _positive_int_or_none)
_DEFAULT_SEARCH = SearchConfig()
_SEARCH = (
    Option("chart_size", _DEFAULT_SEARCH.chart_size, "a positive integer or None", _positive_int_or_none),
    Option("timeout", _DEFAULT_SEARCH.timeout, "a positive finite number or None", positive_finite_or_none),
    Option("max_expansions", _DEFAULT_SEARCH.max_expansions, "a positive integer or None",
           _positive_int_or_none),
    Option("exhaustive", _DEFAULT_SEARCH.exhaustive, "a bool", lambda value: isinstance(value, bool)),
)


def _get(options: Mapping[str, Any], option: Option) -> Any:
    return options.get(option.name, option.default)


PAPER_MODEL = "paper model"
"""Certified by the exact DP (or the tree beam, nothing pruned) without an LM term."""
PAPER_MODEL_LM = "paper model + LM"
"""Certified by the exact DP (or the tree beam, nothing pruned) with the LM term."""
LM_ALONE = "LM alone"
"""Certified by the LM beam search: the LMs' optimum, no syntax (``"the barked dog ."``)."""
LINEARISER = "lineariser"
"""Certified by the head-domain lineariser for its own score."""
LINEARISER_LM = "lineariser + LM"
"""Certified by the head-domain lineariser with its LM term (its exact DP finished)."""


def _for(result: OrderingResult, model: str) -> OrderingResult:
    """``result`` saying for which model its certificate holds (unchanged when not certified)."""
    return replace(result, certified_for=model) if result.certified else result


def _full_tree(inp: OrderingInput, decoder: str) -> None:
    if any(h is None for h in inp.heads):
        raise InputError(f"the {decoder} decoder needs every head given (a full tree)")


def _dp_result(model: OrderingModel, inp: OrderingInput, found: Linearisation[Edge], start: float
               ) -> OrderingResult:
    """The result of a DP's best goal edge ("exact DP" when certified, else the tree beam DP's)."""
    return goal_result(model.context(inp), found.best, found.states, time.perf_counter() - start,
                       method="exact DP" if found.certified else BEAM_METHOD, certified=found.certified)


def _paper(bundle: DecodingBundle, inp: OrderingInput) -> str:
    return PAPER_MODEL_LM if bundle.lm_for(inp) is not None else PAPER_MODEL


def _lm_beam(bundle: DecodingBundle, inp: OrderingInput, options: Mapping[str, Any],
             deadline: Deadline | None = None) -> OrderingResult:
    """``lm-beam``: the LM beam search saved with the model (``bag_lm.search``) — APPROXIMATE: certified
    (the LMs' optimum, no syntax) only when nothing was pruned. Inputs without a given head outside their
    units; no options (its beam is the model's)."""
    if bundle.lm_beam is None:
        raise InputError("this model has no LM beam search")
    if not lm_beam_applies(inp):
        raise InputError("the lm-beam decoder orders only inputs without a given head outside their units")
    return _for(bundle.lm_beam.decode(inp, deadline), LM_ALONE)


def _exact_dp(bundle: DecodingBundle, inp: OrderingInput, options: Mapping[str, Any],
              deadline: Deadline | None = None, start: float | None = None) -> OrderingResult | GaveUp:
    """``exact-dp``: the paper model's exact DP over the projective linearisations of a full tree
    (``paper.exact``) — EXACT: its output is certified (the model's optimum), or it gives up (:class:`GaveUp`)
    past ``max_states`` states or at the deadline. ``start``: when the input's decoding began (its
    ``seconds`` count from there; default now)."""
    _full_tree(inp, "exact-dp")
    start = time.perf_counter() if start is None else start
    found = exact_linearisation(bundle.model, inp, _get(options, _MAX_STATES), deadline=deadline,
                                lm=bundle.lm_for(inp))
    if found.certified and found.best is not None:
        return _for(_dp_result(bundle.model, inp, found, start), _paper(bundle, inp))
    return GaveUp(("the exact DP (gave up at the deadline, no output)",) if found.timed_out else ())


def _tree_beam(bundle: DecodingBundle, inp: OrderingInput, options: Mapping[str, Any],
               deadline: Deadline | None = None, start: float | None = None) -> OrderingResult | GaveUp:
    """``tree-beam``: the exact DP keeping the ``beam`` best states per step and subtrees per node
    — APPROXIMATE: certified (method ``"exact DP"``) only when nothing was pruned; finished greedily at the
    deadline. ``start`` as for ``exact-dp``."""
    _full_tree(inp, "tree-beam")
    start = time.perf_counter() if start is None else start
    found = exact_linearisation(bundle.model, inp, beam=_get(options, _BEAM),
                                beam_attachments=_get(options, _BEAM_ATTACHMENTS), deadline=deadline,
                                lm=bundle.lm_for(inp))
    stopped = ("the tree beam DP (finished greedily at the deadline)",) if found.timed_out else ()
    if found.best is None:
        return GaveUp(stopped)
    return _for(_dp_result(bundle.model, inp, found, start), _paper(bundle, inp)).after(stopped)


def _lineariser(bundle: DecodingBundle, inp: OrderingInput, options: Mapping[str, Any],
                deadline: Deadline | None = None) -> OrderingResult:
    """``lineariser``: the head-domain lineariser on a full tree (``lineariser.model``) with the bundle's
    ``lineariser_lm`` — APPROXIMATE with that LM term (a beam search per head domain; certified only when
    the lineariser's ``lm_states`` exact DP finishes); without one, EXACT and certified for the lineariser's
    own score when no head domain is over its exact limit. No options."""
    _full_tree(inp, "lineariser")
    if bundle.lineariser is None:
        raise InputError("this model has no head-domain lineariser")
    return _for(linearise_tree(bundle.lineariser, inp, deadline, bundle.lineariser_lm),
                LINEARISER_LM if bundle.lineariser_lm is not None else LINEARISER)


def _best_first(bundle: DecodingBundle, inp: OrderingInput, options: Mapping[str, Any],
                deadline: Deadline | None = None) -> OrderingResult:
    """``best-first``: the paper's best-first search (``paper.search``; options: :class:`SearchConfig`'s)
    — APPROXIMATE, never certified; any input."""
    config = SearchConfig(**{o.name: _get(options, o) for o in _SEARCH})
    return best_first(bundle.model, inp, config, deadline=deadline, lm=bundle.lm_for(inp))


def _second_tree_beam(bundle: DecodingBundle, inp: OrderingInput, first: OrderingResult,
                      options: Mapping[str, Any], deadline: Deadline | None = None) -> OrderingResult:
    """Second stage ``tree-beam``: complete the best-first output's tree and order it by the tree beam DP
    (``paper.refine``) — APPROXIMATE (``first`` itself when that scores at least as high)."""
    return refine(bundle.model, inp, first, _get(options, _BEAM), _get(options, _BEAM_ATTACHMENTS), deadline,
                  bundle.lm_for(inp))


def _second_lineariser(bundle: DecodingBundle, inp: OrderingInput, first: OrderingResult,
                       options: Mapping[str, Any], deadline: Deadline | None = None) -> OrderingResult:
    """Second stage ``lineariser``: complete the best-first output's tree and order it by the lineariser
    with the bundle's ``lineariser_lm`` (``decoding.relinearise``) — APPROXIMATE, never certified."""
    if bundle.lineariser is None:
        raise InputError("this model has no head-domain lineariser")
    return relinearise(bundle.model, bundle.lineariser, inp, first, deadline, bundle.lm_for(inp),
                       bundle.lineariser_lm)


ORDERING_DECODERS = DecoderRegistry("word ordering", (
    DecoderSpec("lm-beam", _lm_beam, ()),
    DecoderSpec("exact-dp", _exact_dp, (_MAX_STATES,), exact=True),
    DecoderSpec("tree-beam", _tree_beam, (_BEAM, _BEAM_ATTACHMENTS)),
    DecoderSpec("lineariser", _lineariser, ()),
    DecoderSpec("best-first", _best_first, _SEARCH),
), default="best-first")
"""Word ordering's decoders of one input, by name (module docstring); ``exact`` only ``exact-dp``."""

SECOND_STAGE_DECODERS = DecoderRegistry("second stage", (
    DecoderSpec("tree-beam", _second_tree_beam, (_BEAM, _BEAM_ATTACHMENTS)),
    DecoderSpec("lineariser", _second_lineariser, ()),
), default="tree-beam")
"""What re-orders the completed tree of a best-first output, by ``ExactConfig.second_stage`` (both
APPROXIMATE)."""


def decode_with(bundle: DecodingBundle, name: str, inp: OrderingInput,
                options: Mapping[str, Any] | None = None, deadline: Deadline | None = None
                ) -> OrderingResult | GaveUp:
    """Decode one input with one registered decoder.

    Parameters
    ----------
    bundle : DecodingBundle
        The models (an ``OrderingDecoder``).
    name : str
        One of ``ORDERING_DECODERS.names()``.
    inp : OrderingInput
    options : mapping, optional
        The decoder's options (its schema: ``ORDERING_DECODERS.spec(name).options``); missing ones take
        their defaults.
    deadline : Deadline, optional

    Returns
    -------
    OrderingResult or GaveUp

    Raises
    ------
    InputError
        An unknown decoder, an option its schema refuses, an input it cannot order, or a model without the
        part it needs.
    """
    options = dict(options or {})
    spec = ORDERING_DECODERS.checked(name, options)
    return spec.decode(bundle, inp, options, deadline)
