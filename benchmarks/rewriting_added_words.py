"""The twenty-eighth rule of ``docs/rewriting.md`` (W3.3): a context-aware score for the words a rewrite adds.

Usage (from the repository root; needs the ``add4`` fold models of ``benchmarks/rewriting_cv.py run``)::

    .venv/bin/python benchmarks/rewriting_added_words.py --out benchmarks/rewriting_added_words.jsonl
    .venv/bin/python benchmarks/rewriting_added_words.py --label add \
        --out benchmarks/rewriting_added_words_add.jsonl      # the twenty-ninth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --label add --with-biases \
        --out benchmarks/rewriting_added_words_biases.jsonl   # the thirtieth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep \
        --out benchmarks/rewriting_keep_in_domain.jsonl       # the thirty-first rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --wide \
        --out benchmarks/rewriting_keep_in_domain_wide.jsonl  # the thirty-second rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --turk \
        --out benchmarks/rewriting_keep_turkcorpus.jsonl      # the thirty-third rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --word-bias-grid \
        --out benchmarks/rewriting_keep_word_bias.jsonl       # the thirty-fourth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --content \
        --out benchmarks/rewriting_content_insertions.jsonl   # the thirty-fifth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --loo \
        --out benchmarks/rewriting_leave_one_out.jsonl        # the thirty-sixth rule (add4-loo fold models)
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --loo --candidate add4-src2 \
        --out benchmarks/rewriting_min_sources.jsonl          # the thirty-seventh rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --bias-grid \
        --out benchmarks/rewriting_keep_biases.jsonl          # the thirty-eighth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --joint-grid \
        --out benchmarks/rewriting_keep_joint.jsonl           # the thirty-ninth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --similarity \
        --out benchmarks/rewriting_similarity.jsonl           # the fortieth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --edge-grid \
        --out benchmarks/rewriting_keep_edges.jsonl           # the forty-first rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --insertion-grid \
        --out benchmarks/rewriting_keep_insertions.jsonl      # the forty-second rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --turk-first \
        --out benchmarks/rewriting_turk_first.jsonl           # the forty-third rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --word-edge \
        --out benchmarks/rewriting_word_edge.jsonl            # the forty-fourth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --lm-scale-grid \
        --out benchmarks/rewriting_lm_scale.jsonl             # the forty-fifth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --low-keep-grid \
        --out benchmarks/rewriting_low_keep.jsonl             # the forty-sixth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --loss-grid --candidate add4-turk75 \
        --out benchmarks/rewriting_loss_turk75.jsonl          # the forty-seventh rule (and add4-turk100)
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --loss-keep-grid --candidate add4-turk75 \
        --out benchmarks/rewriting_loss_keep.jsonl            # the forty-eighth rule
    .venv/bin/python benchmarks/rewriting_added_words.py --keep --loss-between-grid --candidate add4-turk75 \
        --out benchmarks/rewriting_loss_between.jsonl         # the forty-ninth rule

For each fold f: the hyperedges of fold f's model over its 1,200 training sources give the examples
(:func:`added_words`: every word a hyperedge adds — substituted in more than case, or inserted — with its
context tokens), labelled by the share of the sentence's 18 references that contain the word; a logistic
regression on the compression encoder's states (:func:`features`, :func:`fit`) learns them. Fold f's
held-out sentences are then decoded at the shipped setting with μ × (log-odds − m) added per added word
(:func:`hyperedge_terms`), over the grid :data:`GRID`; the choice and its nested estimate are those of the
twentieth rule (``benchmarks/rewriting_decode_grid.py``), written as the variants ``add4/added-nested`` and
``add4/added0`` (μ = 0) that ``benchmarks/rewriting_cv.py score`` compares. Each fold's classifier is also
scored on its held-out fold's examples (AUC of r > 0 against r = 0): reported, not decided on.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from dualdecomp.app.rewriter import Rewriter
from dualdecomp.app.rewriting_evaluation import DEFAULT_SETS, RewriteCorpus, read_rewrite_corpus
from dualdecomp.data.parsing import tokenise_text
from dualdecomp.data.trees import from_dependency
from dualdecomp.models.neural import load_neural_model
from dualdecomp.models.rewriting.application import content_insertion_counts, per_rule_values
from dualdecomp.models.rewriting.decode_settings import DecodeSettings
from dualdecomp.models.rewriting.keep_classifier import (
    KeepClassifier,
    fit_soft_logistic,
    keep_features,
    unit_rows,
)
from dualdecomp.models.rewriting.loss import ReferenceShares, reference_shares
from dualdecomp.solvers.rewriting.component import target_word_links, used_tokens
from dualdecomp.solvers.transducer import WORD

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rewriting_decode_grid import (  # noqa: E402  (a sibling script)
    KEEP_BASE,
    KEEP_SCORER,
    _fold_slices,
    _nested,
    _other_folds,
    _rewrites,
    _select,
    _write_variant,
    choose_doubling,
    parsed_sources,
    prepare_sentences,
    setting_row,
    write_result,
)

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".cache" / "rewriting_cv"
RECIPE = "add4"
GRID = {"added_weight": (0.0, 15.0, 30.0, 60.0, 120.0, 240.0)}
"""The twenty-eighth, twenty-ninth and thirty-first rules' grid of μ."""
GRID_WIDE = {"added_weight": (0.0, 240.0, 480.0, 960.0, 1920.0)}
"""The thirty-second rule's grid of μ for the keep classifier (``--keep --wide``)."""
GRID_TURK = {"added_weight": (0.0, 120.0, 240.0, 480.0, 960.0)}
"""The thirty-third rule's grid of μ_T, the TurkCorpus classifier's weight (``--keep --turk``), beside the
shipped classifier at :data:`SHIPPED_KEEP`."""
SHIPPED_KEEP = 480.0
GRID_WORD_BIAS = {"added_weight": (240.0, 480.0, 960.0), "word_bias": (30.0, 60.0, 90.0, 120.0)}
"""The thirty-fourth rule's grid: μ × word bias (``--keep --word-bias-grid``)."""
GRID_CONTENT = {"added_weight": (0.0, 120.0, 240.0, 480.0, 960.0)}
"""The thirty-fifth rule's grid: ν, the penalty per content insertion (``--keep --content``)."""
GRID_KEEP_BIASES = {"substitution_bias": (0.0, 60.0, 120.0, 240.0),
                    "insertion_bias": (0.0, 45.0, 90.0, 180.0), "word_bias": (30.0, 60.0, 120.0)}
