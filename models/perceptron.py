"""Averaged structured perceptron (Collins 2002) for the bigram compression model.

Decoding inside the loop is exact (``solvers.bigram.solve``), either at free length or at the gold
length of each example (``length_mode="gold"``), which trains the model to choose *which* words to keep
when the length is imposed, as it is at evaluation time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from models.features import BigramFeatures
from solvers import bigram


@dataclass(frozen=True)
class TrainingExample:
    """One sentence with one gold compression: its features and gold keep vector."""

    features: BigramFeatures
    keep: np.ndarray


@dataclass(frozen=True)
class EpochReport:
    """Progress of one training epoch."""

    epoch: int
    mistakes: int
    examples: int
    dev_score: float | None


def train_perceptron(examples: Sequence[TrainingExample], hash_bits: int, epochs: int = 10, seed: int = 0,
                     length_mode: str = "free",
                     on_epoch: Callable[[int, np.ndarray], float | None] | None = None,
                     progress: Callable[[int], None] | None = None,
                     ) -> tuple[np.ndarray, list[EpochReport]]:
    """Train by the averaged structured perceptron.

    Parameters
    ----------
    examples : sequence of TrainingExample
        Training data (shuffled every epoch with ``seed``).
    hash_bits : int
        log2 of the weight-vector size.
    epochs : int
        Number of passes.
    seed : int
        Seed of the shuffling.
    length_mode : {"free", "gold"}
        Decode at free length or at the gold example's length.
    on_epoch : callable, optional
        Called with (epoch, averaged weights) after each epoch; may return a dev score.
    progress : callable, optional
        Called with the number of examples processed since the last call.

    Returns
    -------
    weights : numpy.ndarray
        The averaged weights after the epoch with the best dev score (the last epoch without
        ``on_epoch`` scores).
    reports : list of EpochReport
    """
    if length_mode not in ("free", "gold"):
        raise ValueError(f"length_mode must be 'free' or 'gold', not {length_mode!r}")
    size = 1 << hash_bits
    w = np.zeros(size)
    acc = np.zeros(size)  # Σ_t t · update_t, for the averaged weights w - acc / t
    rng = np.random.default_rng(seed)
    t = 1
    reports: list[EpochReport] = []
    best: tuple[float, np.ndarray] | None = None
    last_avg = w
    for epoch in range(1, epochs + 1):
        mistakes = 0
        for e in rng.permutation(len(examples)):
            ex = examples[e]
            B = ex.features.potentials(w)
            length = int(ex.keep.sum()) if length_mode == "gold" else None
            pred = bigram.solve(B, length=length).keep
            if not np.array_equal(pred, ex.keep):
                mistakes += 1
                gi, gv = ex.features.vector(ex.keep)
                pi, pv = ex.features.vector(pred)
                idx = np.concatenate((gi, pi))
                val = np.concatenate((gv, -pv))
                np.add.at(w, idx, val)
                np.add.at(acc, idx, t * val)
                w[0] = acc[0] = 0.0
            t += 1
            if progress is not None:
                progress(1)
        last_avg = w - acc / t
        score = on_epoch(epoch, last_avg) if on_epoch is not None else None
        reports.append(EpochReport(epoch, mistakes, len(examples), score))
        if score is not None and (best is None or score > best[0]):
            best = (score, last_avg.copy())
    return (best[1] if best is not None else last_avg), reports
