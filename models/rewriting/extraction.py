"""Extraction of the rewriting STSG from word-aligned tree pairs (Cohn & Lapata 2008, §3; 2009, §3.2).

Input: a source tree (leaves 0..n-1), a target tree (leaves 0..m-1, its own positions) and a monolingual
word alignment: ``(source position, target position)`` pairs, each target position in at most one pair (a
source word may be aligned to several target words).

* :func:`node_alignment` — a source node and a target node are *aligned* when the source words under the
  source node are aligned to at least one target word, all of them under the target node, and every
  source word aligned to a target word under the target node lies under the source node (the consistency
  of phrase extraction, on tree nodes; unaligned words may lie under either).
* :func:`extract_rules` — GHKM-style minimal rules, tree to tree: from an aligned pair (source node u,
  target node v), the source side descends from u and stops at the children that are aligned to a target
  node inside v (they become *linked variables*, linked to their highest such target node: the 2009
  paper's footnote 2), at the subtrees without any aligned word (*deleted*, ``~X``) and at words (a word
  aligned to some target word is *used*, otherwise deleted); the target side is v's subtree cut at the
  linked target nodes. Its words are aligned (copied, or *substituted* when the text differs) or
  unaligned (*inserted*); the target variables may come in another order (*reordering*) and carry
  another category (*category change*). As in the 2009 extraction, a child may be linked to v itself
  (a bare-variable target ``⟨S, NP⟩ → ⟨[S NP₁ VP_ε], NP₁⟩``) only when u and v have different labels.
  Consistency makes every such rule well formed: a target word outside the variables is aligned to a
  word of the rule's source side, never to one under a variable or a deleted subtree. Specialised rules
  skip up to ``depth`` matches on any path ("match or keep descending", the 2009 §3.2), limited by
  ``max_variables`` and ``max_nodes``.
* paraphrase rules counted over the corpus: each aligned source node below the root, with one of its
  aligned target nodes (below the root: one of the same label, else a preterminal for a preterminal,
  else the highest), gives a fully lexical rule, kept when it substitutes, inserts or deletes a word:
  *lexical* between two preterminals (``(P w) → (P' w')``), *phrasal* when the two sides have at most
  ``phrase_words`` words, two or more on one side (``(VP (VBD "passed") (RP ~"away")) → (VP (VBD
  "died"))``).
* :func:`extract_rewrite_grammar` — all of it over a corpus, with the copy/deletion coverage rules of
  every source production, at most ``max_targets`` specialised target sides per source side (minimal
  rules are always kept); every pair is then checked to be derivable (:func:`derivable`), and the pairs
  that are not are counted by reason (:class:`ExtractionReport`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

from dualdecomp.core.errors import InputError
from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree
from dualdecomp.solvers.rewriting import (
    RewriteGrammar,
    RewriteGrammarConfig,
    RewriteRule,
    reordered_count,
    rewriting_coverage_rules,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag, format_frag, match_frag

__all__ = ["RULE_TYPES", "ExtractionReport", "derivable", "extract_rewrite_grammar", "extract_rules",
           "node_alignment", "paraphrase_rules", "rule_occurrences", "rule_types"]

RULE_TYPES = ("copy", "deletion", "lexical_substitution", "phrasal_substitution", "reordering", "insertion",
              "category_change")
"""The rule types :func:`rule_types` tells apart."""

Alignment = Sequence[tuple[int, int]]


def _check_alignment(source: Tree, target: Tree, alignment: Alignment) -> None:
    n, m = len(source.leaves()), len(target.leaves())
    seen: set[int] = set()
    for i, j in alignment:
        if not (0 <= i < n and 0 <= j < m):
            raise InputError(f"alignment pair ({i}, {j}) out of range for {n} source and {m} target words")
        if j in seen:
            raise InputError(f"target word {j} aligned to more than one source word")
        seen.add(j)
    for t, k in ((source, n), (target, m)):
        if sorted(t.indices()) != list(range(k)):
            raise InputError("tree leaves must be indexed 0..n-1")


def node_alignment(source: Tree, target: Tree, alignment: Alignment) -> dict[int, list[int]]:
    """The aligned node pairs (module docstring), internal nodes only.

    Parameters
    ----------
    source, target : Tree
        Leaves indexed by their own positions.
    alignment : sequence of (int, int)
        ``(source position, target position)`` pairs.

    Returns
    -------
    dict
        Preorder id of each aligned internal source node → the preorder ids of its aligned internal
        target nodes, highest first (:class:`IndexedTree` numbering).
    """
    S, T = IndexedTree(source), IndexedTree(target)
    fwd: dict[int, int] = {}
    back: dict[int, int] = {}
    for i, j in alignment:
        fwd[i] = fwd.get(i, 0) | (1 << j)
        back[j] = 1 << i
    s_words = [_mask(S, k) for k in range(len(S))]
    t_words = [_mask(T, k) for k in range(len(T))]
    out: dict[int, list[int]] = {}
    for a in range(len(S)):
        if S.nodes[a].is_leaf:
            continue
        img = 0
        for k in _bits(s_words[a]):
            img |= fwd.get(k, 0)
        if not img:
            continue
        hits = []
        for b in range(len(T)):
            if T.nodes[b].is_leaf or img & ~t_words[b]:
                continue
            pre = 0
            for k in _bits(t_words[b]):
                pre |= back.get(k, 0)
            if not pre & ~s_words[a]:
                hits.append(b)
        if hits:
            out[a] = hits
    return out


def _mask(tree: IndexedTree, k: int) -> int:
    m = 0
    for i in tree.leaf_indices(k):
        m |= 1 << i
    return m


def _bits(mask: int) -> Iterator[int]:
    k = 0
    while mask:
        if mask & 1:
            yield k
        mask >>= 1
        k += 1


# an option for a source subtree: (frag, skips used, cuts ((source id, target id), ...), source positions
# of its WORD items in frontier order)
_Option = tuple[Frag, int, tuple[tuple[int, int], ...], tuple[int, ...]]


class _Extractor:
    def __init__(self, source: Tree, target: Tree, alignment: Alignment,
                 config: RewriteGrammarConfig) -> None:
        _check_alignment(source, target, alignment)
        self.S, self.T = IndexedTree(source), IndexedTree(target)
        self.config = config
        self.align = node_alignment(source, target, alignment)
        self.src_of = {j: i for i, j in alignment}  # target position -> source position
        used = {i for i, _ in alignment}
        self.used = used
        self.has_aligned = [any(k in used for k in self.S.leaf_indices(i)) for i in range(len(self.S))]

    def admissible(self, c: int, vs: int, vt: int) -> list[int]:
        same = self.S.nodes[vs].label == self.T.nodes[vt].label
        return [t for t in self.align.get(c, []) if self.T.contains(vt, t) and not (t == vt and same)]

    def options(self, c: int, budget: int, vs: int, vt: int) -> Iterator[_Option]:
        node = self.S.nodes[c]
        if node.is_leaf:
            yield Frag(WORD, node.label, (), node.index in self.used), 0, (), (node.index,)
            return
        if not self.has_aligned[c]:
            yield Frag(VAR, node.label, (), False), 0, (), ()
            if budget > 0:
                for f, u, cuts, words in self.descend(c, budget - 1):
                    yield f, u + 1, cuts, words
            return
        adm = self.admissible(c, vs, vt)
        if adm:
            yield Frag(VAR, node.label, (), True), 0, ((c, adm[0]),), ()
            if budget > 0:
                for f, u, cuts, words in self.descend(c, budget - 1, vs, vt):
                    yield f, u + 1, cuts, words
            return
        yield from self.descend(c, budget, vs, vt)

    def descend(self, c: int, budget: int, vs: int = -1, vt: int = -1) -> Iterator[_Option]:
        cfg = self.config
        partial: list[tuple[tuple[Frag, ...], int, tuple, tuple[int, ...], int, int]]
        partial = [((), 0, (), (), 1, 0)]
        for child in self.S.children[c]:
            opts = [(f, u, cu, w, f.size()) for f, u, cu, w in self.options(child, budget, vs, vt)]
            new = []
            for frags, used, cuts, words, size, nvars in partial:
                for f, u, cu, w, fsize in opts:
                    used2, size2, nvars2 = max(used, u), size + fsize, nvars + len(cu)
                    if (used2 > 0 or cfg.prune_minimal) and (size2 > cfg.max_nodes
                                                             or nvars2 > cfg.max_variables):
                        continue
                    new.append((frags + (f,), used2, cuts + cu, words + w, size2, nvars2))
            partial = new
        label = self.S.nodes[c].label
        for frags, used, cuts, words, _, _ in partial:
            yield Frag(NODE, label, frags), used, cuts, words

    def target_frag(self, j: int, cut: dict[int, str], tpos: list[int]) -> Frag:
        if j in cut:
            return Frag(VAR, cut[j])
        node = self.T.nodes[j]
        if node.is_leaf:
            tpos.append(node.index)
            return Frag(WORD, node.label)
        return Frag(NODE, node.label, tuple(self.target_frag(k, cut, tpos) for k in self.T.children[j]))

    def make_rule(self, frag: Frag, cuts: tuple[tuple[int, int], ...], words: tuple[int, ...], vt: int,
                  origins: frozenset[str]) -> RewriteRule:
        cut = {t: self.T.nodes[t].label for _, t in cuts}
        tpos: list[int] = []
        target = self.target_frag(vt, cut, tpos)
        by_target = sorted(range(len(cuts)), key=lambda k: cuts[k][1])
        word_index = {p: k for k, p in enumerate(words)}
        word_links = tuple(None if (i := self.src_of.get(j)) is None else word_index[i] for j in tpos)
        return RewriteRule(frag, target, tuple(by_target), word_links, origins, 1)

    def rules_for(self, vs: int, vt: int) -> list[tuple[RewriteRule, tuple, bool]]:
        out = []
        cfg = self.config
        for frag, used, cuts, words in self.descend(vs, cfg.depth, vs, vt):
            minimal = used == 0
            if not minimal or cfg.prune_minimal:
                if len(cuts) > cfg.max_variables or frag.size() > cfg.max_nodes:
                    continue
            out.append((self.make_rule(frag, cuts, words, vt, frozenset({"train"})), cuts, minimal))
        return out

    def run(self) -> list[tuple[RewriteRule, bool]]:
        if not self.used:
            raise _NotExtracted("no aligned word")
        todo = [(0, 0)]
        seen = set(todo)
        out = []
        while todo:
            vs, vt = todo.pop()
            for rule, cuts, minimal in self.rules_for(vs, vt):
                out.append((rule, minimal))
                for pair in cuts:
                    if pair not in seen:
                        seen.add(pair)
                        todo.append(pair)
        return out

    def full_frag(self, tree: IndexedTree, j: int, words: list[int], source: bool) -> Frag:
        node = tree.nodes[j]
        if node.is_leaf:
            words.append(node.index)
            return Frag(WORD, node.label, (), node.index in self.used if source else True)
        return Frag(NODE, node.label, tuple(self.full_frag(tree, k, words, source) for k in tree.children[j]))

    def paraphrase_target(self, vs: int) -> int | None:
        """The target node of ``vs``'s paraphrase rule: among its aligned target nodes (roots aside), one
        with the same label, else a preterminal when ``vs`` is one, else the highest."""
        hits = [t for t in self.align.get(vs, []) if t != 0]
        if vs == 0 or not hits:
            return None
        label = self.S.nodes[vs].label
        for t in hits:
            if self.T.nodes[t].label == label:
                return t
        if self.S.nodes[vs].is_preterminal:
            for t in hits:
                if self.T.nodes[t].is_preterminal:
                    return t
        return hits[0]

    def paraphrases(self) -> list[RewriteRule]:
        out = []
        limit = self.config.phrase_words
        for vs in self.align:
            vt = self.paraphrase_target(vs)
            if vt is None:
                continue
            ns, nt = len(self.S.leaf_indices(vs)), len(self.T.leaf_indices(vt))
            if self.S.nodes[vs].is_preterminal and self.T.nodes[vt].is_preterminal:
                origin = "lexical"
            elif limit and ns <= limit and nt <= limit and max(ns, nt) >= 2:
                origin = "phrasal"
            else:
                continue
            words: list[int] = []
            src = self.full_frag(self.S, vs, words, True)
            rule = self.make_rule(src, (), tuple(words), vt, frozenset({origin}))
            if rule_types(rule) & {"lexical_substitution", "phrasal_substitution", "insertion", "deletion"}:
                out.append(rule)
        return out


class _NotExtracted(Exception):
    """A pair that gives no rules (the reason is the message)."""


def extract_rules(source: Tree, target: Tree, alignment: Alignment,
                  config: RewriteGrammarConfig | None = None,
                  minimal_only: bool = False) -> list[RewriteRule]:
    """The rules extracted from one aligned tree pair (module docstring), without paraphrase rules.

    Parameters
    ----------
    source, target : Tree
        Leaves indexed 0..n-1 and 0..m-1.
    alignment : sequence of (int, int)
        ``(source position, target position)``; each target position at most once.
    config : RewriteGrammarConfig, optional
    minimal_only : bool
        Only the minimal rules (no skipped match).

    Returns
    -------
    list of RewriteRule
        One entry per (aligned pair, rule) occurrence, origins ``{"train"}``, count 1; empty when no word
        is aligned.

    Raises
    ------
    InputError
        An alignment pair out of range, a target word aligned twice, or leaves not indexed 0..n-1.
    """
    ex = _Extractor(source, target, alignment, config or RewriteGrammarConfig())
    try:
        return [r for r, minimal in ex.run() if minimal or not minimal_only]
    except _NotExtracted:
        return []


def paraphrase_rules(source: Tree, target: Tree, alignment: Alignment,
                     config: RewriteGrammarConfig | None = None) -> list[RewriteRule]:
    """The lexical and phrasal paraphrase rules of one aligned pair (module docstring), count 1 each."""
    return _Extractor(source, target, alignment, config or RewriteGrammarConfig()).paraphrases()


def rule_types(rule: RewriteRule) -> frozenset[str]:
    """What a rule does, as a subset of :data:`RULE_TYPES`.

    ``deletion``: a deleted source item; ``lexical_substitution``: a substituted word in a rule with one
    source and one target word; ``phrasal_substitution``: a substituted word, or a deleted word and an
    inserted one, in a rule with two or more words on one side; ``reordering``: target variables out of
    source order; ``insertion``: a target word aligned to no source word; ``category_change``: a target
    root or a linked variable labelled differently from its source; ``copy``: none of these.
    """
    src = rule.source.frontier()
    tgt = rule.target.frontier()
    src_words = [f for f in src if f.kind == WORD]
    tgt_words = [f for f in tgt if f.kind == WORD]
    out = set()
    if any(not f.kept for f in src):
        out.add("deletion")
    substituted = any(j is not None and src_words[j].label != w.label
                      for w, j in zip(tgt_words, rule.word_links, strict=True))
    inserted = any(j is None for j in rule.word_links)
    deleted_word = any(not f.kept for f in src_words)
    if substituted and len(src_words) == 1 and len(tgt_words) == 1:
        out.add("lexical_substitution")
    elif (substituted or (inserted and deleted_word)) and max(len(src_words), len(tgt_words)) >= 2:
        out.add("phrasal_substitution")
    if reordered_count(rule.links):
        out.add("reordering")
    if inserted:
        out.add("insertion")
    linked = [f for f in src if f.kind == VAR and f.kept]
    tvars = [f for f in tgt if f.kind == VAR]
    if rule.target.label != rule.source.label or any(
            linked[k].label != t.label for t, k in zip(tvars, rule.links, strict=True)):
        out.add("category_change")
    return frozenset(out or {"copy"})


def derivable(rules_at: RewriteGrammar, source: Tree, target: Tree, coverage: bool = True) -> bool:
    """Whether the grammar (plus the coverage rules of ``source`` when ``coverage``) derives ``target``
    exactly (tree and words) from ``source``, rooted at the target's root category.

    A dynamic program over (source node, target node): a rule applies at the pair when its source side
    matches the source subtree, its target side matches the target subtree (words equal, variables on
    nodes of their label), and each linked (source, target) node pair is derivable in turn.
    """
    S, T = IndexedTree(source), IndexedTree(target)

    def rules(i: int) -> list[RewriteRule]:
        node = S.nodes[i]
        out = [rules_at.rule(r) for r in rules_at.candidates(node.production())]
        if coverage:
            out += rewriting_coverage_rules(node)
        return out

    at = {i: rules(i) for i in range(len(S)) if not S.nodes[i].is_leaf}

    @cache
    def can(i: int, j: int) -> bool:
        if T.nodes[j].is_leaf:
            return False
        for rule in at[i]:
            if rule.target.label != T.nodes[j].label:
                continue
            sf: list[int] = []
            tf: list[int] = []
            if not match_frag(rule.source, S, i, sf) or not match_frag(rule.target, T, j, tf):
                continue
            linked = [n for n, f in zip(sf, rule.source.frontier(), strict=True) if f.kind == VAR and f.kept]
            tvars = [n for n, f in zip(tf, rule.target.frontier(), strict=True) if f.kind == VAR]
            if all(can(linked[k], t) for t, k in zip(tvars, rule.links, strict=True)):
                return True
        return False

    return can(0, 0)


@dataclass(frozen=True)
class ExtractionReport:
    """What an extraction over a corpus did.

    Attributes
    ----------
    pairs : int
        Tree pairs read.
    derivable : int
        Pairs whose target the grammar (with coverage) derives exactly.
    not_derivable : dict of str to int
        The other pairs by reason: ``no aligned word`` (nothing to extract), ``pruned`` (a rule the
        derivation needs was dropped by the limits), ``bad alignment`` (InputError: out of range,
        target word aligned twice).
    rule_types : dict of str to int
        Distinct rules of each :data:`RULE_TYPES` type (a rule may have several), coverage rules aside.
    origins : dict of str to int
        Distinct rules by origin.
    """

    pairs: int
    derivable: int
    not_derivable: dict[str, int] = field(default_factory=dict)
    rule_types: dict[str, int] = field(default_factory=dict)
    origins: dict[str, int] = field(default_factory=dict)


def _pair_rules(source: Tree, target: Tree, alignment: Alignment, cfg: RewriteGrammarConfig
                ) -> tuple[list[tuple[RewriteRule, bool]], list[RewriteRule]]:
    """One pair's extracted rules (each with whether it is minimal) and paraphrase rules (raises
    ``InputError`` for a bad alignment, ``_NotExtracted`` for a pair that gives none)."""
    ex = _Extractor(source, target, alignment, cfg)
    return ex.run(), ex.paraphrases()


def rule_occurrences(pairs: Iterable[tuple[Tree, Tree, Alignment]], config: RewriteGrammarConfig | None = None
                     ) -> tuple[Counter[str], Counter[str]]:
    """How often each rule key occurs over ``pairs``, as :func:`extract_rewrite_grammar` counts them: among
    the extracted rules, then among the paraphrase rules (a pair that gives no rules adds nothing). The
    grammar's count of a rule is its extracted count when it was ever extracted (origin ``train``), else
    its paraphrase count; leave-one-out training subtracts one source's occurrences from it."""
    cfg = config or RewriteGrammarConfig()
    extracted_counts: Counter[str] = Counter()
    paraphrase_counts: Counter[str] = Counter()
    for source, target, alignment in pairs:
        try:
            extracted, phrases = _pair_rules(source, target, alignment, cfg)
        except (InputError, _NotExtracted):
            continue
        extracted_counts.update(r.key for r, _ in extracted)
        paraphrase_counts.update(r.key for r in phrases)
    return extracted_counts, paraphrase_counts


