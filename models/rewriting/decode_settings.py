"""Decode-time settings of a rewriting model: they change the rewrite without retraining.

* ``lm_scale`` multiplies the learnt LM weight (the chart adds ``lm_scale × lm_weight ×`` the bigram
  log10 probabilities);
* ``word_bias`` is a constant added to the score for every target word written: it is summed into each
  hyperedge's score (``word_bias ×`` the words the hyperedge writes), so the chart's search stays exact.

A model directory stores them in ``model.json`` → ``meta.decode`` (written by ``dualdecomp train --kind
rewriting --lm-scale X --word-bias Y``); a model without that block decodes with the defaults (scale 1,
bias 0: the rule and LM weights as learnt). How the embedded model's settings were chosen on dev:
``docs/rewriting.md``, "How decode settings are chosen".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dualdecomp.core.errors import InputError, ModelError

__all__ = ["DecodeSettings"]


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class DecodeSettings:
    """The LM scale and the per-word bias of a rewriting decode (module docstring).

    Attributes
    ----------
    lm_scale : float
        Multiplier of the learnt LM weight, >= 0 (1: as learnt; 0: no LM).
    word_bias : float
        Score added per target word written (0: none; > 0 favours longer rewrites).

    Raises
    ------
    InputError
        A value that is not a finite number, or a negative ``lm_scale``.
    """

    lm_scale: float = 1.0
    word_bias: float = 0.0

    def __post_init__(self) -> None:
        scale = _number("lm_scale", self.lm_scale)
        if scale < 0:
            raise InputError(f"lm_scale must be >= 0, got {self.lm_scale!r}")
        object.__setattr__(self, "lm_scale", scale)
        object.__setattr__(self, "word_bias", _number("word_bias", self.word_bias))

    def as_dict(self) -> dict[str, float]:
        """``{"lm_scale": ..., "word_bias": ...}`` (the ``meta.decode`` block)."""
        return {"lm_scale": self.lm_scale, "word_bias": self.word_bias}

    def replace(self, lm_scale: float | None = None, word_bias: float | None = None) -> DecodeSettings:
        """These settings with the given values overriding (None: keep)."""
        return DecodeSettings(self.lm_scale if lm_scale is None else lm_scale,
                              self.word_bias if word_bias is None else word_bias)

    @classmethod
    def from_meta(cls, meta: dict, where: str = "model.json") -> DecodeSettings:
        """The settings of a model's ``meta`` (its ``decode`` block; the defaults when absent).

        Raises
        ------
        ModelError
            A ``decode`` block that is not an object of finite numbers (``lm_scale`` >= 0).
        """
        block = meta.get("decode")
        if block is None:
            return cls()
        if not isinstance(block, dict) or set(block) - {"lm_scale", "word_bias"}:
            raise ModelError(f"{where}: meta.decode must be an object with lm_scale and word_bias, "
                             f"got {block!r}")
        try:
            return cls(block.get("lm_scale", 1.0), block.get("word_bias", 0.0))
        except InputError as exc:
            raise ModelError(f"{where}: bad meta.decode: {exc}") from None
