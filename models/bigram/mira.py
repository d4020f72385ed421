"""k-best MIRA (Crammer & Singer 2003; McDonald et al. 2005) for the bigram compression model.

For each example, the k best compressions under the current weights (``dualdecomp.solvers.bigram.kbest``,
exact, at free or gold length) give the constraints w · (φ(gold) − φ(y_r)) >= loss(gold, y_r), with the token
Hamming loss; the smallest change of w meeting them (each multiplier clipped to [0, C]) is found by
Hildreth's coordinate ascent on the dual. The update runs inside the generic averaged loop of
:func:`dualdecomp.models.perceptron.averaged_perceptron`, so MIRA's weights are averaged the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dualdecomp.models.bigram.perceptron import TrainingExample
from dualdecomp.models.perceptron import EpochReport, averaged_perceptron
from dualdecomp.solvers.bigram import kbest


def _sparse(idx: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sum repeated indices; drop zeros."""
    uniq, inverse = np.unique(idx, return_inverse=True)
    summed = np.zeros(len(uniq))
    np.add.at(summed, inverse, val)
    keep = summed != 0.0
    return uniq[keep], summed[keep]


def _dot(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    _, ia, ib = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    return float(np.dot(a[1][ia], b[1][ib]))


def hildreth(margins: np.ndarray, losses: np.ndarray, gram: np.ndarray, C: float,
             iterations: int = 200, tol: float = 1e-10) -> np.ndarray:
    """Multipliers α of min ½‖Σ α_r d_r‖² − Σ α_r (loss_r − margin_r), 0 <= α_r <= C.

    Parameters
    ----------
    margins : numpy.ndarray
        w · d_r for each constraint.
    losses : numpy.ndarray
        Required margins.
    gram : numpy.ndarray
        d_r · d_s.
    C : float
        Upper bound of each multiplier.

    Returns
    -------
    numpy.ndarray
        α.
    """
    k = len(losses)
    alpha = np.zeros(k)
    for _ in range(iterations):
        change = 0.0
        for r in range(k):
            if gram[r, r] <= 0.0:
                continue
            slack = losses[r] - margins[r] - float(gram[r] @ alpha)
            new = min(C, max(0.0, alpha[r] + slack / gram[r, r]))
            change = max(change, abs(new - alpha[r]))
            alpha[r] = new
        if change < tol:
            break
    return alpha


def mira_update(weights: np.ndarray, gold: TrainingExample, candidates: Sequence[np.ndarray],
                C: float) -> tuple[np.ndarray, np.ndarray]:
    """The MIRA step Σ α_r (φ(gold) − φ(y_r)) for the candidates y_r (indices, values; maybe empty)."""
    gi, gv = gold.features.vector(gold.keep)
    diffs, losses = [], []
    for keep in candidates:
        loss = float(np.count_nonzero(keep != gold.keep))
        if loss == 0.0:
            continue
        pi, pv = gold.features.vector(keep)
        d = _sparse(np.concatenate((gi, pi)), np.concatenate((gv, -pv)))
        if len(d[0]) == 0:
            continue
        diffs.append(d)
        losses.append(loss)
    if not diffs:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    margins = np.array([float(np.dot(weights[d[0]], d[1])) for d in diffs])
    losses_arr = np.array(losses)
    if np.all(margins >= losses_arr):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    gram = np.array([[_dot(a, b) for b in diffs] for a in diffs])
    alpha = hildreth(margins, losses_arr, gram, C)
    idx = np.concatenate([d[0] for d in diffs])
    val = np.concatenate([a * d[1] for a, d in zip(alpha, diffs, strict=True)])
    return _sparse(idx, val)


def train_mira(examples: Sequence[TrainingExample], hash_bits: int, epochs: int = 10, seed: int = 0,
               length_mode: str = "free", k: int = 5, C: float = 1.0,
               on_epoch: Callable[[int, np.ndarray], float | None] | None = None,
               progress: Callable[[int], None] | None = None,
               ) -> tuple[np.ndarray, list[EpochReport]]:
    """Train the bigram model by averaged k-best MIRA.

    Parameters
    ----------
    examples, hash_bits, epochs, seed, length_mode, on_epoch, progress
        As in :func:`dualdecomp.models.bigram.perceptron.train_perceptron`.
    k : int
        Number of best compressions giving constraints.
    C : float
        Clip of each multiplier (the aggressiveness).

    Returns
    -------
    weights : numpy.ndarray
        The averaged weights after the best epoch on dev.
    reports : list of EpochReport
        ``mistakes`` counts the examples whose update was non-zero.
    """
    if length_mode not in ("free", "gold"):
        raise ValueError(f"length_mode must be 'free' or 'gold', not {length_mode!r}")

    def decode(ex: TrainingExample, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        length = int(ex.keep.sum()) if length_mode == "gold" else None
        cands = [s.keep for s in kbest(ex.features.potentials(w), k, length=length)]
        return mira_update(w, ex, cands, C)

    def mistaken(ex: TrainingExample, update: tuple[np.ndarray, np.ndarray]) -> bool:
        return len(update[0]) > 0

    def difference(ex: TrainingExample, update: tuple[np.ndarray, np.ndarray]):
        return update

    return averaged_perceptron(examples, 1 << hash_bits, decode, mistaken, difference, epochs, seed,
                               on_epoch, progress)
