r"""Joint perceptron training of McDonald + dependency (+ LM) with dual decomposition in the loop.

The separately trained McDonald (bigram) and dependency models are each the best *alone*; decoded
together their scores are simply added, so neither was trained to correct the other. This trainer
treats the joint model as one linear model over the concatenated weight vector
``w = [w_bigram ; w_dependency]`` (the LM enters with a fixed weight, a hyper-parameter), and runs the
averaged structured perceptron (:func:`dualdecomp.models.perceptron.averaged_perceptron`) whose decoder is the
engine itself: for every training example,

1. the joint argmax at the reference's length, ``dualdecomp.decode([Bigram(B), Dependency(A, S),
   Trigram(lm_weight · T)], length=L)`` (dual decomposition; certified when proved optimal);
2. the predicted tree is the best tree over the predicted kept tokens
   (:func:`dualdecomp.models.dependency.training.best_tree`) — the bigram and LM scores depend only on the
   kept set, so this *is* the joint argmax's tree;
3. if (keep, tree) differs from the gold structure, ``w += step · (φ(gold) − φ(prediction))`` on both
   parts. The gold kept set is the deletion alignment; the gold tree is either the reference's own parse
   (``tree="parse"``, as in :mod:`dualdecomp.models.dependency.training`), or **latent** (``tree="latent"``,
   the latent-variable perceptron): the best tree over the gold kept tokens under the current weights, so
   the dependency part learns whatever trees help choose the kept words, and an update happens only
   when the kept set is wrong.

Decodes that the engine cannot certify within its iteration budget still return the best feasible
primal of the right length, which is what the update uses (the usual practice of perceptron training
with inexact search; the share of certified training decodes is logged per epoch). Weights start from
the separately trained models (warm start), and the epoch is chosen on the dev files by bigram F1 at
gold length (mean over references, sentences, then files) — the project's selection criterion — with
epoch 0 (the warm start itself) as a candidate, so joint training can only be kept when it helps on dev.
Sentences longer than ``max_tokens`` are left out of training (the configuration's long-sentence
fallback decodes them with McDonald alone).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import CorpusItem, read_corpora
from dualdecomp.engine.decode import decode
from dualdecomp.models.bigram import BigramFeatures, BigramModel
from dualdecomp.models.dependency import DependencyModel, GoldStructure, best_tree, prepare_items
from dualdecomp.models.evaluation import at_reference_lengths
from dualdecomp.models.perceptron import EpochReport, averaged_perceptron
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.dependency import Dependency
from dualdecomp.solvers.ngram import Trigram


@dataclass(frozen=True)
class CotrainingConfig:
    """Hyper-parameters of joint training.

    Attributes
    ----------
    epochs : int
        Perceptron passes.
    lm_weight : float
        Fixed weight of the LM component (0: no LM).
    max_iterations : int
        Engine iterations per decode (training and dev).
    time_limit : float or None
        Engine time limit per decode, seconds.
    step : float
        Size of each perceptron update, ``w += step · (φ(gold) − φ(prediction))``; with a warm start it
        sets how far an update moves the starting weights (whose entries are of order 1).
    dependency_weight : float
        The dependency model's starting weights are multiplied by this (the relative weight of the two
        models at the start, e.g. the best of a grid on dev).
    tree : {"parse", "latent"}
        The gold tree: the reference's parse, or the best tree over the gold kept tokens (latent).
    max_tokens : int
        Longer training sentences are skipped.
    limit, dev_limit : int or None
        Use the first N sentences of each train / dev file.
    seed : int
        Shuffling seed.
    """

    epochs: int = 3
    lm_weight: float = 2.0
    max_iterations: int = 200
    time_limit: float | None = 1.0
    step: float = 0.1
    dependency_weight: float = 1.0
    tree: str = "parse"
    max_tokens: int = 80
    limit: int | None = None
    dev_limit: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise InputError("epochs must be >= 1")
        if self.tree not in ("parse", "latent"):
            raise InputError(f"the gold tree must be 'parse' or 'latent', not {self.tree!r}")
        if not np.isfinite(self.dependency_weight) or self.dependency_weight <= 0:
            raise InputError("the dependency weight must be a finite number > 0")
        if not np.isfinite(self.step) or self.step <= 0:
            raise InputError("the perceptron step must be a finite number > 0")
        if not np.isfinite(self.lm_weight) or self.lm_weight < 0:
            raise InputError("the LM weight must be a finite number >= 0")


@dataclass(frozen=True)
class CotrainingItem:
    """One parsed sentence: its bigram and dependency features and gold structures."""

    item: CorpusItem
    bigram: BigramFeatures
    dependency: object  # dualdecomp.models.dependency.features.DependencyFeatures
    golds: tuple[GoldStructure, ...]


@dataclass(frozen=True)
class CotrainingPrediction:
    """A joint decode: the kept tokens, their best tree, whether the engine certified it, and the
    dependency potentials (A, S) it was decoded with."""

    keep: np.ndarray
    heads: np.ndarray
    certified: bool
    potentials: tuple[np.ndarray, np.ndarray | None]


@dataclass(frozen=True)
class CotrainingDevScore:
    """Dev scores of one set of joint weights."""

    bigram_f1: tuple[float, ...]
    certified: tuple[float, ...]

    @property
    def mean(self) -> float:
        """Mean bigram F1 over the dev files."""
        return float(np.mean(self.bigram_f1))


@dataclass
class CotrainingDecoder:
    """Decodes :class:`CotrainingItem` s under concatenated weights ``[w_bigram ; w_dependency]``."""

    bigram_size: int
    lm: object | None
    config: CotrainingConfig
    _tensors: dict = field(default_factory=dict)

    def split(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bigram and dependency parts of a joint weight vector."""
        return w[: self.bigram_size], w[self.bigram_size:]

    def components(self, item: CotrainingItem, w: np.ndarray) -> tuple[list, np.ndarray, np.ndarray | None]:
        """The weighted components of ``item`` and the dependency potentials (A, S)."""
        wb, wd = self.split(w)
        A, S = item.dependency.potentials(wd)
        comps = [Bigram(item.bigram.potentials(wb)), Dependency(A, S=S)]
        if self.lm is not None and self.config.lm_weight > 0:
            comps.append(Trigram(self.config.lm_weight * self.lm.trigram_tensor(item.item.text)))
        return comps, A, S

    def decode(self, item: CotrainingItem, w: np.ndarray, length: int) -> CotrainingPrediction:
        """The joint argmax at ``length`` kept tokens (see the module docstring)."""
        comps, A, S = self.components(item, w)
        res = decode(comps, length=length, max_iterations=self.config.max_iterations,
                     time_limit=self.config.time_limit, length_method="auto")
        keep = np.asarray(res.keep, dtype=bool)
        return CotrainingPrediction(keep, best_tree(A, S, keep), bool(res.certified), (A, S))

    def dev_score(self, w: np.ndarray, parts: Sequence[Sequence[CotrainingItem]]) -> CotrainingDevScore:
        """Bigram F1 at every reference's length, per dev file, and the share certified."""
        f1s, certs = [], []
        for part in parts:
            per_sentence, certified = [], []
            for it in part:
                if not it.golds:
                    continue

                def keep_at(length: int, it: CotrainingItem = it, certified: list = certified) -> np.ndarray:
                    pred = self.decode(it, w, length)
                    certified.append(pred.certified)
                    return pred.keep

                per_sentence.append(at_reference_lengths(it.item.text, [list(g.tokens) for g in it.golds],
                                                         keep_at))
            f1s.append(float(np.mean(per_sentence)) if per_sentence else float("nan"))
            certs.append(float(np.mean(certified)) if certified else float("nan"))
        return CotrainingDevScore(tuple(f1s), tuple(certs))


