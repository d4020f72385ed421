"""The rewriting model (its weights) and the decoder that bundles it with its grammar and target LM.

A model directory (``data/rewrite_model/`` is the embedded one, ``make rewrite-model`` rebuilds it):

* ``model.json`` — format tag, hash size, the files below, and ``meta`` (training provenance, the dev
  selection, the licence, and the decode-time settings ``decode``: LM scale and word bias,
  :mod:`~dualdecomp.models.rewriting.decode_settings`);
* ``weights.npz`` — the non-zero weights of the hashed weight vector (``index``, ``value``); the LM
  weight is one of them (:data:`LM_FEATURE`), learnt with the rule weights as the paper's n-gram feature;
* ``grammar.bin`` — the rewriting STSG (``dualdecomp.solvers.rewriting.save_rewrite_grammar``: memory
  mapped, checksummed);
* ``lm.binary`` — the target bigram LM (KenLM);
* ``keep_classifier.npz`` — optional: the in-domain keep classifier's weights (``meta.keep_classifier``
  names them and the encoder it reads, with that encoder's checksum:
  :mod:`~dualdecomp.models.rewriting.keep_classifier`); used when the decode setting ``keep_weight`` is
  not 0;
* ``MANIFEST.json`` — sha256 of every file.

:class:`RewriteModel` holds only the weights and settings; :class:`RewriteDecoder` holds the bundle and
decodes a source tree exactly (``dualdecomp.solvers.rewriting.decode``: certified unless ``max_states``
pruned a table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.hashing import atom, feature_index
from dualdecomp.core.model_files import read_json, read_sparse_weights, write_json, write_sparse_weights
from dualdecomp.data.trees import Tree
from dualdecomp.models.lm import LanguageModel, load_lm
from dualdecomp.models.rewriting.application import application_values, bias_counts, hyperedge_counts
from dualdecomp.models.rewriting.articles import forbid_article_disagreement
from dualdecomp.models.rewriting.decode_settings import BIASES, DecodeSettings
from dualdecomp.models.rewriting.features import RewriteFeaturiser, RuleStatistics, featuriser_for
from dualdecomp.models.rewriting.keep_classifier import KeepClassifier, load_keep_classifier
from dualdecomp.models.rewriting.lm_matrix import bigram_matrix, scaled_lm, unigram_scorer
from dualdecomp.solvers.rewriting import (
    Budget,
    RewriteComponent,
    RewriteDerivation,
    RewriteGrammar,
    RewriteHypergraph,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    keep_means_copied,
    load_rewrite_grammar,
    rewriting_coverage_rules,
)

__all__ = ["FORMAT", "LM_FEATURE", "DecodeSettings", "RewriteDecoder", "RewriteModel", "bias_counts",
           "hyperedge_counts", "hyperedge_scores", "lm_index", "load_rewrite_decoder", "rules_for",
           "save_rewrite_model"]

FORMAT = "dualdecomp-rewrite-model"
LM_FEATURE = "lm"
"""The hashed feature whose weight multiplies the target LM's log10 probabilities."""
_LM_TEMPLATE = 1 << 20  # outside the rule templates' ids


def lm_index(hash_bits: int) -> int:
    """Index of the LM weight in a weight vector of ``2**hash_bits``."""
    return int(feature_index(_LM_TEMPLATE, np.uint64(atom(LM_FEATURE)), 0, hash_bits))


@dataclass(frozen=True)
class RewriteModel:
    """The weights of the rewriting model and its settings (no grammar, no LM).

    Attributes
    ----------
    weights : numpy.ndarray
        float64 of size ``2**hash_bits``.
    hash_bits : int
    meta : dict
        Training provenance and decoding settings (``max_states``).
    """

    weights: np.ndarray
    hash_bits: int = 20
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def lm_weight(self) -> float:
        """The weight of the target LM."""
        return float(self.weights[lm_index(self.hash_bits)])


def hyperedge_scores(hg: RewriteHypergraph, weights: np.ndarray, feats: RewriteFeaturiser,
                     application: np.ndarray | None = None) -> np.ndarray:
    """w·φ of every hyperedge: its rule's features plus its per-application features (``application``:
    :func:`~dualdecomp.models.rewriting.application.application_values` of ``hg``, computed when None)."""
    rule_scores = np.array([float(weights[i] @ v) for i, v in (feats(r) for r in hg.rules)])
    if application is None:
        application = application_values(hg, pos=feats.deletion_pos, relations=feats.deletion_dep)
    return (rule_scores[hg.hyperedge_rule]
            + application[:, feats.application_columns] @ weights[feats.application_index])


