"""Reading and writing Penn-Treebank bracketed trees.

``(TOP (S (NP (NNS records)) (VP (VBP are) (VP (VBN involved)))))``: the reader numbers the leaves 0..n-1
left to right. A root without a label (``( (S ...))``, the treebank convention) or with a label other
than ``TOP`` is given a ``TOP`` root. Words are written with the usual escapes (``(`` → ``-LRB-``,
``)`` → ``-RRB-``) and unescaped when read, so a tree round-trips.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dualdecomp.core.errors import InputError
from dualdecomp.data.trees import PTB_ESCAPES, ROOT_LABEL, Tree, write_tree

__all__ = ["read_tree", "read_trees", "write_tree"]

_UNESCAPE = {v: k for k, v in PTB_ESCAPES.items()}
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _parse(tokens: list[str], pos: int, counter: list[int]) -> tuple[Tree, int]:
    """Parse a bracketed node starting at ``tokens[pos] == '('``."""
    if pos >= len(tokens) or tokens[pos] != "(":
        raise InputError("PTB tree: expected '('")
    pos += 1
    if pos < len(tokens) and tokens[pos] not in "()":
        label = tokens[pos]
        pos += 1
    else:
        label = ""
    children: list[Tree] = []
    while True:
        if pos >= len(tokens):
            raise InputError("PTB tree: unbalanced brackets (missing ')')")
        tok = tokens[pos]
        if tok == ")":
            pos += 1
            break
        if tok == "(":
            child, pos = _parse(tokens, pos, counter)
            children.append(child)
        else:
            word = _UNESCAPE.get(tok, tok)
            children.append(Tree(word, (), counter[0]))
            counter[0] += 1
            pos += 1
    if not children:
        raise InputError(f"PTB tree: node {label!r} has no children")
    return Tree(label, tuple(children)), pos


def read_tree(text: str) -> Tree:
    """Read one bracketed tree.

    Parameters
    ----------
    text : str
        A PTB bracketing.

    Returns
    -------
    Tree
        Rooted at ``TOP``; leaves numbered 0..n-1.

    Raises
    ------
    InputError
        Unbalanced brackets, empty nodes or trailing text.
    """
    tokens = _tokens(text)
    if not tokens:
        raise InputError("PTB tree: empty input")
    tree, pos = _parse(tokens, 0, [0])
    if pos != len(tokens):
        raise InputError("PTB tree: trailing text after the tree")
    return _rooted(tree)


def _rooted(tree: Tree) -> Tree:
    if tree.label == "":
        tree = Tree(ROOT_LABEL, tree.children)
    if tree.label != ROOT_LABEL:
        tree = Tree(ROOT_LABEL, (tree,))
    for node in tree.preorder():
        if not node.is_leaf and not node.label:
            raise InputError("PTB tree: an internal node has no label")
    return tree


def read_trees(text: str) -> Iterator[Tree]:
    """Read every tree of a text holding several bracketings (one after another, any whitespace).

    Yields
    ------
    Tree
    """
    tokens = _tokens(text)
    pos = 0
    while pos < len(tokens):
        tree, pos = _parse(tokens, pos, [0])
        yield _rooted(tree)
