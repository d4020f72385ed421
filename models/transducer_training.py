"""Training the T3 rule weights: large margin (margin rescaling) and the averaged perceptron.

Loss (Cohn & Lapata 2009, equation 12, token Hamming with length penalty):
``Δ(d) = FP + max(l − (TP + FP), 0)`` where a predicted token is a true positive iff its word occurs in
the reference (bags of tokens, as in the paper) and l is the reference length. FP decomposes over the
kept tokens, so it enters the chart as per-token terms ``u_k = [word_k ∉ reference]``; the length
penalty depends only on the number of kept tokens, so it is added exactly at the root of the
length-stratified chart (``Transducer.solve_lengths``). Loss-augmented decoding is therefore **exact**.

Large margin: the structured SVM objective of equation (10) with margin rescaling,
``λ/2 ||w||² + (1/N) Σ_i max_d [Δ(d_i, d) − w·(φ(d_i) − φ(d))]``, optimised by averaged stochastic
subgradient descent (Pegasos-style step ``1/(λ t)`` capped at 1) instead of SVMstruct's cutting planes;
the subgradient of each term comes from the exact loss-augmented argmax. The perceptron uses the plain
argmax. Gold derivations: ``models.transducer_gold`` (maximum number of rules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from data.trees import Tree
from models.grammar import Grammar
from models.transducer_features import RuleFeaturizer
from models.transducer_gold import gold_derivation
from solvers.transducer import Derivation, Hypergraph, Transducer, build_hypergraph

__all__ = ["T3Example", "derivation_features", "edge_scores", "loss_augmented", "make_example",
           "token_hamming", "train"]


@dataclass(frozen=True)
class T3Example:
    """One training pair: the source hypergraph, its gold derivation and the loss data."""

    hypergraph: Hypergraph
    gold_edges: tuple[int, ...]
    false_positive: np.ndarray  # float (n,): 1 where the source word is not in the reference
    ref_length: int


def make_example(source: Tree, target: Tree, grammar: Grammar) -> T3Example | None:
    """Build a training example; None when the grammar cannot derive the target tree."""
    hg = build_hypergraph(source, grammar)
    gold = gold_derivation(hg, target)
    if gold is None:
        return None
    ref_words = set(target.words())
    fp = np.array([0.0 if w in ref_words else 1.0 for w in source.words()])
    return T3Example(hg, tuple(gold), fp, len(target.leaves()))


def token_hamming(keep: np.ndarray, false_positive: np.ndarray, ref_length: int) -> float:
    """Equation (12) over tokens: FP + max(l − |keep|, 0)."""
    return float(false_positive @ keep + max(ref_length - int(keep.sum()), 0))


def edge_scores(hg: Hypergraph, weights: np.ndarray, feats: RuleFeaturizer) -> np.ndarray:
    """w·φ of every hyperedge."""
    rule_score = np.array([float(weights[i] @ v) for i, v in (feats(r) for r in hg.rules)])
    drops = np.diff(hg.drop_ptr).astype(np.float64)
    return rule_score[hg.edge_rule] + weights[feats.dropped_index] * drops


def derivation_features(hg: Hypergraph, edges: Sequence[int], feats: RuleFeaturizer, size: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Sparse φ(d) as (indices, values) (indices may repeat)."""
    idx, val = [], []
    dropped = 0
    for e in edges:
        i, v = feats(hg.rules[int(hg.edge_rule[e])])
        idx.append(i)
        val.append(v)
        dropped += len(hg.dropped(e))
    idx.append(np.array([feats.dropped_index]))
    val.append(np.array([float(dropped)]))
    return np.concatenate(idx), np.concatenate(val)


def loss_augmented(t3: Transducer, false_positive: np.ndarray, ref_length: int, scale: float = 1.0
                   ) -> tuple[Derivation, float]:
    """Exact argmax of score(d) + scale·Δ(d) (see module docstring).

    Returns
    -------
    (Derivation, float)
        The derivation (its ``score`` includes the FP terms, not the length penalty) and
        score + scale·Δ.
    """
    u = scale * np.asarray(false_positive, dtype=np.float64)
    table = t3.solve_lengths(u)
    lengths = np.arange(t3.n + 1)
    aug = table + scale * np.maximum(ref_length - lengths, 0)
    m = int(np.argmax(aug))
    d = t3.solve_tree(u, length=m)
    return d, float(aug[m])


@dataclass(frozen=True)
class TrainConfig:
    """Training settings.

    Attributes
    ----------
    method : {"ssvm", "perceptron"}
    epochs : int
    lam : float
        L2 regularisation λ of the SSVM (ignored by the perceptron).
    hash_bits : int
    seed : int
    """

    method: str = "ssvm"
    epochs: int = 5
    lam: float = 1e-4
    hash_bits: int = 20
    seed: int = 0


def train(examples: Sequence[T3Example], config: TrainConfig,
          on_epoch: Callable[[int, np.ndarray], float] | None = None,
          progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, list[float]]:
    """Train rule weights.

    Parameters
    ----------
    examples : sequence of T3Example
    config : TrainConfig
    on_epoch : callable, optional
        ``on_epoch(epoch, averaged_weights) -> dev score``; the best epoch's weights are returned.
    progress : callable, optional
        Called with 1 after each example.

    Returns
    -------
    (weights, dev scores per epoch)
    """
    size = 1 << config.hash_bits
    feats = RuleFeaturizer(config.hash_bits)
    w = np.zeros(size)
    total = np.zeros(size)
    steps = 0
    rng = np.random.default_rng(config.seed)
    best_w, best_score, scores = None, -np.inf, []
    for epoch in range(config.epochs):
        for i in rng.permutation(len(examples)):
            ex = examples[int(i)]
            hg = ex.hypergraph
            sc = edge_scores(hg, w, feats)
            t3 = Transducer.from_hypergraph(hg, sc)
            gold_score = float(sc[list(ex.gold_edges)].sum())
            steps += 1
            if config.method == "ssvm":
                d, value = loss_augmented(t3, ex.false_positive, ex.ref_length)
                eta = min(1.0, 1.0 / (config.lam * steps)) if config.lam > 0 else 1.0
                if config.lam > 0:
                    w *= 1.0 - eta * config.lam
                violated = value - gold_score > 1e-9
            else:
                d = t3.solve_tree()
                eta = 1.0
                violated = d.score > gold_score + 1e-9 and set(d.edges) != set(ex.gold_edges)
            if violated:
                gi, gv = derivation_features(hg, ex.gold_edges, feats, size)
                pi, pv = derivation_features(hg, d.edges, feats, size)
                np.add.at(w, gi, eta * gv)
                np.add.at(w, pi, -eta * pv)
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
    assert best_w is not None
    return best_w, scores
