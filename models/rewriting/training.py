"""Training the rewriting model: large-margin (structured SVM, margin rescaling) over the exact chart.

For each training source the chart of its parse under the grammar (plus coverage rules) is built once
with the per-hyperedge loss of :mod:`dualdecomp.models.rewriting.loss` (the words a hyperedge writes and
the source tokens it deletes, priced by the share of the source's references that have them). The
*oracle* derivation — the reference the model is trained towards — is the chart's loss-minimal
derivation (exact: the loss is additive), since the references themselves are seldom derivable word for
word. Each SSVM step decodes the loss-augmented objective ``w·φ(y) + λ_lm·LM(y) + Δ(y)`` exactly (the
LM weight is one of the weights, the paper's n-gram feature) and moves towards the oracle's features
(``dualdecomp.models.ssvm``). ``max_states`` bounds the tables of the loss-augmented decodes; a decode
that pruned is counted as uncertified (an approximate subgradient) in the run's statistics.

``hope_epochs`` more epochs replace the fixed oracle by the *hope* derivation of each step (Chiang 2012;
the ramp loss of Gimpel & Smith 2012): ``argmax w·φ(y) + λ_lm·LM(y) − Δ(y)`` under the current weights,
decoded exactly in the same chart. The update moves from the loss-augmented argmax (the *fear*
derivation) towards it. Where the loss-minimal oracle lies far from what the features can score highly,
the hope derivation is a good rewrite the model can reach; the objective is no longer convex. The hope
epochs continue from the weights of the oracle epochs (as Chiang's start from tuned weights): from zero
weights the first fear derivation deletes and writes whatever the references do not, the step towards
the hope favours every copy alike, and a model that then prefers a wrong copy by more than its loss has
that copy as its hope and fear at once and never moves again (``tests/test_rewriting_model.py``). On
the corpus the hope epochs seldom update at all (32 of 2,400 steps, docs/rewriting.md, the twenty-fourth
rule): at the scale the weights reach, the loss hardly moves either argmax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.data.trees import Tree
from dualdecomp.models.lm import LanguageModel
from dualdecomp.models.rewriting.application import HEAD_COLUMNS, application_values
from dualdecomp.models.rewriting.features import RewriteFeaturiser
from dualdecomp.models.rewriting.lm_matrix import bigram_matrix, scaled_lm
from dualdecomp.models.rewriting.loss import ReferenceShares
from dualdecomp.models.rewriting.model import hyperedge_scores, lm_index, rules_for
from dualdecomp.models.ssvm import SsvmConfig, SsvmStats, Violation, sparse_sum, train_ssvm
from dualdecomp.solvers.rewriting import (
    RewriteGrammar,
    RewriteHypergraph,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    lm_score,
    rewriting_coverage_rules,
)

ORACLE_LOSS_SCALE = 1e5
"""The oracle maximises ``−ORACLE_LOSS_SCALE · Δ + LM − ORACLE_REORDER_PRICE · reorderings``: the loss
first (a loss step is at least β/18 of a word; × 10⁵ outweighs any LM difference of a sentence), then,
among the loss-minimal derivations (the loss sees bags of words, not their order), the most fluent one
with the fewest reorderings — not the first the chart happens to reach."""
ORACLE_REORDER_PRICE = 0.5

__all__ = ["ORACLE_LOSS_SCALE", "ORACLE_REORDER_PRICE", "RewriteExample", "hope_derivation",
           "hyperedge_losses", "make_example", "train_rewriter"]


@dataclass(frozen=True)
class RewriteExample:
    """One training source: its chart, the loss of each hyperedge and the oracle derivation.

    Attributes
    ----------
    hypergraph : RewriteHypergraph
    losses : numpy.ndarray
        Δ contribution of each hyperedge.
    lm : numpy.ndarray or None
        The unweighted bigram matrix of the chart's vocabulary (None: no LM).
    oracle : tuple of int
        The loss-minimal derivation's hyperedges.
    oracle_loss : float
    oracle_lm : float
        The oracle's unweighted LM score.
    application : numpy.ndarray
        The per-application features of every hyperedge
        (:func:`~dualdecomp.models.rewriting.application.application_values`).
    bigram_loss : numpy.ndarray or None
        α × :meth:`~dualdecomp.models.rewriting.loss.ReferenceShares.bigram_costs` of the chart's
        vocabulary: the loss's bigram term, a matrix the chart adds like the LM (None: no bigram term).
    """

    hypergraph: RewriteHypergraph
    losses: np.ndarray
    lm: np.ndarray | None
    oracle: tuple[int, ...]
    oracle_loss: float
    oracle_lm: float
    application: np.ndarray
    bigram_loss: np.ndarray | None = None


def hyperedge_losses(hg: RewriteHypergraph, shares: ReferenceShares, delete_weight: float = 1.0,
                     add_weight: float = 0.0) -> np.ndarray:
    """Δ of each hyperedge: ``1 − r(w)`` per word it writes (less ``λ·r(w)`` for a word not in the
    source, λ = ``add_weight``) plus ``β·r(x_k)`` per source token it deletes (``β = delete_weight``; 1 is
    the loss of :mod:`dualdecomp.models.rewriting.loss`, a smaller β makes deleting a word that some
    references keep cheaper, as SARI's precision-only deletion score does)."""
    write = shares.write_costs(hg.vocab, hg.words, add_weight)
    delete = delete_weight * shares.delete_costs(hg.words)
    out = np.zeros(hg.num_hyperedges)
    for e in range(hg.num_hyperedges):
        codes = hg.item_code[hg.item_ptr[e]:hg.item_ptr[e + 1]]
        drops = hg.drop_idx[hg.drop_ptr[e]:hg.drop_ptr[e + 1]]
        out[e] = write[codes[codes >= 0]].sum() + delete[drops].sum()
    return out


def make_example(tree: Tree, grammar: RewriteGrammar, shares: ReferenceShares,
                 lm: LanguageModel | None, delete_weight: float = 1.0, head_price: float = 0.0,
                 bigram_weight: float = 0.0, add_weight: float = 0.0, bigram_add_weight: float = 0.0,
                 rules: Sequence[RewriteRule] | None = None) -> RewriteExample:
    """The training example of one source tree (module docstring; ``delete_weight``: β of
    :func:`hyperedge_losses`; ``head_price``: what the oracle's search adds to the loss for each phrase
    whose head it deletes while keeping some of its words, the ``dropped_head`` features of
    :mod:`~dualdecomp.models.rewriting.application`; 0 in the shipped recipe. The example's
    ``oracle_loss`` and the loss-augmented decodes use the loss alone; ``bigram_weight``: α of the loss's
    bigram term, :mod:`~dualdecomp.models.rewriting.loss`, 0 for none; ``add_weight``: λ of the loss's add
    reward and ``bigram_add_weight`` μ of its bigram term's, 0 for none; ``rules``: the grammar's rules the
    chart may use, None for all that match ``tree``: leave-one-out training passes fewer)."""
    rules = rules_for(grammar, tree) if rules is None else rules
    hg = build_rewrite_hypergraph(tree, rules, coverage=rewriting_coverage_rules)
    losses = hyperedge_losses(hg, shares, delete_weight, add_weight)
    application = application_values(hg)
    matrix = bigram_matrix(lm, hg.vocab) if lm is not None else None
    priced = losses + head_price * application[:, list(HEAD_COLUMNS)].sum(axis=1)
    bigrams = (bigram_weight * shares.bigram_costs(hg.vocab, hg.words, delete_weight, bigram_add_weight)
               if bigram_weight else None)
    oracle_matrix = added(matrix, None if bigrams is None else -ORACLE_LOSS_SCALE * bigrams)
    oracle = decode(hg, -ORACLE_LOSS_SCALE * priced - ORACLE_REORDER_PRICE * hg.operations[:, 3],
                    oracle_matrix)
    return RewriteExample(hg, losses, matrix, oracle.hyperedges,
                          derivation_loss(hg, losses, bigrams, oracle.hyperedges, oracle.words),
                          lm_score(hg, matrix, oracle.words), application, bigrams)


def derivation_loss(hg: RewriteHypergraph, losses: np.ndarray, bigram_loss: np.ndarray | None,
                    hyperedges: Sequence[int], words: Sequence[str]) -> float:
    """Δ of a derivation: its hyperedges' ``losses`` plus the loss's bigram term over its yield ``words``
    (``bigram_loss`` None: no bigram term)."""
    return float(losses[list(hyperedges)].sum()) + lm_score(hg, bigram_loss, words)


def added(matrix: np.ndarray | None, other: np.ndarray | None) -> np.ndarray | None:
    """The sum of two bigram matrices, either of which may be None (none); a forbidden (−inf) entry of
    ``matrix`` stays forbidden (``other`` is finite)."""
    if matrix is None or other is None:
        return other if matrix is None else matrix
    return matrix + other


def derivation_features(ex: RewriteExample, hyperedges: Sequence[int], lm_value: float,
                        feats: RewriteFeaturiser, lm_idx: int) -> tuple[np.ndarray, np.ndarray]:
    """φ of a derivation: its rules' features, its per-application features and its LM score."""
    hg = ex.hypergraph
    parts = [feats(hg.rules[int(hg.hyperedge_rule[e])]) for e in hyperedges]
    applied = ex.application[list(hyperedges)][:, feats.application_columns].sum(axis=0)
    parts.append((np.append(feats.application_index, lm_idx), np.append(applied, lm_value)))
    return sparse_sum(parts)


def hope_derivation(ex: RewriteExample, scores: np.ndarray, lm_weight: float, max_states: int | None = None
                    ) -> tuple[tuple[int, ...], float, float, bool]:
    """The hope derivation of one example (module docstring): ``argmax w·φ(y) + λ_lm·LM(y) − Δ(y)``.

    Parameters
    ----------
    ex : RewriteExample
    scores : numpy.ndarray
        ``w·φ`` of every hyperedge under the current weights.
    lm_weight : float
        λ_lm, the learnt weight of the LM.
    max_states : int, optional
        Beam per table (None: exact).

    Returns
    -------
    (hyperedges, unweighted LM score, loss Δ, certified)
    """
    hg = ex.hypergraph
    negated = None if ex.bigram_loss is None else -ex.bigram_loss
    hope = decode(hg, scores - ex.losses, added(scaled_lm(ex.lm, lm_weight), negated), None, max_states)
    loss = derivation_loss(hg, ex.losses, ex.bigram_loss, hope.hyperedges, hope.words)
    return hope.hyperedges, lm_score(hg, ex.lm, hope.words), loss, hope.certified


def train_rewriter(examples: Sequence[RewriteExample], feats: RewriteFeaturiser, config: SsvmConfig,
                   max_states: int | None = None, on_epoch: Callable[[int, np.ndarray], float] | None = None,
                   progress: Callable[[int], None] | None = None, stats: SsvmStats | None = None,
                   hope_epochs: int = 0) -> tuple[np.ndarray, list[float]]:
    """Train the weights by SSVM (module docstring); returns (weights, dev score per epoch).

    Parameters
    ----------
    examples : sequence of RewriteExample
    feats : RewriteFeaturiser
    config : SsvmConfig
        ``config.epochs`` epochs towards the oracle.
    max_states : int, optional
        Beam per table of every decode (None: exact).
    on_epoch, progress, stats
        As :func:`~dualdecomp.models.ssvm.train_ssvm`.
    hope_epochs : int
        Epochs towards the hope derivations after those (module docstring); ``on_epoch`` numbers all
        epochs in one sequence.

    Returns
    -------
    (weights, dev score per epoch)

    Raises
    ------
    ValueError
        ``hope_epochs`` is negative.
    """
    if hope_epochs < 0:
        raise ValueError(f"hope_epochs must be >= 0, not {hope_epochs}")
    lm_idx = lm_index(feats.hash_bits)
    oracle_steps = config.epochs * len(examples)
    steps = [0]

    def violation(i: int, w: np.ndarray) -> Violation:
        ex = examples[i]
        hg = ex.hypergraph
        scores = hyperedge_scores(hg, w, feats, ex.application)
        weight = float(w[lm_idx])
        lm = scaled_lm(ex.lm, weight)
        aug = decode(hg, scores + ex.losses, added(lm, ex.bigram_loss), None, max_states)
        steps[0] += 1
        if steps[0] > oracle_steps:
            target, target_lm, target_loss, exact = hope_derivation(ex, scores, weight, max_states)
        else:
            target, target_lm, target_loss, exact = ex.oracle, ex.oracle_lm, ex.oracle_loss, True
        target_score = float(scores[list(target)].sum()) + weight * target_lm
        violated = aug.score - target_loss > target_score + 1e-9
        pred_lm = lm_score(hg, ex.lm, aug.words)
        return Violation(violated, derivation_features(ex, target, target_lm, feats, lm_idx),
                         derivation_features(ex, aug.hyperedges, pred_lm, feats, lm_idx),
                         aug.certified and exact)

    every = dataclasses.replace(config, epochs=config.epochs + hope_epochs)
    return train_ssvm(1 << feats.hash_bits, len(examples), violation, every, on_epoch, progress, stats)
