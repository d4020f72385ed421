"""Gold derivations by the maximum-rules heuristic (Cohn & Lapata 2009, Algorithm 5).

Among the derivations of the source-side hypergraph whose target side is exactly the given target tree,
pick one with the most rules. Chart over (source node, target node) pairs; a hyperedge applies at
(v, t) when its target elementary tree matches the target subtree at t (labels and shape; each target
word must be the very source token the rule keeps; variables bind target nodes of their category).
"""

from __future__ import annotations

from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree
from dualdecomp.solvers.transducer import WORD, Hypergraph, match_frag

__all__ = ["gold_derivation"]


def gold_derivation(hg: Hypergraph, target: Tree) -> list[int] | None:
    """Hyperedges (top-down) of a maximum-rule derivation producing ``target``, or None if none exists.

    Parameters
    ----------
    hg : Hypergraph
        Source-side hypergraph (``dualdecomp.solvers.transducer.solver``).
    target : Tree
        Target tree whose leaves carry source token positions.

    Returns
    -------
    list of int or None
    """
    T = IndexedTree(target)
    kept_all = set(target.indices())
    leafset = [frozenset(T.leaf_indices(j)) for j in range(len(T))]
    by_label: dict[str, list[int]] = {}
    for j, node in enumerate(T.nodes):
        if not node.is_leaf:
            by_label.setdefault(node.label, []).append(j)
    S = hg.tree
    src_leaves = [frozenset(S.leaf_indices(i)) for i in range(len(S))]
    best: dict[tuple[int, int], tuple[int, int, list[tuple[int, int]]]] = {}
    for e in range(hg.num_hyperedges):
        kept = hg.kept(e).tolist()
        if any(k not in kept_all for k in kept) or any(int(k) in kept_all for k in hg.dropped(e)):
            continue
        v = int(hg.hyperedge_node[e])
        rule = hg.rules[int(hg.hyperedge_rule[e])]
        kept_items = [(f, j) for f, j in zip(rule.source.frontier(), hg.frontier[e], strict=True) if f.kept]
        kept_src = [S.nodes[j].index if f.kind == WORD else None for f, j in kept_items]
        tails = hg.tails(e).tolist()
        for t in by_label.get(rule.target_root, []):
            if not leafset[t] <= src_leaves[v] or not leafset[t] >= set(kept):
                continue
            out: list[int] = []
            if not match_frag(rule.target, T, t, out,
                              lambda node, k, src=kept_src: node.index == src[k]):
                continue
            total = 1
            pairs = []
            ok = True
            ti = 0
            for (f, j), tj in zip(kept_items, out, strict=True):
                if f.kind == WORD:
                    continue
                sub = best.get((j, tj))
                # the tail vertex must be the one of this variable's category
                if sub is None or hg.vertex_label[tails[ti]] != T.nodes[tj].label:
                    ok = False
                    break
                total += sub[0]
                pairs.append((j, tj))
                ti += 1
            if not ok:
                continue
            if (v, t) not in best or total > best[(v, t)][0]:
                best[(v, t)] = (total, e, pairs)
    if (0, 0) not in best:
        return None
    hyperedges = []
    stack = [(0, 0)]
    while stack:
        pair = stack.pop()
        _, e, pairs = best[pair]
        hyperedges.append(e)
        stack.extend(reversed(pairs))
    return hyperedges
