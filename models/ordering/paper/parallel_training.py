"""Guided learning by iterative parameter mixing (McDonald, Hall & Mann 2010) on a Dask cluster.

The training sentences are cut into K shards (sentence j goes to shard j mod K), sent once to the
cluster. Every epoch each shard runs one pass of the single-process trainer
(:meth:`dualdecomp.models.ordering.paper.training.Trainer.epoch`, the very same loop) on a Dask worker,
starting from the mixed weights of the previous epoch; the client then mixes the shards' weights,
w = Σ_s μ_s w_s, with μ uniform or proportional to each shard's updates in the epoch
(``mixing="mistakes"``), as :mod:`dualdecomp.models.bigram.distributed_training` does for the bigram
perceptron (both through :func:`dualdecomp.models.parameter_mixing.mixing_round`). Weight averaging is
kept per shard over every weight vector the shard visited, mixed ones included, and the averaged weights
are mixed with the same μ. Shard s shuffles with seed + s, so one shard reproduces the single-process
trainer exactly (tested).

With K > 1 this trains a different model from sequential guided learning — a parallel approximation whose
quality the dev selection of :func:`dualdecomp.models.ordering.paper.train_run.train_model` checks — in
exchange for K passes' worth of sentences in the time of one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dualdecomp.data.ordering.inputs import OrderingExample
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer
from dualdecomp.models.parameter_mixing import MIXINGS, ShardState, mixing_round


def shard_epoch(template: OrderingModel, shard: Sequence[OrderingExample], weights: np.ndarray,
                accumulated: np.ndarray, step: int, config: TrainConfig, epoch: int
                ) -> tuple[np.ndarray, np.ndarray, int, dict]:
    """On a worker: one pass of guided learning over a shard, from the given trainer state.

    Returns
    -------
    weights, accumulated : numpy.ndarray
        The shard's weights and averaging accumulator after the pass.
    step : int
        The shard's step counter.
    stats : dict
        :meth:`Trainer.epoch`'s counts.
    """
    trainer = Trainer(replace(template, weights=weights), config)
    trainer.accumulated = accumulated
    trainer.step = step
    stats = trainer.epoch(list(shard), epoch)
    return trainer.model.weights, trainer.accumulated, trainer.step, stats


class MixingTrainer:
    """Drop-in replacement of :class:`Trainer` for :func:`train_model`: epochs by parameter mixing.

    Parameters
    ----------
    model : OrderingModel
        Its ``weights`` hold the mixed weights after every epoch (updated in place).
    config : TrainConfig
    client : dask.distributed.Client
    shards : int
        Number of shards K (at most one per training sentence).
    mixing : {"uniform", "mistakes"}
        μ uniform (1/K), or proportional to each shard's updates in the epoch.
    """

    def __init__(self, model: OrderingModel, config: TrainConfig, client: Any, shards: int,
                 mixing: str = "uniform") -> None:
        if shards < 1:
            raise ValueError("the number of shards must be >= 1")
        if mixing not in MIXINGS:
            raise ValueError(f"mixing must be one of {MIXINGS}, not {mixing!r}")
        self.model = model
        self.config = config
        self.client = client
        self.shards = shards
        self.mixing = mixing
        self._data: tuple[int, list, Any] | None = None
        self._state: list[ShardState] = []
        self._averaged = model.weights.copy()

    @property
    def description(self) -> str:
        """The trainer's name in the model's metadata."""
        return f"iterative parameter mixing over {self.shards} shards ({self.mixing} mixing) on Dask"

    def averaged(self) -> np.ndarray:
        """The mixed averaged weights of the last epoch."""
        return self._averaged

    def epoch(self, examples: list[OrderingExample], epoch: int,
              progress: Callable[[int], None] | None = None) -> dict:
        """One epoch: every shard trains in parallel from the mixed weights, then the weights are mixed."""
        if self._data is None or self._data[0] != id(examples):
            k = min(self.shards, max(1, len(examples)))
            shards = [examples[s::k] for s in range(k)]
            template = replace(self.model, weights=np.zeros(0))
            # hash=False: fresh keys per run (see dualdecomp.models.bigram.distributed_training)
            self._data = (id(examples), shards, self.client.scatter([template, *shards], hash=False))
            self._state = [(self.model.weights.copy(), np.zeros_like(self.model.weights), 1)
                           for _ in range(k)]
        _, shards, data = self._data
        template, parts = data[0], data[1:]

        def submit(s: int, start: Any, total: Any, t: int) -> Any:
            return self.client.submit(shard_epoch, template, parts[s], start, total, t,
                                      replace(self.config, seed=self.config.seed + s), epoch, pure=False)

        mixed, self._averaged, stats = mixing_round(self.client, self._state, self.model.weights, submit,
                                                    lambda c: c["updates"], self.mixing, progress,
                                                    [len(shard) for shard in shards])
        self.model.weights[:] = mixed
        return {"epoch": epoch, "sentences": len(examples), "shards": len(stats),
                **{key: sum(c[key] for c in stats) for key in ("reached_gold", "updates", "expansions")}}