"""The thirty-eighth rule's grid, with the shipped classifier at 480 (``--keep --bias-grid``)."""
GRID_JOINT = {"added_weight": (240.0, 480.0, 960.0), "word_bias": (180.0, 240.0, 360.0, 480.0),
              "substitution_bias": (60.0, 120.0, 240.0), "insertion_bias": (-45.0, 0.0)}
"""The thirty-ninth rule's grid around the shipped setting (``--keep --joint-grid``)."""
GRID_SIMILARITY = (0.0, 120.0, 240.0, 480.0, 960.0)
"""The fortieth rule's weights ν of the similarity price (``--keep --similarity``), each with the stored
substitution bias and with it + :data:`SIMILARITY_SUBSTITUTION_STEP`."""
SIMILARITY_SUBSTITUTION_STEP = 120.0
SHIPPED_38 = (480.0, 240.0, 120.0, 0.0)
"""The setting stored since the thirty-eighth rule, in :data:`GRID_JOINT`'s order."""
GRID_EDGE = {"added_weight": (960.0, 1920.0, 3840.0), "word_bias": (240.0, 360.0),
             "substitution_bias": (-30.0, 0.0, 30.0, 60.0), "insertion_bias": (-90.0, -45.0)}
"""The forty-first rule's grid past the thirty-ninth rule's edges (``--keep --edge-grid``)."""
SHIPPED_39 = (960.0, 240.0, 60.0, -45.0)
"""The setting stored since the thirty-ninth rule, in :data:`GRID_EDGE`'s order."""
GRID_INSERTION = {"added_weight": (960.0,), "word_bias": (240.0, 300.0),
                  "substitution_bias": (0.0, 30.0, 60.0),
                  "insertion_bias": (-45.0, -90.0, -135.0, -180.0, -270.0)}
"""The forty-second rule's grid past the forty-first rule's insertion edge (``--keep --insertion-grid``)."""
GRID_TURK_FIRST = {"added_weight": (960.0,), "word_bias": (240.0, 300.0, 360.0),
                   "substitution_bias": (30.0, 60.0),
                   "insertion_bias": (-45.0, -90.0, -135.0, -180.0, -270.0, -405.0, -540.0)}
"""The forty-third rule's grid (``--keep --turk-first``)."""
GRID_WORD_EDGE = {"added_weight": (960.0,), "word_bias": (360.0, 480.0, 600.0),
                  "substitution_bias": (0.0, 30.0, 60.0),
                  "insertion_bias": (-180.0, -270.0, -405.0, -540.0)}
"""The forty-fourth rule's grid past the forty-third rule's word-bias edge (``--keep --word-edge``)."""
SHIPPED_43 = (960.0, 360.0, 30.0, -270.0)
"""The setting stored since the forty-third rule, in :data:`GRID_WORD_EDGE`'s order."""
GRID_LM_SCALE = {"added_weight": (960.0,), "lm_scale": (0.5, 0.75, 1.0, 1.5, 2.0),
                 "word_bias": (240.0, 360.0, 480.0), "substitution_bias": (30.0,),
                 "insertion_bias": (-135.0, -270.0, -405.0)}
"""The forty-fifth rule's grid: the LM scale beside the word and insertion biases (``--keep
--lm-scale-grid``)."""
SHIPPED_43_LM = (SHIPPED_43[0], 1.0, *SHIPPED_43[1:])
"""The stored setting in :data:`GRID_LM_SCALE`'s order (LM scale 1)."""
GRID_LOW_KEEP = {"added_weight": (240.0, 480.0, 960.0), "word_bias": (240.0, 360.0, 480.0),
                 "substitution_bias": (30.0,), "insertion_bias": (-135.0, -270.0, -405.0)}
"""The forty-sixth rule's grid: the classifier's weight below 960 at the new biases (``--keep
--low-keep-grid``)."""
GRID_LOSS = {"added_weight": (960.0,), "word_bias": (240.0, 360.0, 480.0),
             "substitution_bias": (0.0, 30.0, 60.0), "insertion_bias": (-135.0, -270.0, -405.0)}
"""The forty-seventh rule's grid, for each recipe of :data:`LOSS_RECIPES` (``--keep --loss-grid``)."""
GRID_LOSS_KEEP = {"added_weight": (960.0, 1920.0, 3840.0), "word_bias": (120.0, 240.0, 360.0),
                  "substitution_bias": (30.0,), "insertion_bias": (0.0, -135.0, -270.0)}
"""The forty-eighth rule's grid: the classifier's weight above 960 for ``add4-turk75`` (``--keep
--loss-keep-grid``)."""
GRID_LOSS_BETWEEN = {"added_weight": (1280.0, 1600.0), "word_bias": (240.0, 360.0, 480.0),
                     "substitution_bias": (30.0,), "insertion_bias": (-135.0, -270.0, -405.0)}
"""The forty-ninth rule's grid: the classifier's weight between the forty-eighth rule's 960 and 1,920 for
``add4-turk75`` (``--keep --loss-between-grid``)."""
LOSS_RECIPES = ("add4-turk75", "add4-turk100")
"""The recipes whose loss weighs the reference sets (``benchmarks/rewriting_cv.py``)."""
MEAN_WITHIN = 0.05
"""The forty-third rule: the settings whose mean SARI is within this of the best compete on TurkCorpus."""
GRID_LOO = {"substitution_bias": (120.0, 240.0, 360.0), "insertion_bias": (90.0, 180.0, 270.0)}
"""The thirty-sixth rule's grid, for each recipe (``--keep --loo``)."""
LOO_RECIPE = "add4-loo"
"""The recipe trained on leave-one-out charts (``benchmarks/rewriting_cv.py``)."""
GRID_BIASES = {"added_weight": (0.0, 30.0, 60.0, 120.0, 240.0),
               "substitution_bias": (0.0, 120.0, 240.0, 360.0), "insertion_bias": (90.0, 180.0, 270.0)}
