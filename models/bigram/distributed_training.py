"""The bigram perceptron trained by iterative parameter mixing (McDonald, Hall & Mann 2010) on Dask.

The examples are cut into ``shards`` (example j goes to shard j mod K), each sent once to the cluster.
Every epoch, each shard runs one pass of the averaged perceptron (:func:`perceptron_epoch`, the very loop
of the single-process trainer) on a Dask worker, starting from the mixed weights of the previous epoch;
the client then mixes the shards' weights, w = Σ_s μ_s w_s, with μ uniform (1/K) or proportional to
each shard's mistakes in the epoch (``mixing="mistakes"``, the paper's weighted mixing; uniform when no
shard made a mistake). Averaging (Collins 2002) is kept per shard over every weight vector the shard
visited, mixed weights included, and the averaged weights are mixed with the same μ; the dev score of
those selects the epoch, as in the single-process trainer. Each shard shuffles its examples every epoch
with its own generator (seed + shard number), so one shard reproduces the single-process perceptron
exactly (tests/test_distributed_training.py).

Iterative parameter mixing trains a different model from the single-process perceptron when K > 1
(its convergence is proved for separable data, not its equality): it is a parallel approximation of
sequential training, and the dev selection is the check of its quality.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dualdecomp.models.bigram.perceptron import BigramSteps, TrainingExample
from dualdecomp.models.parameter_mixing import MIXINGS, ShardState, mixing_round
from dualdecomp.models.perceptron import EpochReport, perceptron_epoch


def shard_epoch(examples: Sequence[TrainingExample], order: np.ndarray, w: np.ndarray, acc: np.ndarray,
                t: int, length_mode: str) -> tuple[np.ndarray, np.ndarray, int, int]:
    """On a worker: one averaged-perceptron pass over a shard, from the given state.

    Returns
    -------
    w, acc : numpy.ndarray
        The shard's weights and averaging accumulator after the pass.
    t : int
        The shard's step counter.
    mistakes : int
        Mistakes made in the pass.
    """
    steps = BigramSteps(length_mode)
    t, mistakes = perceptron_epoch(examples, order, w, acc, t, steps.decode, steps.mistaken,
                                   steps.difference)
    return w, acc, t, mistakes


@dataclass(frozen=True)
class ParameterMixing:
    """The bigram perceptron trained by iterative parameter mixing on a Dask cluster.

    Called like :func:`dualdecomp.models.bigram.perceptron.train_perceptron` (``train(..., perceptron=...)``
    of :mod:`dualdecomp.models.bigram.training` takes it in its place).

    Parameters
    ----------
    client : dask.distributed.Client
        The cluster.
    shards : int
        Number of shards K (trained in parallel each epoch).
    mixing : {"uniform", "mistakes"}
        Mixing coefficients: 1/K, or proportional to each shard's mistakes in the epoch.
    """

    client: Any
    shards: int
    mixing: str = "uniform"

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ValueError("the number of shards must be >= 1")
        if self.mixing not in MIXINGS:
            raise ValueError(f"mixing must be one of {MIXINGS}, not {self.mixing!r}")

    @property
    def description(self) -> str:
        """The trainer's name in the model's metadata."""
        return (f"averaged structured perceptron, iterative parameter mixing over {self.shards} shards "
                f"({self.mixing} mixing) on Dask")

    def __call__(self, examples: Sequence[TrainingExample], hash_bits: int, epochs: int = 10, seed: int = 0,
                 length_mode: str = "free",
                 on_epoch: Callable[[int, np.ndarray], float | None] | None = None,
                 progress: Callable[[int], None] | None = None,
                 ) -> tuple[np.ndarray, list[EpochReport]]:
        """Train; same parameters and returns as ``train_perceptron``."""
        BigramSteps(length_mode)  # validates the mode before anything is shipped
        size = 1 << hash_bits
        k = min(self.shards, max(1, len(examples)))
        shards = [list(examples[s::k]) for s in range(k)]
        # hash=False: a fresh key per run. With content-hashed keys, a second run on the same examples can
        # scatter under the key the first run is still releasing, and its tasks fail with "lost
        # dependencies" (dask/distributed#8576; seen once in CI).
        data = self.client.scatter(shards, hash=False)
        rngs = [np.random.default_rng(seed + s) for s in range(k)]
        states: list[ShardState] = [(np.zeros(size), np.zeros(size), 1) for _ in range(k)]
        mixed = states[0][0]
        reports: list[EpochReport] = []
        best: tuple[float, np.ndarray] | None = None
        last_avg = mixed

        def submit(s: int, start: Any, total: Any, t: int) -> Any:
            order = rngs[s].permutation(len(shards[s]))
            return self.client.submit(shard_epoch, data[s], order, start, total, t, length_mode, pure=False)

        for epoch in range(1, epochs + 1):
            mixed, last_avg, mistakes = mixing_round(self.client, states, mixed, submit, int, self.mixing,
                                                     progress, [len(shard) for shard in shards])
            score = on_epoch(epoch, last_avg) if on_epoch is not None else None
            reports.append(EpochReport(epoch, sum(mistakes), len(examples), score))
            if score is not None and (best is None or score > best[0]):
                best = (score, last_avg.copy())
        return (best[1] if best is not None else last_avg), reports
