"""Coverage rules: the copy rule of every source production and the deletion rules that keep the
children ranked by :func:`dualdecomp.solvers.transducer.heads.head_order` (heads 1; 1–2; ...; all), with
the parent-less variant when one child remains (never for ``TOP``). The chart adds them so that every
source tree has a derivation (Cohn & Lapata 2009, §3.2).
"""

from __future__ import annotations

from dualdecomp.data.trees import ROOT_LABEL, Tree
from dualdecomp.solvers.transducer.grammar import NODE, VAR, WORD, Frag, Rule
from dualdecomp.solvers.transducer.heads import head_order

__all__ = ["coverage_rules"]


def coverage_rules(node: Tree) -> list[Rule]:
    """Copy and deletion rules for the production at one internal source node.

    Parameters
    ----------
    node : Tree
        An internal node.

    Returns
    -------
    list of Rule
        The copy rule (kinds ``{"copy"}``) and the deletion rules (kinds ``{"delete"}``) (module docstring).
    """
    if node.is_leaf:
        return []
    items = [Frag(WORD, c.label) if c.is_leaf else Frag(VAR, c.label) for c in node.children]
    copy = Rule(Frag(NODE, node.label, tuple(items)), Frag(NODE, node.label, tuple(items)),
                frozenset({"copy"}), 0)
    out = [copy]
    if node.is_preterminal:
        return out
    k = len(items)
    order = head_order(node.label, [c.label for c in node.children])
    for j in range(1, k + 1):
        keep = set(order[:j])
        src = Frag(NODE, node.label, tuple(Frag(f.kind, f.label, (), i in keep) for i, f in enumerate(items)))
        kept_items = tuple(items[i] for i in sorted(keep))
        if j < k:
            out.append(Rule(src, Frag(NODE, node.label, kept_items), frozenset({"delete"}), 0))
        if j == 1 and kept_items[0].kind == VAR and node.label != ROOT_LABEL:
            out.append(Rule(src, kept_items[0], frozenset({"delete"}), 0))
    return out
