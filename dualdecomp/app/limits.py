"""Size limits of the compression pipeline (documented in the README, "Memory and time bounds")."""

from __future__ import annotations

DEFAULT_MAX_TOKENS = 300
"""Longest sentence (in tokens) compressed by default: memory and time grow as n^3 or faster for the
trigram LM and second-order dependency components, so a longer line gets its own error row instead of
taking the machine's memory (``dualdecomp compress --max-tokens`` raises the limit)."""


def too_long_message(n: int, max_tokens: int) -> str:
    """The per-line error for a sentence of ``n`` tokens over ``max_tokens``."""
    return (f"sentence of {n} tokens is longer than --max-tokens {max_tokens} (memory and time grow as n^3 "
            "or faster): split it, or raise --max-tokens")


def char_budget_cap(widths: list[int]) -> int:
    """The largest character budget that can bind: the whole sentence with one space between tokens."""
    return sum(widths) + max(len(widths) - 1, 0)
