"""Building a rewriting model directory from the rewriting corpus (``make rewrite-model``).

Steps, each deterministic (same inputs → same bytes):

1. read ``train.jsonl`` and ``dev.jsonl``; parse sources and references with the project's spaCy
   pipeline (cached on disk, ``dualdecomp.data.rewriting.parsed``);
2. align every source with each of its training references (``dualdecomp.data.rewriting.alignment``) and
   extract the STSG (``dualdecomp.models.rewriting.extraction``); extracted rules seen fewer than
   ``min_count`` times (or, with ``min_sources``, in fewer distinct sources) are dropped (the coverage
   rules of every source production stay);
3. estimate the target LM: a KenLM bigram (``lmplz``) over the training references and the Google
   training sentences (never a dev reference);
4. build one chart per training source (:mod:`dualdecomp.models.rewriting.training`; with
   ``leave_one_out``, over the rules the grammar would have without that source's own occurrences) and
   train by SSVM;
   **the dev rule, fixed before any run**: after each epoch the averaged weights decode the dev sources
   at free length and the epoch with the highest mean of the ASSET and TurkCorpus corpus SARI is kept
   (decoded with the default decode settings; the settings given, ``lm_scale`` and ``word_bias``, are
   stored in ``meta.decode`` for ``dualdecomp rewrite``: they were chosen on dev by the rule of
   ``docs/rewriting.md``, "How decode settings are chosen");
5. with ``keep_encoder``, learn the in-domain keep classifier on the training sources
   (``dualdecomp.models.rewriting.keep_classifier``: each token's share of its source's references, from
   the encoder's states) and store it, with its weight ``keep_weight`` in ``meta.decode`` (the epoch
   choice does not use it);
6. write ``model.json``, ``weights.npz``, ``grammar.bin``, ``lm.binary``, ``keep_classifier.npz`` (with a
   classifier), ``README.md`` and ``MANIFEST.json`` (``dualdecomp.models.rewriting.model``), in a
   temporary folder renamed into place.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_directory
from dualdecomp.data.rewriting import read_rewriting
from dualdecomp.data.rewriting.alignment import align_words
from dualdecomp.data.rewriting.parsed import ParsedExample, parse_examples
from dualdecomp.models.evaluation import evaluate_rewrites
from dualdecomp.models.lm import build_lm_report, load_lm, read_corpora_sentences
from dualdecomp.models.neural import load_neural_model
from dualdecomp.models.rewriting.decode_settings import ARTICLE_AGREEMENT, DecodeSettings
from dualdecomp.models.rewriting.extraction import extract_rewrite_grammar, rule_occurrences
from dualdecomp.models.rewriting.features import RuleStatistics, featuriser_for
from dualdecomp.models.rewriting.keep_classifier import (
    encoder_reference,
    save_keep_classifier,
    train_keep_classifier,
)
from dualdecomp.models.rewriting.lm_matrix import unigram_scorer
from dualdecomp.models.rewriting.loss import ReferenceShares, reference_shares
from dualdecomp.models.rewriting.model import RewriteDecoder, RewriteModel, rules_for, save_rewrite_model
from dualdecomp.models.rewriting.training import make_example, train_rewriter
from dualdecomp.models.ssvm import SsvmConfig, SsvmStats
from dualdecomp.solvers.rewriting import (
    RewriteGrammar,
    RewriteGrammarConfig,
    RewriteRule,
    load_rewrite_grammar,
    save_rewrite_grammar,
)

__all__ = ["RewriteTrainingSettings", "train_rewrite_model"]

LICENCE_NOTE = ("Trained on ASSET (CC BY-NC 4.0: NON-COMMERCIAL use only) and TurkCorpus "
                "(cocoxu/simplification, GPL-3.0 repository) rewrites of English Wikipedia sentences; "
                "see NOTICE.md.")


@dataclass(frozen=True)
class RewriteTrainingSettings:
    """Settings of :func:`train_rewrite_model` (stored in ``model.json`` → ``meta.training``).

    Attributes
    ----------
    data_dir : str
        The shared ``rewriting/`` folder (``train.jsonl``, ``dev.jsonl``).
    google : tuple of str
        Google training files for the target LM (besides the training references).
    out_dir : str
    cache_dir : str
        Where the parses are cached.
    limit : int or None
        Use only the first ``limit`` training sources (tests); None: all.
    dev_limit : int or None
        Use only the first ``dev_limit`` dev sources for the epoch choice.
    reference_sets : tuple of str
    loss_set_weights : tuple of (str, float)
        The weight of each reference set in the loss's shares ``r`` (each set's references share its
        weight equally; a set not named weighs 0; normalised): the forty-seventh rule of
        ``docs/rewriting.md``. Empty: every reference weighs the same (10 ASSET and 8 TurkCorpus). The
        grammar, the LM, the keep classifier and the epoch choice are unchanged.
    min_count : int
        Extracted rules seen fewer times are dropped.
    lexical_min_count : int or None
        The same for the lexical paraphrase rules (origin ``lexical``); None: ``min_count``.
    min_sources : int
        Extracted rules whose occurrences come from fewer distinct training sources are dropped too
        (lexical paraphrases and coverage rules exempt; 1: no such pruning; the thirty-seventh rule of
        ``docs/rewriting.md``).
    grammar : dict
        ``RewriteGrammarConfig`` fields.
    epochs, lam, seed, hash_bits : SSVM settings
    max_states : int or None
        Beam per table in training and decoding (None: exact everywhere).
    lm_order : int
    delete_weight : float
        β of the loss (``dualdecomp.models.rewriting.training.hyperedge_losses``).
    oracle_head_price : float
        The oracle's price per deleted phrase head (``make_example``'s ``head_price``; 0: none).
    bigram_loss : float
        α of the loss's bigram term (``make_example``'s ``bigram_weight``; 0: none).
    add_reward : float
        λ of the loss's add reward (``make_example``'s ``add_weight``; 0: none).
    bigram_add_reward : float
        μ of the bigram term's add reward (``make_example``'s ``bigram_add_weight``; 0: none).
    leave_one_out : bool
        Build each training source's chart over the rules the grammar would have without that source's
        own occurrences (extracted rules seen fewer than ``min_count`` times in the *other* sources are
        left out of its chart; the coverage rules stay): a rule extracted from one sentence is then never
        trained on that sentence, where it is right by construction (the thirty-sixth rule of
        ``docs/rewriting.md``). The grammar stored, the features and the epoch choice are unchanged.
    hope_epochs : int
        Epochs towards the hope derivations after the ``epochs`` towards the oracle
        (:func:`~dualdecomp.models.rewriting.training.train_rewriter`; 0: none). The dev rule chooses
        among all epochs.
    features : tuple of str
        Optional feature groups (``dualdecomp.models.rewriting.features.FEATURE_GROUPS``).
    lm_scale, word_bias, substitution_bias, insertion_bias : float
    article_agreement : bool
    keep_weight : float
        Decode-time settings stored in ``meta.decode``
        (:class:`~dualdecomp.models.rewriting.decode_settings.DecodeSettings`); training and the epoch
        choice do not use them.
    keep_encoder : str or None
        A neural scorer directory whose encoder states the keep classifier is learnt from (step 5; the
        embedded compression model's ``neural`` for the embedded model); None: no classifier.

    Raises
    ------
    InputError
        A bad decode setting, or a ``keep_weight`` other than 0 without ``keep_encoder`` (checked on
        construction, before any long run).
    """

    data_dir: str
    out_dir: str
    cache_dir: str
    google: tuple[str, ...] = ()
    limit: int | None = None
    dev_limit: int | None = None
    reference_sets: tuple[str, ...] = ("asset", "turkcorpus")
    loss_set_weights: tuple[tuple[str, float], ...] = ()
    min_count: int = 2
    lexical_min_count: int | None = None
    min_sources: int = 1
    grammar: dict = field(default_factory=lambda: {"depth": 0, "phrase_words": 3})
    epochs: int = 3
    lam: float = 1e-4
    seed: int = 0
    hash_bits: int = 20
    max_states: int | None = None
    lm_order: int = 2
    delete_weight: float = 1.0
    oracle_head_price: float = 0.0
    bigram_loss: float = 0.0
    add_reward: float = 0.0
    bigram_add_reward: float = 0.0
    leave_one_out: bool = False
    hope_epochs: int = 0
    features: tuple[str, ...] = ()
    lm_scale: float = 1.0
    word_bias: float = 0.0
    substitution_bias: float = 0.0
    insertion_bias: float = 0.0
    article_agreement: bool = ARTICLE_AGREEMENT
    keep_weight: float = 0.0
    keep_encoder: str | None = None

    def __post_init__(self) -> None:
        weights = dict(self.loss_set_weights)
        if (len(weights) != len(self.loss_set_weights) or not set(weights) <= set(self.reference_sets)
                or (weights and (min(weights.values()) < 0 or sum(weights.values()) <= 0))):
            raise InputError("the loss's reference-set weights name each of "
                             + ", ".join(self.reference_sets) + " at most once, with weights >= 0 "
                             "and not all 0")
        if self.decode.keep_weight != 0.0 and self.keep_encoder is None:  # a bad setting raises here too
            raise InputError("a keep weight other than 0 needs a keep classifier: give its encoder "
                             "(keep_encoder, --keep-encoder)")

    @property
    def decode(self) -> DecodeSettings:
        """The decode settings stored in ``meta.decode`` (raises ``InputError`` for a bad value)."""
        return DecodeSettings(self.lm_scale, self.word_bias, self.substitution_bias, self.insertion_bias,
                              self.article_agreement, keep_weight=self.keep_weight)


def _pairs(examples: Sequence[ParsedExample], sets: Sequence[str]) -> Iterator[tuple]:
    for ex in examples:
        for name in sets:
            for ref in ex.references[name]:
                yield ex.source.tree, ref.tree, align_words(ex.source.tokens, ref.tokens, ex.source.lemmas,
                                                            ref.lemmas)


def _survives(rule: RewriteRule, count: int, min_count: int, lexical_min_count: int | None) -> bool:
    """Whether a rule seen ``count`` times stays: ``min_count`` times, or ``lexical_min_count`` for the
    lexical paraphrase rules (origin ``lexical``; None: ``min_count``); the coverage rules always stay."""
    lexical = min_count if lexical_min_count is None else lexical_min_count
    return (count >= (lexical if "lexical" in rule.origins else min_count)
            or bool(rule.origins & {"copy", "delete"}))


def _pruned(grammar: RewriteGrammar, min_count: int, lexical_min_count: int | None = None) -> RewriteGrammar:
    """The grammar without the extracted rules that :func:`_survives` drops."""
    out = RewriteGrammar(config=grammar.config)
    for rule in grammar:
        if _survives(rule, rule.count, min_count, lexical_min_count):
            out.add(rule)
    return out


def _occurrences(ex: ParsedExample, settings: RewriteTrainingSettings) -> tuple[Counter, Counter]:
    """What ``ex``'s aligned pairs contribute to each rule key
    (:func:`~dualdecomp.models.rewriting.extraction.rule_occurrences`: extracted, paraphrase)."""
    return rule_occurrences(_pairs([ex], settings.reference_sets), RewriteGrammarConfig(**settings.grammar))


def _own(rule: RewriteRule, occurrences: tuple[Counter, Counter]) -> int:
    """The count of ``rule`` among ``occurrences`` (extracted, paraphrase): the extracted one when the rule
    has origin ``train`` (the grammar counts those), else the paraphrase one — one source's share of
    ``rule.count``, or, over per-key source counts, the number of sources."""
    return occurrences[0 if "train" in rule.origins else 1].get(rule.key, 0)


def _rules_without(ex: ParsedExample, grammar: RewriteGrammar, settings: RewriteTrainingSettings
                   ) -> list[RewriteRule]:
    """The rules of ``grammar`` matching ``ex``'s source that the grammar would keep without ``ex``'s own
    occurrences (``leave_one_out``): a rule's count less :func:`_own`, judged by :func:`_survives`."""
    occurrences = _occurrences(ex, settings)
    return [rule for rule in rules_for(grammar, ex.source.tree)
            if _survives(rule, rule.count - _own(rule, occurrences), settings.min_count,
                         settings.lexical_min_count)]


def _from_enough_sources(grammar: RewriteGrammar, examples: Sequence[ParsedExample],
                         settings: RewriteTrainingSettings) -> RewriteGrammar:
    """The grammar without the extracted rules whose occurrences come from fewer than ``min_sources``
    distinct training sources (``min_sources``; lexical paraphrases and coverage rules stay)."""
    # per key: how many sources extract it, how many paraphrase it
    sources: tuple[Counter, Counter] = (Counter(), Counter())
    for ex in examples:
        for counted, occurrences in zip(sources, _occurrences(ex, settings), strict=True):
            counted.update(occurrences.keys())
    out = RewriteGrammar(config=grammar.config)
    for rule in grammar:
        if rule.origins & {"copy", "delete", "lexical"} or _own(rule, sources) >= settings.min_sources:
            out.add(rule)
    return out


def _grammar(settings: RewriteTrainingSettings, ptrain: Sequence[ParsedExample], cache: Path
             ) -> tuple[RewriteGrammar, dict]:
    """The pruned grammar and its extraction record, read from the cache when the same corpus and
    settings made it before (the extraction is deterministic: a rebuild gives the same bytes)."""
    corpus = hashlib.sha256()
    for ex in ptrain:
        corpus.update(json.dumps([ex.source.tokens, [[r.tokens for r in ex.references[name]]
                                                     for name in settings.reference_sets]]).encode())
    spec = {"corpus": corpus.hexdigest(), "sets": settings.reference_sets, "grammar": settings.grammar,
            "min_count": settings.min_count, "version": 1}
    if settings.lexical_min_count is not None:  # only when set: the caches written before keep their keys
        spec["lexical_min_count"] = settings.lexical_min_count
    if settings.min_sources != 1:  # likewise
        spec["min_sources"] = settings.min_sources
    key = json.dumps(spec, sort_keys=True)
    stem = cache / f"grammar-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    if stem.with_suffix(".bin").is_file() and stem.with_suffix(".json").is_file():
        return (load_rewrite_grammar(stem.with_suffix(".bin")),
                json.loads(stem.with_suffix(".json").read_text(encoding="utf-8")))
    grammar, report = extract_rewrite_grammar(_pairs(ptrain, settings.reference_sets),
                                              RewriteGrammarConfig(**settings.grammar), check=False)
    grammar = _pruned(grammar, settings.min_count, settings.lexical_min_count)
    if settings.min_sources != 1:
        grammar = _from_enough_sources(grammar, ptrain, settings)
    extraction = {"pairs": report.pairs, "rule_types": report.rule_types, "rules_after_pruning": len(grammar)}
    save_rewrite_grammar(grammar, stem.with_suffix(".bin"))
    stem.with_suffix(".json").write_text(json.dumps(extraction, sort_keys=True), encoding="utf-8")
    return load_rewrite_grammar(stem.with_suffix(".bin")), extraction


def _loss_shares(example: ParsedExample, settings: RewriteTrainingSettings) -> ReferenceShares:
    """The loss's ``r`` for one source with ``settings.loss_set_weights``: each named set's weight shared
    equally by its references."""
    weights = dict(settings.loss_set_weights)
    refs = [(r.tokens, weights.get(name, 0.0) / len(example.references[name]))
            for name in settings.reference_sets for r in example.references[name]]
    return reference_shares([tokens for tokens, _ in refs], [w for _, w in refs])


def _lm_sentences(examples: Sequence[ParsedExample], sets: Sequence[str], google: Sequence[str]
                  ) -> Iterator[list[str]]:
    for ex in examples:
        for name in sets:
            for ref in ex.references[name]:
                yield list(ref.tokens)
    if google:
        yield from read_corpora_sentences(google)


def train_rewrite_model(settings: RewriteTrainingSettings, say: Callable[[str], None] = print) -> Path:
    """Build a rewriting model directory (module docstring); returns its path."""
    data = Path(settings.data_dir)
    train = read_rewriting(data / "train.jsonl")[:settings.limit]
    dev = read_rewriting(data / "dev.jsonl")[:settings.dev_limit]
    cache = Path(settings.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    sets = settings.reference_sets
    ptrain = parse_examples(train, sets, cache=cache / "train.parses.json")
    pdev = parse_examples(dev, sets, cache=cache / "dev.parses.json")
    say(f"parsed {len(ptrain)} training and {len(pdev)} dev sources")
    grammar, extraction = _grammar(settings, ptrain, cache)
    say(f"grammar: {len(grammar)} rules after pruning (extracted from {extraction['pairs']} pairs)")
    out = Path(settings.out_dir)
    with atomic_directory(out) as work:  # every file of the model is written: a rebuild replaces each
        build_lm_report(_lm_sentences(ptrain, sets, settings.google), work / "lm.binary",
                        order=settings.lm_order)
        lm = load_lm(work / "lm.binary")
        save_rewrite_grammar(grammar, work / "grammar.bin")
        feats = featuriser_for(settings.hash_bits, RuleStatistics.from_rules(grammar.rules),
                               unigram_scorer(lm), settings.features)
        shares = [reference_shares([r.tokens for name in sets for r in ex.references[name]]) for ex in ptrain]
        loss_shares = [_loss_shares(ex, settings) for ex in ptrain] if settings.loss_set_weights else shares
        examples = [make_example(ex.source.tree, grammar, r, lm, settings.delete_weight,
                                 settings.oracle_head_price, settings.bigram_loss, settings.add_reward,
                                 settings.bigram_add_reward,
                                 _rules_without(ex, grammar, settings) if settings.leave_one_out else None)
                    for ex, r in zip(ptrain, loss_shares, strict=True)]
        say(f"{len(examples)} training charts" + (" (leave-one-out)" if settings.leave_one_out else ""))
        epochs: list[dict] = []

        def on_epoch(epoch: int, weights: np.ndarray) -> float:
            decoder = RewriteDecoder(RewriteModel(weights, settings.hash_bits), grammar, lm, feats,
                                     settings.max_states)
            outputs = [decoder.rewrite(ex.source.tree).text for ex in pdev]
            scores = evaluate_rewrites([ex.text for ex in dev], outputs,
                                       {name: [list(ex.references[name]) for ex in dev] for name in sets})
            by_set = {s.name: round(s.sari, 4) for s in scores.sets}
            mean = float(np.mean(list(by_set.values())))
            epochs.append({"epoch": epoch + 1, "dev_sari": by_set, "chars_kept": round(scores.chars_kept, 4)})
            say(f"epoch {epoch + 1}: dev SARI {by_set} (mean {mean:.2f}), characters kept "
                f"{scores.chars_kept:.3f}")
            return mean

        stats = SsvmStats()
        weights, dev_scores = train_rewriter(examples, feats, SsvmConfig(settings.epochs, settings.lam,
                                                                         settings.seed),
                                             settings.max_states, on_epoch, stats=stats,
                                             hope_epochs=settings.hope_epochs)
        best = int(np.argmax(dev_scores)) + 1 if dev_scores else settings.epochs
        training = asdict(settings) | {"data_dir": "rewriting", "out_dir": None, "cache_dir": None,
                                       "google": [Path(g).name for g in settings.google]}
        if settings.keep_encoder is not None:
            training["keep_encoder"] = encoder_reference(settings.keep_encoder)
        for name in ("add_reward", "bigram_add_reward", "lexical_min_count", "hope_epochs", "keep_weight",
                     "keep_encoder", "leave_one_out", "loss_set_weights"):
            if not training[name]:  # omitted at 0 or None: older models keep their bytes
                del training[name]
        if training["min_sources"] == 1:  # likewise
            del training["min_sources"]
        if training["article_agreement"] == ARTICLE_AGREEMENT:  # likewise (meta.decode has it otherwise)
            del training["article_agreement"]
        meta = {"training": training,
                "extraction": extraction,
                "ssvm": asdict(stats), "epochs": epochs, "selected_epoch": best,
                "selection_rule": "highest mean of ASSET and TurkCorpus corpus SARI on dev at free length",
                "max_states": settings.max_states,
                "decode": settings.decode.as_dict(),
                "licence": LICENCE_NOTE}
        if settings.keep_encoder is not None:
            keep = train_keep_classifier([ex.source.tokens for ex in ptrain], shares,
                                         load_neural_model(settings.keep_encoder))
            meta["keep_classifier"] = save_keep_classifier(work, keep, settings.keep_encoder)
            say(f"keep classifier: {keep.record['tokens']} tokens, cross-entropy "
                f"{keep.record['cross_entropy']:.4f}")
        save_rewrite_model(RewriteModel(weights, settings.hash_bits, meta), work)
        (work / "README.md").write_text(_readme(meta), encoding="utf-8")
    return out


_KEEP_NOTE = ("**Keep classifier.** `keep_classifier.npz`: a logistic regression over the states of the "
              "encoder `meta.keep_classifier.encoder` names (the embedded compression model's, "
              "`data/default_model/neural`: its provenance and licences are in that folder's "
              "`PROVENANCE.md`), learnt on the training sources' tokens labelled by the share of their "
              "references that contain them; the decode adds `keep_weight` x its centred log-odds per "
              "token written as itself (`docs/rewriting.md`, the thirty-first rule). The encoder is "
              "not copied here: its `MANIFEST.json` checksum is, and a changed encoder is refused.\n\n")


def _readme(meta: dict) -> str:
    return ("# Embedded rewriting model\n\n"
            "The rewriting model of `dualdecomp rewrite` (Cohn & Lapata 2008 tree transducer), built by "
            "`make rewrite-model` from `../shared/data/rewriting/` (train: grammar, LM, weights; dev: the "
            "epoch choice). Guide: `docs/rewriting.md`.\n\n"
            f"**Licence.** {LICENCE_NOTE} The target LM also reads the Google sentence-compression "
            "training data (\"provided AS IS\" by Google).\n\n"
            + (_KEEP_NOTE if "keep_classifier" in meta else "")
            + "## Training record (`model.json` → `meta`)\n\n```json\n"
            + json.dumps(meta, indent=1, sort_keys=True) + "\n```\n")
