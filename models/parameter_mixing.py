"""Iterative parameter mixing (McDonald, Hall & Mann 2010) on Dask: the model-independent round.

Every epoch, each shard of the examples runs one training pass on a Dask worker from the mixed weights of
the previous epoch; :func:`mixing_round` then mixes the shards' weights, w = Σ_s μ_s w_s, with μ uniform
(1/K) or proportional to each shard's mistakes in the epoch (``mixing="mistakes"``, the paper's weighted
mixing; uniform when no shard made a mistake). Averaging (Collins 2002) is kept per shard over every weight
vector the shard visited, mixed weights included, and the averaged weights are mixed with the same μ.
The bigram perceptron (:mod:`dualdecomp.models.bigram.distributed_training`) and the word-order trainer
(:mod:`dualdecomp.models.ordering.paper.parallel_training`) run their passes through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MIXINGS = ("uniform", "mistakes")


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
