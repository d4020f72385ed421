"""The in-domain keep classifier: a per-token decode term of the rewriting model.

The thirty-first rule of ``docs/rewriting.md`` ("Which added words are right in context"). For a source
of n tokens, an encoder (the embedded compression model's, ``data/default_model/neural``) gives every
token a last hidden state ``h_k``; the classifier's log-odds are

``z_k = w · [h_k / |h_k|, 1]``,

learnt by logistic regression on soft labels (:func:`fit_soft_logistic`): for each token of each
training source, the share ``r`` of the source's references (10 ASSET, 8 TurkCorpus) that contain it,
lower-cased (``dualdecomp.models.rewriting.loss.reference_shares``). The decode adds

``μ (z_k − mean_j z_j)``

for every source token k a hyperedge *copies* (writes as itself:
``dualdecomp.solvers.rewriting.copied_token_lists``), with μ the decode setting ``keep_weight``
(``dualdecomp.models.rewriting.decode_settings``). It is a sum over hyperedges, so the chart's search
stays exact and every certificate holds; centring on the sentence's mean makes the term say which tokens
to keep rather than how many.

Stored in a rewriting model directory as ``keep_classifier.npz`` (``weights``: float64 (hidden + 1,))
and ``model.json`` → ``meta.keep_classifier``: the weights' file, the encoder (:data:`EMBEDDED_ENCODER`
for the embedded compression model's, else its path), the sha256 of the encoder's ``MANIFEST.json`` (a
different encoder is refused when loading: its states would not be those the weights were learnt on) and
the training record.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import MANIFEST, atomic_write_bytes, file_sha256, read_npz
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.neural import NeuralScorer, load_neural_model
from dualdecomp.models.rewriting.loss import ReferenceShares
from dualdecomp.solvers.rewriting import RewriteHypergraph, copied_token_lists

__all__ = ["EMBEDDED_ENCODER", "KEEP_FILE", "KeepClassifier", "KeepTraining", "encoder_checksum",
           "encoder_reference", "fit_soft_logistic", "keep_features", "load_keep_classifier",
           "resolve_encoder", "save_keep_classifier", "train_keep_classifier", "unit_rows"]

KEEP_FILE = "keep_classifier.npz"
EMBEDDED_ENCODER = "embedded:default_model/neural"
"""How ``meta.keep_classifier.encoder`` names the embedded compression model's encoder (wherever the
package is installed)."""
STEPS, RATE, L2 = 400, 0.01, 1e-4
"""The learner's full-batch Adam steps, step size and L2 weight (the thirty-first rule's)."""
DECIMALS = 10
"""The learnt weights are rounded to this many decimals: the learner's matrix products go through BLAS,
whose kernels differ by CPU in the last bit (about 2e-16 here), and rounding makes ``make rewrite-model``
give the same bytes on every machine (the decode moves by less than 1e-6 of a score)."""


def unit_rows(x: np.ndarray) -> np.ndarray:
    """``x`` (float64) with every row (last axis) scaled to unit length (a zero row stays zero)."""
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def keep_features(states: np.ndarray) -> np.ndarray:
    """The classifier's features of a sentence's token states: each state at unit length, then 1.

    Parameters
    ----------
    states : numpy.ndarray
        (n, hidden) encoder states.

    Returns
    -------
    numpy.ndarray
        float64 (n, hidden + 1).
    """
    unit = unit_rows(states)
    return np.hstack([unit, np.ones((len(unit), 1))])


def fit_soft_logistic(x: np.ndarray, y: np.ndarray, steps: int = STEPS, rate: float = RATE,
                      l2: float = L2) -> np.ndarray:
    """Logistic regression on soft labels, by full-batch Adam from zero.

    Minimises the mean cross-entropy ``−y log p − (1 − y) log(1 − p)`` with ``p = σ(x · w)`` plus
    ``l2 × |w|²`` over every column but the last (the constant, unpenalised). Deterministic: the same
    inputs give the same bytes.

    Parameters
    ----------
    x : numpy.ndarray
        float64 (examples, features); the last column is the constant.
    y : numpy.ndarray
        Labels in [0, 1] (examples,).
    steps : int
        Adam steps (β1 0.9, β2 0.999, ε 1e-8).
    rate : float
        Adam's step size.
    l2 : float
        Weight of the L2 penalty.

    Returns
    -------
    numpy.ndarray
        float64 (features,).
    """
    w = np.zeros(x.shape[1])
    m, v = np.zeros_like(w), np.zeros_like(w)
    penalised = np.ones_like(w)
    penalised[-1] = 0.0
    for t in range(1, steps + 1):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        g = x.T @ (p - y) / len(y) + 2 * l2 * penalised * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= rate * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


@dataclass(frozen=True)
class KeepTraining:
    """What :func:`train_keep_classifier` learnt: the weights and its record.

    Attributes
    ----------
    weights : numpy.ndarray
        float64 (hidden + 1,).
    record : dict
        Sources, tokens, mean label, the learner's settings, the final mean cross-entropy.
    """

    weights: np.ndarray
    record: dict[str, Any]


def train_keep_classifier(tokens: Sequence[Sequence[str]], shares: Sequence[ReferenceShares],
                          encoder: NeuralScorer) -> KeepTraining:
    """Learn the keep classifier (module docstring) on training sources and their references.

    Parameters
    ----------
    tokens : sequence of sequences of str
        Each training source's tokens.
    shares : sequence of ReferenceShares
        Each source's ``r(w)`` over its references (``reference_shares``).
    encoder : NeuralScorer
        Whose ``hidden_states`` give the token states.

    Returns
    -------
    KeepTraining
    """
    xs, ys = [], []
    for words, r in zip(tokens, shares, strict=True):
        xs.append(keep_features(encoder.hidden_states(list(words))))
        ys.append(np.array([r.shares.get(t.lower(), 0.0) for t in words]))
    x, y = np.concatenate(xs), np.concatenate(ys)
    w = np.round(fit_soft_logistic(x, y), DECIMALS)
    p = np.clip(1.0 / (1.0 + np.exp(-(x @ w))), 1e-12, 1 - 1e-12)
    loss = float(np.mean(-y * np.log(p) - (1 - y) * np.log(1 - p)))
    record = {"sources": len(ys), "tokens": int(len(y)), "mean_label": round(float(y.mean()), 6),
              "label": "share of the source's references that contain the token (lower-cased)",
              "steps": STEPS, "rate": RATE, "l2": L2, "decimals": DECIMALS, "cross_entropy": round(loss, 6)}
    return KeepTraining(w, record)


def encoder_reference(encoder_dir: str | os.PathLike[str]) -> str:
    """How ``meta.keep_classifier.encoder`` names an encoder directory: :data:`EMBEDDED_ENCODER` for the
    embedded compression model's, else its absolute path."""
    path = Path(encoder_dir).resolve()
    return EMBEDDED_ENCODER if path == (default_model_dir() / "neural").resolve() else str(path)


