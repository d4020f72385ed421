"""Training batches of the neural scorer: sentences of similar lengths together, padded.

numpy only, so that ``benchmarks/neural_encoder_probe.py`` can load this file by its path on a machine
where the project is not installed (a lent GPU).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["length_batches", "padded_batch", "split_by_pieces"]


def length_batches(lengths: Sequence[int], batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of similar lengths, in random order.

    The sentences are shuffled, cut into pools of 50 batches, sorted by length within each pool (stably)
    and cut into batches; then the batches are shuffled.

    Parameters
    ----------
    lengths : sequence of int
        Each sentence's number of pieces.
    batch_size : int
    rng : numpy.random.Generator
        Advanced by one permutation and one shuffle.

    Returns
    -------
    list of numpy.ndarray
        Sentence indices, each index in exactly one batch.
    """
    order = rng.permutation(len(lengths))
    pool = batch_size * 50
    batches = []
    for s in range(0, len(order), pool):
        chunk = sorted(order[s:s + pool], key=lambda i: lengths[i])
        batches.extend(np.asarray(chunk[b:b + batch_size]) for b in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def padded_batch(ids: Sequence[np.ndarray], first: Sequence[np.ndarray], target: Sequence[np.ndarray],
                 batch: np.ndarray, pad: int = 0) -> tuple[np.ndarray, ...]:
    """The arrays of one batch, padded to its longest sentence.

    Parameters
    ----------
    ids, first, target : sequences of numpy.ndarray
        Per sentence: its piece ids, the position of each word's first piece, each word's keep target.
    batch : numpy.ndarray
        The sentences' indices.
    pad : int
        The padding piece id (0 for BERT; MPNet's is 1).

    Returns
    -------
    tuple of numpy.ndarray
        ids int64 (B, T), attention mask int64 (B, T), first int64 (B, m), target float32 (B, m) and
        word mask float32 (B, m).
    """
    width = max(len(ids[i]) for i in batch)
    words = max(len(first[i]) for i in batch)
    out_ids = np.full((len(batch), width), pad, dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    out_first = np.zeros((len(batch), words), dtype=np.int64)
    out_target = np.zeros((len(batch), words), dtype=np.float32)
    wmask = np.zeros((len(batch), words), dtype=np.float32)
    for r, i in enumerate(batch):
        t, m = len(ids[i]), len(first[i])
        out_ids[r, :t], mask[r, :t] = ids[i], 1
        out_first[r, :m], out_target[r, :m], wmask[r, :m] = first[i], target[i], 1.0
    return out_ids, mask, out_first, out_target, wmask


def split_by_pieces(batch: np.ndarray, lengths: Sequence[int], budget: int) -> list[np.ndarray]:
    """A batch cut into micro-batches whose padded size (rows x longest) stays within ``budget`` pieces.

    The sentences are taken shortest first; a sentence longer than the budget gets a micro-batch of
    its own. With ``budget`` <= 0 the batch is returned whole. Accumulating the micro-batches'
    gradients, each loss divided by the whole batch's number of words, gives the batch's step
    (up to summation order and dropout masks) at a fraction of its peak memory.

    Parameters
    ----------
    batch : numpy.ndarray
        Sentence indices.
    lengths : sequence of int
        Each sentence's number of pieces.
    budget : int

    Returns
    -------
    list of numpy.ndarray
        Covering the batch, each index once.
    """
    if budget <= 0:
        return [batch]
    order = sorted(batch.tolist(), key=lambda i: lengths[i])
    out: list[list[int]] = [[]]
    for i in order:
        if out[-1] and (len(out[-1]) + 1) * lengths[i] > budget:
            out.append([])
        out[-1].append(i)
    return [np.asarray(m, dtype=batch.dtype) for m in out]
