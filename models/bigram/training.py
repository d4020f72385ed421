"""Training the bigram model from corpora in the project JSONL format.

Every (sentence, reference) pair is one perceptron example; the gold keep vector comes from the deletion
alignment (``dualdecomp.data.alignment``). Sentences are parsed once with spaCy; features are computed once
per sentence and shared by its references. After each epoch the averaged weights are scored on the dev files
by bigram F1 at gold length, averaged over the dev files (the selection criterion of the project), and
the best epoch is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.core.hashing import feature_index
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import CorpusItem, read_corpus
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.bigram.features import BigramFeatures
from dualdecomp.models.bigram.mira import train_mira
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.bigram.perceptron import TrainingExample, train_perceptron
from dualdecomp.models.evaluation import at_reference_lengths
from dualdecomp.models.perceptron import EpochReport
from dualdecomp.models.rate_bisection import bisect_rate
from dualdecomp.solvers import bigram


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
    trainer: str = "perceptron"
    k: int = 5
    C: float = 1.0


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
        refs = [[t for t, k in zip(p.item.text, g, strict=True) if k] for g in p.golds]
        scores.append(at_reference_lengths(p.item.text, refs,
                                           lambda length, B=B: bigram.solve(B, length=length).keep))
    return float(np.mean(scores)) if scores else float("nan")


def bias_index(hash_bits: int) -> int:
    """Weight index of the pair ``bias`` feature: it fires L + 1 times for a compression of L tokens."""
    return int(feature_index(0, np.zeros(1, dtype=np.uint64), 0, hash_bits)[0])


def calibrate_length_bias(weights: np.ndarray, parts: Sequence[Sequence[ParsedItem]], hash_bits: int,
                          iterations: int = 30) -> float:
    """The per-token bias c that gives free-length outputs the references' compression rate.

    Adding c to the ``bias`` feature adds c · (L + 1) to every compression of L tokens: at a fixed length
    it changes nothing, at free length it moves the compression rate. c is found by bisection so that the
    compression rate (mean over sentences, then over the corpora in ``parts``) equals that of the gold
    references; the rate is monotone in c.
    """
    sets = [[(p.features.potentials(weights), p.item.n) for p in part if p.golds] for part in parts]
    targets = [np.mean([np.mean([g.mean() for g in p.golds]) for p in part if p.golds]) for part in parts]
    sets = [s for s in sets if s]
    if not sets:
        return 0.0
    target = float(np.mean([t for t in targets if np.isfinite(t)]))

    def rate(c: float) -> float:
        per_set = []
        for s in sets:
            lengths = [bigram.solve(B + np.where(np.isfinite(B), c, 0.0)).length / n for B, n in s]
            per_set.append(np.mean(lengths))
        return float(np.mean(per_set))

    return bisect_rate(rate, target, increasing=True, start=5.0, iterations=iterations)


def train(train_files: Sequence[str], dev_files: Sequence[str], config: TrainingConfig, lm=None,
          limit: int | None = None, log: Callable[[str], None] | None = None,
          progress_factory: Callable[[int, str], Callable[[int], None]] | None = None,
          perceptron: Callable | None = None) -> tuple[BigramModel, list[EpochReport]]:
    """Train a bigram model.

    Parameters
    ----------
    train_files, dev_files : sequences of paths
        Corpora in the project JSONL format.
    config : TrainingConfig
        Hyper-parameters.
    lm : dualdecomp.models.lm.model.LanguageModel, optional
        Language model of the LM feature.
    limit : int, optional
        Use only the first ``limit`` sentences of each training file (for quick runs and tests).
    log : callable, optional
        Receives progress messages.
    progress_factory : callable, optional
        ``progress_factory(total, description)`` returns an update callback (e.g. a tqdm bar's).
    perceptron : callable, optional
        The perceptron trainer, called like ``train_perceptron`` (default); e.g. the distributed
        :class:`dualdecomp.models.bigram.distributed_training.ParameterMixing`.

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
    dev_sets = [read_corpus(f) for f in dev_files]
    dev_items = [it for items in dev_sets for it in items]
    bar = progress_factory(len(train_items) + len(dev_items), "parsing") if progress_factory else None
    parsed = prepare(train_items, lm, config.hash_bits, config.lexical, bar)
    dev = prepare(dev_items, lm, config.hash_bits, config.lexical, bar)
    bounds = np.cumsum([0, *(len(items) for items in dev_sets)])
    dev_parts = [dev[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    examples = [TrainingExample(p.features, g) for p in parsed for g in p.golds]
    say(f"{len(train_items)} training sentences, {len(examples)} examples, {len(dev_items)} dev sentences "
        f"(prepared in {time.perf_counter() - start:.1f} s)")

    def on_epoch(epoch: int, avg: np.ndarray) -> float | None:
        score = float(np.mean([dev_bigram_f1(avg, part) for part in dev_parts])) if dev else None
        say(f"epoch {epoch}: dev bigram F1 at gold length (mean over the dev files) = "
            f"{'n/a' if score is None else f'{100 * score:.2f}'}")
        return score

    bar = progress_factory(len(examples) * config.epochs, "training") if progress_factory else None
    if config.trainer == "mira":
        weights, reports = train_mira(examples, config.hash_bits, config.epochs, config.seed,
                                      config.length_mode, config.k, config.C, on_epoch, bar)
    elif config.trainer == "perceptron":
        fit = perceptron or train_perceptron
        weights, reports = fit(examples, config.hash_bits, config.epochs, config.seed, config.length_mode,
                               on_epoch, bar)
    else:
        raise InputError(f"unknown trainer {config.trainer!r} (perceptron or mira)")
    best = max((r for r in reports if r.dev_score is not None), key=lambda r: r.dev_score, default=None)
    bias = calibrate_length_bias(weights, dev_parts if dev else [parsed], hash_bits=config.hash_bits)
    weights = weights.copy()
    weights[bias_index(config.hash_bits)] += bias
    say(f"free-length calibration: per-token bias {bias:+.4f} (compression rate matches the gold references)")
    meta = {
        "trainer": (getattr(perceptron, "description", "averaged structured perceptron")
                    if config.trainer == "perceptron"
                    else f"averaged {config.k}-best MIRA (C = {config.C})"),
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
        "length_bias": bias,
    }
    model = BigramModel(weights, config.hash_bits, config.lexical, lm, meta)
    return model, reports
