"""dualdecomp: constrained sentence compression by Lagrangian relaxation.

Public API
----------
- :func:`decode` — decode a list of components (contract 5 of DESIGN.md).
- :class:`Result`, :class:`TraceStep` — typed decoder results.
- :class:`Compressor` — a trained model that compresses text, tokens or parsed sentences.
- :func:`compress` — one-call compression of raw text with the embedded default model.
"""

from __future__ import annotations

from dualdecomp.decode import decode
from dualdecomp.result import Result, TraceStep

__all__ = ["Compressor", "Result", "TraceStep", "compress", "decode"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "Compressor":
        from dualdecomp.compressor import Compressor

        return Compressor
    raise AttributeError(name)


def compress(text: str, length: int | None = None, ratio: float | None = None, model=None):
    """Compress raw text with a model (the embedded default model when ``model`` is None).

    Parameters
    ----------
    text : str
        Raw text; tokenised by spaCy.
    length : int, optional
        Exact number of kept tokens.
    ratio : float, optional
        Keep round(ratio · n) tokens.
    model : path or BigramModel, optional
        Model directory or loaded model.

    Returns
    -------
    dualdecomp.compressor.Compression
        ``.text`` (detokenised), ``.compression``, ``.keep`` and ``.result`` (the certificate).
    """
    from dualdecomp.compressor import Compressor

    return Compressor(model).compress_text(text, length=length, ratio=ratio)