def extract_rewrite_grammar(pairs: Iterable[tuple[Tree, Tree, Alignment]],
                            config: RewriteGrammarConfig | None = None, check: bool = True
                            ) -> tuple[RewriteGrammar, ExtractionReport]:
    """Extract the rewriting grammar of a corpus of aligned tree pairs.

    Parameters
    ----------
    pairs : iterable of (Tree, Tree, alignment)
        Source tree, target tree, ``(source position, target position)`` pairs.
    config : RewriteGrammarConfig, optional
    check : bool
        Check every pair's derivability (:func:`derivable`) after pruning.

    Returns
    -------
    (RewriteGrammar, ExtractionReport)
        Extracted rules (origins ``train``, ``lexical``, ``phrasal``; counts = occurrences) then the
        coverage rules of every source production (``copy``/``delete``; count 0 unless also extracted).
    """
    cfg = config or RewriteGrammarConfig()
    counts: Counter[str] = Counter()
    para: Counter[str] = Counter()
    rules: dict[str, RewriteRule] = {}
    minimal: set[str] = set()
    cover: dict[str, RewriteRule] = {}
    kept: list[tuple[Tree, Tree]] = []
    reasons: Counter[str] = Counter()
    n_pairs = 0
    for source, target, alignment in pairs:
        n_pairs += 1
        for node in source.preorder():
            if not node.is_leaf:
                for r in rewriting_coverage_rules(node):
                    cover.setdefault(r.key, r)
        try:
            extracted, phrases = _pair_rules(source, target, alignment, cfg)
        except InputError:
            reasons["bad alignment"] += 1
            continue
        except _NotExtracted as exc:
            reasons[str(exc)] += 1
            continue
        kept.append((source, target))
        for r, is_min in extracted:
            counts[r.key] += 1
            rules.setdefault(r.key, r)
            if is_min:
                minimal.add(r.key)
        for r in phrases:
            para[r.key] += 1
            old = rules.get(r.key)
            rules[r.key] = r if old is None else RewriteRule(
                old.source, old.target, old.links, old.word_links, old.origins | r.origins, 0)
    by_source: dict[str, list[str]] = {}
    for key in counts:
        if key not in minimal:
            by_source.setdefault(format_frag(rules[key].source), []).append(key)
    dropped: set[str] = set()
    for keys in by_source.values():
        keys.sort(key=lambda k: (-counts[k], k))
        dropped.update(keys[cfg.max_targets:])
    grammar = RewriteGrammar(config=cfg)
    for key, r in rules.items():
        if key in dropped and key not in para:
            continue
        grammar.add(RewriteRule(r.source, r.target, r.links, r.word_links, r.origins,
                                counts[key] if key in counts else para[key]))
    types: Counter[str] = Counter()
    origins: Counter[str] = Counter()
    for r in grammar:
        types.update(rule_types(r))
        origins.update(r.origins)
    for r in cover.values():
        grammar.add(r)
    ok = 0
    if check:
        for source, target in kept:
            if derivable(grammar, source, target, coverage=False):
                ok += 1
            else:
                reasons["pruned"] += 1
    else:
        ok = len(kept)
    report = ExtractionReport(n_pairs, ok, dict(reasons), {t: types[t] for t in RULE_TYPES if types[t]},
                              dict(sorted(origins.items())))
    return grammar, report
