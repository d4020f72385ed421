"""The trainer's inner loops, compiled (numba), with the floats of their numpy definitions bit for bit.

Guided learning (:mod:`~dualdecomp.models.ordering.paper.training`) rescores every chart edge after each
update and merges the two feature vectors of each update into one sparse step. In numpy these are many
small calls (one fancy-index sum per chart edge, a sort and a ``bincount`` per update) whose call
overhead dominates. Here each is one call that gives exactly the numpy floats:

* :func:`gathered_sums` — ``weights[indices].sum()`` for several index lists at once, each summed in
  numpy's pairwise order (:func:`~dualdecomp.models.ordering.paper.feature_kernel.pairwise_sum`);
* :func:`merged_step` — ``numpy.unique`` of the indices and ``numpy.bincount`` of their values, each
  index's values added from 0.0 in their input order, as ``bincount`` adds them.

So a model trains to the same weights, byte for byte, with either: :func:`gathered_sums_numpy` and
:func:`merged_step_numpy` are the numpy definitions (``training.ReferenceTrainer`` trains with them);
tests compare both on random input and whole training runs, and ``benchmarks/word_order_features.py``
times the two trainers in one run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dualdecomp.models.ordering.paper.feature_kernel import pairwise_sum


@njit(cache=True)
def gathered_sums(weights, indices, offsets):  # pragma: no cover - compiled
    """``out[j] = weights[indices[offsets[j]:offsets[j + 1]]].sum()`` (numpy's float, bit for bit).

    Parameters
    ----------
    weights : numpy.ndarray of float64
    indices : numpy.ndarray of int64
        The index lists, concatenated.
    offsets : numpy.ndarray of int64
        Their boundaries: ``len(offsets) - 1`` lists, ``offsets[0] == 0``.

    Returns
    -------
    numpy.ndarray of float64
    """
    count = offsets.size - 1
    out = np.empty(count)
    longest = 0
    for j in range(count):
        longest = max(longest, offsets[j + 1] - offsets[j])
    values = np.empty(longest)
    for j in range(count):
        start, n = offsets[j], offsets[j + 1] - offsets[j]
        for i in range(n):
            values[i] = weights[indices[start + i]]
        out[j] = pairwise_sum(values, 0, n)
    return out


@njit(cache=True)
def merged_step(indices, values):  # pragma: no cover - compiled
    """The distinct indices (sorted) and the sum of each one's values, added in input order from 0.0.

    Equal to ``uniq, inverse = numpy.unique(indices, return_inverse=True)`` and
    ``numpy.bincount(inverse, weights=values)`` bit for bit: a stable sort keeps each index's values
    in their input order, the order in which ``bincount`` adds them.

    Parameters
    ----------
    indices : numpy.ndarray of int64
    values : numpy.ndarray of float64
        One value per index.

    Returns
    -------
    (numpy.ndarray of int64, numpy.ndarray of float64)
    """
    order = np.argsort(indices, kind="mergesort")
    uniq = np.empty(indices.size, dtype=np.int64)
    sums = np.empty(indices.size)
    count = 0
    for k in range(order.size):
        i = order[k]
        if count == 0 or indices[i] != uniq[count - 1]:
            uniq[count] = indices[i]
            sums[count] = 0.0
            count += 1
        sums[count - 1] += values[i]
    return uniq[:count], sums[:count]


def gathered_sums_numpy(weights: np.ndarray, indices: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The numpy definition of :func:`gathered_sums` (one fancy-index sum per list)."""
    return np.array([weights[indices[a:b]].sum() for a, b in zip(offsets[:-1], offsets[1:], strict=True)])


def merged_step_numpy(indices: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The numpy definition of :func:`merged_step` (``numpy.unique`` and ``numpy.bincount``)."""
    uniq, inverse = np.unique(indices, return_inverse=True)
    return uniq, np.bincount(inverse, weights=values, minlength=uniq.size)
