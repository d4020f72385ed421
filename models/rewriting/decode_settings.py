"""Decode-time settings of a rewriting model: they change the rewrite without retraining.

* ``lm_scale`` multiplies the learnt LM weight (the chart adds ``lm_scale × lm_weight ×`` the bigram
  log10 probabilities);
* ``word_bias`` is a constant added to the score for every target word written: it is summed into each
  hyperedge's score (``word_bias ×`` the words the hyperedge writes), so the chart's search stays exact;
* ``substitution_bias`` and ``insertion_bias`` likewise, per source word a hyperedge *substitutes*
  (writes a different word for: a change of case alone does not count) and per target word it *inserts*
  (``dualdecomp.models.rewriting.application.bias_counts``);
* ``article_agreement`` (default :data:`ARTICLE_AGREEMENT`) forbids "a"/"an" before a word that takes
  the other article, unless the source has that bigram (``dualdecomp.models.rewriting.articles``): a
  constraint of the chart's search, which stays exact;
* ``paired_punctuation`` (default :data:`PAIRED_PUNCTUATION`) keeps both marks of every bracket or
  quotation pair of the source or neither (``dualdecomp.data.punctuation``): the application decodes a
  sentence that has such pairs by dual decomposition of the chart with
  ``dualdecomp.solvers.paired.PairedTokens`` (``dualdecomp.app.rewriter``), certified when the engine
  proves it;
* ``keep_weight`` (μ) multiplies the model's in-domain keep classifier
  (``dualdecomp.models.rewriting.keep_classifier``): μ × the token's centred log-odds is summed into each
  hyperedge's score for every source token it copies, so the chart's search stays exact (0: the
  classifier is not used, nor its encoder loaded; a model without a classifier takes only 0).

A model directory stores them in ``model.json`` → ``meta.decode`` (written by ``dualdecomp train --kind
rewriting --lm-scale X --word-bias Y``); a model without that block decodes with the defaults (scale 1,
biases 0: the rule and LM weights as learnt; article agreement and paired punctuation as
:class:`DecodeSettings`'s defaults).
How the embedded model's settings were chosen on dev: ``docs/rewriting.md``, "How decode settings are
chosen".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from dualdecomp.core.errors import InputError, ModelError

__all__ = ["ARTICLE_AGREEMENT", "BIASES", "PAIRED_PUNCTUATION", "SETTINGS", "DecodeSettings"]

BIASES = ("word_bias", "substitution_bias", "insertion_bias")
"""The per-word biases, in the order of :class:`DecodeSettings`'s fields."""

ARTICLE_AGREEMENT = True
"""Whether a rewrite keeps article agreement unless told otherwise (the setting's default; the
eighteenth rule of ``docs/rewriting.md`` decides it)."""

PAIRED_PUNCTUATION = True
"""Whether a rewrite keeps paired punctuation whole unless told otherwise (the setting's default; the
twenty-seventh rule of ``docs/rewriting.md`` decides it)."""

