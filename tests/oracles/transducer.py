"""Brute-force oracle for the transducer: enumerate every derivation top-down (Algorithm 2).

Independent of ``dualdecomp.solvers.transducer.solver`` (own matching, no hypergraph): for tests on small
trees only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

from dualdecomp.data.trees import Tree
from dualdecomp.solvers.transducer.grammar import NODE, VAR, WORD, Frag, Rule

__all__ = ["enumerate_derivations"]


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


def _applications(rules: Sequence[Rule], node: Tree, cat: str, derive: Callable[[Tree, str], object]
                  ) -> Iterator[tuple[Rule, set[int], int, list]]:
    """Every rule rewriting ``node`` into ``cat``: (rule, kept word positions, dropped leaf count, the
    ``derive(child, category)`` results of its kept variables in order)."""
    for rule in rules:
        if rule.target_root != cat:
            continue
        fr: list[tuple[Frag, Tree]] = []
        if rule.source.kind != NODE or not _match(rule.source, node, fr):
            continue
        targets = iter(rule.target.frontier())
        kept: set[int] = set()
        dropped = 0
        subs = []
        for f, sub in fr:
            if f.kept:
                t = next(targets)
                if f.kind == WORD:
                    kept.add(sub.index)
                else:
                    subs.append(derive(sub, t.label))
            else:
                dropped += len(sub.leaves())
        yield rule, kept, dropped, subs


def enumerate_derivations(tree: Tree, rules: Sequence[Rule], score: Callable[[Rule, int], float]
                          ) -> list[tuple[float, frozenset[int], tuple[str, ...]]]:
    """Every derivation of ``tree`` under ``rules``.

    Parameters
    ----------
    tree : Tree
        Source tree; the derivation rewrites its root into its own label.
    rules : sequence of Rule
    score : callable
        ``score(rule, dropped)`` as in ``dualdecomp.solvers.transducer.solver``.

    Returns
    -------
    list of (score, kept token positions, rule keys top-down)
    """

    def derive(node: Tree, cat: str) -> list[tuple[float, frozenset[int], tuple[str, ...]]]:
        out = []
        for rule, kept, dropped, subs in _applications(rules, node, cat, derive):
            own = score(rule, dropped)
            for combo in itertools.product(*subs):
                total = own + sum(c[0] for c in combo)
                ks = frozenset(kept).union(*[c[1] for c in combo])
                keys = (rule.key,) + tuple(k for c in combo for k in c[2])
                out.append((total, ks, keys))
        return out

    return derive(tree, tree.label)


def best_by_yield(tree: Tree, rules: Sequence[Rule], score: Callable[[Rule, int], float]
                  ) -> dict[frozenset[int], float]:
    """Best derivation score for every achievable yield (set of kept token positions).

    The same top-down enumeration as :func:`enumerate_derivations`, but the derivations of each
    (node, category) are collapsed to the best score per yield before they are combined, so spurious
    ambiguity does not blow up the enumeration. Exact for every maximum over derivations.

    Returns
    -------
    dict
        Yield → best score.
    """
    memo: dict[tuple[int, str], dict[frozenset[int], float]] = {}

    def derive(node: Tree, cat: str) -> dict[frozenset[int], float]:
        key = (id(node), cat)
        if key in memo:
            return memo[key]
        out: dict[frozenset[int], float] = {}
        for rule, kept, dropped, subs in _applications(rules, node, cat,
                                                       lambda sub, label: list(derive(sub, label).items())):
            own = score(rule, dropped)
            for combo in itertools.product(*subs):
                total = own + sum(c[1] for c in combo)
                ks = frozenset(kept).union(*[c[0] for c in combo])
                if total > out.get(ks, -float("inf")):
                    out[ks] = total
        memo[key] = out
        return out

    return derive(tree, tree.label)
