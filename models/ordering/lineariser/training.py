"""Training the head-domain lineariser: the averaged perceptron over head domains, exact decoding.

Every head domain of every projective training tree (gold tags) is one training item: its gold order is
the order of its elements in the sentence. Each epoch visits the items in a fixed random order (``seed``);
an item's best order under the current weights is found exactly (Held–Karp, the beam search above the
exact limit), and when it differs from the gold order the gold order's features gain 1 and the
prediction's lose 1. The averaged weights are kept (Collins 2002). Deterministic for a seed.

Selection (``select``): after each epoch the averaged weights are scored by a caller's function (the
CLI: BLEU of the full-tree "all" condition on dev sentences, :func:`selection_bleu`) and the best epoch
is kept (ties: the earlier one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from dualdecomp.data.ordering.inputs import OrderingExample, is_projective
from dualdecomp.models.evaluation import evaluate
from dualdecomp.models.ordering.lineariser.decoding import linearise_tree
from dualdecomp.models.ordering.lineariser.features import domain_tables, order_features, sentence_domains
from dualdecomp.models.ordering.lineariser.model import Lineariser
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.solvers.ordering import best_domain_order


@dataclass(frozen=True)
class EpochLog:
    """One epoch of lineariser training.

    Attributes
    ----------
    epoch : int
    mistakes : int
        Domains whose predicted order was not the gold one (an update each).
    domains : int
    """

    epoch: int
    mistakes: int
    domains: int
    selection: float | None = None


def tag_dictionary(examples: list[OrderingExample]) -> tuple[dict[str, str], str]:
    """Each word's most frequent tag (ties: the tag first in sorted order) and the most frequent tag of
    words seen once (for unknown words)."""
    counts: dict[str, Counter] = {}
    for ex in examples:
        for w, p in zip(ex.words, ex.pos, strict=True):
            counts.setdefault(w, Counter())[p] += 1
    best = {w: min(c, key=lambda t, c=c: (-c[t], t)) for w, c in counts.items()}
    hapax: Counter = Counter()
    for c in counts.values():
        if sum(c.values()) == 1:
            hapax.update(c)
    default = min(hapax, key=lambda t: (-hapax[t], t)) if hapax else "NN"
    return best, default


def selection_bleu(lineariser: Lineariser, examples: list[OrderingExample], seed: int = 0,
                   lm: OrderingLM | None = None) -> float:
    """Corpus BLEU (sacrebleu) of the lineariser on the full-tree "all" inputs of some gold sentences.

    Parameters
    ----------
    lineariser : Lineariser
    examples : list of OrderingExample
    seed : int
        Sentence k is shuffled with seed ``seed + k`` (``evaluation.evaluate``, which scores it).
    lm : OrderingLM, optional
        The LM term it decodes with (None: the lineariser alone).

    Returns
    -------
    float
    """
    scores, _ = evaluate(examples, lambda inp: linearise_tree(lineariser, inp, lm=lm), "all", seed)
    return scores.bleu


def train_lineariser(examples: list[OrderingExample], epochs: int = 4, hash_bits: int = 22, seed: int = 0,
                     progress: Callable[[EpochLog], None] | None = None,
                     select: Callable[[Lineariser], float] | None = None
                     ) -> tuple[Lineariser, list[EpochLog]]:
    """Train the head-domain lineariser on gold sentences.

    Parameters
    ----------
    examples : list of OrderingExample
        Training sentences in their original order (non-projective trees are skipped).
    epochs : int
    hash_bits : int
        log2 of the number of weights.
    seed : int
        Seed of the visiting order.
    progress : callable, optional
        Called with each epoch's log.
    select : callable, optional
        Scores the averaged weights after each epoch; the best epoch is returned (ties: the earlier).
        None: the last epoch.

    Returns
    -------
    (Lineariser, list of EpochLog)
        The averaged weights of the chosen epoch (LM weight 0) and the epochs' logs.
    """
    if epochs < 1:
        raise ValueError("epochs must be at least 1")
    mask = (1 << hash_bits) - 1
    projective = [ex for ex in examples if is_projective(ex.heads)]
    items = []
    for ex in projective:
        for domain in sentence_domains(ex.words, ex.pos, ex.heads, mask):
            # elements are ascending input indices = sentence positions: the gold order is 0..n-1
            items.append(domain)
    weights = np.zeros(1 << hash_bits, dtype=np.float64)
    totals = np.zeros_like(weights)  # sum over steps of c * update (the averaging trick)
    rng = np.random.default_rng(seed)
    step = 1
    logs: list[EpochLog] = []
    best_tag, default_tag = tag_dictionary(examples)
    meta = {"trainer": "averaged perceptron over head domains (exact Held-Karp decoding)",
            "epochs": epochs, "seed": seed, "sentences": len(examples), "projective": len(projective),
            "domains": len(items)}
    chosen: Lineariser | None = None
    chosen_score = float("-inf")
    for epoch in range(1, epochs + 1):
        mistakes = 0
        for k in rng.permutation(len(items)):
            domain = items[int(k)]
            found = best_domain_order(*domain_tables(weights, domain), domain.head_index)
            if not np.array_equal(found.order, np.arange(len(domain))):
                gold = order_features(domain, range(len(domain)))
                guess = order_features(domain, found.order)
                np.add.at(weights, gold, 1.0)
                np.add.at(weights, guess, -1.0)
                np.add.at(totals, gold, float(step))
                np.add.at(totals, guess, -float(step))
                mistakes += 1
            step += 1
        candidate = Lineariser(weights - totals / step, hash_bits, best_tag, default_tag, 0.0,
                               {**meta, "epoch": epoch})
        value = select(candidate) if select is not None else None
        log = EpochLog(epoch, mistakes, len(items), value)
        logs.append(log)
        if progress is not None:
            progress(log)
        if value is None or value > chosen_score or chosen is None:
            chosen, chosen_score = candidate, float("-inf") if value is None else value
    assert chosen is not None
    log_meta = {"mistakes": [log.mistakes for log in logs], "selection_bleu": [log.selection for log in logs]}
    return replace(chosen, meta={**chosen.meta, **log_meta}), logs
