"""Size limits of the compression pipeline (documented in docs/large-corpora.md, "Memory and time bounds")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dualdecomp.core.errors import InputError

if TYPE_CHECKING:
    # lazy: for the annotation only (the joint configuration pulls in the engine and the solvers)
    from dualdecomp.models.configuration import JointConfig

DEFAULT_MAX_TOKENS = 300
"""Longest sentence (in tokens) compressed by a model without a measured limit: a bigram model
(``model.json``), a model given in memory, or a joint configuration without ``"growth"`` (e.g. one just
written by ``dualdecomp train``). A shipped configuration's default is its measured limit
(:mod:`dualdecomp.models.configuration.growth`); ``dualdecomp compress --max-tokens`` overrides either."""


@dataclass(frozen=True)
class TokenLimit:
    """The longest sentence a compressor takes by its length limit, and where that limit comes from.

    A configuration's own ``max_tokens``
    (:meth:`~dualdecomp.models.configuration.config.JointModel.check_size`) applies on top of it, with its
    own message.

    Attributes
    ----------
    tokens : int
        The limit.
    source : str
        ``"option"`` (``--max-tokens`` / ``Compressor(max_tokens=...)``), ``"measured"`` (the configuration's
        ``growth``) or ``"default"`` (:data:`DEFAULT_MAX_TOKENS`: no measured growth).
    detail : str
        For ``"measured"``: the configuration and its budget (for the message).
    """

    tokens: int
    source: str
    detail: str = ""

    def message(self, n: int) -> str:
        """The per-line error for a sentence of ``n`` tokens over this limit: which one, how to raise it."""
        if self.source == "option":
            return (f"sentence of {n} tokens is longer than --max-tokens {self.tokens}: split it, or raise "
                    "--max-tokens")
        if self.source == "measured":
            return (f"sentence of {n} tokens is longer than {self.tokens} tokens, the limit measured for "
                    f"{self.detail}: split it, or raise the limit with --max-tokens N")
        return (f"sentence of {n} tokens is longer than the default --max-tokens {self.tokens} (a model "
                "without a measured limit): split it, or raise --max-tokens")


def token_limit(max_tokens: int | None, config: JointConfig | None, label: str = "this configuration"
                ) -> TokenLimit:
    """The length limit of a compressor.

    Parameters
    ----------
    max_tokens : int or None
        The limit asked for (``--max-tokens``); None: the configuration's measured limit
        (``growth.max_tokens``), else :data:`DEFAULT_MAX_TOKENS`.
    config : JointConfig or None
        The joint configuration (None: a bigram model).
    label : str
        How to name the configuration in the message (e.g. ``"configuration 'lm-only'"``).

    Returns
    -------
    TokenLimit

    Raises
    ------
    InputError
        ``max_tokens`` is not a positive integer.
    """
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                   or max_tokens < 1):
        raise InputError(f"--max-tokens must be a positive integer, got {max_tokens!r}")
    growth = config.growth if config is not None else None
    if max_tokens is not None:
        return TokenLimit(max_tokens, "option")
    if growth is not None:
        return TokenLimit(growth.max_tokens, "measured",
                          f"{label} (a longer one would take over {growth.budget_seconds:g} s of CPU time "
                          f"or {growth.budget_mib:g} MiB)")
    return TokenLimit(DEFAULT_MAX_TOKENS, "default")


def char_budget_cap(widths: list[int]) -> int:
    """The largest character budget that can bind: the whole sentence with one space between tokens."""
    return sum(widths) + max(len(widths) - 1, 0)
