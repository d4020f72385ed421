"""The registry of decoders: a configuration's ``decode.decoder`` name → the function that decodes and the
schema of its options.

Every compression decoder takes ``(components, length, options)`` and returns a
:class:`~dualdecomp.core.result.Result`:

- ``dd`` — dual decomposition (:func:`dualdecomp.engine.decode.decode`; ``options`` are its options,
  :data:`~dualdecomp.engine.options.DD_OPTIONS`);
- ``ilp`` — the exact ILP reference (:func:`dualdecomp.engine.ilp.decode`; ``solver``, ``time_limit``);
- ``beam`` — the APPROXIMATE T3+LM beam search of Cohn & Lapata (never certified;
  :func:`dualdecomp.solvers.transducer.lm_beam.beam_decode`; ``beam``).

A configuration's ``"decode"`` block (``{"decoder": NAME, ...options}``) is checked here, once, by
:func:`check_decode_block`: the decoder's name, then every option against that decoder's schema.

The same mechanism serves every task: a :class:`DecoderRegistry` holds one task's :class:`DecoderSpec`
by name (:data:`COMPRESSION_DECODERS` here; word ordering's in
``dualdecomp.models.ordering.decoding.registry``), each with its option schema (:class:`Option`) and
whether it is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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

__all__ = ["COMPRESSION_DECODERS", "DECODERS", "DEFAULT_DECODER", "Decoder", "DecoderRegistry", "DecoderSpec",
           "check_decode_block", "get_decoder", "get_decoder_spec", "schema_check"]

Decoder = Callable[[Sequence[Any], "int | None", Mapping[str, Any]], Result]

DEFAULT_DECODER = "dd"
"""The decoder of a configuration whose ``"decode"`` block names none."""


@dataclass(frozen=True)
class DecoderSpec:
    """A registered decoder: the function that decodes and the schema of its options.

    Attributes
    ----------
    name : str
        ``decode.decoder`` in a configuration (or the decoder's name in its task's registry).
    decode : callable
        The decoder; its signature is its task's (compression: :data:`Decoder`,
        ``decode(components, length, options) -> Result``).
    options : tuple of Option
        Every option it takes: key, default, the values it accepts.
    check : callable, optional
        ``check(options)`` raises :class:`~dualdecomp.core.errors.InputError` for an unknown key or a
        value the schema refuses (``options`` without the ``decoder`` key). Default: exactly ``options``
        (:func:`schema_check`).
    exact : bool
        True: an exact decoder — what it certifies is proven optimal, and within its limits it always
        certifies. False: APPROXIMATE (a heuristic search; its docstring says when, if ever, it certifies).
    """

    name: str
    decode: Callable[..., Any]
    options: tuple[Option, ...]
    check: Callable[[Mapping[str, Any]], None] | None = None
    exact: bool = False

    def __post_init__(self) -> None:
        if self.check is None:
            object.__setattr__(self, "check", schema_check(self.name, self.options))

    def defaults(self) -> dict[str, Any]:
        """Every option's default value."""
        return {o.name: o.default for o in self.options}


class DecoderRegistry:
    """The decoders of one task, by name: look-up, names, option checks.

    Parameters
    ----------
    task : str
        The task, in words (``"compression"``, ``"word ordering"``).
    specs : iterable of DecoderSpec
        Its decoders, in the order :meth:`names` lists them (names unique).
    default : str, optional
        The decoder of a ``"decode"`` block that names none (:meth:`check_block`).
    """

    def __init__(self, task: str, specs: Iterable[DecoderSpec], default: str | None = None) -> None:
        self.task = task
        self._specs: dict[str, DecoderSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"two {task} decoders named {spec.name!r}")
            self._specs[spec.name] = spec
        if default is not None and default not in self._specs:
            raise ValueError(f"the default {task} decoder {default!r} is not registered")
        self.default = default

    def __iter__(self) -> Iterator[DecoderSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._specs

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._specs)

    def spec(self, name: str) -> DecoderSpec:
        """The :class:`DecoderSpec` registered as ``name`` (InputError if there is none)."""
        try:
            return self._specs[name]
        except (KeyError, TypeError):
            raise InputError(f"unknown decoder {name!r} (one of {', '.join(self._specs)})") from None

    def checked(self, name: str, options: Mapping[str, Any]) -> DecoderSpec:
        """The decoder ``name`` after checking ``options`` against its schema (InputError: an unknown name,
        an unknown option or a value the schema refuses)."""
        spec = self.spec(name)
        spec.check(options)  # type: ignore[misc]
        return spec

    def check_block(self, decode_block: Mapping[str, Any]) -> str:
        """Validate a ``"decode"`` block ``{"decoder": NAME, ...options}``; return the decoder's name
        (``decoder`` defaults to ``default``)."""
        name = decode_block.get("decoder", self.default)
        if not isinstance(name, str) or name not in self._specs:
            raise InputError(f"decode.decoder must be one of {tuple(self._specs)}, not {name!r}")
        self._specs[name].check({k: v for k, v in decode_block.items() if k != "decoder"})  # type: ignore[misc]
        return name


def _check_dd(options: Mapping[str, Any]) -> None:
    """The engine's own options, checked by :func:`~dualdecomp.engine.options.make_options` (the same
    check as ``dualdecomp.decode(**options)``)."""
    try:
        make_options(**options)
    except (DualDecompError, TypeError, ValueError) as exc:
        raise InputError(f"invalid decode options: {exc}") from None


def schema_check(decoder: str, schema: tuple[Option, ...]) -> Callable[[Mapping[str, Any]], None]:
    """``check`` of a decoder whose options are exactly ``schema``: an unknown key or a value an
    :class:`Option` refuses is an :class:`~dualdecomp.core.errors.InputError`."""

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


COMPRESSION_DECODERS = DecoderRegistry("compression", (
    DecoderSpec("dd", _dd, DD_OPTIONS, _check_dd, exact=True),
    DecoderSpec("ilp", _ilp, (_SOLVER, _TIME_LIMIT), exact=True),
    DecoderSpec("beam", _beam, (_BEAM,)),
), default=DEFAULT_DECODER)
"""Compression's decoders: ``dd`` (exact: certified when the dual closes the gap), ``ilp`` (exact) and
``beam`` (APPROXIMATE, never certified)."""

DECODERS: dict[str, Decoder] = {spec.name: spec.decode for spec in COMPRESSION_DECODERS}
"""The decoders by name (``decode.decoder``)."""


def get_decoder_spec(name: str) -> DecoderSpec:
    """The :class:`DecoderSpec` registered as ``name`` (InputError if there is none)."""
    return COMPRESSION_DECODERS.spec(name)


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
    return COMPRESSION_DECODERS.check_block(decode_block)
