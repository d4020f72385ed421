"""Training the bigram model from corpora in the project JSONL format.

Every (sentence, reference) pair is one perceptron example; the gold keep vector comes from the deletion
alignment (``data.alignment``). Sentences are parsed once with spaCy; features are computed once per
sentence and shared by its references. After each epoch the averaged weights are scored on the dev files
by bigram F1 at gold length (the selection criterion of the project) and the best epoch is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from data.alignment import keep_vector
from data.jsonl import CorpusItem, read_corpus
from data.parsing import parse_tokens
from data.sentence import Sentence
from dualdecomp.evaluation import bigram_f1
from models.bigram_model import BigramModel
from models.features import BigramFeatures
from models.perceptron import EpochReport, TrainingExample, train_perceptron
from solvers import bigram


@dataclass(frozen=True)
class ParsedItem:
    """A corpus item with its parse, features and gold keep vectors (one per reference)."""

    item: CorpusItem
    sentence: Sentence
    features: BigramFeatures
    golds: tuple[np.ndarray, ...]


@dataclass(frozen=True)
class TrainingConfig:
    """Hyper-parameters of bigram-model training."""

    epochs: int = 10
    hash_bits: int = 22
    lexical: bool = True
    length_mode: str = "free"
    seed: int = 0


def prepare(items: Sequence[CorpusItem], lm=None, hash_bits: int = 22, lexical: bool = True,
            progress: Callable[[int], None] | None = None) -> list[ParsedItem]:
    """Parse items with spaCy and compute their features and gold keep vectors."""
    sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
    shell = BigramModel(np.zeros(1), hash_bits=hash_bits, lexical=lexical, lm=lm)
    out = []
    for it, s in zip(items, sentences, strict=True):
        golds = tuple(keep_vector(it.text, c) for c in it.compressions)
        out.append(ParsedItem(it, s, shell.features(s), golds))
        if progress is not None:
            progress(1)
    return out


def dev_bigram_f1(weights: np.ndarray, dev: Sequence[ParsedItem]) -> float:
    """Mean bigram F1 at gold length on parsed dev items (averaged over references)."""
    scores = []
    for p in dev:
        if not p.golds:
            continue
        B = p.features.potentials(weights)
        per_ref = []
        for g in p.golds:
            keep = bigram.solve(B, length=int(g.sum())).keep
            toks = p.item.text
            sys_toks = [t for t, k in zip(toks, keep, strict=True) if k]
            ref_toks = [t for t, k in zip(toks, g, strict=True) if k]
            per_ref.append(bigram_f1(sys_toks, ref_toks))
        scores.append(float(np.mean(per_ref)))
    return float(np.mean(scores)) if scores else float("nan")


def train(train_files: Sequence[str], dev_files: Sequence[str], config: TrainingConfig, lm=None,
          limit: int | None = None, log: Callable[[str], None] | None = None,
          progress_factory: Callable[[int, str], Callable[[int], None]] | None = None,
          ) -> tuple[BigramModel, list[EpochReport]]:
    """Train a bigram model.

    Parameters
    ----------
    train_files, dev_files : sequences of paths
        Corpora in the project JSONL format.
    config : TrainingConfig
        Hyper-parameters.
    lm : models.lm.LanguageModel, optional
        Language model of the LM feature.
    limit : int, optional
        Use only the first ``limit`` sentences of each training file (for quick runs and tests).
    log : callable, optional
        Receives progress messages.
    progress_factory : callable, optional
        ``progress_factory(total, description)`` returns an update callback (e.g. a tqdm bar's).

    Returns
    -------
    model : BigramModel
    reports : list of EpochReport
    """
    say = log or (lambda _msg: None)
    start = time.perf_counter()
    train_items: list[CorpusItem] = []
    for f in train_files:
        items = read_corpus(f)
        train_items.extend(items[:limit] if limit else items)
    dev_items = [it for f in dev_files for it in read_corpus(f)]
    bar = progress_factory(len(train_items) + len(dev_items), "parsing") if progress_factory else None
    parsed = prepare(train_items, lm, config.hash_bits, config.lexical, bar)
    dev = prepare(dev_items, lm, config.hash_bits, config.lexical, bar)
    examples = [TrainingExample(p.features, g) for p in parsed for g in p.golds]
    say(f"{len(train_items)} training sentences, {len(examples)} examples, {len(dev_items)} dev sentences "
        f"(prepared in {time.perf_counter() - start:.1f} s)")

    def on_epoch(epoch: int, avg: np.ndarray) -> float | None:
        score = dev_bigram_f1(avg, dev) if dev else None
        say(f"epoch {epoch}: dev bigram F1 at gold length = "
            f"{'n/a' if score is None else f'{100 * score:.2f}'}")
        return score

    bar = progress_factory(len(examples) * config.epochs, "training") if progress_factory else None
    weights, reports = train_perceptron(examples, config.hash_bits, config.epochs, config.seed,
                                        config.length_mode, on_epoch, bar)
    best = max((r for r in reports if r.dev_score is not None), key=lambda r: r.dev_score, default=None)
    meta = {
        "trainer": "averaged structured perceptron",
        "train_files": [str(f).rsplit("/", 1)[-1] for f in train_files],
        "dev_files": [str(f).rsplit("/", 1)[-1] for f in dev_files],
        "limit": limit,
        "epochs": config.epochs,
        "length_mode": config.length_mode,
        "seed": config.seed,
        "best_epoch": best.epoch if best else config.epochs,
        "dev_bigram_f1_gold_length": best.dev_score if best else None,
        "mistakes_per_epoch": [r.mistakes for r in reports],
        "examples": len(examples),
    }
    model = BigramModel(weights, config.hash_bits, config.lexical, lm, meta)
    return model, reports
