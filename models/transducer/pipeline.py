"""T3 training end to end (Cohn & Lapata 2009): corpora → tree pairs → grammar → weights → model.

:func:`train_t3_model` parses both sides with spaCy, converts them to phrase structure, extracts the STSG,
finds gold derivations (maximum rules), trains the rule weights (loss-augmented large-margin SGD with the
loss of §3.6, or the averaged perceptron) for each regularisation constant, and keeps the (λ, epoch) with
the best dev bigram F1 at gold length (the project's selection criterion: at free length keeping every
word beats every model on token F1). With an LM it then picks the APPROXIMATE beam search's LM weight on
dev the same way (:func:`tune_lm_weight`). ``dualdecomp t3 train`` is its command line.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import SolverError
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.models.evaluation import at_reference_lengths
from dualdecomp.models.lm import LanguageModel
from dualdecomp.models.transducer.data import tree_pairs
from dualdecomp.models.transducer.extraction import extract_grammar
from dualdecomp.models.transducer.features import RuleFeaturiser
from dualdecomp.models.transducer.model import TransducerModel
from dualdecomp.models.transducer.training import (
    TrainConfig,
    TrainStats,
    hyperedge_scores,
    make_example,
    train,
)
from dualdecomp.solvers.transducer import GrammarConfig, Transducer, beam_search, build_hypergraph

__all__ = ["TransducerTrainingSettings", "chart_keep", "dev_gold_bigram_f1", "train_t3_model",
           "tune_lm_weight"]


def _quiet(msg: str) -> None:
    pass


@dataclass(frozen=True)
class TransducerTrainingSettings:
    """Settings of :func:`train_t3_model` (the options of ``dualdecomp t3 train``)."""

    train: tuple[str, ...]
    dev: tuple[str, ...]
    depth: int = 1
    method: str = "ssvm"
    lams: tuple[float, ...] = (1e-4,)
    epochs: int = 4
    loss: str = "token"
    limit: int | None = None
    hash_bits: int = 18
    lm: str | None = None
    seed: int = 0


def dev_gold_bigram_f1(transducers, items, keep_at) -> float:
    """Mean dev bigram F1 at each reference's length (the project's selection criterion).

    ``keep_at(transducer, length)`` decodes one sentence at a length. Selecting on free-length F1 instead
    would reward models that keep more words (keeping every word scores higher than any trained model on token
    F1 at free length), so hyper-parameters are chosen at gold length.
    """
    return float(np.mean([at_reference_lengths(item.text, [list(r) for r in item.compressions],
                                               lambda length, t=transducer: keep_at(t, length))
                          for transducer, item in zip(transducers, items, strict=True)]))


def chart_keep(transducer, length: int) -> np.ndarray:
    """The exact T3 chart at ``length`` (the closest feasible length when the grammar cannot reach it)."""
    table = transducer.solve_lengths()
    feasible = np.flatnonzero(np.isfinite(table))
    closest = int(feasible[np.argmin(np.abs(feasible - length))])
    return transducer.solve(length=closest).keep


def train_t3_model(settings: TransducerTrainingSettings,
                   log: Callable[[str], None] = _quiet) -> TransducerModel:
    """Train a T3 model (module docstring); ``log`` receives progress lines.

    Parameters
    ----------
    settings : TransducerTrainingSettings
        Corpora, grammar depth, learner, regularisation grid, epochs, loss, LM for the beam weight.
    log : callable, optional
        Called with one progress line at a time.

    Returns
    -------
    TransducerModel
        The selected weights with their grammar and training metadata (``meta``).
    """
    t0 = time.time()
    items = [it for f in settings.train for it in read_corpus(f)]
    if settings.limit:
        items = items[: settings.limit]
    dev = [it for f in settings.dev for it in read_corpus(f) if it.compressions]
    pairs = tree_pairs(items)
    dev_pairs = tree_pairs(dev)
    log(f"parsed {len(items)} train / {len(dev)} dev sentences ({time.time() - t0:.0f}s)")
    config = GrammarConfig(depth=settings.depth)
    grammar, failed = extract_grammar([(p.source, t) for p in pairs for t in (*p.targets, None)], config)
    log(f"grammar: {len(grammar)} rules ({failed} pairs not extractable) ({time.time() - t0:.0f}s)")
    examples = []
    skipped = 0
    for p in pairs:
        for t in p.targets:
            ex = make_example(p.source, t, grammar) if t is not None else None
            if ex is None:
                skipped += 1
            else:
                examples.append(ex)
    log(f"{len(examples)} training pairs with a gold derivation ({skipped} skipped) "
        f"({time.time() - t0:.0f}s)")
    dev_hgs = [build_hypergraph(p.source, grammar) for p in dev_pairs]
    best = (-np.inf, None, None)
    stats = TrainStats()
    for lam in settings.lams if settings.method == "ssvm" else [0.0]:
        feats = RuleFeaturiser(settings.hash_bits)

        def on_epoch(epoch, w, lam=lam, feats=feats):
            transducers = [Transducer.from_hypergraph(hg, hyperedge_scores(hg, w, feats)) for hg in dev_hgs]
            s = dev_gold_bigram_f1(transducers, dev, chart_keep)
            log(f"  {settings.method} lam={lam:g} epoch {epoch + 1}: dev bigram F1 at gold length "
                f"{100 * s:.1f} ({time.time() - t0:.0f}s)")
            return s

        cfg = TrainConfig(method=settings.method, epochs=settings.epochs, lam=lam,
                          hash_bits=settings.hash_bits, seed=settings.seed, loss=settings.loss)
        w, scores = train(examples, cfg, on_epoch=on_epoch, stats=stats)
        if max(scores) > best[0]:
            best = (max(scores), w, {"lam": lam, "epoch": int(np.argmax(scores)) + 1})
    meta = {"train": [Path(f).name for f in settings.train], "dev": [Path(f).name for f in settings.dev],
            "sentences": len(items), "pairs": len(examples), "skipped_pairs": skipped,
            "method": settings.method, "depth": settings.depth,
            "selected": best[2], "dev_bigram_f1_gold_length": best[0], "loss": settings.loss,
            "loss_augmented": stats.augmented, "loss_augmented_uncertified": stats.uncertified}
    if settings.method == "ssvm":
        log(f"loss-augmented argmaxes ({settings.loss}): {stats.augmented}, of which {stats.uncertified} "
            f"uncertified (APPROXIMATE); {stats.decodes} engine runs")
    model = TransducerModel(grammar, best[1], settings.hash_bits, 1.0, meta)
    if settings.lm is not None:
        model.lm_weight = tune_lm_weight(model, dev_pairs, dev, settings.lm, log)
        meta["lm_weight_selected_on"] = "dev bigram F1 at gold length (beam 20)"
    return model


def tune_lm_weight(model: TransducerModel, dev_pairs, dev, lm_path: str,
                   log: Callable[[str], None] = _quiet) -> float:
    """Pick the LM weight of the (approximate) beam search on dev bigram F1 at gold length (beam 20)."""
    lm = LanguageModel(lm_path)
    transducers = [model.transducer(p.source) for p in dev_pairs]
    tensors = [lm.trigram_tensor(it.text) for it in dev]
    best = (-np.inf, 1.0)
    for weight in (0.25, 0.5, 1.0, 2.0):
        tensor_of = {id(transducer): T for transducer, T in zip(transducers, tensors, strict=True)}

        def beam_at(transducer, length, weight=weight, tensor_of=tensor_of):
            try:
                return beam_search(transducer, tensor_of[id(transducer)], lm_weight=weight, beam=20,
                                   length=length).keep
            except SolverError:  # the grammar cannot reach this length: the free-length beam
                return beam_search(transducer, tensor_of[id(transducer)], lm_weight=weight, beam=20).keep

        s = dev_gold_bigram_f1(transducers, dev, beam_at)
        log(f"  LM weight {weight}: dev bigram F1 at gold length (beam 20, APPROXIMATE) {100 * s:.1f}")
        if s > best[0]:
            best = (s, weight)
    return best[1]