"""The thirtieth rule's grid: μ × substitution bias × insertion bias (LM scale 1, word bias 30)."""


@dataclasses.dataclass(frozen=True)
class Added:
    """One word a hyperedge adds: the hyperedge, the source tokens of its context, the word, insertion."""

    hyperedge: int
    context: tuple[int, ...]
    word: str
    inserted: bool


def _rule_added(rule) -> list[tuple[int | None, str]]:
    """The rule's added target words: (rank of the aligned source word among the rule's *used* source
    words, or None for an insertion; the word)."""
    return [(rank, word) for rank, source, word in target_word_links(rule)
            if rank is None or source.lower() != word.lower()]


def added_words(hg) -> list[Added]:
    """Every word every hyperedge of ``hg`` adds, with its context tokens (the rule's docs)."""
    ptr, idx = used_tokens(hg)
    per_rule: dict[int, list] = {}
    out = []
    for e in range(hg.num_hyperedges):
        r = int(hg.hyperedge_rule[e])
        if r not in per_rule:
            per_rule[r] = _rule_added(hg.rules[r])
        if not per_rule[r]:
            continue
        used = idx[ptr[e]:ptr[e + 1]].tolist()
        for rank, word in per_rule[r]:  # the rule's used source words are ``used``, in order
            if rank is not None:
                out.append(Added(e, (used[rank],), word, False))
            else:
                context = used or hg.tree.leaf_indices(int(hg.hyperedge_node[e]))
                out.append(Added(e, tuple(context), word, True))
    return out


class Vectors:
    """Unit-length encoder states: a sentence's tokens, and words alone (cached)."""

    def __init__(self, scorer) -> None:
        self.scorer = scorer
        self._words: dict[str, np.ndarray] = {}

    def sentence(self, tokens) -> np.ndarray:
        return unit_rows(self.scorer.hidden_states(list(tokens)))

    def word(self, w: str) -> np.ndarray:
        if w not in self._words:
            self._words[w] = unit_rows(self.scorer.hidden_states([w])[0])
        return self._words[w]


def features(added: list[Added], states: np.ndarray, vectors: Vectors) -> np.ndarray:
    """The rule's features of each added word: c, v, c ⊙ v, cos(c, v), insertion, constant."""
    d = states.shape[1]
    out = np.empty((len(added), 3 * d + 3))
    for k, a in enumerate(added):
        c = unit_rows(states[list(a.context)].mean(axis=0))
        v = vectors.word(a.word)
        out[k, :d], out[k, d:2 * d], out[k, 2 * d:3 * d] = c, v, c * v
        out[k, 3 * d] = c @ v
        out[k, 3 * d + 1] = float(a.inserted)
        out[k, 3 * d + 2] = 1.0
    return out


