"""Quality against compression rate over a sweep of length ratios (``dualdecomp evaluate --curve``).

Every system compresses the gold corpus at each ratio R (every sentence to exactly ``round(R·n)``
tokens, the batch compressor's ``--length ratio:R``) and is scored by
:func:`dualdecomp.app.evaluation.evaluate` against the references. The points, one line per system, are
the standard way papers compare compressors; :func:`dualdecomp.app.plots.plot_curve` draws them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.evaluation import evaluate
from dualdecomp.app.length_request import parse_length
from dualdecomp.app.plots import CurvePoint
from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import read_corpus, write_jsonl_atomic

__all__ = ["CurveSystem", "parse_ratios", "run_curve"]

DEFAULT_RATIOS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


@dataclass(frozen=True)
class CurveSystem:
    """One line of the curve: a model directory and one of its configurations.

    Attributes
    ----------
    model : str or None
        Model directory (None: the embedded default model).
    config : str or None
        Configuration name (``configs/NAME.json``; None: the directory's ``config.json``).
    name : str or None
        Label (default: the configuration's own name).
    """

    model: str | None = None
    config: str | None = None
    name: str | None = None


def parse_ratios(text: str | None) -> tuple[float, ...]:
    """Parse ``"0.4,0.5,0.6"`` into ratios in (0, 1] (``DEFAULT_RATIOS`` when None).

    Raises
    ------
    InputError
        Not numbers, out of range, or repeated.
    """
    if text is None:
        return DEFAULT_RATIOS
    try:
        ratios = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise InputError(f"--ratios must be comma-separated numbers in (0, 1], got {text!r}") from None
    if not ratios or any(not 0 < r <= 1 for r in ratios) or len(set(ratios)) != len(ratios):
        raise InputError(f"--ratios must be distinct numbers in (0, 1], got {text!r}")
    return tuple(sorted(ratios))


def _label(compressor: Compressor, system: CurveSystem) -> str:
    if system.name:
        return system.name
    if compressor.joint is not None:
        return compressor.joint.config.name
    return system.config or "bigram"


def run_curve(gold_path: str | os.PathLike[str], systems: Sequence[CurveSystem], ratios: Sequence[float],
              limit: int | None = None, log: Callable[[str], None] | None = None) -> list[CurvePoint]:
    """Compress the gold corpus with every system at every ratio and score each run.

    Parameters
    ----------
    gold_path : path
        Gold corpus (JSONL with ``text`` and ``compressions``).
    systems : sequence of CurveSystem
        The systems (one curve each).
    ratios : sequence of float
        Length ratios in (0, 1].
    limit : int, optional
        Use only the first ``limit`` sentences of the corpus.
    log : callable, optional
        Called with one line per finished point.

    Returns
    -------
    list of CurvePoint
        In the order systems × ratios.

    Raises
    ------
    InputError
        Unreadable corpus, no systems, bad limit.
    """
    if not systems:
        raise InputError("the curve needs at least one system")
    if limit is not None and limit < 1:
        raise InputError("--limit must be a positive integer")
    gold = read_corpus(gold_path)[:limit]
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "gold.jsonl"
        write_jsonl_atomic(src, ({"id": item.id, "text": " ".join(item.text),
                                  "compressions": [" ".join(c) for c in item.compressions]} for item in gold))
        for system in systems:
            compressor = Compressor(system.model, system.config)
            label = _label(compressor, system)
            for ratio in ratios:
                options = BatchOptions(spec=parse_length(ratio=ratio), deterministic=True)
                rows, _ = run_batch(src, None, compressor, options)
                report = evaluate(gold, enumerate(rows, 1), source=f"{label} at ratio {ratio}")
                point = CurvePoint(label, float(ratio), report.cr, report.token_f1, report.bigram_f1,
                                   report.certified)
                points.append(point)
                if log is not None:
                    log(f"{label} at ratio {ratio:g}: CR {100 * point.cr:.1f}, token F1 "
                        f"{100 * point.token_f1:.1f}, bigram F1 {100 * point.bigram_f1:.1f}")
    return points

