"""The registry of decoders: a configuration's ``decode.decoder`` name → the function that decodes and the
schema of its options.

Every decoder takes ``(components, length, options)`` and returns a :class:`~dualdecomp.core.result.Result`:

- ``dd`` — dual decomposition (:func:`dualdecomp.engine.decode.decode`; ``options`` are its options,
  :data:`~dualdecomp.engine.options.DD_OPTIONS`);
- ``ilp`` — the exact ILP reference (:func:`dualdecomp.engine.ilp.decode`; ``solver``, ``time_limit``);
- ``beam`` — the APPROXIMATE T3+LM beam search of Cohn & Lapata (never certified;
  :func:`dualdecomp.solvers.transducer.lm_beam.beam_decode`; ``beam``).

A configuration's ``"decode"`` block (``{"decoder": NAME, ...options}``) is checked here, once, by
:func:`check_decode_block`: the decoder's name, then every option against that decoder's schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dualdecomp.core.errors import DualDecompError, InputError
from dualdecomp.core.result import Result
from dualdecomp.engine.decode import decode
from dualdecomp.engine.ilp import SOLVERS
from dualdecomp.engine.ilp import decode as ilp_decode
from dualdecomp.engine.options import (
    DD_OPTIONS,
    Option,
    make_options,
    one_of,
    positive_finite_or_none,
    positive_int,
)

__all__ = ["DECODERS", "DEFAULT_DECODER", "Decoder", "DecoderSpec", "check_decode_block", "get_decoder",
           "get_decoder_spec"]

Decoder = Callable[[Sequence[Any], "int | None", Mapping[str, Any]], Result]

DEFAULT_DECODER = "dd"
"""The decoder of a configuration whose ``"decode"`` block names none."""


@dataclass(frozen=True)
class DecoderSpec:
    """A registered decoder: the function that decodes and the schema of its options.

    Attributes
    ----------
    name : str
        ``decode.decoder`` in a configuration.
    decode : Decoder
        ``decode(components, length, options) -> Result``.
    options : tuple of Option
        Every option it takes: key, default, the values it accepts.
    check : callable
        ``check(options)`` raises :class:`~dualdecomp.core.errors.InputError` for an unknown key or a
        value the schema refuses (``options`` without the ``decoder`` key).
    """

    name: str
    decode: Decoder
    options: tuple[Option, ...]
    check: Callable[[Mapping[str, Any]], None]

    def defaults(self) -> dict[str, Any]:
        """Every option's default value."""
        return {o.name: o.default for o in self.options}


def _check_dd(options: Mapping[str, Any]) -> None:
    """The engine's own options, checked by :func:`~dualdecomp.engine.options.make_options` (the same
    check as ``dualdecomp.decode(**options)``)."""
    try:
        make_options(**options)
    except (DualDecompError, TypeError, ValueError) as exc:
        raise InputError(f"invalid decode options: {exc}") from None


def _schema_check(decoder: str, schema: tuple[Option, ...]) -> Callable[[Mapping[str, Any]], None]:
    """``check`` of a decoder whose options are exactly ``schema``."""

    def check(options: Mapping[str, Any]) -> None:
        unknown = sorted(set(options) - {o.name for o in schema})
        if unknown:
            raise InputError(f"unknown option(s) for the {decoder} decoder: {', '.join(unknown)}")
        for option in schema:
            if option.name in options and not option.valid(options[option.name]):
                raise InputError(f"decode.{option.name} must be {option.accepts}")

    return check


_SOLVER = Option("solver", "cbc", f"one of {', '.join(SOLVERS)}", one_of(SOLVERS))
_TIME_LIMIT = Option("time_limit", None, "a positive finite number or None", positive_finite_or_none)
_BEAM = Option("beam", 100, "a positive integer", positive_int)


def _dd(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:

    return decode(components, length=length, **options)


def _ilp(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:
    return ilp_decode(components, length=length, solver=options.get("solver", _SOLVER.default),
                      time_limit=options.get("time_limit", _TIME_LIMIT.default))


def _beam(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:
    # lazy: a decoder loads its solvers on first use
    from dualdecomp.solvers.transducer.lm_beam import beam_decode

    return beam_decode(list(components), length, beam=int(options.get("beam", _BEAM.default)))


_SPECS: dict[str, DecoderSpec] = {spec.name: spec for spec in (
    DecoderSpec("dd", _dd, DD_OPTIONS, _check_dd),
    DecoderSpec("ilp", _ilp, (_SOLVER, _TIME_LIMIT), _schema_check("ilp", (_SOLVER, _TIME_LIMIT))),
    DecoderSpec("beam", _beam, (_BEAM,), _schema_check("beam", (_BEAM,))),
)}

DECODERS: dict[str, Decoder] = {name: spec.decode for name, spec in _SPECS.items()}
"""The decoders by name (``decode.decoder``)."""


def get_decoder_spec(name: str) -> DecoderSpec:
    """The :class:`DecoderSpec` registered as ``name`` (InputError if there is none)."""
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown decoder {name!r} (one of {', '.join(_SPECS)})") from None


def get_decoder(name: str) -> Decoder:
    """The decoder registered as ``name`` (InputError if there is none)."""
    return get_decoder_spec(name).decode


def check_decode_block(decode_block: Mapping[str, Any]) -> str:
    """Validate a configuration's ``"decode"`` block; return the decoder's name.

    Parameters
    ----------
    decode_block : mapping
        ``{"decoder": NAME, ...options}`` (``decoder`` defaults to :data:`DEFAULT_DECODER`).

    Raises
    ------
    InputError
        An unknown decoder, or options its schema refuses (:meth:`DecoderSpec.check`).
    """
    name = decode_block.get("decoder", DEFAULT_DECODER)
    if not isinstance(name, str) or name not in _SPECS:
        raise InputError(f"decode.decoder must be one of {tuple(_SPECS)}, not {name!r}")
    _SPECS[name].check({k: v for k, v in decode_block.items() if k != "decoder"})
    return name