_FLAGS = {"article_agreement": ARTICLE_AGREEMENT, "paired_punctuation": PAIRED_PUNCTUATION}


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class DecodeSettings:
    """The LM scale, the per-word biases, the constraints and the keep term of a rewriting decode (module
    docstring).

    Attributes
    ----------
    lm_scale : float
        Multiplier of the learnt LM weight, >= 0 (1: as learnt; 0: no LM).
    word_bias : float
        Score added per target word written (0: none; > 0 favours longer rewrites).
    substitution_bias : float
        Score added per source word replaced by a different word (> 0 favours substitutions).
    insertion_bias : float
        Score added per target word inserted (> 0 favours insertions).
    article_agreement : bool
        Forbid "a"/"an" before a word that takes the other article (module docstring; default
        :data:`ARTICLE_AGREEMENT`).
    paired_punctuation : bool
        Keep both marks of each bracket or quotation pair, or neither (module docstring; default
        :data:`PAIRED_PUNCTUATION`).
    keep_weight : float
        μ of the keep classifier's term, >= 0 (module docstring; 0: none).

    Raises
    ------
    InputError
        A value that is not a finite number, or a negative ``lm_scale`` or ``keep_weight``; an
        ``article_agreement`` or
        ``paired_punctuation`` that is not a bool.
    """

    lm_scale: float = 1.0
    word_bias: float = 0.0
    substitution_bias: float = 0.0
    insertion_bias: float = 0.0
    article_agreement: bool = ARTICLE_AGREEMENT
    paired_punctuation: bool = PAIRED_PUNCTUATION
    keep_weight: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lm_scale", "keep_weight"):
            value = _number(name, getattr(self, name))
            if value < 0:
                raise InputError(f"{name} must be >= 0, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        for name in BIASES:
            object.__setattr__(self, name, _number(name, getattr(self, name)))
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, got {getattr(self, name)!r}")

    @property
    def biased(self) -> bool:
        """Whether any bias is non-zero (the hyperedge scores change)."""
        return any(getattr(self, name) != 0.0 for name in BIASES)

    def as_dict(self) -> dict[str, float]:
        """``{"lm_scale": ..., "word_bias": ...}`` (the ``meta.decode`` block; a bias that is 0 other than
        ``word_bias``, ``article_agreement`` and ``paired_punctuation`` at their defaults, and a
        ``keep_weight`` of 0, are left out, so a block written before they existed reads back the
        same)."""
        out: dict = {"lm_scale": self.lm_scale, "word_bias": self.word_bias}
        out.update({name: getattr(self, name) for name in BIASES[1:] if getattr(self, name) != 0.0})
        out.update({name: getattr(self, name) for name, default in _FLAGS.items()
                    if getattr(self, name) != default})
        if self.keep_weight != 0.0:
            out["keep_weight"] = self.keep_weight
        return out

    def replace(self, lm_scale: float | None = None, word_bias: float | None = None,
                substitution_bias: float | None = None, insertion_bias: float | None = None,
                article_agreement: bool | None = None, paired_punctuation: bool | None = None,
                keep_weight: float | None = None) -> DecodeSettings:
        """These settings with the given values overriding (None: keep)."""
        new = {"lm_scale": lm_scale, "word_bias": word_bias, "substitution_bias": substitution_bias,
               "insertion_bias": insertion_bias, "article_agreement": article_agreement,
               "paired_punctuation": paired_punctuation, "keep_weight": keep_weight}
        return DecodeSettings(**{k: getattr(self, k) if v is None else v for k, v in new.items()})

    @classmethod
    def from_meta(cls, meta: dict, where: str = "model.json") -> DecodeSettings:
        """The settings of a model's ``meta`` (its ``decode`` block; the defaults when absent).

        Raises
        ------
        ModelError
            A ``decode`` block that is not an object of finite numbers (``lm_scale`` and ``keep_weight``
            >= 0).
        """
        block = meta.get("decode")
        if block is None:
            return cls()
        if not isinstance(block, dict) or set(block) - {"lm_scale", *BIASES, *_FLAGS, "keep_weight"}:
            raise ModelError(f"{where}: meta.decode must be an object with lm_scale, the biases "
                             f"{', '.join(BIASES)}, {', '.join(_FLAGS)} and keep_weight, got {block!r}")
        try:
            return cls(block.get("lm_scale", 1.0), *(block.get(name, 0.0) for name in BIASES),
                       *(block.get(name, default) for name, default in _FLAGS.items()),
                       block.get("keep_weight", 0.0))
        except InputError as exc:
            raise ModelError(f"{where}: bad meta.decode: {exc}") from None


SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(DecodeSettings))
"""The names of the decode settings, in the order of :class:`DecodeSettings`'s fields (and of
:meth:`DecodeSettings.replace`'s arguments)."""
