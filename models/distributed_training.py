"""Distributed perceptron training by iterative parameter mixing (McDonald, Hall & Mann 2010) on Dask.

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

from dualdecomp.models.perceptron import BigramSteps, EpochReport, TrainingExample, perceptron_epoch

MIXINGS = ("uniform", "mistakes")


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


def mixing_weights(mistakes: Sequence[int], mixing: str) -> list[float]:
    """The mixing coefficients μ of the shards (they sum to 1)."""
    k = len(mistakes)
    total = sum(mistakes)
    if mixing == "mistakes" and total > 0:
        return [m / total for m in mistakes]
    return [1.0 / k] * k


def mix(vectors: Sequence[np.ndarray], mu: Sequence[float]) -> np.ndarray:
    """Σ_s μ_s v_s (a new array)."""
    out = mu[0] * vectors[0]
    for m, v in zip(mu[1:], vectors[1:], strict=True):
        out += m * v
    return out


ShardState = tuple[np.ndarray, np.ndarray, int]
"""A shard's weights, averaging accumulator and step counter."""


def mixing_round(client: Any, states: list[ShardState], mixed: np.ndarray,
                 submit: Callable[[int, Any, Any, int], Any], mistakes_of: Callable[[Any], int], mixing: str,
                 progress: Callable[[int], None] | None = None, sizes: Sequence[int] = ()
                 ) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """One epoch of iterative parameter mixing: every shard trains from ``mixed``, then the mix.

    Parameters
    ----------
    client : dask.distributed.Client
    states : list of (weights, accumulator, step)
        One per shard; replaced in place by the shards' states after the epoch.
    mixed : numpy.ndarray
        The mixed weights every shard starts from.
    submit : callable
        ``(shard, weights_future, accumulator_future, step) -> future`` of ``(weights, accumulator, step,
        report)``: the shard's training pass, submitted to ``client``.
    mistakes_of : callable
        ``report -> int``: the shard's mistakes (for ``mixing="mistakes"``).
    mixing : {"uniform", "mistakes"}
    progress : callable, optional
        Called with ``sizes[s]`` when shard s is done.
    sizes : sequence of int
        Examples per shard (for ``progress``).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, list)
        The mixed weights, the mixed averaged weights and the shards' reports.
    """
    futures = []
    for s, (w, acc, t) in enumerate(states):
        acc = acc + t * (mixed - w)  # keeps the shard's average while its weights jump to the mix
        # the weight vectors travel as data (scattered), not inside the task graph
        start, total = client.scatter([mixed.copy(), acc], hash=False)
        futures.append(submit(s, start, total, t))
    reports = []
    for s, future in enumerate(futures):
        w, acc, t, report = future.result()
        states[s] = (w, acc, t)
        reports.append(report)
        if progress is not None:
            progress(sizes[s])
    mu = mixing_weights([mistakes_of(r) for r in reports], mixing)
    return mix([w for w, _, _ in states], mu), mix([w - acc / t for w, acc, t in states], mu), reports


@dataclass(frozen=True)
class ParameterMixing:
    """The bigram perceptron trained by iterative parameter mixing on a Dask cluster.

    Called like :func:`dualdecomp.models.perceptron.train_perceptron` (``train(..., perceptron=...)``
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
