"""Rule features of the rewriting model (Cohn & Lapata 2008, Table 3), hashed with
``dualdecomp.core.hashing``.

For a rule ⟨X, Y⟩ → ⟨α, γ, links, word_links⟩ (binary unless stated):

* **origin**: one feature per origin (extracted from training pairs, copy, delete, ...); and, per origin,
  the rule's relative frequencies (real): log p(γ | α), log p(α | γ) and log p(α, γ) over the extracted
  rules (:class:`RuleStatistics`; 0 for rules never extracted);
* **roots**: X, Y, X∧Y, and whether X = Y;
* **preterminal rewrite**: both sides preterminals with the same or a different word;
* **identity**: α, γ and the full rule (lexicalised and unlexicalised), and whether the rule is the
  identity (α = γ, no deletion);
* **counts** (real): terminals of γ, variables, deleted variables, deleted source words; the rule's
  operations (kept, substituted, inserted words and reordered variables: :meth:`RewriteRule.operations`);
* **ordering**: the variable order as numbers (``1 0 2``) and as non-terminals; whether the variables'
  non-terminal sequence is unchanged after reordering;
* **terminals**: each common, inserted, substituted (``source→target``) and deleted terminal;
  whether the pre-terminal (or terminal) sequences are identical;
* **length**: whether γ is shorter / longer than α (frontier items), and whether γ is a compression of α
  by deletion only (no substitution, insertion or reordering);
* **simplicity** (real, with a unigram LM): over the substituted terminals s → t, the sum of
  ``log10 p(t) − log10 p(s)`` (a more common word is usually a simpler one) and of ``len(s) − len(t)``
  in characters; over the inserted terminals, the sum of ``log10 p(t)``.

Per application (computed on the source tree by the chart, not by the rule;
:mod:`~dualdecomp.models.rewriting.application`): ``dropped`` — the number of source tokens the
application deletes, ``words`` — the number of target words it writes (the length bias), the deleted
tokens by POS class and whether it deletes its node's head (group ``deletion-pos``), and the fragments it
deletes by dependency relation (group ``deletion-dep``). The paper's n-gram feature (the LM
log-probability) is the decoder's LM term, weighted by the model's ``lm_weight``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.hashing import atom, feature_index, named_features
from dualdecomp.models.rewriting.application import APPLICATION, POS_COLUMNS, RELATION_COLUMNS
from dualdecomp.solvers.rewriting import RewriteRule
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag, format_frag

__all__ = ["FEATURE_GROUPS", "TEMPLATES", "RewriteFeaturiser", "RuleStatistics", "featuriser_for",
           "rule_feature_strings"]

TEMPLATES = ("origin", "logp.t_given_s", "logp.s_given_t", "logp.joint", "root.x", "root.y", "root.xy",
             "root.same", "pt.same_word", "pt.other_word", "id.src", "id.tgt", "id.rule", "unlex.src",
             "unlex.tgt", "unlex.rule", "identity", "count.tgt_words", "count.vars", "count.deleted_vars",
             "count.deleted_words", "op.kept", "op.substituted", "op.inserted", "op.reordered",
             "order.numbers", "order.labels", "order.same_labels", "term.common", "term.inserted",
             "term.substituted", "term.deleted", "seq.same_preterminals", "seq.same_terminals",
             "length.shorter", "length.longer", "deletion_only", "bias", "dropped", "words", "dropped.pos",
             "dropped_head.pos", "simp.logfreq_gain", "simp.chars_saved", "simp.inserted_logfreq",
             "dropped_rel.rel", "dropped_rel_tokens.rel")
_T = {name: i for i, name in enumerate(TEMPLATES)}


FEATURE_GROUPS = ("deletion-dep", "deletion-pos", "simplicity")
"""Optional feature groups of the rewriting model (``meta.training.features`` of a model lists those it
was trained with; none in a model without the field)."""


def featuriser_for(hash_bits: int, stats: RuleStatistics, unigram: Callable[[str], float] | None,
                   groups: Iterable[str]) -> RewriteFeaturiser:
    """The featuriser of a model trained with the feature ``groups`` (:data:`FEATURE_GROUPS`;
    ``unigram``: the target LM's, needed for ``simplicity``).

    Raises
    ------
    ValueError
        An unknown group, or ``simplicity`` without a unigram LM.
    """
    groups = set(groups)
    unknown = groups - set(FEATURE_GROUPS)
    if unknown:
        raise ValueError(f"unknown feature group(s) {sorted(unknown)}; known: {', '.join(FEATURE_GROUPS)}")
    if "simplicity" in groups and unigram is None:
        raise ValueError("the simplicity features need the target LM")
    return RewriteFeaturiser(hash_bits, stats, unigram if "simplicity" in groups else None,
                             deletion_pos="deletion-pos" in groups, deletion_dep="deletion-dep" in groups)


def _application_template(name: str) -> tuple[str, str]:
    """(template, value) of a per-application feature: ``dropped.verb`` → (``dropped.pos``, ``verb``),
    ``dropped_rel.appos`` → (``dropped_rel.rel``, ``appos``)."""
    base, _, cls = name.partition(".")
    if not cls:
        return name, ""
    return (f"{base}.rel" if base.startswith("dropped_rel") else f"{base}.pos"), cls


def _bare(frag: Frag) -> str:
    """A side's text form without the kept/deleted marks."""
    return format_frag(frag, marks=False)


@dataclass
class RuleStatistics:
    """Relative frequencies of the extracted rules, by origin (the paper's log p features).

    Built once from the grammar's rules and their counts (:meth:`from_rules`).
    """

    joint: Counter = field(default_factory=Counter)
    source: Counter = field(default_factory=Counter)
    target: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)

    @classmethod
    def from_rules(cls, rules: Iterable[RewriteRule]) -> RuleStatistics:
        """Counts of every (origin, rule), (origin, α) and (origin, γ) over rules with a count."""
        stats = cls()
        for rule in rules:
            if rule.count <= 0:
                continue
            for origin in rule.origins:
                stats.joint[origin, rule.key] += rule.count
                stats.source[origin, format_frag(rule.source)] += rule.count
                stats.target[origin, _bare(rule.target)] += rule.count
                stats.total[origin] += rule.count
        return stats

    def log_probabilities(self, rule: RewriteRule) -> list[tuple[str, str, float]]:
        """The (template, origin, value) triples of ``rule``'s three log-probabilities per origin."""
        out: list[tuple[str, str, float]] = []
        for origin in sorted(rule.origins):
            joint = self.joint.get((origin, rule.key), 0)
            if joint <= 0:
                continue
            src = self.source[origin, format_frag(rule.source)]
            tgt = self.target[origin, _bare(rule.target)]
            out += [("logp.t_given_s", origin, math.log(joint / src)),
                    ("logp.s_given_t", origin, math.log(joint / tgt)),
                    ("logp.joint", origin, math.log(joint / self.total[origin]))]
        return out


