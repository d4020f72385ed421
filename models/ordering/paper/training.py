"""Guided learning of the scaled linear model (Algorithm 3 of the paper, dependency version).

For each training sentence the decoder runs on the bag of words (no POS, no dependencies: the paper
trains without constraints, §5.5). When the popped edge is not gold, it is the negative example and the
lowest-scored gold edge on the agenda the positive one; the weights move so that the scaled scores are
separated by a margin of 1 (closed-form update, the ``"scaled-mira"`` learner), or by the perceptron
step on the scaled feature vectors (the ``"perceptron"`` baseline). The negative edge is still expanded
(expansion of negative examples). When a gold edge drops out of the full chart, the highest-scored
non-gold chart edge is the negative example, it leaves the chart and the gold edge comes back. Weights
are averaged over training steps (one step per sentence). A sentence ends at its gold goal edge, when no
gold edge is left on the agenda, or after ``max_expansions`` pops (deterministic in place of the
paper's training timeout). Non-projective gold trees cannot be built by concatenation and are skipped.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.base_np import base_np_units
from dualdecomp.data.ordering.inputs import ROOT, OrderingExample
from dualdecomp.models.ordering.paper.edge import Context, Edge
from dualdecomp.models.ordering.paper.feature_kernel import concatenated
from dualdecomp.models.ordering.paper.model import OrderingModel
from dualdecomp.models.ordering.paper.search import add_to_chart, expand, expand_each
from dualdecomp.models.ordering.paper.training_kernel import (
    gathered_sums,
    gathered_sums_numpy,
    merged_step,
    merged_step_numpy,
)

LEARNERS = ("scaled-mira", "perceptron")


@dataclass(frozen=True)
class TrainConfig:
    """Settings of guided learning.

    Attributes
    ----------
    learner : str
        ``"scaled-mira"`` (the paper's scaled large-margin update) or ``"perceptron"`` (baseline).
    chart_size : int
        Chart beam during training.
    max_expansions : int
        Pops per sentence at most (an absolute number, whatever the sentence length).
    seed : int
        Seed of the shuffle of the training sentences.
    base_nps : bool
        Train on bags that keep each sentence's base NPs as ordered units, as the paper does
        (``dualdecomp.data.ordering.base_np``; the gold derivation keeps them).
    """

    learner: str = "scaled-mira"
    chart_size: int = 32
    max_expansions: int = 400
    seed: int = 0
    base_nps: bool = False

    def __post_init__(self) -> None:
        if self.learner not in LEARNERS:
            raise InputError(f"unknown learner {self.learner!r} (choose from {', '.join(LEARNERS)})")


@dataclass(frozen=True)
class SentenceStats:
    """What happened on one training sentence."""

    reached_gold: bool
    updates: int
    expansions: int


def squared_norm(values: np.ndarray) -> float:
    """The sum of the squares of ``values`` (each rounded to a float), rounded once: the same anywhere.

    A BLAS dot product (``values @ values``) sums in the order of the CPU's kernel (OpenBLAS picks one
    per processor), so its last bits differ between machines; in the update they change the step, and
    over an epoch the course of training. ``math.fsum`` does not depend on the order of the terms.

    Parameters
    ----------
    values : numpy.ndarray
        One-dimensional float array.

    Returns
    -------
    float
    """
    return math.fsum((values * values).tolist())


class Trainer:
    """Online guided learning with weight averaging (see the module docstring).

    Parameters
    ----------
    model : OrderingModel
        Trained in place (its ``weights``).
    config : TrainConfig
    """

    expand = staticmethod(expand)
    """The popped edge's attachments with the chart, scored (compiled in one call; ``search.expand``)."""
    gathered_sums = staticmethod(gathered_sums)
    """The chart's rescoring after an update (compiled; ``training_kernel``)."""
    merged_step = staticmethod(merged_step)
    """An update's sparse step from the two feature vectors (compiled; ``training_kernel``)."""

    def __init__(self, model: OrderingModel, config: TrainConfig) -> None:
        self.model = model
        self.config = config
        self.accumulated = np.zeros_like(model.weights)
        self.step = 1

    def averaged(self) -> np.ndarray:
        """The averaged weights ``w - acc / step``."""
        return self.model.weights - self.accumulated / self.step

    # --- the update ----------------------------------------------------------------------------

    def update(self, positive: Edge, negative: Edge) -> bool:
        """Move the weights so that the scaled score of ``positive`` exceeds ``negative``'s.

        Returns
        -------
        bool
            False when the two scaled feature vectors are identical (nothing to learn).
        """
        idx = np.concatenate((positive.phi, negative.phi))
        val = np.concatenate((np.full(positive.phi.size, 1.0 / positive.size),
                              np.full(negative.phi.size, -1.0 / negative.size)))
        uniq, delta = self.merged_step(idx, val)
        norm2 = squared_norm(delta)
        if norm2 < 1e-12:
            return False
        w = self.model.weights
        if self.config.learner == "scaled-mira":
            margin = (float(w[positive.phi].sum()) / positive.size
                      - float(w[negative.phi].sum()) / negative.size)
            tau = max(0.0, (1.0 - margin) / norm2)
        else:
            tau = 1.0
        step = tau * delta
        w[uniq] += step
        self.accumulated[uniq] += self.step * step
        return True

    # --- one sentence --------------------------------------------------------------------------

    def train_sentence(self, example: OrderingExample) -> SentenceStats:
        """Guided learning on one (projective) sentence; the bag is given in gold order."""
        model = self.model
        ctx = model.context(example.identity_input(base_np_units(example) if self.config.base_nps else ()))
        tag_id = model.tag_index
        gold_tags = tuple(tag_id.get(p, -1) for p in example.pos)
        ctx = replace(ctx, leaf_tags=tuple(tags if g in tags or g < 0 else tuple(sorted((*tags, g)))
                                           for tags, g in zip(ctx.leaf_tags, gold_tags, strict=True)))
        gold_heads = example.heads
        gold_kids = [0] * ctx.n
        for m, h in enumerate(gold_heads):
            if h != ROOT:
                gold_kids[h] |= 1 << m
        agenda: list = []
        golds: list = []  # the gold entries ever pushed (popped ones are skipped by their seq)
        popped: set[int] = set()
        seq = 0
        for leaf in model.leaves(ctx, gold_tags):
            agenda.append((-leaf.scaled, seq, leaf, None, None, False, leaf.gold))
            if leaf.gold:
                golds.append(agenda[-1])
            seq += 1
        heapq.heapify(agenda)
        chart: list[Edge] = []
        updates = expansions = 0
        reached = False
        while agenda and expansions < self.config.max_expansions:
            entry = heapq.heappop(agenda)
            popped.add(entry[1])
            edge = self._build(ctx, entry)
            expansions += 1
            if edge.gold and edge.mask == ctx.full:
                reached = True
                break
            if not edge.gold:
                positive = self._min_gold(ctx, golds, popped)
                if positive is None:
                    break
                updates += self.update(positive, edge)
                self._rescore(chart)
                model.rescore(edge)
            if edge.mask == ctx.full:
                continue
            for score, h, d, r in self.expand(model, ctx, edge, chart):
                gold = h.gold and d.gold and _gold_arc(h, d, r, gold_heads, gold_kids)
                entry = (-score / (h.size + d.size + 1), seq, None, h, d, r, gold)
                heapq.heappush(agenda, entry)
                if gold:
                    golds.append(entry)
                seq += 1
            dropped = add_to_chart(chart, edge, self.config.chart_size)
            if dropped is not None and dropped.gold:
                negatives = [e for e in chart if not e.gold]
                if negatives:
                    negative = max(negatives, key=lambda e: e.scaled)
                    updates += self.update(dropped, negative)
                    chart.remove(negative)
                    chart.append(dropped)
                    self._rescore(chart)
        self.step += 1
        return SentenceStats(reached, updates, expansions)

    def _build(self, ctx: Context, entry) -> Edge:
        _, _, edge, head, dep, right, gold = entry
        if edge is None:
            edge = self.model.attach(ctx, head, dep, right, gold)
        self.model.rescore(edge)
        return edge

    def _min_gold(self, ctx: Context, golds: list, popped: set[int]) -> Edge | None:
        """MINGOLD: the lowest-scored gold edge still on the agenda."""
        best = None
        for entry in golds:
            if entry[1] not in popped and (best is None or entry[0] > best[0]):
                best = entry
        return None if best is None else self._build(ctx, best)

    def _rescore(self, chart: list[Edge]) -> None:
        """``model.rescore`` of every chart edge, in one compiled call (the same floats)."""
        if not chart:
            return
        scores = self.gathered_sums(self.model.weights, *concatenated([e.phi for e in chart]))
        for e, score in zip(chart, scores.tolist(), strict=True):
            e.score = score

    # --- epochs --------------------------------------------------------------------------------

    def epoch(self, examples: list[OrderingExample], epoch: int,
              progress: Callable[[int], None] | None = None) -> dict:
        """One pass over the (shuffled) examples; returns counts for the log."""
        rng = np.random.default_rng(self.config.seed + epoch)
        reached = updates = expansions = 0
        for k in rng.permutation(len(examples)):
            stats = self.train_sentence(examples[int(k)])
            reached += stats.reached_gold
            updates += stats.updates
            expansions += stats.expansions
            if progress is not None:
                progress(1)
        return {"epoch": epoch, "sentences": len(examples), "reached_gold": reached, "updates": updates,
                "expansions": expansions}


class ReferenceTrainer(Trainer):
    """:class:`Trainer` with the definitions of its compiled loops (numpy, one scoring call per
    attachment): the same weights, slower (for the tests and ``benchmarks/word_order_features.py``)."""

    expand = staticmethod(expand_each)
    gathered_sums = staticmethod(gathered_sums_numpy)
    merged_step = staticmethod(merged_step_numpy)


def _gold_arc(head: Edge, dep: Edge, right: bool, gold_heads, gold_kids) -> bool:
    """Whether attaching two gold edges gives a gold edge (bag given in gold order: index = position)."""
    m = dep.head
    if gold_heads[m] != head.head or gold_kids[m] & ~dep.mask:
        return False
    if right:
        return head.words[-1] + 1 == dep.words[0]
    return dep.words[-1] + 1 == head.words[0]
