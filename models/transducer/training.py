"""Training the T3 rule weights: large margin (margin rescaling) and the averaged perceptron.

Losses (Cohn & Lapata 2009, §3.6), chosen by ``TrainConfig.loss``; definitions, loss-augmented decoding
and exactness are documented in :mod:`dualdecomp.models.transducer.losses`:

* ``"token"`` (default) — token Hamming with length penalty (eq. 12), ``Δ(d) = FP + max(l − (TP + FP),
  0)``: exact in the length-stratified chart;
* ``"ngram"`` — the same over the bigrams and trigrams of the padded output: two dual-decomposition runs
  (T3 + a trigram path component), exact when certified, APPROXIMATE otherwise;
* ``"cfg"`` — the same over the CFG productions of the target tree: exact (rule-additive, folded into the
  hyperedge scores);
* ``"edit"`` — edit distance over bags of tokens with clipped counts (eq. 13): one dual-decomposition run
  (T3 + ``solvers.bag_count.BagCount``), exact when certified, APPROXIMATE otherwise;
* ``"f1"`` — F1 over bags of tokens (eq. 14): one exact-length dual-decomposition run per output length
  (pruned by a bound), exact when all are certified, APPROXIMATE otherwise.

``train`` counts the loss-augmented steps that were not
certified in an optional :class:`TrainStats`.

Large margin: the structured SVM objective of equation (10) with margin rescaling,
``λ/2 ||w||² + (1/N) Σ_i max_d [Δ(d_i, d) − w·(φ(d_i) − φ(d))]``, optimised by averaged stochastic
subgradient descent (Pegasos-style step ``1/(λ t)`` capped at 1) instead of SVMstruct's cutting planes;
the subgradient of each term comes from the loss-augmented argmax (exact or, when reported, approximate:
an approximate argmax gives an approximate subgradient). The perceptron uses the plain argmax. Gold
derivations: ``dualdecomp.models.transducer.gold`` (maximum number of rules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.trees import Tree
from dualdecomp.models.ssvm import SsvmConfig, Violation, train_ssvm
from dualdecomp.models.transducer.features import RuleFeaturiser
from dualdecomp.models.transducer.gold import gold_derivation
from dualdecomp.models.transducer.losses import LOSSES, Loss, make_loss
from dualdecomp.solvers.transducer import Grammar, Hypergraph, Transducer, build_hypergraph

__all__ = ["TransducerExample", "TrainConfig", "TrainStats", "derivation_features", "hyperedge_scores",
           "example_loss",  "make_example", "train"]


@dataclass(frozen=True)
class TransducerExample:
    """One training pair: the source hypergraph, its gold derivation and the loss data.

    Attributes
    ----------
    hypergraph : Hypergraph
    gold_hyperedges : tuple of int
    source_words : tuple of str
        The source tokens (every loss but the CFG one).
    target : Tree or None
        The reference target tree (leaves carry source positions); its words are the reference tokens
        and its productions the CFG loss's reference items.
    """

    hypergraph: Hypergraph
    gold_hyperedges: tuple[int, ...]
    source_words: tuple[str, ...] = ()
    target: Tree | None = None


def make_example(source: Tree, target: Tree, grammar: Grammar) -> TransducerExample | None:
    """Build a training example; None when the grammar cannot derive the target tree."""
    hg = build_hypergraph(source, grammar)
    gold = gold_derivation(hg, target)
    if gold is None:
        return None
    return TransducerExample(hg, tuple(gold), tuple(source.words()), target)


def example_loss(example: TransducerExample, kind: str) -> Loss:
    """The loss ``kind`` (see ``dualdecomp.models.transducer.losses.LOSSES``) of a training example.

    Raises
    ------
    InputError
        Unknown kind, or an example without its source words / reference tree (built by hand).
    """
    if kind not in LOSSES:
        raise InputError(f"unknown loss {kind!r} (known: {', '.join(LOSSES)})")
    if example.target is None or len(example.source_words) != example.hypergraph.n:
        raise InputError("the example carries no source words / reference tree (use make_example)")
    return make_loss(kind, example.source_words, example.target)


def hyperedge_scores(hg: Hypergraph, weights: np.ndarray, feats: RuleFeaturiser) -> np.ndarray:
    """w·φ of every hyperedge."""
    rule_score = np.array([float(weights[i] @ v) for i, v in (feats(r) for r in hg.rules)])
    drops = np.diff(hg.drop_ptr).astype(np.float64)
    return rule_score[hg.hyperedge_rule] + weights[feats.dropped_index] * drops


def derivation_features(hg: Hypergraph, hyperedges: Sequence[int], feats: RuleFeaturiser, size: int
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Sparse φ(d) as (indices, values) (indices may repeat)."""
    idx, val = [], []
    dropped = 0
    for e in hyperedges:
        i, v = feats(hg.rules[int(hg.hyperedge_rule[e])])
        idx.append(i)
        val.append(v)
        dropped += len(hg.dropped(e))
    idx.append(np.array([feats.dropped_index]))
    val.append(np.array([float(dropped)]))
    return np.concatenate(idx), np.concatenate(val)


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
    loss : {"token", "ngram", "cfg", "edit", "f1"}
        The SSVM loss (``dualdecomp.models.transducer.losses``); ignored by the perceptron.
    """

    method: str = "ssvm"
    epochs: int = 5
    lam: float = 1e-4
    hash_bits: int = 20
    seed: int = 0
    loss: str = "token"

    def __post_init__(self) -> None:
        if self.method not in ("ssvm", "perceptron"):
            raise InputError(f"method must be 'ssvm' or 'perceptron', got {self.method!r}")
        if self.loss not in LOSSES:
            raise InputError(f"unknown loss {self.loss!r} (known: {', '.join(LOSSES)})")


@dataclass
class TrainStats:
    """Counts of the loss-augmented argmaxes of an SSVM run (accumulated by ``train``).

    Attributes
    ----------
    augmented : int
        Number of loss-augmented argmaxes.
    uncertified : int
        How many were APPROXIMATE (not proved optimal).
    decodes : int
        Dual-decomposition engine runs they used.
    """

    augmented: int = 0
    uncertified: int = 0
    decodes: int = 0


def train(examples: Sequence[TransducerExample], config: TrainConfig,
          on_epoch: Callable[[int, np.ndarray], float] | None = None,
          progress: Callable[[int], None] | None = None, stats: TrainStats | None = None
          ) -> tuple[np.ndarray, list[float]]:
    """Train rule weights.

    Parameters
    ----------
    examples : sequence of TransducerExample
    config : TrainConfig
    on_epoch : callable, optional
        ``on_epoch(epoch, averaged_weights) -> dev score``; the best epoch's weights are returned.
    progress : callable, optional
        Called with 1 after each example.
    stats : TrainStats, optional
        Updated with the number of (uncertified) loss-augmented argmaxes and engine runs.

    Returns
    -------
    (weights, dev scores per epoch)
    """
    size = 1 << config.hash_bits
    feats = RuleFeaturiser(config.hash_bits)
    losses = [example_loss(ex, config.loss) for ex in examples] if config.method == "ssvm" else None
    nothing = (np.zeros(0, dtype=np.int64), np.zeros(0))

    def violation(i: int, w: np.ndarray) -> Violation:
        ex = examples[i]
        hg = ex.hypergraph
        sc = hyperedge_scores(hg, w, feats)
        transducer = Transducer.from_hypergraph(hg, sc)
        gold_score = float(sc[list(ex.gold_hyperedges)].sum())
        if losses is not None:
            aug = losses[i].augmented_argmax(transducer)
            d, exact = aug.derivation, aug.exact
            if stats is not None:
                stats.augmented += 1
                stats.uncertified += int(not exact)
                stats.decodes += aug.decodes
            violated = aug.value - gold_score > 1e-9
        else:
            d, exact = transducer.solve_tree(), True
            violated = d.score > gold_score + 1e-9 and set(d.hyperedges) != set(ex.gold_hyperedges)
        if not violated:  # the features are needed only for an update
            return Violation(False, nothing, nothing, exact)
        return Violation(True, derivation_features(hg, ex.gold_hyperedges, feats, size),
                         derivation_features(hg, d.hyperedges, feats, size), exact)

    # the perceptron: steps of size 1, no regularisation
    lam = config.lam if config.method == "ssvm" else 0.0
    return train_ssvm(size, len(examples), violation, SsvmConfig(config.epochs, lam, config.seed), on_epoch,
                      progress)