def _preterminals(frag: Frag) -> list[str]:
    out: list[str] = []

    def walk(f: Frag) -> None:
        if f.kind == NODE and len(f.children) == 1 and f.children[0].kind == WORD:
            out.append(f.label)
        elif f.kind == VAR:
            out.append(f.label)
        elif f.kind == NODE:
            for c in f.children:
                walk(c)

    walk(frag)
    return out


def rule_feature_strings(rule: RewriteRule, stats: RuleStatistics | None = None,
                         unigram: Callable[[str], float] | None = None) -> list[tuple[str, str, float]]:
    """The (template, value, weight) triples of a rule's own features (before hashing).

    Parameters
    ----------
    rule : RewriteRule
    stats : RuleStatistics, optional
        The grammar's relative frequencies (no log-probability features without them).
    unigram : callable, optional
        ``log10 p(word)`` of the target LM (:func:`~dualdecomp.models.rewriting.lm_matrix.unigram_scorer`;
        no simplicity features without it).

    Returns
    -------
    list of (str, str, float)
    """
    src, tgt = rule.source, rule.target
    s_id, t_id = format_frag(src), format_frag(tgt)
    s_un, t_un = format_frag(src, lexical=False), format_frag(tgt, lexical=False)
    feats: list[tuple[str, str, float]] = [("origin", o, 1.0) for o in sorted(rule.origins)]
    if stats is not None:
        feats += stats.log_probabilities(rule)
    feats += [("root.x", rule.root, 1.0), ("root.y", rule.target_root, 1.0),
              ("root.xy", f"{rule.root}|{rule.target_root}", 1.0), ("bias", "", 1.0),
              ("id.src", s_id, 1.0), ("id.tgt", t_id, 1.0), ("id.rule", rule.key, 1.0),
              ("unlex.src", s_un, 1.0), ("unlex.tgt", t_un, 1.0), ("unlex.rule", f"{s_un}=>{t_un}", 1.0)]
    if rule.root == rule.target_root:
        feats.append(("root.same", "", 1.0))
    s_front, t_front = src.frontier(), tgt.frontier()
    s_words = [f for f in s_front if f.kind == WORD]
    t_words = [f.label for f in t_front if f.kind == WORD]
    if len(src.children) == 1 and src.children[0].kind == WORD and tgt.kind == NODE \
            and len(tgt.children) == 1 and tgt.children[0].kind == WORD:
        same = src.children[0].label == tgt.children[0].label
        feats.append(("pt.same_word" if same else "pt.other_word", "", 1.0))
    ops = rule.operations()
    if s_id.replace("@", "") == t_id.replace("@", "") and "~" not in s_id and not ops.reordered:
        feats.append(("identity", "", 1.0))
    svars = [f for f in s_front if f.kind == VAR]
    counts = {"count.tgt_words": len(t_words), "count.vars": sum(f.kept for f in svars),
              "count.deleted_vars": sum(not f.kept for f in svars),
              "count.deleted_words": sum(not f.kept for f in s_words), "op.kept": ops.kept,
              "op.substituted": ops.substituted, "op.inserted": ops.inserted, "op.reordered": ops.reordered}
    feats += [(name, "", float(v)) for name, v in counts.items() if v]
    linked = [f.label for f in svars if f.kept]
    if rule.links:
        feats.append(("order.numbers", " ".join(map(str, rule.links)), 1.0))
        t_labels = [f.label for f in t_front if f.kind == VAR]
        feats.append(("order.labels", " ".join(t_labels), 1.0))
        if [linked[j] for j in rule.links] == linked:
            feats.append(("order.same_labels", "", 1.0))
    gain = saved = inserted = 0.0
    for w, j in zip(t_words, rule.word_links, strict=True):
        if j is None:
            feats.append(("term.inserted", w, 1.0))
            inserted += unigram(w) if unigram is not None else 0.0
        elif s_words[j].label == w:
            feats.append(("term.common", w, 1.0))
        else:
            feats.append(("term.substituted", f"{s_words[j].label}→{w}", 1.0))
            if unigram is not None:
                gain += unigram(w) - unigram(s_words[j].label)
                saved += len(s_words[j].label) - len(w)
    feats += [(name, "", v) for name, v in (("simp.logfreq_gain", gain), ("simp.chars_saved", saved),
                                            ("simp.inserted_logfreq", inserted)) if v]
    feats += [("term.deleted", f.label, 1.0) for f in s_words if not f.kept]
    if _preterminals(src) == _preterminals(tgt):
        feats.append(("seq.same_preterminals", "", 1.0))
    if [f.label for f in s_words] == t_words:
        feats.append(("seq.same_terminals", "", 1.0))
    if len(t_front) < len(s_front):
        feats.append(("length.shorter", "", 1.0))
    elif len(t_front) > len(s_front):
        feats.append(("length.longer", "", 1.0))
    if not (ops.substituted or ops.inserted or ops.reordered):
        feats.append(("deletion_only", "", 1.0))
    return feats


