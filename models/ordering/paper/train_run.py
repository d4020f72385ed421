"""A training run: epochs of guided learning on train, model selection on dev, the saved model."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.data.ordering.inputs import OrderingExample, is_projective
from dualdecomp.models.evaluation import evaluate
from dualdecomp.models.ordering.paper.model import OrderingModel, new_model
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.training import TrainConfig, Trainer


@dataclass(frozen=True)
class RunConfig:
    """Settings of a training run.

    Attributes
    ----------
    epochs : int
    max_sentences : int or None
        Use the first N eligible training sentences (file order).
    max_length : int
        Train only on sentences of at most this many words.
    hash_bits : int
    dev_sentences : int
        Select on the first N dev sentences (words-only condition).
    dev_expansions : int
        Expansion limit of the dev decodes (deterministic selection, unlike a wall-clock timeout).
    train : TrainConfig
    """

    epochs: int = 3
    max_sentences: int | None = None
    max_length: int = 25
    hash_bits: int = 20
    dev_sentences: int = 100
    dev_expansions: int = 2000
    train: TrainConfig = TrainConfig()


def eligible(examples: list[OrderingExample], config: RunConfig) -> list[OrderingExample]:
    """Projective training sentences of at most ``max_length`` words (the first ``max_sentences``)."""
    out = [e for e in examples if len(e) <= config.max_length and is_projective(e.heads)]
    return out[:config.max_sentences] if config.max_sentences is not None else out


def train_model(train: list[OrderingExample], dev: list[OrderingExample], config: RunConfig,
                log: Callable[[dict], None] = lambda record: None,
                progress_factory: Callable | None = None,
                checkpoint: Callable[[OrderingModel, dict], None] | None = None,
                trainer: Callable[[OrderingModel, TrainConfig], Any] = Trainer
                ) -> tuple[OrderingModel, dict]:
    """Train for ``epochs`` epochs; keep the averaged weights of the epoch with the best dev BLEU.

    Selection rule: the dev BLEU of the words-only condition (with base NPs as units when training
    with them) on the first ``dev_sentences`` dev sentences, decoded by best-first search with
    ``dev_expansions`` pops at most (chart size of the training config); ties go to the earlier epoch.

    Parameters
    ----------
    train, dev : list of OrderingExample
        All training sentences (filtered here) and the dev sentences.
    config : RunConfig
    log : callable
        Receives one dict per epoch.
    progress_factory : callable, optional
        ``(total, description) -> update`` for progress bars.
    checkpoint : callable, optional
        Called after every epoch with the model selected so far (a copy) and its meta dict.
    trainer : callable
        ``(model, train_config) -> trainer`` with ``epoch`` and ``averaged`` like :class:`Trainer` (the
        default, one process), e.g. a
        :class:`~dualdecomp.models.ordering.paper.parallel_training.MixingTrainer` bound to a Dask client.

    Returns
    -------
    (OrderingModel, dict)
        The selected model (averaged weights) and the provenance/meta dict.
    """
    sentences = eligible(train, config)
    model = new_model(train, hash_bits=config.hash_bits)
    trainer = trainer(model, config.train)
    description = getattr(trainer, "description", "one process")
    dev = dev[:config.dev_sentences]
    search = SearchConfig(chart_size=config.train.chart_size, timeout=None,
                          max_expansions=config.dev_expansions)
    best_bleu, best_weights, best_epoch, history = -1.0, None, 0, []
    for epoch in range(1, config.epochs + 1):
        start = time.perf_counter()
        update = progress_factory(len(sentences), f"epoch {epoch}") if progress_factory else None
        stats = trainer.epoch(sentences, epoch, update)
        stats["train_seconds"] = round(time.perf_counter() - start, 1)
        current = model.weights.copy()
        model.weights[:] = trainer.averaged()
        scores, _ = evaluate(dev, lambda inp: best_first(model, inp, search),
                             "bnp" if config.train.base_nps else "words")
        stats["dev"] = scores.as_json()
        history.append(stats)
        log(stats)
        if scores.bleu > best_bleu:
            best_bleu, best_weights, best_epoch = scores.bleu, model.weights.copy(), epoch
        model.weights[:] = current
        if checkpoint is not None:
            checkpoint(replace(model, weights=best_weights.copy()),
                       _meta(sentences, config, best_epoch, history, best_weights, epoch, description))
    model.weights[:] = best_weights
    return model, _meta(sentences, config, best_epoch, history, best_weights, config.epochs, description)


def _meta(sentences, config: RunConfig, best_epoch: int, history: list, weights: np.ndarray,
          epochs_done: int, trainer: str) -> dict:
    return {"training": {"sentences": len(sentences), "max_length": config.max_length, "trainer": trainer,
                         "epochs": config.epochs, "epochs_done": epochs_done, "selected_epoch": best_epoch,
                         "selection": ("best words-only dev BLEU (first dev_sentences, dev_expansions pops"
                                       + ("; base NPs as units)" if config.train.base_nps else ")")),
                         "config": json.loads(json.dumps(asdict(config))), "history": list(history),
                         "nonzero_weights": int(np.count_nonzero(weights))}}


def save_run(model: OrderingModel, meta: dict, out: str | Path) -> None:
    """Save the model with its provenance."""
    model.save(out, meta)
