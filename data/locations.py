"""Where the embedded data lives inside the installed package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["CHECKOUT_ROOT", "default_model_dir", "rewrite_model_dir", "word_order_model_dir"]

CHECKOUT_ROOT = Path(__file__).resolve().parent.parent
"""The repository root when run from a source checkout (an editable install); in an installed wheel, the
``dualdecomp`` package folder. Only for what lives beside the code in a checkout (``.tools/bin``, and
``../shared/data`` next to the repository).
"""


def default_model_dir() -> Path:
    """The directory of the embedded default model (``dualdecomp/data/default_model`` once installed)."""
    return Path(str(resources.files("dualdecomp.data") / "default_model"))


def word_order_model_dir() -> Path:
    """The directory of the embedded word-ordering model (``dualdecomp/data/word_order_model``)."""
    return Path(str(resources.files("dualdecomp.data") / "word_order_model"))


def rewrite_model_dir() -> Path:
    """The directory of the embedded rewriting model (``dualdecomp/data/rewrite_model``; ``make
    rewrite-model`` builds it)."""
    return Path(str(resources.files("dualdecomp.data") / "rewrite_model"))
