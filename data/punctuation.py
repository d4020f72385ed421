"""Paired punctuation of a token sequence: brackets and quotation marks that open and close together.

:func:`punctuation_pairs` finds them: brackets (``(`` ``)``, ``[`` ``]``, ``{`` ``}`` and the Penn
Treebank escapes ``-LRB-`` ``-RRB-``, ``-LSB-`` ``-RSB-``, ``-LCB-`` ``-RCB-``) are matched by nesting;
directed quotes (`````` ``''``, ``“`` ``”``, ``‘`` ``’`` when ``‘`` opened one) likewise; the straight
double quote ``"`` opens and closes alternately, left to right. A closing mark with no opening one, and an
opening one never closed, belong to no pair. A rewrite that keeps one mark of a pair and drops the other
("Geschwisterliebe or " Sibling Love ")") reads as broken; ``dualdecomp rewrite --paired-punctuation``
keeps both or neither (:class:`dualdecomp.solvers.paired.PairedTokens`).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CLOSERS", "punctuation_pairs"]

CLOSERS = {")": "(", "]": "[", "}": "{", "-RRB-": "-LRB-", "-RSB-": "-LSB-", "-RCB-": "-LCB-", "''": "``",
           "”": "“", "’": "‘"}
"""Each closing mark and the opening mark it closes."""
_OPENERS = frozenset(CLOSERS.values())
_TOGGLES = frozenset({'"'})


def punctuation_pairs(tokens: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """The (opening, closing) positions (0-based) of the paired punctuation of ``tokens`` (module
    docstring), sorted by opening position.

    Parameters
    ----------
    tokens : sequence of str

    Returns
    -------
    tuple of (int, int)
    """
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    open_toggle: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if tok in _TOGGLES:
            if tok in open_toggle:
                pairs.append((open_toggle.pop(tok), i))
            else:
                open_toggle[tok] = i
        elif tok in _OPENERS:
            stack.append((tok, i))
        elif tok in CLOSERS:
            opener = CLOSERS[tok]
            depth = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][0] == opener), None)
            if depth is not None:  # marks opened inside and never closed are dropped with it
                pairs.append((stack[depth][1], i))
                del stack[depth:]
    return tuple(sorted(pairs))
