"""The registry of decoders: a configuration's ``decode.decoder`` name → the function that decodes.

Every decoder takes ``(components, length, options)`` and returns a :class:`~dualdecomp.core.result.Result`:

- ``dd`` — dual decomposition (:func:`dualdecomp.engine.decode.decode`; ``options`` are its options);
- ``ilp`` — the exact ILP reference (:func:`dualdecomp.engine.ilp.decode`; ``solver``, ``time_limit``);
- ``beam`` — the APPROXIMATE T3+LM beam search of Cohn & Lapata (never certified;
  :func:`dualdecomp.solvers.transducer.lm_beam.beam_decode`; ``beam``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.core.result import Result
from dualdecomp.engine.decode import decode

__all__ = ["DECODERS", "Decoder", "get_decoder"]

Decoder = Callable[[Sequence[Any], "int | None", Mapping[str, Any]], Result]


def _dd(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:

    return decode(components, length=length, **options)


def _ilp(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:
    from dualdecomp.engine.ilp import decode  # lazy: PuLP loads only when the ILP is used

    return decode(components, length=length, solver=options.get("solver", "cbc"),
                  time_limit=options.get("time_limit"))


def _beam(components: Sequence[Any], length: int | None, options: Mapping[str, Any]) -> Result:
    # lazy: a decoder loads its solvers on first use
    from dualdecomp.solvers.transducer.lm_beam import beam_decode

    return beam_decode(list(components), length, beam=int(options.get("beam", 100)))


DECODERS: dict[str, Decoder] = {"dd": _dd, "ilp": _ilp, "beam": _beam}


def get_decoder(name: str) -> Decoder:
    """The decoder registered as ``name`` (InputError if there is none)."""
    try:
        return DECODERS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown decoder {name!r} (one of {', '.join(DECODERS)})") from None
