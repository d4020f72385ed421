"""The bigram compression model's averaged structured perceptron.

Decoding inside the loop (:func:`dualdecomp.models.perceptron.averaged_perceptron`) is exact
(``dualdecomp.solvers.bigram.solver.solve``), either at free length or at the gold length of each example
(``length_mode="gold"``), which trains the model to choose *which* words to keep when the length is
imposed, as it is at evaluation time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.models.bigram.features import BigramFeatures
from dualdecomp.models.perceptron import EpochReport, averaged_perceptron
from dualdecomp.solvers import bigram


@dataclass(frozen=True)
class TrainingExample:
    """One sentence with one gold compression: its features and gold keep vector."""

    features: BigramFeatures
    keep: np.ndarray


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