def cotraining_vector(item: CotrainingItem, keep: np.ndarray, heads: np.ndarray, bigram_size: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The joint feature vector φ(keep, tree) as (indices, values) over ``[w_bigram ; w_dependency]``.

    Its dot product with the joint weights is the bigram score of ``keep`` plus the dependency score of
    the tree ``heads`` (the dependency part's padding feature, its index 0, is left out).
    """
    bi, bv = item.bigram.vector(np.asarray(keep, dtype=bool))
    di, dv = item.dependency.vector(heads)
    used = di != 0
    return np.concatenate((bi, di[used] + bigram_size)), np.concatenate((bv, dv[used]))


def prepare_cotraining(items: Sequence[CorpusItem], bigram: BigramModel, dependency: DependencyModel,
                  progress: Callable[[int], None] | None = None) -> list[CotrainingItem]:
    """Parse items (and their references) and compute both feature sets and the gold structures."""
    parsed, _ = prepare_items(items, dependency, "compression", progress)
    return [CotrainingItem(p.item, bigram.features(p.sentence), p.features, p.golds) for p in parsed]


@dataclass(frozen=True)
class CotrainingResult:
    """Jointly trained component models and the training record."""

    bigram: BigramModel
    dependency: DependencyModel
    reports: list[EpochReport]
    meta: dict


def cotrain(bigram: BigramModel, dependency: DependencyModel, lm, train_files: Sequence[str],
                dev_files: Sequence[str], config: CotrainingConfig,
                log: Callable[[str], None] | None = None,
                progress_factory: Callable[[int, str], Callable[[int], None]] | None = None,
                ) -> CotrainingResult:
    """Train McDonald + dependency jointly, with the engine decoding inside the perceptron loop.

    Parameters
    ----------
    bigram, dependency : BigramModel, DependencyModel
        The separately trained models: their feature settings, and the starting weights.
    lm : dualdecomp.models.lm.model.LanguageModel or None
        The LM component (weight ``config.lm_weight``), or None.
    train_files, dev_files : sequences of paths
        Corpora in the project JSONL format; ``dev_files`` chooses the epoch (epoch 0 = the start).
    config : CotrainingConfig
    log : callable, optional
        Receives progress messages.
    progress_factory : callable, optional
        ``progress_factory(total, description)`` returns an update callback.

    Returns
    -------
    CotrainingResult
        Models with the weights of the best dev epoch; ``meta`` records the per-epoch dev scores.
    """
    say = log or (lambda _msg: None)
    if lm is None and config.lm_weight > 0:
        raise InputError("an LM weight > 0 needs an LM")
    start = time.perf_counter()

    train_sets, dev_sets = read_corpora(train_files, config.limit), read_corpora(dev_files, config.dev_limit)
    total = sum(map(len, train_sets)) + sum(map(len, dev_sets))
    bar = progress_factory(total, "parsing") if progress_factory else None
    train_items = prepare_cotraining([it for s in train_sets for it in s], bigram, dependency, bar)
    dev_parts = [prepare_cotraining(s, bigram, dependency, bar) for s in dev_sets]
    examples = [(it, g) for it in train_items if it.item.n <= config.max_tokens for g in it.golds]
    skipped = sum(len(it.golds) for it in train_items if it.item.n > config.max_tokens)
    say(f"{len(train_items)} training sentences, {len(examples)} examples ({skipped} references of sentences "
        f"> {config.max_tokens} tokens skipped), {sum(map(len, dev_parts))} dev sentences "
        f"(prepared in {time.perf_counter() - start:.1f} s)")

    nb = bigram.weights.size
    decoder = CotrainingDecoder(nb, lm if config.lm_weight > 0 else None, config)
    initial = np.concatenate((bigram.weights, config.dependency_weight * dependency.weights))
    counts = {"certified": 0, "total": 0}
    epoch_log: list[dict] = []

    def run_decode(ex: tuple[CotrainingItem, GoldStructure], w: np.ndarray) -> CotrainingPrediction:
        it, g = ex
        pred = decoder.decode(it, w, g.length)
        counts["certified"] += pred.certified
        counts["total"] += 1
        return pred

    def mistaken(ex: tuple[CotrainingItem, GoldStructure], pred: CotrainingPrediction) -> bool:
        if config.tree == "latent":
            return not np.array_equal(pred.keep, ex[1].keep)
        return not np.array_equal(pred.heads, ex[1].heads)

    def difference(ex: tuple[CotrainingItem, GoldStructure], pred: CotrainingPrediction
                   ) -> tuple[np.ndarray, np.ndarray]:
        it, g = ex
        heads = g.heads
        if config.tree == "latent":
            heads = best_tree(*pred.potentials, g.keep)  # under the weights of this decode
        gi, gv = cotraining_vector(it, g.keep, heads, nb)
        pi, pv = cotraining_vector(it, pred.keep, pred.heads, nb)
        return np.concatenate((gi, pi)), config.step * np.concatenate((gv, -pv))

    def on_epoch(epoch: int, avg: np.ndarray) -> float | None:
        if not dev_parts:
            return None
        s = decoder.dev_score(avg, dev_parts)
        share = counts["certified"] / counts["total"] if counts["total"] else None
        epoch_log.append({"epoch": epoch, "dev_bigram_f1": list(s.bigram_f1),
                          "dev_certified": list(s.certified), "train_certified": share,
                          "seconds": time.perf_counter() - start})
        counts["certified"] = counts["total"] = 0
        per_file = ", ".join(f"{100 * f:.2f} ({100 * c:.0f}% certified)"
                             for f, c in zip(s.bigram_f1, s.certified, strict=True))
        say(f"epoch {epoch}: dev bigram F1 at gold length, mean {100 * s.mean:.2f} [{per_file}]"
            + ("" if share is None else f"; certified training decodes {100 * share:.1f}%"))
        return s.mean

    start_score = on_epoch(0, initial)
    bar = progress_factory(len(examples) * config.epochs, "joint training") if progress_factory else None
    weights, reports = averaged_perceptron(examples, initial.size, run_decode, mistaken, difference,
                                           config.epochs, config.seed, on_epoch, bar, initial=initial)
    best = max((r for r in reports if r.dev_score is not None), key=lambda r: r.dev_score, default=None)
    best_epoch = best.epoch if best else config.epochs
    if start_score is not None and best is not None and start_score >= best.dev_score:
        weights, best_epoch = initial, 0
        say("no epoch beats the separately trained weights on dev: keeping them")
    wb, wd = decoder.split(weights)
    meta = {
        "trainer": "joint averaged structured perceptron, dual decomposition in the loop "
                   "(McDonald + dependency" + (" + LM" if config.lm_weight > 0 else "") + ")",
        "train_files": [str(f).rsplit("/", 1)[-1] for f in train_files],
        "dev_files": [str(f).rsplit("/", 1)[-1] for f in dev_files],
        "limit": config.limit, "dev_limit": config.dev_limit, "epochs": config.epochs,
        "lm_weight": config.lm_weight, "step": config.step, "tree": config.tree,
        "dependency_weight": config.dependency_weight,
        "max_iterations": config.max_iterations,
        "time_limit": config.time_limit, "max_tokens": config.max_tokens, "seed": config.seed,
        "examples": len(examples), "skipped_long_references": skipped, "best_epoch": best_epoch,
        "mistakes_per_epoch": [r.mistakes for r in reports], "epoch_log": epoch_log,
        "training_seconds": time.perf_counter() - start,
    }
    b = BigramModel(np.array(wb), bigram.hash_bits, bigram.lexical, bigram.lm, {**bigram.meta, "joint": meta})
    d = DependencyModel(np.array(wd), dependency.hash_bits, dependency.second_order, dependency.lexical,
                        {**dependency.meta, "joint": meta})
    return CotrainingResult(b, d, reports, meta)
