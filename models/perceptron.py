"""Averaged structured perceptron (Collins 2002): the model-independent loop.

:func:`averaged_perceptron` shuffles, makes mistake-driven updates, averages lazily and selects the epoch
on dev; a model plugs in how to decode an example under the current weights and the feature difference
φ(gold) − φ(prediction). The bigram model's instance is :mod:`dualdecomp.models.bigram.perceptron`; the
dependency, joint and word-order trainers use the same loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

E = TypeVar("E")
P = TypeVar("P")


@dataclass(frozen=True)
class EpochReport:
    """Progress of one training epoch."""

    epoch: int
    mistakes: int
    examples: int
    dev_score: float | None


def perceptron_epoch(examples: Sequence[E], order: Sequence[int], w: np.ndarray, acc: np.ndarray, t: int,
                     decode: Callable[[E, np.ndarray], P], mistaken: Callable[[E, P], bool],
                     difference: Callable[[E, P], tuple[np.ndarray, np.ndarray]],
                     progress: Callable[[int], None] | None = None) -> tuple[int, int]:
    """One pass of the averaged perceptron over ``examples`` in ``order``; ``w`` and ``acc`` change in place.

    ``acc`` is Σ_t t · update_t, so that ``w - acc / t`` is the mean of the weights of every step so far.

    Returns
    -------
    t : int
        The step counter after the pass.
    mistakes : int
        Examples of the pass whose prediction was wrong.
    """
    mistakes = 0
    for e in order:
        ex = examples[e]
        pred = decode(ex, w)
        if mistaken(ex, pred):
            mistakes += 1
            idx, val = difference(ex, pred)
            np.add.at(w, idx, val)
            np.add.at(acc, idx, t * val)
            w[0] = acc[0] = 0.0
        t += 1
        if progress is not None:
            progress(1)
    return t, mistakes


def averaged_perceptron(examples: Sequence[E], size: int,
                        decode: Callable[[E, np.ndarray], P],
                        mistaken: Callable[[E, P], bool],
                        difference: Callable[[E, P], tuple[np.ndarray, np.ndarray]],
                        epochs: int = 10, seed: int = 0,
                        on_epoch: Callable[[int, np.ndarray], float | None] | None = None,
                        progress: Callable[[int], None] | None = None,
                        initial: np.ndarray | None = None,
                        ) -> tuple[np.ndarray, list[EpochReport]]:
    """Train weights by the averaged structured perceptron, for any model.

    Parameters
    ----------
    examples : sequence
        Training examples (shuffled every epoch with ``seed``).
    size : int
        Length of the weight vector (index 0 is padding and stays 0).
    decode : callable
        ``decode(example, weights)`` returns the prediction under the current weights.
    mistaken : callable
        ``mistaken(example, prediction)``: whether the prediction differs from the gold structure.
    difference : callable
        ``difference(example, prediction)`` returns φ(gold) − φ(prediction) as (indices, values); indices
        may repeat.
    epochs : int
        Number of passes.
    seed : int
        Seed of the shuffling.
    on_epoch : callable, optional
        Called with (epoch, averaged weights) after each epoch; may return a dev score.
    progress : callable, optional
        Called with the number of examples processed since the last call.
    initial : numpy.ndarray, optional
        Starting weights (warm start; default zeros). The average then runs over the weights of every
        step, starting from these.

    Returns
    -------
    weights : numpy.ndarray
        The averaged weights after the epoch with the best dev score (the last epoch without
        ``on_epoch`` scores).
    reports : list of EpochReport
    """
    w = np.zeros(size) if initial is None else np.array(initial, dtype=np.float64)
    if w.shape != (size,):
        raise ValueError(f"initial weights must have shape ({size},)")
    acc = np.zeros(size)  # Σ_t t · update_t, for the averaged weights w - acc / t
    rng = np.random.default_rng(seed)
    t = 1
    reports: list[EpochReport] = []
    best: tuple[float, np.ndarray] | None = None
    last_avg = w
    for epoch in range(1, epochs + 1):
        t, mistakes = perceptron_epoch(examples, rng.permutation(len(examples)), w, acc, t, decode, mistaken,
                                       difference, progress)
        last_avg = w - acc / t
        score = on_epoch(epoch, last_avg) if on_epoch is not None else None
        reports.append(EpochReport(epoch, mistakes, len(examples), score))
        if score is not None and (best is None or score > best[0]):
            best = (score, last_avg.copy())
    return (best[1] if best is not None else last_avg), reports
