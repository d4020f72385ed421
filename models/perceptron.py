"""Averaged structured perceptron (Collins 2002): a generic loop and its use by the bigram model.

:func:`averaged_perceptron` is the model-independent loop (shuffling, mistake-driven updates, lazy
averaging, dev selection of the epoch); a model plugs in how to decode an example under the current
weights and the feature difference φ(gold) − φ(prediction). :func:`train_perceptron` is the bigram
compression model's instance: decoding inside the loop is exact (``dualdecomp.solvers.bigram.solver.solve``),
either at
free length or at the gold length of each example (``length_mode="gold"``), which trains the model to
choose *which* words to keep when the length is imposed, as it is at evaluation time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from dualdecomp.models.bigram.features import BigramFeatures
from dualdecomp.solvers import bigram

E = TypeVar("E")
P = TypeVar("P")


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


@dataclass(frozen=True)
class BigramSteps:
    """The bigram model's perceptron steps: exact decoding, mistake test and feature difference.

    Parameters
    ----------
    length_mode : {"free", "gold"}
        Decode at free length or at the gold example's length.
    """

    length_mode: str = "free"

    def __post_init__(self) -> None:
        if self.length_mode not in ("free", "gold"):
            raise ValueError(f"length_mode must be 'free' or 'gold', not {self.length_mode!r}")

    def decode(self, ex: TrainingExample, w: np.ndarray) -> np.ndarray:
        """The keep vector of the best compression under weights ``w``."""
        length = int(ex.keep.sum()) if self.length_mode == "gold" else None
        return bigram.solve(ex.features.potentials(w), length=length).keep

    def mistaken(self, ex: TrainingExample, pred: np.ndarray) -> bool:
        """Whether the prediction differs from the gold keep vector."""
        return not np.array_equal(pred, ex.keep)

    def difference(self, ex: TrainingExample, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ(gold) − φ(prediction) as (indices, values)."""
        gi, gv = ex.features.vector(ex.keep)
        pi, pv = ex.features.vector(pred)
        return np.concatenate((gi, pi)), np.concatenate((gv, -pv))


def train_perceptron(examples: Sequence[TrainingExample], hash_bits: int, epochs: int = 10, seed: int = 0,
                     length_mode: str = "free",
                     on_epoch: Callable[[int, np.ndarray], float | None] | None = None,
                     progress: Callable[[int], None] | None = None,
                     ) -> tuple[np.ndarray, list[EpochReport]]:
    """Train the bigram model by the averaged structured perceptron (:func:`averaged_perceptron`).

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
    steps = BigramSteps(length_mode)
    return averaged_perceptron(examples, 1 << hash_bits, steps.decode, steps.mistaken, steps.difference,
                               epochs, seed, on_epoch, progress)
