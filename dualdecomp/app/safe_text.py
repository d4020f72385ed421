"""Text that can always be written as UTF-8 (rows of the batch commands)."""

from __future__ import annotations

__all__ = ["safe_text"]


def safe_text(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` escapes, so that it can be written as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