def rules_for(grammar: RewriteGrammar, tree: Tree) -> list[RewriteRule]:
    """The grammar's rules whose source root production occurs in ``tree`` (what can match it)."""
    seen: set[str] = set()
    out: list[RewriteRule] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.is_leaf:
            continue
        prod = node.production()
        if prod not in seen:
            seen.add(prod)
            out.extend(grammar.rule(i) for i in grammar.candidates(prod))
        stack.extend(node.children)
    return out


@dataclass
class RewriteDecoder:
    """The model, its grammar and its target LM: rewrites a source tree.

    Attributes
    ----------
    model : RewriteModel
    grammar : RewriteGrammar
    lm : LanguageModel or None
    featuriser : RewriteFeaturiser
    max_states : int or None
        Beam per vertex table (None: exact; a pruned table makes a result APPROXIMATE).
    settings : DecodeSettings
        LM scale, per-word biases and the keep term's weight (default: scale 1, biases 0, the weights
        as learnt).
    keep : KeepClassifier or None
        The keep classifier whose term ``settings.keep_weight`` weighs (needed when that is not 0).

    Raises
    ------
    InputError
        A ``keep_weight`` other than 0 without a keep classifier.
    """

    model: RewriteModel
    grammar: RewriteGrammar
    lm: LanguageModel | None
    featuriser: RewriteFeaturiser
    max_states: int | None = None
    settings: DecodeSettings = field(default_factory=DecodeSettings)
    keep: KeepClassifier | None = None

    def __post_init__(self) -> None:
        if self.settings.keep_weight != 0.0 and self.keep is None:
            raise InputError(f"keep_weight {self.settings.keep_weight:g} needs a rewriting model with a keep "
                             "classifier (model.json: meta.keep_classifier); this one has none")

    def hypergraph(self, tree: Tree) -> RewriteHypergraph:
        """The derivation forest of ``tree`` under the grammar plus coverage rules."""
        return build_rewrite_hypergraph(tree, rules_for(self.grammar, tree),
                                        coverage=rewriting_coverage_rules)

    @property
    def lm_weight(self) -> float:
        """The LM weight the chart uses: the learnt weight × ``settings.lm_scale``."""
        return self.model.lm_weight * self.settings.lm_scale

    def lm_matrix(self, hg: RewriteHypergraph, bigrams: np.ndarray | None = None) -> np.ndarray | None:
        """What the chart adds per bigram: :attr:`lm_weight` × the bigram matrix of ``hg``'s vocabulary
        (``bigrams``: that matrix, unscaled, when already read), with the article disagreements
        forbidden when ``settings.article_agreement`` (:func:`forbid_article_disagreement`). None when
        there is nothing to add (no LM or weight 0, and no disagreement)."""
        matrix = None
        if self.lm is not None and self.lm_weight != 0.0:
            unscaled = bigram_matrix(self.lm, hg.vocab) if bigrams is None else bigrams
            matrix = scaled_lm(unscaled, self.lm_weight)
        if self.settings.article_agreement:
            matrix = forbid_article_disagreement(matrix, hg.vocab, hg.words)
        return matrix

    def hyperedge_scores(self, hg: RewriteHypergraph) -> np.ndarray:
        """w·φ of every hyperedge plus the settings' biases × its counts (words written, substituted,
        inserted) plus ``keep_weight`` × the keep classifier's term (the centred log-odds of the source
        tokens it copies: :meth:`KeepClassifier.hyperedge_terms`). Every decode path reads its scores
        here."""
        counts = bias_counts(hg) if self.settings.biased else None
        scores = self.biased(hyperedge_scores(hg, self.model.weights, self.featuriser), counts)
        if self.settings.keep_weight != 0.0:
            scores = scores + self.settings.keep_weight * self.keep.hyperedge_terms(hg)
        return scores

    def biased(self, scores: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
        """w·φ ``scores`` plus the settings' biases × each hyperedge's ``counts`` (:func:`bias_counts`;
        unused when every bias is 0)."""
        if not self.settings.biased:
            return scores
        s = self.settings
        return scores + counts @ np.array([getattr(s, name) for name in BIASES])

    def component(self, tree: Tree, budget: Budget | None = None, copied: Sequence[int] = ()
                  ) -> RewriteComponent:
        """The exact chart of ``tree`` (LM inside) as a dual-decomposition component over its source
        tokens, to join with the deletion models (``dualdecomp.decode``). Always exact: ``max_states``
        does not apply to a component. For the tokens ``copied`` (0-based) the component's keep means
        *written as itself* (a substituted one counts as dropped: ``keep_means_copied``)."""
        hg = self.hypergraph(tree)
        scores = self.hyperedge_scores(hg)  # on hg itself: the application features read its deletions
        return RewriteComponent(keep_means_copied(hg, copied) if len(copied) else hg, scores,
                                self.lm_matrix(hg), budget)

    def decode(self, hg: RewriteHypergraph, budget: Budget | None = None) -> RewriteDerivation:
        """The best derivation in ``hg`` under the model and its LM (exact unless ``max_states`` pruned)."""
        return decode(hg, self.hyperedge_scores(hg), self.lm_matrix(hg), budget, self.max_states)

    def rewrite(self, tree: Tree, budget: Budget | None = None) -> RewriteDerivation:
        """The best rewrite of ``tree``: :meth:`decode` of its :meth:`hypergraph`."""
        return self.decode(self.hypergraph(tree), budget)


def save_rewrite_model(model: RewriteModel, directory: str | Path, grammar_file: str = "grammar.bin",
                       lm_file: str | None = "lm.binary") -> Path:
    """Write ``model.json`` and ``weights.npz`` into ``directory`` (the grammar and LM are written by
    their own writers)."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    write_sparse_weights(d / "weights.npz", model.weights)
    write_json(d / "model.json", {"format": FORMAT, "hash_bits": model.hash_bits, "grammar": grammar_file,
                                  "lm": lm_file, "meta": model.meta})
    return d


def load_rewrite_decoder(directory: str | Path, max_states: int | None = None, lm_scale: float | None = None,
                         word_bias: float | None = None, substitution_bias: float | None = None,
                         insertion_bias: float | None = None,
                         article_agreement: bool | None = None,
                         paired_punctuation: bool | None = None,
                         keep_weight: float | None = None) -> RewriteDecoder:
    """Load a model directory (module docstring) as a :class:`RewriteDecoder`.

    Parameters
    ----------
    directory : path
    max_states : int, optional
        Beam per table (None: the model's ``meta.max_states``).
    lm_scale, word_bias, substitution_bias, insertion_bias : float, optional
        Override the model's decode settings (``meta.decode``; None: the model's).
    article_agreement, paired_punctuation : bool, optional
        Override the model's article agreement / paired punctuation (None: the model's).
    keep_weight : float, optional
        Override the weight of the keep classifier's term (None: the model's). The classifier and its
        encoder are loaded only when the weight is not 0.

    Raises
    ------
    ModelError
        A missing or damaged file (named); a keep classifier whose encoder is missing or changed.
    InputError
        A bad ``lm_scale``, bias, ``article_agreement`` or ``keep_weight``; a ``keep_weight`` other than
        0 for a model without a keep classifier.
    """
    d = Path(directory)
    spec = read_json(d / "model.json")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise ModelError(f"{d / 'model.json'}: not a dualdecomp rewrite model")
    bits = spec.get("hash_bits")
    if isinstance(bits, bool) or not isinstance(bits, int) or not 8 <= bits <= 26:
        raise ModelError(f"{d / 'model.json'}: bad hash_bits {bits!r}")
    weights = read_sparse_weights(d / "weights.npz", 1 << bits)
    meta = spec.get("meta") if isinstance(spec.get("meta"), dict) else {}
    model = RewriteModel(weights, bits, meta)
    grammar = load_rewrite_grammar(d / str(spec.get("grammar", "grammar.bin")))
    lm = load_lm(d / spec["lm"]) if spec.get("lm") else None
    groups = (meta.get("training") or {}).get("features") or ()
    try:
        feats = featuriser_for(bits, RuleStatistics.from_rules(grammar.rules),
                               unigram_scorer(lm) if lm is not None else None, groups)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{d / 'model.json'}: meta.training.features: {exc}") from None
    if max_states is None:
        max_states = meta.get("max_states")
    settings = DecodeSettings.from_meta(meta, str(d / "model.json")).replace(
        lm_scale, word_bias, substitution_bias, insertion_bias, article_agreement, paired_punctuation,
        keep_weight)
    keep = None
    if settings.keep_weight != 0.0:
        if "keep_classifier" in meta:
            keep = load_keep_classifier(d, meta["keep_classifier"], str(d / "model.json"))
        elif keep_weight is None:  # the model's own setting
            raise ModelError(f"{d / 'model.json'}: meta.decode.keep_weight without meta.keep_classifier")
    return RewriteDecoder(model, grammar, lm, feats, max_states, settings, keep)
