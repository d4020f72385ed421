"""Collins-style head ranking of the children of a CFG production (Collins 1999, appendix A).

Collins' head finder stops at the first match; like Cohn & Lapata (2009, §3.2) we run it to find *all*
matches: priority groups are scanned in order, each in its direction, and every child matching a group
is appended (if not ranked yet); the remaining children follow in the label's default direction. The
ranking orders the children by importance for the deletion rules.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["head_order"]

# label -> list of (direction, categories); direction "L" scans left to right, "R" right to left
_RULES: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "ADJP": [("L", ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS", "DT",
                    "FW", "RBR", "RBS", "SBAR", "RB"))],
    "ADVP": [("R", ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN"))],
    "CONJP": [("R", ("CC", "RB", "IN"))],
    "FRAG": [("R", ())],
    "INTJ": [("L", ("UH",))],
    "LST": [("R", ("LS", ":"))],
    "NAC": [("L", ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ", "JJS",
                   "JJR", "ADJP", "FW"))],
    "PP": [("R", ("IN", "TO", "VBG", "VBN", "RP", "FW"))],
    "PRN": [("L", ())],
    "PRT": [("R", ("RP",))],
    "QP": [("L", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS"))],
    "RRC": [("R", ("VP", "NP", "ADVP", "ADJP", "PP"))],
    "S": [("L", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP"))],
    "SBAR": [("L", ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG"))],
    "SBARQ": [("L", ("SQ", "S", "SINV", "SBARQ", "FRAG"))],
    "SINV": [("L", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP"))],
    "SQ": [("L", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ"))],
    "UCP": [("R", ())],
    "VP": [("L", ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP"))],
    "WHADJP": [("L", ("CC", "WRB", "JJ", "ADJP"))],
    "WHADVP": [("R", ("CC", "WRB"))],
    "WHNP": [("L", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP"))],
    "WHPP": [("R", ("IN", "TO", "FW"))],
    "TOP": [("L", ("S", "SINV", "SQ", "SBARQ", "VP", "NP", "FRAG"))],
    "NP": [("R", ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR", "PRP")), ("L", ("NP",)),
           ("R", ("$", "ADJP", "PRN")), ("R", ("CD",)), ("R", ("JJ", "JJS", "RB", "QP"))],
}
_DEFAULT_DIRECTION = {"NP": "R"}


def head_order(label: str, children: Sequence[str]) -> list[int]:
    """Rank the children of a production by head-ness.

    Parameters
    ----------
    label : str
        The parent label (function tags such as ``NP-SBJ`` are stripped).
    children : sequence of str
        The child labels.

    Returns
    -------
    list of int
        A permutation of ``range(len(children))``, most head-like first.

    Examples
    --------
    >>> head_order("NP", ["DT", "JJ", "NN"])
    [2, 1, 0]
    """
    base = label.split("-")[0] if label not in ("-LRB-", "-RRB-") else label
    groups = _RULES.get(base, [("L", ())])
    order: list[int] = []
    seen: set[int] = set()
    kids = [c.split("-")[0] if c not in ("-LRB-", "-RRB-", "-NONE-") else c for c in children]
    if base == "NP" and kids and kids[-1] == "POS":
        order.append(len(kids) - 1)
        seen.add(len(kids) - 1)
    for direction, cats in groups:
        idx = range(len(kids)) if direction == "L" else range(len(kids) - 1, -1, -1)
        for cat in cats:
            for i in idx:
                if i not in seen and kids[i] == cat:
                    order.append(i)
                    seen.add(i)
    direction = _DEFAULT_DIRECTION.get(base, groups[0][0])
    rest = range(len(kids)) if direction == "L" else range(len(kids) - 1, -1, -1)
    order.extend(i for i in rest if i not in seen)
    return order