def changed_words(rule) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The source words a rule does not write and the target words it writes that its source lacks
    (case-insensitively), each in order: what the rule replaces, and by what."""
    source = [f.label for f in rule.source.frontier() if f.kind == WORD]
    target = [f.label for f in rule.target.frontier() if f.kind == WORD]
    s_low, t_low = {w.lower() for w in source}, {w.lower() for w in target}
    return (tuple(w for w in source if w.lower() not in t_low),
            tuple(w for w in target if w.lower() not in s_low))


class PhraseSimilarity:
    """The cosine of two phrases' mean encoder states, each phrase encoded alone (cached)."""

    def __init__(self, scorer) -> None:
        self.scorer = scorer
        self._phrases: dict[tuple[str, ...], np.ndarray] = {}

    def vector(self, words: tuple[str, ...]) -> np.ndarray:
        if words not in self._phrases:
            mean = self.scorer.hidden_states(list(words)).astype(np.float64).mean(axis=0)
            self._phrases[words] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        return self._phrases[words]

    def price(self, rule) -> float:
        """The fortieth rule's price of a rule: (1 − cos(replaced, written)) per target word written that
        its source lacks; 0 when the rule replaces nothing or writes nothing new."""
        replaced, written = changed_words(rule)
        if not replaced or not written:
            return 0.0
        return len(written) * (1.0 - float(self.vector(replaced) @ self.vector(written)))

    def hyperedge_prices(self, hg) -> np.ndarray:
        """:meth:`price` of every hyperedge's rule (float64, shape ``(hyperedges,)``)."""
        return per_rule_values(hg, self.price)


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """The probability that a positive outranks a negative (ties count half)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    s = scores[order]
    i = 0
    while i < len(s):  # average ranks of ties
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1))


def _reference_shares(corpus: RewriteCorpus, sets: tuple[str, ...] = DEFAULT_SETS) -> list[ReferenceShares]:
    """Per sentence, r(w) over its references of the ``sets`` (``reference_shares`` of them tokenised)."""
    return [reference_shares([[t for piece in tokenise_text(r) for t in piece[0]]
                              for name in sets for r in corpus.references[name][k]])
            for k in range(len(corpus.ids))]


def _examples(rewriter: Rewriter, corpus: RewriteCorpus, sentences: list, vectors: Vectors, label: str,
              hypergraphs: list | None = None):
    """Distinct (sentence, context, word, insertion) examples of the corpus' hypergraphs under the
    rewriter's model (``hypergraphs``: those of ``sentences``, the corpus' sources parsed, when already
    built): features and soft labels (``label``: ``share``, the share of references with the word, the
    twenty-eighth rule; ``add``, that share when the source lacks the word and 0 when it has it, the
    twenty-ninth)."""
    shares = _reference_shares(corpus)
    xs, ys = [], []
    for k, sentence in enumerate(sentences):
        source = {t.lower() for t in sentence.tokens}
        hg = rewriter.decoder.hypergraph(from_dependency(sentence)) if hypergraphs is None else hypergraphs[k]
        seen: dict[tuple, Added] = {}
        for a in added_words(hg):
            seen.setdefault((a.context, a.word.lower(), a.inserted), a)
        if not seen:
            continue
        added = list(seen.values())
        xs.append(features(added, vectors.sentence(sentence.tokens), vectors))
        ys.append(np.array([0.0 if label == "add" and a.word.lower() in source
                            else shares[k].shares.get(a.word.lower(), 0.0) for a in added]))
    return np.concatenate(xs), np.concatenate(ys)


def hyperedge_terms(hg, tokens, vectors: Vectors, w: np.ndarray, mean: float) -> np.ndarray:
    """Per hyperedge: Σ over the words it adds of (the classifier's log-odds − ``mean``)."""
    out = np.zeros(hg.num_hyperedges)
    added = added_words(hg)
    if added:
        z = features(added, vectors.sentence(tokens), vectors) @ w - mean
        np.add.at(out, np.array([a.hyperedge for a in added]), z)
    return out


def _keep_examples(corpus: RewriteCorpus, sentences: list, vectors: Vectors,
                   sets: tuple[str, ...] = DEFAULT_SETS):
    """The thirty-first rule's examples: every token of every source (``sentences``: the corpus' sources
    parsed), its features (``keep_features``: the unit state and a constant), and the share of the
    sentence's references of the ``sets`` that contain it (lowercased)."""
    shares = _reference_shares(corpus, sets)
    xs, ys = [], []
    for k, sentence in enumerate(sentences):
        xs.append(keep_features(vectors.scorer.hidden_states(list(sentence.tokens))))
        ys.append(np.array([shares[k].shares.get(t.lower(), 0.0) for t in sentence.tokens]))
    return np.concatenate(xs), np.concatenate(ys)


KEEP_MODES = {
    "--wide": "the thirty-second rule: the grid GRID_WIDE (variant keepin2-nested)",
    "--turk": "the thirty-third rule: a second classifier of the TurkCorpus shares, its weight over "
              "GRID_TURK beside the first at 480 (variants keepturk-nested and keep480)",
    "--word-bias-grid": "the thirty-fourth rule: mu and the word bias over GRID_WORD_BIAS (variants "
                        "keepwb-nested and keep480)",
    "--content": "the thirty-fifth rule: the shipped classifier at 480 and a penalty nu per content "
                 "insertion over GRID_CONTENT (variants content-nested and keep480)",
    "--loo": "the thirty-sixth rule: the add4 and add4-loo fold models with the classifier at 480, their "
             "biases chosen over GRID_LOO (variants add4-loo/keep-nested and add4/keep-base-nested)",
    "--bias-grid": "the thirty-eighth rule: the shipped classifier at 480 and the three biases over "
                   "GRID_KEEP_BIASES (variants keepbias-nested and keep480)",
    "--joint-grid": "the thirty-ninth rule: mu, the word bias and the substitution and insertion biases "
                    "over GRID_JOINT (variants keepjoint-nested and shipped38)",
    "--similarity": "the fortieth rule: the stored setting and a price nu per substituted word by its "
                    "phrase similarity (variants similarity-nested and stored40)",
    "--edge-grid": "the forty-first rule: the four weights over GRID_EDGE, past the thirty-ninth rule's "
                   "edges (variants keepedge-nested and shipped39)",
    "--insertion-grid": "the forty-second rule: the insertion bias past -90 over GRID_INSERTION (variants "
                        "keepins-nested and shipped39)",
    "--turk-first": "the forty-third rule: over GRID_TURK_FIRST, the best TurkCorpus SARI among the "
                    "settings within MEAN_WITHIN of the best mean SARI (variants turkfirst-nested and "
                    "shipped39)",
    "--word-edge": "the forty-fourth rule: the forty-third rule's choice over GRID_WORD_EDGE (variants "
                   "wordedge-nested and shipped43)",
    "--lm-scale-grid": "the forty-fifth rule: the forty-third rule's choice over GRID_LM_SCALE (variants "
                       "lmscale-nested and shipped43)",
    "--low-keep-grid": "the forty-sixth rule: the forty-third rule's choice over GRID_LOW_KEEP, not "
                       "extended (variants keeplow-nested and shipped43)",
    "--loss-grid": "the forty-seventh rule: the --candidate recipe's fold models (add4-turk75 or "
                   "add4-turk100), the forty-third rule's choice over GRID_LOSS, not extended (variants "
                   "CANDIDATE/turkloss-nested and CANDIDATE/at43)",
    "--loss-keep-grid": "the forty-eighth rule: the --candidate recipe's fold models (add4-turk75), the "
                        "forty-third rule's choice over GRID_LOSS_KEEP, not extended (variants "
                        "CANDIDATE/turkkeep-nested and CANDIDATE/at43)",
    "--loss-between-grid": "the forty-ninth rule: the --candidate recipe's fold models (add4-turk75), "
                           "the forty-third rule's choice over GRID_LOSS_BETWEEN, not extended "
                           "(variant CANDIDATE/turkmid-nested)",
}
"""The ``--keep`` rules after the thirty-first, each run by its flag (they exclude each other): what it
runs, for its help text."""
CANDIDATE_MODES = ("--loss-grid", "--loss-keep-grid", "--loss-between-grid")
"""The modes of :data:`KEEP_MODES` that decode the fold models of ``--candidate`` (one of
:data:`LOSS_RECIPES`) instead of ``add4``'s."""


def _attribute(flag: str) -> str:
    """The argparse attribute of a ``--flag``."""
    return flag[2:].replace("-", "_")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The twenty-eighth rule: scores for added words.")
    parser.add_argument("--out", type=Path, required=True, help="JSONL result")
    parser.add_argument("--label", choices=("share", "add"), default="share",
                        help="share: the twenty-eighth rule's label (variant added-nested); add: the "
                             "twenty-ninth's, 0 for a word the source has (variant added2-nested)")
    parser.add_argument("--with-biases", action="store_true",
                        help="the thirtieth rule: mu chosen with the substitution and insertion biases "
                             "(GRID_BIASES; variants added3-nested and added3-base-nested)")
    parser.add_argument("--keep", action="store_true",
                        help="the thirty-first rule: an in-domain keep classifier over the tokens each "
                             "hyperedge copies, instead of the added words (variant keepin-nested)")
    for flag, text in KEEP_MODES.items():
        parser.add_argument(flag, action="store_true", help=f"with --keep, {text}")
    parser.add_argument("--candidate", metavar="RECIPE",
                        help=f"with --loo, the recipe compared with add4 (default: {LOO_RECIPE}; the "
                             f"thirty-seventh rule: add4-src2); with {', '.join(CANDIDATE_MODES)} "
                             "(needed), the recipe decoded")
    args = parser.parse_args(argv)
    other_recipe = any(getattr(args, _attribute(flag)) for flag in CANDIDATE_MODES)
    if args.candidate is not None and not (args.loo or other_recipe):
        parser.error(f"--candidate needs one of --loo, {', '.join(CANDIDATE_MODES)}")
    if other_recipe and args.candidate not in LOSS_RECIPES:
        parser.error(f"{', '.join(CANDIDATE_MODES)} need --candidate " + " or ".join(LOSS_RECIPES))
    modes = sum(getattr(args, _attribute(flag)) for flag in KEEP_MODES)
    if modes and not args.keep or modes > 1:
        parser.error(f"{', '.join(KEEP_MODES)} each need --keep, and exclude each other")
    grid = (GRID_WIDE if args.wide else GRID_TURK if args.turk else GRID_WORD_BIAS if args.word_bias_grid
            else GRID_CONTENT if args.content else GRID)
    if args.keep and (args.with_biases or args.label != "share"):
        parser.error("--keep is the thirty-first rule: give neither --with-biases nor --label")
    if args.with_biases and args.label != "add":
        parser.error("--with-biases is the thirtieth rule: give --label add")
    start = time.perf_counter()
    vectors = Vectors(load_neural_model(KEEP_SCORER))
    if args.loo:
        return _leave_one_out(args.out, vectors, args.candidate or LOO_RECIPE)
    recipe = args.candidate if other_recipe else RECIPE
    prepared, corpora, diagnostics = [], [], []
    base, baked = KEEP_BASE, SHIPPED_KEEP
    if args.similarity:  # the setting the embedded model stores, its classifier in the scores (below)
        stored = Rewriter().decoder.settings
        if stored.keep_weight == 0.0:
            parser.error("--similarity expects a stored keep classifier weight")
        baked, base = stored.keep_weight, stored.replace(keep_weight=0.0)
        similarity = PhraseSimilarity(vectors.scorer)
    for f in range(3):
        rewriter = Rewriter(str(WORK / recipe / f"fold{f}" / "model"))
        train = read_rewrite_corpus(WORK / f"fold{f}" / "data" / "train.jsonl", DEFAULT_SETS)
        held = read_rewrite_corpus(WORK / f"fold{f}" / "heldout.jsonl", DEFAULT_SETS)
        train_sentences, held_sentences = parsed_sources(train.sources), parsed_sources(held.sources)
        fold_prepared = prepare_sentences(rewriter, held_sentences)
        if args.keep:
            x, y = _keep_examples(train, train_sentences, vectors)
            hx, hy = _keep_examples(held, held_sentences, vectors)
            w = fit_soft_logistic(x, y)
            if args.turk or args.content or args.bias_grid or args.similarity:  # the shipped classifier's
                shipped = KeepClassifier(w, vectors.scorer)                        # term joins the scores
                fold_prepared = [(item[0], item[1] + baked * shipped.hyperedge_terms(item[0]),
                                  *item[2:]) for item in fold_prepared]
            if args.turk:  # the grid weighs a second classifier, of the TurkCorpus shares
                x, y = _keep_examples(train, train_sentences, vectors, ("turkcorpus",))
                hx, hy = _keep_examples(held, held_sentences, vectors, ("turkcorpus",))
                w = fit_soft_logistic(x, y)
        else:
            x, y = _examples(rewriter, train, train_sentences, vectors, args.label)
            hx, hy = _examples(rewriter, held, held_sentences, vectors, args.label,
                               [item[0] for item in fold_prepared])
            w = fit_soft_logistic(x, y)
        mean = float((x @ w).mean())
        diagnostics.append({"fold": f, "train_examples": len(y),
                            "train_mean_label": round(float(y.mean()), 4), "heldout_examples": len(hy),
                            "heldout_positive": round(float((hy > 0).mean()), 4),
                            "heldout_auc": round(auc(hx @ w, hy > 0), 4),
                            "train_auc": round(auc(x @ w, y > 0), 4),
                            "heldout_auc_half": round(auc(hx @ w, hy >= 0.5), 4)})
        print(json.dumps(diagnostics[-1]), file=sys.stderr, flush=True)
        corpora.append(held)
        classifier = KeepClassifier(w, vectors.scorer)
        for item, sentence in zip(fold_prepared, held_sentences, strict=True):
            hg = item[0]
            terms = (np.zeros(hg.num_hyperedges) if args.bias_grid
                     else -similarity.hyperedge_prices(hg) if args.similarity
                     else -content_insertion_counts(hg) if args.content
                     else classifier.hyperedge_terms(hg) if args.keep
                     else hyperedge_terms(hg, sentence.tokens, vectors, w, mean))
            prepared.append((*item[:6], (terms, np.zeros(hg.num_hyperedges), 0.0)))
    corpus = RewriteCorpus(ids=sum((c.ids for c in corpora), ()),
                           sources=sum((c.sources for c in corpora), ()),
                           references={n: sum((c.references[n] for c in corpora), ()) for n in DEFAULT_SETS})
    print(f"prepared {len(prepared)} charts in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    splits = _other_folds(corpora)
    rows: dict[tuple, dict] = {}
    texts_of: dict[tuple, list[str]] = {}

    def run(setting: dict[str, float]) -> None:
        t0 = time.perf_counter()
        settings = dataclasses.replace(base, **{k: v for k, v in setting.items() if k != "added_weight"})
        texts, certified = _rewrites(prepared, settings, setting["added_weight"], keep_centred=False)
        row = setting_row(setting, corpus, texts, certified, time.perf_counter() - t0, splits)
        rows[tuple(setting.values())] = row
        texts_of[tuple(setting.values())] = texts
        print(json.dumps(row), file=sys.stderr, flush=True)

    if args.with_biases:
        return _with_biases(args, run, rows, texts_of, corpora, corpus, diagnostics)
    if args.similarity:
        return _similarity(args.out, run, rows, texts_of, corpora, corpus, diagnostics, base, baked)
    for flag, rule in KEEP_GRID_RULES.items():
        if getattr(args, flag):
            return _keep_grid(args.out, run, rows, texts_of, corpora, corpus, diagnostics, **rule,
                              recipe=recipe)
    for mu in grid["added_weight"]:
        run({"added_weight": mu})

    def choose(key: str = "mean_sari") -> dict:
        return choose_doubling(rows, grid, "added_weight", run, key, lambda r: r["added_weight"])

    choice = choose()
    selected = {"selected": {"added_weight": choice["winner"]["added_weight"]},
                "mean_sari": choice["winner"]["mean_sari"], "extended": choice["extended"],
                "classifier": diagnostics,
                "nested": _nested(RECIPE, corpora, corpus, texts_of, ["added_weight"], choose,
                                  "keepin2-nested" if args.wide else "keepturk-nested" if args.turk
                                  else "content-nested" if args.content
                                  else "keepin-nested" if args.keep else
                                  "added-nested" if args.label == "share" else "added2-nested")}
    shipped_only = args.turk or args.content  # the grid's 0 is the shipped setting
    base = dataclasses.replace(KEEP_BASE, keep_weight=SHIPPED_KEEP) if shipped_only else KEEP_BASE
    for f, (fold_corpus, part) in enumerate(zip(corpora, _fold_slices(corpora), strict=True)):
        _write_variant(RECIPE, f, "keep480" if shipped_only else "added0", fold_corpus,
                       texts_of[(0.0,)][part], base.as_dict())
    write_result(args.out, rows, selected)
    return 0


def _nearest(center: dict[str, float], steps: dict[str, float]):
    """A rule's order after characters: how far a row lies from ``center``, summed over its settings in
    order — ``added_weight`` (μ) in doublings (|log2 μ / centre|), every other setting in ``steps[name]``
    (|value − centre| / step)."""
    def distance(row: dict) -> float:
        return sum(abs(np.log2(row[name] / c)) if name == "added_weight" else abs(row[name] - c) / steps[name]
                   for name, c in center.items())
    return distance


_word_bias_distance = _nearest({"added_weight": SHIPPED_KEEP, "word_bias": 30.0}, {"word_bias": 30.0})
"""The thirty-fourth rule's order after characters: nearest the shipped setting (μ 480, bias 30)."""


def _keep_grid(out: Path, run, rows, texts_of, corpora, corpus, diagnostics, grid: dict, distance,
               name: str, shipped: tuple | None, shipped_name: str = "keep480",
               doubled: str | None = "word_bias",
               base: DecodeSettings = KEEP_BASE, baked: float = SHIPPED_KEEP,
               extra: dict | None = None, chooser=None, recipe: str = RECIPE) -> int:
    """The thirty-fourth and thirty-eighth to forty-ninth rules: every setting of ``grid`` (its first
    dimension ``added_weight``; the other settings ``base``'s), the choice (a winner at the outermost
    ``doubled`` extended once to twice it; ``doubled`` None: none), on all folds and nested (variant
    ``name``; the rewrites of the ``shipped`` setting, a key of ``rows``, as ``shipped_name`` (``shipped``
    None: none), with the classifier's weight ``baked`` where the setting's ``added_weight`` is 0: the
    classifier is in the scores already).
    ``extra`` joins the recorded choice; ``chooser`` (default :func:`choose_doubling`) chooses;
    ``recipe``'s fold models made the rewrites (the variants are its)."""
    for combo in itertools.product(*grid.values()):
        run(dict(zip(grid, combo, strict=True)))
    dims = list(grid)

    def choose(key: str = "mean_sari") -> dict:
        return (chooser or choose_doubling)(rows, grid, doubled, run, key, distance)

    choice = choose()
    winner = choice["winner"]
    selected = {"selected": {k: winner[k] for k in dims if len(grid[k]) > 1},
                "mean_sari": winner["mean_sari"], "extended": choice["extended"], "classifier": diagnostics,
                **(extra or {}), "nested": _nested(recipe, corpora, corpus, texts_of, dims, choose, name)}
    if shipped is not None:
        values = dict(zip(grid, shipped, strict=True))
        mu = values.pop("added_weight") or baked
        setting = dataclasses.replace(base, keep_weight=mu, **values).as_dict()
        for f, (fold_corpus, part) in enumerate(zip(corpora, _fold_slices(corpora), strict=True)):
            _write_variant(recipe, f, shipped_name, fold_corpus, texts_of[shipped][part], setting)
    write_result(out, rows, selected)
    return 0


_loo_distance = _nearest({"substitution_bias": 240.0, "insertion_bias": 180.0},
                         {"substitution_bias": 120.0, "insertion_bias": 90.0})
"""The thirty-sixth rule's order after characters: nearest the shipped biases."""


def _leave_one_out(out: Path, vectors: Vectors, candidate: str = LOO_RECIPE) -> int:
    """The thirty-sixth rule (and the thirty-seventh, ``candidate`` ``add4-src2``): the ``add4`` and
    ``candidate`` fold models decode their held-out folds with each fold's keep classifier at
    :data:`SHIPPED_KEEP`, over :data:`GRID_LOO`; the choice on all folds and nested for each (variants
    ``CANDIDATE/keep-nested`` and ``add4/keep-base-nested``)."""
    recipes = {candidate: "keep-nested", RECIPE: "keep-base-nested"}
    prepared: dict[str, list[tuple]] = {r: [] for r in recipes}
    corpora = []
    for f in range(3):
        train = read_rewrite_corpus(WORK / f"fold{f}" / "data" / "train.jsonl", DEFAULT_SETS)
        held = read_rewrite_corpus(WORK / f"fold{f}" / "heldout.jsonl", DEFAULT_SETS)
        train_sentences, held_sentences = parsed_sources(train.sources), parsed_sources(held.sources)
        x, y = _keep_examples(train, train_sentences, vectors)
        classifier = KeepClassifier(fit_soft_logistic(x, y), vectors.scorer)
        corpora.append(held)
        for recipe in recipes:
            rewriter = Rewriter(str(WORK / recipe / f"fold{f}" / "model"))
            for item in prepare_sentences(rewriter, held_sentences):
                hg, none = item[0], np.zeros(item[0].num_hyperedges)
                prepared[recipe].append((hg, item[1] + SHIPPED_KEEP * classifier.hyperedge_terms(hg),
                                         *item[2:6], (none, none, 0.0)))
        print(f"fold {f} prepared", file=sys.stderr, flush=True)
    corpus = RewriteCorpus(ids=sum((c.ids for c in corpora), ()),
                           sources=sum((c.sources for c in corpora), ()),
                           references={n: sum((c.references[n] for c in corpora), ()) for n in DEFAULT_SETS})
    splits = _other_folds(corpora)
    dims = list(GRID_LOO)
    all_rows: dict[tuple, dict] = {}
    selected: dict[str, dict] = {}
    for recipe, name in recipes.items():
        rows: dict[tuple, dict] = {}
        texts_of: dict[tuple, list[str]] = {}
        for combo in itertools.product(*GRID_LOO.values()):
            t0 = time.perf_counter()
            setting = dict(zip(dims, combo, strict=True))
            settings = dataclasses.replace(KEEP_BASE, **setting)
            texts, certified = _rewrites(prepared[recipe], settings)
            row = setting_row(setting, corpus, texts, certified, time.perf_counter() - t0, splits)
            rows[combo], texts_of[combo] = row, texts
            all_rows[(recipe, *combo)] = {"recipe": recipe, **row}
            print(json.dumps(all_rows[(recipe, *combo)]), file=sys.stderr, flush=True)

        def choose(key: str = "mean_sari", rows=rows) -> dict:
            return {"winner": _select(list(rows.values()), key, _loo_distance), "extended": []}

        winner = choose()["winner"]
        selected[recipe] = {"selected": {k: winner[k] for k in dims}, "mean_sari": winner["mean_sari"],
                            "nested": _nested(recipe, corpora, corpus, texts_of, dims, choose, name)}
    write_result(out, all_rows, selected)
    return 0


_keep_bias_distance = _nearest({"substitution_bias": 240.0, "insertion_bias": 180.0, "word_bias": 30.0},
                               {"substitution_bias": 120.0, "insertion_bias": 90.0, "word_bias": 30.0})
"""The thirty-eighth rule's order after characters: nearest the shipped setting."""


def _similarity(out: Path, run, rows, texts_of, corpora, corpus, diagnostics, base, baked: float) -> int:
    """The fortieth rule: ν over :data:`GRID_SIMILARITY` × the stored substitution bias and it +
    :data:`SIMILARITY_SUBSTITUTION_STEP` (the other settings stored, the classifier at the stored weight
    ``baked`` in the scores), the choice (a winner at the largest ν extended once to twice it) on all folds
    and nested (variant ``similarity-nested``; the stored setting's rewrites as ``stored40``)."""
    stored = base.substitution_bias
    grid = {"added_weight": GRID_SIMILARITY,
            "substitution_bias": (stored, stored + SIMILARITY_SUBSTITUTION_STEP)}

    def distance(row: dict) -> tuple[float, float]:
        return row["added_weight"], abs(row["substitution_bias"] - stored)

    return _keep_grid(out, run, rows, texts_of, corpora, corpus, diagnostics, grid, distance,
                      "similarity-nested", (0.0, stored), "stored40", "added_weight", base, baked,
                      {"stored": base.as_dict()})


_joint_distance = _nearest(dict(zip(GRID_JOINT, SHIPPED_38, strict=True)),
                           {"word_bias": 120.0, "substitution_bias": 60.0, "insertion_bias": 45.0})
"""The thirty-ninth rule's order after characters: nearest the shipped setting (480, 240, 120, 0)."""
_edge_distance = _nearest(dict(zip(GRID_EDGE, SHIPPED_39, strict=True)),
                          {"word_bias": 120.0, "substitution_bias": 30.0, "insertion_bias": 45.0})
"""The forty-first rule's order after characters: nearest the stored setting (960, 240, 60, −45)."""


def _turkcorpus_first(rows: dict[tuple, dict], grid: dict[str, tuple[float, ...]], weight: str | None, run,
                      key: str, distance) -> dict:
    """The forty-third rule's choice on ``key``'s rows (``mean_sari`` or ``mean_sari_notF``): among the
    settings whose ``key`` is within :data:`MEAN_WITHIN` of the best, the highest TurkCorpus SARI on the
    same sentences; ties within 0.01 to fewer characters kept, then ``distance`` (:func:`_select`); a
    winner at the outermost ``weight`` extended once to twice it (:func:`choose_doubling`; ``weight``
    None: no extension)."""
    suffix = key[len("mean_sari"):]

    def pick(candidates: list[dict]) -> dict:
        best = max(r[key] for r in candidates)
        eligible = [r for r in candidates if best - r[key] <= MEAN_WITHIN]
        return _select(eligible, f"sari_turkcorpus{suffix}", distance, f"chars_kept{suffix}")

    return choose_doubling(rows, grid, weight, run, key, distance, select=pick)


_insertion_distance = _nearest({"word_bias": 240.0, "substitution_bias": 60.0, "insertion_bias": -45.0},
                               {"word_bias": 60.0, "substitution_bias": 30.0, "insertion_bias": 45.0})
"""The forty-second and forty-third rules' order after characters: nearest the stored setting (240, 60,
−45; μ is 960 throughout)."""
_STEPS_43 = {"lm_scale": 0.25, "word_bias": 120.0, "substitution_bias": 30.0, "insertion_bias": 135.0}
"""The steps of the forty-fourth to forty-ninth rules' distance from :data:`SHIPPED_43`."""
_word_edge_distance = _nearest(dict(zip(GRID_WORD_EDGE, SHIPPED_43, strict=True)), _STEPS_43)
"""The forty-fourth rule's order after characters: nearest the stored setting (960, 360, 30, −270)."""
_lm_scale_distance = _nearest(dict(zip(GRID_LM_SCALE, SHIPPED_43_LM, strict=True)), _STEPS_43)
"""The forty-fifth rule's order after characters: nearest the stored setting (LM scale 1)."""
_low_keep_distance = _nearest(dict(zip(GRID_LOW_KEEP, SHIPPED_43, strict=True)), _STEPS_43)
"""The forty-sixth rule's order after characters: nearest the stored setting."""
_loss_distance = _nearest(dict(zip(GRID_LOSS, SHIPPED_43, strict=True)), _STEPS_43)
"""The forty-seventh to forty-ninth rules' order after characters (their grids have the same settings):
nearest the stored setting."""

KEEP_GRID_RULES = {
    # μ is the grid's first dimension; the shipped setting is μ 480, bias 30
    "word_bias_grid": {"grid": GRID_WORD_BIAS, "distance": _word_bias_distance, "name": "keepwb-nested",
                       "shipped": (SHIPPED_KEEP, 30.0)},
    # the classifier is in the scores already: no further term (added_weight 0)
    "bias_grid": {"grid": {"added_weight": (0.0,), **GRID_KEEP_BIASES}, "distance": _keep_bias_distance,
                  "name": "keepbias-nested",
                  "shipped": (0.0, *(getattr(KEEP_BASE, k) for k in GRID_KEEP_BIASES))},
    "joint_grid": {"grid": GRID_JOINT, "distance": _joint_distance, "name": "keepjoint-nested",
                   "shipped": SHIPPED_38, "shipped_name": "shipped38"},
    # the thirty-ninth rule's winner sat at the largest μ: μ is doubled here
    "edge_grid": {"grid": GRID_EDGE, "distance": _edge_distance, "name": "keepedge-nested",
                  "shipped": SHIPPED_39, "shipped_name": "shipped39", "doubled": "added_weight"},
    # a winner at the most negative insertion bias is extended to twice it
    "insertion_grid": {"grid": GRID_INSERTION, "distance": _insertion_distance, "name": "keepins-nested",
                       "shipped": SHIPPED_39, "shipped_name": "shipped39", "doubled": "insertion_bias"},
    "turk_first": {"grid": GRID_TURK_FIRST, "distance": _insertion_distance, "name": "turkfirst-nested",
                   "shipped": SHIPPED_39, "shipped_name": "shipped39", "doubled": "insertion_bias",
                   "chooser": _turkcorpus_first},
    # the forty-third rule's choice, past its largest word bias
    "word_edge": {"grid": GRID_WORD_EDGE, "distance": _word_edge_distance, "name": "wordedge-nested",
                  "shipped": SHIPPED_43, "shipped_name": "shipped43", "doubled": "word_bias",
                  "chooser": _turkcorpus_first},
    "lm_scale_grid": {"grid": GRID_LM_SCALE, "distance": _lm_scale_distance, "name": "lmscale-nested",
                      "shipped": SHIPPED_43_LM, "shipped_name": "shipped43",
                      "doubled": "lm_scale", "chooser": _turkcorpus_first},
    # μ above 960 was the forty-first rule's: no extension
    "low_keep_grid": {"grid": GRID_LOW_KEEP, "distance": _low_keep_distance, "name": "keeplow-nested",
                      "shipped": SHIPPED_43, "shipped_name": "shipped43", "doubled": None,
                      "chooser": _turkcorpus_first},
    # another recipe's fold models (--candidate), compared with add4/shipped43
    "loss_grid": {"grid": GRID_LOSS, "distance": _loss_distance, "name": "turkloss-nested",
                  "shipped": SHIPPED_43, "shipped_name": "at43", "doubled": None,
                  "chooser": _turkcorpus_first},
    "loss_keep_grid": {"grid": GRID_LOSS_KEEP, "distance": _loss_distance, "name": "turkkeep-nested",
                       "shipped": SHIPPED_43, "shipped_name": "at43", "doubled": None,
                       "chooser": _turkcorpus_first},
    # the stored setting is not in this grid: no at43 rewrites (add4/shipped43 is the baseline)
    "loss_between_grid": {"grid": GRID_LOSS_BETWEEN, "distance": _loss_distance,
                          "name": "turkmid-nested", "shipped": None, "doubled": None,
                          "chooser": _turkcorpus_first},
}
"""The rules decided by :func:`_keep_grid` alone, by the ``--keep`` mode flag (its attribute name) that
runs each: their grids, orders after characters, variant names, stored settings, extended axes and
choosers (the forty-third rule's TurkCorpus first from it on; the mean SARI before)."""


def _bias_distance(row: dict) -> tuple[float, float]:
    """The thirtieth rule's order after characters: the smaller μ, then nearest the shipped biases."""
    return row["added_weight"], (abs(row["substitution_bias"] - 240.0) / 120.0
                                 + abs(row["insertion_bias"] - 180.0) / 90.0)


def _with_biases(args, run, rows, texts_of, corpora, corpus, diagnostics) -> int:
    """The thirtieth rule: the grid :data:`GRID_BIASES`, the choice over all of it and over its μ = 0
    settings alone, each on all folds and nested (variants ``added3-nested``, ``added3-base-nested``)."""
    for combo in itertools.product(*GRID_BIASES.values()):
        run(dict(zip(GRID_BIASES, combo, strict=True)))
    dims = list(GRID_BIASES)

    def chooser(base: bool):
        keys = [k for k in rows if not base or k[0] == 0.0]
        return lambda key="mean_sari": {"winner": _select([rows[k] for k in keys], key, _bias_distance),
                                        "extended": []}

    selected = {"classifier": diagnostics}
    for name, base in (("added3-nested", False), ("added3-base-nested", True)):
        winner = chooser(base)()["winner"]
        selected[name] = {"selected": {k: winner[k] for k in dims}, "mean_sari": winner["mean_sari"],
                          "on_edge": [k for k in dims if winner[k] in (min(GRID_BIASES[k]),
                                                                        max(GRID_BIASES[k]))],
                          "nested": _nested(RECIPE, corpora, corpus, texts_of, dims, chooser(base), name)}
    write_result(args.out, rows, selected)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
