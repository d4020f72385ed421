"""Brute-force oracle for the rewriting chart: enumerate every target derivation top-down.

Independent of ``dualdecomp.solvers.rewriting.hypergraph`` and ``chart`` (own matching, own preorder
numbering of the source nodes, no hypergraph, no tables): for tests on small trees only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dualdecomp.data.trees import Tree
from dualdecomp.solvers.rewriting.rules import OPERATIONS, RewriteRule, reordered_count
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag

__all__ = ["OracleDerivation", "best_rewrite", "enumerate_rewrites"]


@dataclass(frozen=True)
class OracleDerivation:
    """One derivation: summed rule scores, target words, operation counts, rule keys (top-down), the
    source token positions it deletes and its substitutions that change more than case."""

    score: float
    words: tuple[str, ...]
    operations: tuple[int, ...]
    keys: tuple[str, ...]
    deleted: frozenset[int] = frozenset()
    lexical: int = 0


def _match(frag: Frag, node: Tree, out: list[tuple[Frag, Tree]]) -> bool:
    if frag.kind == WORD:
        if node.is_leaf and node.label == frag.label:
            out.append((frag, node))
            return True
        return False
    if node.is_leaf or node.label != frag.label:
        return False
    if frag.kind == VAR:
        out.append((frag, node))
        return True
    if len(node.children) != len(frag.children):
        return False
    return all(_match(f, c, out) for f, c in zip(frag.children, node.children, strict=True))


def _own_operations(rule: RewriteRule) -> list[int]:
    """kept/deleted/substituted/reordered/inserted of the rule itself, from its definition."""
    src_words = [f for f in rule.source.frontier() if f.kind == WORD]
    tgt_words = [f for f in rule.target.frontier() if f.kind == WORD]
    ops = dict.fromkeys(OPERATIONS, 0)
    for w, j in zip(tgt_words, rule.word_links, strict=True):
        if j is None:
            ops["inserted"] += 1
        elif src_words[j].label == w.label:
            ops["kept"] += 1
        else:
            ops["substituted"] += 1
    ops["deleted"] = sum(1 for f in src_words if not f.kept)
    ops["reordered"] = reordered_count(rule.links)
    return [ops[k] for k in OPERATIONS]


def _lexical_substitutions(rule: RewriteRule) -> int:
    """The rule's target words linked to a source word that differs from them in more than case."""
    src_words = [f.label for f in rule.source.frontier() if f.kind == WORD]
    tgt_words = [f.label for f in rule.target.frontier() if f.kind == WORD]
    return sum(1 for w, j in zip(tgt_words, rule.word_links, strict=True)
               if j is not None and src_words[j].lower() != w.lower())


def enumerate_rewrites(tree: Tree, rules: Sequence[RewriteRule],
                       score: Callable[[RewriteRule, int], float],
                       coverage: Callable[[Tree], Sequence[RewriteRule]] | None = None
                       ) -> list[OracleDerivation]:
    """Every derivation rewriting ``tree``'s root into its own label.

    Parameters
    ----------
    tree : Tree
    rules : sequence of RewriteRule
    score : callable
        ``score(rule, node)``, ``node`` the preorder number of the source node it applies at (leaves
        included, root 0).
    coverage : callable, optional
        Rules added at every internal node (duplicates of ``rules`` by key ignored).

    Returns
    -------
    list of OracleDerivation
    """
    pre: dict[int, int] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        pre[id(node)] = len(pre)
        stack.extend(reversed(node.children))
    keys = {r.key for r in rules}

    def at(node: Tree) -> list[RewriteRule]:
        out = list(rules)
        seen = set(keys)
        if coverage is not None:
            for r in coverage(node):
                if r.key not in seen:
                    seen.add(r.key)
                    out.append(r)
        return out

    memo: dict[tuple[int, str], list[OracleDerivation]] = {}

    def derive(node: Tree, cat: str) -> list[OracleDerivation]:
        key = (id(node), cat)
        if key in memo:
            return memo[key]
        found: list[OracleDerivation] = []
        for rule in ([] if node.is_leaf else at(node)):
            if rule.target_root != cat:
                continue
            fr: list[tuple[Frag, Tree]] = []
            if rule.source.kind != NODE or not _match(rule.source, node, fr):
                continue
            own = _own_operations(rule)
            linked = []
            gone: set[int] = set()
            for f, sub in fr:
                if f.kind == VAR and f.kept:
                    linked.append(sub)
                elif f.kind == VAR:
                    own[1] += len(sub.leaves())
                    gone.update(sub.indices())
                elif not f.kept:
                    gone.add(sub.index)
            tgt = rule.target.frontier()
            tvars = [f for f in tgt if f.kind == VAR]
            options = [derive(linked[rule.links[j]], tv.label) for j, tv in enumerate(tvars)]
            for combo in itertools.product(*options):
                words: list[str] = []
                it = iter(combo)
                for f in tgt:
                    words.extend([f.label] if f.kind == WORD else next(it).words)
                ops = tuple(own[k] + sum(c.operations[k] for c in combo) for k in range(len(OPERATIONS)))
                total = score(rule, pre[id(node)]) + sum(c.score for c in combo)
                keys_below = itertools.chain.from_iterable(c.keys for c in combo)
                deleted = frozenset(gone.union(*(c.deleted for c in combo)))
                lexical = _lexical_substitutions(rule) + sum(c.lexical for c in combo)
                found.append(OracleDerivation(total, tuple(words), ops, (rule.key, *keys_below), deleted,
                                              lexical))
        memo[key] = found
        return found

    return derive(tree, tree.label)


def best_rewrite(derivations: Sequence[OracleDerivation], lm: Callable[[Sequence[str]], float],
                 allowed: Callable[[Sequence[str]], bool] = lambda words: True
                 ) -> tuple[float, OracleDerivation] | None:
    """The best total (rule scores + ``lm(words)``) over the derivations ``allowed`` keeps (None if none
    or all score -inf)."""
    best: tuple[float, OracleDerivation] | None = None
    for d in derivations:
        if not allowed(d.words):
            continue
        total = d.score + lm(d.words)
        if total == float("-inf"):
            continue
        if best is None or total > best[0]:
            best = (total, d)
    return best
