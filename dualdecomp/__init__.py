"""dualdecomp: constrained sentence compression by Lagrangian relaxation.

Public API (loaded lazily: ``import dualdecomp`` imports nothing heavy, so importing a low layer such as
:mod:`dualdecomp.core.errors` does not load the engine, numba or spaCy)
----------
- :func:`decode` — decode a list of components (contract 5 of ``docs/architecture.md``).
- :class:`Result`, :class:`TraceStep` — typed decoder results.
- :class:`Component` — the component protocol; :class:`Solution` — what a solver returns.
- :class:`Compressor` — a trained model that compresses text, tokens or parsed sentences.
- :class:`Rewriter` — a rewriting model (beyond deletion, exact budgets) that rewrites text.
- :func:`compress` — one-call compression of raw text with the embedded default model.

Layers (each imports only the ones before it): :mod:`dualdecomp.core` → :mod:`dualdecomp.data` →
:mod:`dualdecomp.solvers` → :mod:`dualdecomp.engine` → :mod:`dualdecomp.models` → :mod:`dualdecomp.app`.
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["Component", "Compressor", "Result", "Rewriter", "Solution", "TraceStep", "compress", "decode"]
__version__ = "0.1.0"

_LAZY = {
    "decode": "dualdecomp.engine.decode",
    "Result": "dualdecomp.core.result",
    "TraceStep": "dualdecomp.core.result",
    "Solution": "dualdecomp.core.solution",
    "Component": "dualdecomp.core.component",
    "Compressor": "dualdecomp.app.compressor",
    "Rewriter": "dualdecomp.app.rewriter",
}


def __getattr__(name: str):
    # Lazy attributes keep `import dualdecomp` (and every import of a low layer) fast.
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dualdecomp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def compress(text: str, length: int | None = None, ratio: float | None = None, model=None,
             split: bool = False, components=None):
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
    split : bool
        Split ``text`` into sentences and compress each (a list of compressions, one per sentence).
    components : callable, str or list of them, optional
        Your own components: factories ``f(sentence) -> component`` (or ``"MODULE:FUNCTION"``), added to
        the model's for every sentence (``Compressor(extra_components=...)``, docs/components/your-own.md).

    Returns
    -------
    dualdecomp.app.compressor.Compression, or a list of them with ``split``
        ``.text`` (detokenised), ``.compression``, ``.keep`` and ``.result`` (the certificate).
    """
    # lazy: `import dualdecomp` stays fast (spaCy, numba load on first use)
    from dualdecomp.app.compressor import Compressor

    return Compressor(model, extra_components=components).compress_text(text, length=length, ratio=ratio,
                                                                        split=split)
