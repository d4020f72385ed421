"""Loading the decoder of a word-order model directory, and giving it the LM terms it decodes with.

The directory holds the paper's model (``model.json``, ``weights.npz``), and optionally the head-domain
lineariser (``linearizer.json``, ``linearizer.npz``) and the LM beam's KenLM files (named in
``meta["decode"]["lm_beam"]``); the LM term's weights chosen on dev are in ``meta["decode"]`` and
``linearizer.json``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dualdecomp.core.errors import ModelError
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.lm import load_lm
from dualdecomp.models.ordering.bag_lm.search import load_lm_beam
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.lineariser.model import load_lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.model import load_model


def load_decoder(directory: str | Path, lm_beam: bool = True) -> OrderingDecoder:
    """The decoder of a saved word-order model: its weights, its lineariser and its LM beam, without the
    LM terms (:func:`with_decoding_lm` adds them: ``lm``, ``units_lm``, ``lineariser_lm``).

    Parameters
    ----------
    directory : str or Path
    lm_beam : bool
        Also load the LM beam the model's settings name (its LM files); False when they are being rebuilt.

    Returns
    -------
    OrderingDecoder

    Raises
    ------
    ModelError
        Missing or invalid files.
    """
    path = Path(directory)
    model = load_model(path)
    return OrderingDecoder(model, lineariser=load_lineariser(path),
                           lm_beam=load_lm_beam(path, model.meta) if lm_beam else None)


def with_decoding_lm(decoder: OrderingDecoder, lm_path: str | Path | None = None,
                     weight: float | None = None, lineariser_states: int = 0) -> OrderingDecoder:
    """The decoder as it decodes: with the LM term when its weight is positive (and its lineariser's).

    Parameters
    ----------
    decoder : OrderingDecoder
    lm_path : path, optional
        A KenLM model (ARPA or binary) of order 2 or 3; default: the embedded default model's trigram
        (``lm.binary``, the compression LM).
    weight : float, optional
        The LM weight of both the paper's model and the head-domain lineariser, for every input; default:
        the weights the model stores, selected on dev (``meta["decode"]["lm_weight"]``, for inputs with
        ordered units ``meta["decode"]["units"]["lm_weight"]`` when stored, ``linearizer.json``; 0 when
        none is stored). 0 decodes without an LM.
    lineariser_states : int
        State limit of the lineariser's exact DP with its LM term, tried before its beam search (0: the
        beam search only, the default chosen on dev).

    Returns
    -------
    OrderingDecoder
        With ``lm``, ``units_lm`` (when a weight for inputs with units is stored) and ``lineariser_lm``
        (the lineariser's LM term; its ``lm_states`` set to ``lineariser_states``).

    Raises
    ------
    InputError
        A negative or non-finite weight, or an LM of the wrong order.
    ModelError
        The LM file is missing or invalid, or the stored weight for inputs with units is not positive.
    """
    decode_meta = decoder.model.meta.get("decode", {})
    own = float(decode_meta.get("lm_weight", 0.0)) if weight is None else weight
    units_meta = decode_meta.get("units", {})
    units = units_meta.get("lm_weight") if weight is None and isinstance(units_meta, dict) else None
    if units is not None and not (isinstance(units, (int, float)) and 0 < units < float("inf")):
        raise ModelError(f"the stored LM weight for inputs with units must be positive (got {units})")
    lineariser = decoder.lineariser
    own_linear = 0.0 if lineariser is None else (lineariser.lm_weight if weight is None else weight)
    lm = None
    if own > 0 or own_linear > 0 or units is not None:
        lm = load_lm(Path(lm_path) if lm_path is not None else default_model_dir() / "lm.binary")
    lineariser_lm = None
    if lineariser is not None:
        lineariser = replace(lineariser, lm_states=lineariser_states)
        lineariser_lm = OrderingLM(lm, own_linear) if own_linear > 0 else None
    term = OrderingLM(lm, own) if own > 0 else None
    units_term = None
    if units is not None:
        units_term = term.with_weight(float(units)) if term is not None else OrderingLM(lm, float(units))
    return replace(decoder, lm=term, units_lm=units_term, lineariser=lineariser, lineariser_lm=lineariser_lm)
