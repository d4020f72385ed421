"""Grammar extraction from aligned tree pairs (Cohn & Lapata 2009, §3.2).

* :func:`constituent_alignment` — equation (2). The target tree's leaves carry the *source* positions of
  the words they are aligned to (deletion alignment, ``dualdecomp.data.trees.reindex``), so a source node and
  a target node are aligned iff the kept source positions under the source node are exactly the positions
  under the target node (and there is at least one).
* :func:`extract_rules` — Algorithm 3 (minimal rules), plus rules specialised up to ``depth`` skipped
  matches (the non-deterministic "match or keep descending" of §3.2; the depth bounds the number of
  skips along any root-to-frontier path of the rule — "recursion up to one ancestor for any given node"
  — so depth 1 gives e.g. ``⟨S,VP⟩ → ⟨[S [WHNP WP_ε] S₁], VP₁⟩`` and depth 2
  ``⟨S,VP⟩ → ⟨[S [WHNP [WP which]] [S NP_ε VP₁]], VP₁⟩``, as in the paper's examples). Where the algorithm
  chooses a target node non-deterministically, the *highest* admissible target node is taken (the
  paper's footnote 2). One choice is made explicit here: a source node may be linked to the target root
  of the rule itself (giving a bare-variable target such as ``⟨S,NP⟩ → ⟨[S NP₁ VP_ε], NP₁⟩``) only when
  the two roots have different labels; otherwise unary chains would be linked crosswise (``⟨NP,NP⟩ →
  ⟨[NP NNS₁], NP₁⟩``). With this choice the minimal rules of the paper's Figure 7 are reproduced exactly.
* coverage rules (:func:`dualdecomp.solvers.transducer.coverage.coverage_rules`, which the chart adds
  itself) complete the grammar.
* :func:`extract_grammar` — all of the above over a corpus, with the paper's pruning (specialised rules
  with more than ``max_variables`` linked variables or ``max_nodes`` source nodes are dropped; at most
  ``max_targets`` extracted target trees per source elementary tree, the most frequent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from dualdecomp.core.errors import ModelError
from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree
from dualdecomp.solvers.transducer import (
    NODE,
    VAR,
    WORD,
    Frag,
    Grammar,
    GrammarConfig,
    Rule,
    coverage_rules,
    format_frag,
)

__all__ = ["constituent_alignment", "extract_grammar", "extract_rules"]


def constituent_alignment(source: Tree, target: Tree) -> dict[int, list[int]]:
    """Constituent alignment (equation 2) of a source tree and a target tree.

    Parameters
    ----------
    source : Tree
        Leaves indexed 0..n-1.
    target : Tree
        Leaves indexed by the source positions they are aligned to (strictly increasing).

    Returns
    -------
    dict
        Preorder id of each aligned internal source node → the preorder ids of its aligned internal
        target nodes (highest first). Node ids are those of :class:`IndexedTree`.
    """
    S, T = IndexedTree(source), IndexedTree(target)
    kept = set(target.indices())
    by_yield: dict[tuple[int, ...], list[int]] = {}
    for j, node in enumerate(T.nodes):
        if not node.is_leaf:
            by_yield.setdefault(tuple(T.leaf_indices(j)), []).append(j)
    out: dict[int, list[int]] = {}
    for i, node in enumerate(S.nodes):
        if node.is_leaf:
            continue
        key = tuple(k for k in S.leaf_indices(i) if k in kept)
        if key and key in by_yield:
            out[i] = list(by_yield[key])
    return out


class _Extractor:
    def __init__(self, source: Tree, target: Tree, config: GrammarConfig) -> None:
        self.S, self.T = IndexedTree(source), IndexedTree(target)
        self.config = config
        tidx = target.indices()
        if any(b <= a for a, b in zip(tidx, tidx[1:], strict=False)):
            raise ModelError("target leaves must carry strictly increasing source positions")
        self.kept = set(tidx)
        if not self.kept <= set(source.indices()):
            raise ModelError("target leaves point outside the source sentence")
        self.align = constituent_alignment(source, target)
        self.has_kept = [any(k in self.kept for k in self.S.leaf_indices(i)) for i in range(len(self.S))]

    def admissible(self, c: int, vs: int, vt: int) -> list[int]:
        same = self.S.nodes[vs].label == self.T.nodes[vt].label
        return [t for t in self.align.get(c, []) if self.T.contains(vt, t) and not (t == vt and same)]

    def options(self, c: int, budget: int, vs: int, vt: int) -> Iterator[tuple[Frag, int, tuple]]:
        node = self.S.nodes[c]
        if node.is_leaf:
            yield Frag(WORD, node.label, (), node.index in self.kept), 0, ()
            return
        if not self.has_kept[c]:
            yield Frag(VAR, node.label, (), False), 0, ()
            if budget > 0:
                for f, used, cuts in self.descend(c, budget - 1, vs, vt):
                    yield f, used + 1, cuts
            return
        adm = self.admissible(c, vs, vt)
        if adm:
            yield Frag(VAR, node.label, (), True), 0, ((c, adm[0]),)
            if budget > 0:
                for f, used, cuts in self.descend(c, budget - 1, vs, vt):
                    yield f, used + 1, cuts
            return
        yield from self.descend(c, budget, vs, vt)

    def descend(self, c: int, budget: int, vs: int, vt: int) -> Iterator[tuple[Frag, int, tuple]]:
        # partial products are pruned as soon as a specialised (used > 0) one exceeds the limits
        cfg = self.config
        partial: list[tuple[tuple[Frag, ...], int, tuple, int, int]] = [((), 0, (), 1, 0)]
        for child in self.S.children[c]:
            new = []
            opts = [(f, u, cu, f.size()) for f, u, cu in self.options(child, budget, vs, vt)]
            for frags, used, cuts, size, nvars in partial:
                for f, u, cu, fsize in opts:
                    used2, size2, nvars2 = max(used, u), size + fsize, nvars + len(cu)
                    if (used2 > 0 or cfg.prune_minimal) and (size2 > cfg.max_nodes
                                                             or nvars2 > cfg.max_variables):
                        continue
                    new.append((frags + (f,), used2, cuts + cu, size2, nvars2))
            partial = new
        label = self.S.nodes[c].label
        for frags, used, cuts, _, _ in partial:
            yield Frag(NODE, label, frags), used, cuts

    def target_frag(self, j: int, cut: dict[int, str]) -> Frag:
        if j in cut:
            return Frag(VAR, cut[j])
        node = self.T.nodes[j]
        if node.is_leaf:
            return Frag(WORD, node.label)
        return Frag(NODE, node.label, tuple(self.target_frag(k, cut) for k in self.T.children[j]))

    def rules_for(self, vs: int, vt: int) -> list[tuple[Rule, tuple, bool]]:
        out = []
        cfg = self.config
        for frag, used, cuts in self.descend(vs, cfg.depth, vs, vt):
            minimal = used == 0
            if not minimal or cfg.prune_minimal:
                nvars = sum(1 for f in frag.frontier() if f.kind == VAR and f.kept)
                if nvars > cfg.max_variables or frag.size() > cfg.max_nodes:
                    continue
            cut = {t: self.T.nodes[t].label for _, t in cuts}
            target = self.target_frag(vt, cut)
            out.append((Rule(frag, target, frozenset({"train"}), 1), cuts, minimal))
        return out

    def run(self) -> list[tuple[int, int, Rule, bool]]:
        root_pair = (0, 0)
        if 0 not in self.align or 0 not in self.align[0]:
            raise ModelError("the roots of the source and target trees are not aligned")
        todo = [root_pair]
        seen = {root_pair}
        out = []
        while todo:
            vs, vt = todo.pop()
            for rule, cuts, minimal in self.rules_for(vs, vt):
                out.append((vs, vt, rule, minimal))
                for pair in cuts:
                    if pair not in seen:
                        seen.add(pair)
                        todo.append(pair)
        return out


def extract_rules(source: Tree, target: Tree, config: GrammarConfig | None = None,
                  minimal_only: bool = False) -> list[Rule]:
    """The rules extracted from one aligned tree pair (Algorithm 3 and its specialisations).

    Parameters
    ----------
    source : Tree
        Source tree (leaves 0..n-1).
    target : Tree
        Target tree whose leaves carry source positions (deletion alignment).
    config : GrammarConfig, optional
        ``depth`` and the pruning limits.
    minimal_only : bool
        Return only the minimal rules (those with no skipped match).

    Returns
    -------
    list of Rule
        One entry per (aligned pair, rule) occurrence, kinds ``{"train"}``, count 1.

    Raises
    ------
    ModelError
        If the roots are not aligned (e.g. empty compression) or the leaves are inconsistent.
    """
    ex = _Extractor(source, target, config or GrammarConfig())
    return [r for _, _, r, minimal in ex.run() if minimal or not minimal_only]


def extract_grammar(pairs: Iterable[tuple[Tree, Tree | None]], config: GrammarConfig | None = None
                    ) -> tuple[Grammar, int]:
    """Extract a grammar from a corpus of tree pairs.

    Parameters
    ----------
    pairs : iterable of (Tree, Tree or None)
        Source tree and target tree (leaves carrying source positions); a None target contributes only
        the source's copy/deletion rules.
    config : GrammarConfig, optional

    Returns
    -------
    (Grammar, int)
        The grammar and the number of pairs whose extraction failed (their roots are not aligned, e.g.
        an empty compression; they contribute copy/deletion rules only).
    """
    cfg = config or GrammarConfig()
    counts: Counter[str] = Counter()
    train: dict[str, Rule] = {}
    cover: dict[str, Rule] = {}
    failed = 0
    for source, target in pairs:
        for node in source.preorder():
            if not node.is_leaf:
                for r in coverage_rules(node):
                    old = cover.get(r.key)
                    cover[r.key] = r if old is None else Rule(r.source, r.target, old.kinds | r.kinds, 0)
        if target is None:
            continue
        try:
            rules = extract_rules(source, target, cfg)
        except ModelError:
            failed += 1
            continue
        for r in rules:
            counts[r.key] += 1
            train.setdefault(r.key, r)
    # at most max_targets target trees per source elementary tree (most frequent first)
    by_source: dict[str, list[str]] = {}
    for key, r in train.items():
        by_source.setdefault(format_frag(r.source), []).append(key)
    grammar = Grammar(config=cfg)
    for keys in by_source.values():
        keys.sort(key=lambda k: (-counts[k], k))
        for key in keys[: cfg.max_targets]:
            r = train[key]
            grammar.add(Rule(r.source, r.target, frozenset({"train"}), counts[key]))
    for r in cover.values():
        grammar.add(r)
    return grammar, failed
