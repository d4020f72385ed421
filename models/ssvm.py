"""The structured SVM trainer (margin rescaling) shared by the tree-transducer models.

The objective of Tsochantaridis et al. (2005) with margin rescaling, as Cohn & Lapata train their
transducers: ``λ/2 ||w||² + (1/N) Σ_i max_y [Δ(y_i, y) − w·(φ(y_i) − φ(y))]``, optimised by averaged
stochastic subgradient descent (Pegasos: step ``min(1, 1/(λ t))``) instead of SVMstruct's cutting
planes. The subgradient of each term comes from a loss-augmented argmax that the model supplies
(:class:`Violation`); an argmax that is not proved optimal gives an approximate subgradient and is
counted (:class:`SsvmStats`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SsvmConfig", "SsvmStats", "Violation", "train_ssvm"]

Features = tuple[np.ndarray, np.ndarray]
"""Sparse features: (indices int64, values float64); repeated indices add up."""


@dataclass(frozen=True)
class Violation:
    """What one example's loss-augmented argmax says under the current weights.

    Attributes
    ----------
    violated : bool
        Whether ``Δ(y) + w·φ(y) > w·φ(y_i)`` for the argmax ``y`` (an update is due).
    gold : Features
        φ(y_i), the reference output's features.
    predicted : Features
        φ(y), the loss-augmented argmax's features.
    exact : bool
        Whether the argmax was proved optimal.
    """

    violated: bool
    gold: Features
    predicted: Features
    exact: bool = True


@dataclass(frozen=True)
class SsvmConfig:
    """Settings of :func:`train_ssvm`.

    Attributes
    ----------
    epochs : int
    lam : float
        L2 regularisation λ (0: unregularised steps of size 1).
    seed : int
        The example order of every epoch (a permutation drawn from this seed).
    """

    epochs: int = 5
    lam: float = 1e-4
    seed: int = 0


@dataclass
class SsvmStats:
    """Counts over a run: loss-augmented argmaxes, those not proved optimal, updates."""

    augmented: int = 0
    uncertified: int = 0
    updates: int = 0


def train_ssvm(size: int, examples: int, violation: Callable[[int, np.ndarray], Violation],
               config: SsvmConfig, on_epoch: Callable[[int, np.ndarray], float] | None = None,
               progress: Callable[[int], None] | None = None, stats: SsvmStats | None = None
               ) -> tuple[np.ndarray, list[float]]:
    """Averaged Pegasos on the structured hinge loss (module docstring).

    Parameters
    ----------
    size : int
        Length of the weight vector.
    examples : int
        Number of training examples (ids 0..examples-1).
    violation : callable
        ``violation(i, w) -> Violation``: example ``i``'s loss-augmented argmax under weights ``w``
        (``w`` must not be modified).
    config : SsvmConfig
    on_epoch : callable, optional
        ``on_epoch(epoch, averaged_weights) -> dev score``: the best epoch's weights are returned.
    progress : callable, optional
        Called with 1 after each example.
    stats : SsvmStats, optional
        Updated with the counts of the run.

    Returns
    -------
    (weights, dev scores per epoch)
        The averaged weights of the best epoch (the last one without ``on_epoch``).
    """
    w = np.zeros(size)
    total = np.zeros(size)
    steps = 0
    rng = np.random.default_rng(config.seed)
    best_w, best_score, scores = None, -np.inf, []
    for epoch in range(config.epochs):
        for i in rng.permutation(examples):
            v = violation(int(i), w)
            steps += 1
            eta = min(1.0, 1.0 / (config.lam * steps)) if config.lam > 0 else 1.0
            if config.lam > 0:
                w *= 1.0 - eta * config.lam
            if stats is not None:
                stats.augmented += 1
                stats.uncertified += int(not v.exact)
                stats.updates += int(v.violated)
            if v.violated:
                np.add.at(w, v.gold[0], eta * v.gold[1])
                np.add.at(w, v.predicted[0], -eta * v.predicted[1])
            total += w
            if progress is not None:
                progress(1)
        avg = total / max(steps, 1)
        if on_epoch is not None:
            s = on_epoch(epoch, avg)
            scores.append(s)
            if s > best_score:
                best_score, best_w = s, avg.copy()
        else:
            best_w = avg.copy()
    assert best_w is not None or examples == 0
    return (best_w if best_w is not None else w), scores


def sparse_sum(parts: Sequence[Features]) -> Features:
    """The concatenation of several sparse feature vectors (their sum)."""
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
