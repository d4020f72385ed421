"""Where the embedded data lives inside the installed package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["default_model_dir", "word_order_model_dir"]


def default_model_dir() -> Path:
    """The directory of the embedded default model (``dualdecomp/data/default_model`` once installed)."""
    return Path(str(resources.files("dualdecomp.data") / "default_model"))


def word_order_model_dir() -> Path:
    """The directory of the embedded word-ordering model (``dualdecomp/data/word_order_model``)."""
    return Path(str(resources.files("dualdecomp.data") / "word_order_model"))