class RewriteFeaturiser:
    """Hashed rule features, cached by rule key.

    Parameters
    ----------
    hash_bits : int
        log2 of the weight-vector size.
    stats : RuleStatistics, optional
        The grammar's relative frequencies.
    unigram : callable, optional
        ``log10 p(word)`` of the target LM: the simplicity features (feature group ``simplicity``).
    deletion_pos : bool
        Whether the per-application features include the deleted tokens' POS classes and deleted heads
        (feature group ``deletion-pos``), besides ``dropped`` and ``words``.
    deletion_dep : bool
        Whether they include the deleted fragments by dependency relation (feature group
        ``deletion-dep``).

    Attributes
    ----------
    unigram, deletion_pos, deletion_dep
        As given.
    dropped_index, words_index : int
        Indices of the per-application features ``dropped`` (source tokens deleted) and ``words`` (target
        words written).
    application_columns : numpy.ndarray
        int64, the columns of :func:`~dualdecomp.models.rewriting.application.application_values` in use.
    application_index : numpy.ndarray
        int64, the hashed index of each of those columns' feature.
    """

    def __init__(self, hash_bits: int = 20, stats: RuleStatistics | None = None,
                 unigram: Callable[[str], float] | None = None, deletion_pos: bool = False,
                 deletion_dep: bool = False) -> None:
        self.hash_bits = hash_bits
        self.stats = stats
        self.unigram = unigram
        self.deletion_pos = deletion_pos
        self.deletion_dep = deletion_dep
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.application_columns = np.array([0, 1, *(POS_COLUMNS if deletion_pos else ()),
                                             *(RELATION_COLUMNS if deletion_dep else ())], dtype=np.int64)
        self.application_index = np.array([self._index(*_application_template(APPLICATION[c]))
                                           for c in self.application_columns], dtype=np.int64)
        self.dropped_index, self.words_index = (int(i) for i in self.application_index[:2])

    def _index(self, template: str, value: str = "") -> int:
        return int(feature_index(_T[template], np.uint64(atom(value)), 0, self.hash_bits))

    def __call__(self, rule: RewriteRule) -> tuple[np.ndarray, np.ndarray]:
        """(indices int64, values float64) of a rule's own features."""
        key = rule.key
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        idx, val = named_features(rule_feature_strings(rule, self.stats, self.unigram), _T, self.hash_bits)
        self._cache[key] = (idx, val)
        return idx, val