def resolve_encoder(reference: str) -> Path:
    """The encoder directory named by :func:`encoder_reference`."""
    return default_model_dir() / "neural" if reference == EMBEDDED_ENCODER else Path(reference)


def encoder_checksum(encoder_dir: Path) -> str:
    """The sha256 of an encoder directory's ``MANIFEST.json`` (which lists every file's sha256).

    Raises
    ------
    ModelError
        The directory is missing or has no manifest.
    """
    if not encoder_dir.is_dir():
        raise ModelError(f"{encoder_dir}: the keep classifier's encoder directory is missing")
    manifest = encoder_dir / MANIFEST
    if not manifest.is_file():
        raise ModelError(f"{encoder_dir}: the keep classifier's encoder directory has no {MANIFEST}")
    return file_sha256(manifest)


@dataclass(frozen=True)
class KeepClassifier:
    """The keep classifier with its encoder: per-hyperedge decode terms of a sentence.

    Attributes
    ----------
    weights : numpy.ndarray
        float64 (hidden + 1,).
    encoder : NeuralScorer
    """

    weights: np.ndarray
    encoder: NeuralScorer

    def log_odds(self, tokens: Sequence[str]) -> np.ndarray:
        """The centred log-odds ``z_k − mean_j z_j`` of a sentence's tokens, float64 (n,)."""
        z = keep_features(self.encoder.hidden_states(list(tokens))) @ self.weights
        return z - z.mean()

    def hyperedge_terms(self, hg: RewriteHypergraph) -> np.ndarray:
        """Per hyperedge of ``hg``: the sum of :meth:`log_odds` over the source tokens it copies
        (multiply by ``keep_weight`` for the decode term)."""
        z = self.log_odds(hg.words)
        ptr, idx = copied_token_lists(hg)
        owner = np.repeat(np.arange(hg.num_hyperedges), np.diff(ptr))
        return np.bincount(owner, weights=z[idx], minlength=hg.num_hyperedges)


def load_keep_classifier(directory: Path, block: Any, where: str) -> KeepClassifier:
    """The keep classifier of a model directory (``meta.keep_classifier``: ``block``).

    Raises
    ------
    ModelError
        A malformed block, a missing or damaged weights file or encoder, an encoder other than the one
        the weights were learnt on (checksum), weights of the wrong size.
    """
    if not isinstance(block, dict) or not all(isinstance(block.get(k), str)
                                              for k in ("weights", "encoder", "encoder_sha256")):
        raise ModelError(f"{where}: meta.keep_classifier must name its weights, encoder and "
                         f"encoder_sha256, got {block!r}")
    encoder_dir = resolve_encoder(block["encoder"])
    found = encoder_checksum(encoder_dir)
    if found != block["encoder_sha256"]:
        raise ModelError(f"{where}: the keep classifier was learnt on the encoder {block['encoder']} with "
                         f"{MANIFEST} sha256 {block['encoder_sha256']}; {encoder_dir} has {found} (rebuild "
                         "the rewriting model, e.g. make rewrite-model)")
    arrays = read_npz(directory / Path(block["weights"]).name)
    weights = arrays.get("weights")
    encoder = load_neural_model(encoder_dir)
    size = encoder.head_weight.shape[0] + 1
    if weights is None or weights.shape != (size,) or not all(math.isfinite(v) for v in weights.tolist()):
        raise ModelError(f"{directory / block['weights']}: 'weights' must be {size} finite numbers")
    return KeepClassifier(np.asarray(weights, dtype=np.float64), encoder)


def save_keep_classifier(directory: Path, training: KeepTraining, encoder_dir: str | os.PathLike[str]
                         ) -> dict[str, Any]:
    """Write :data:`KEEP_FILE` into ``directory``; return the ``meta.keep_classifier`` block."""
    atomic_write_bytes(directory / KEEP_FILE, lambda fh: np.savez_compressed(fh, weights=training.weights))
    return {"weights": KEEP_FILE, "encoder": encoder_reference(encoder_dir),
            "encoder_sha256": encoder_checksum(Path(encoder_dir)), "training": training.record}
