"""Elementary trees of the STSG (:class:`Frag`) and their text form.

An elementary tree is made of internal nodes (``NODE``), frontier non-terminals (``VAR``) and terminals
(``WORD``); on a rule's source side a frontier item is kept or deleted (see
:mod:`dualdecomp.solvers.transducer.grammar`).

Text form (used in files and feature names), one elementary tree per string:

* internal node: ``(LABEL child child ...)``
* variable: ``@LABEL`` (kept / linked), ``~LABEL`` (deleted, source only)
* word: ``"word"`` (JSON string; kept), ``~"word"`` (deleted, source only)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property

from dualdecomp.core.errors import ModelError

__all__ = ["NODE", "VAR", "WORD", "Frag", "format_frag", "parse_frag"]

NODE, VAR, WORD = 0, 1, 2


@dataclass(frozen=True)
class Frag:
    """A node of an elementary tree.

    Attributes
    ----------
    kind : int
        ``NODE``, ``VAR`` or ``WORD``.
    label : str
        Non-terminal label, or the word for ``WORD``.
    children : tuple of Frag
        Children of a ``NODE`` (non-empty); empty otherwise.
    kept : bool
        For frontier items on the source side: kept (True) or deleted (False). Always True for ``NODE``.
    """

    kind: int
    label: str
    children: tuple[Frag, ...] = ()
    kept: bool = True

    def frontier(self) -> list[Frag]:
        """The ``VAR`` and ``WORD`` items, left to right."""
        if self.kind != NODE:
            return [self]
        out: list[Frag] = []
        for c in self.children:
            out.extend(c.frontier())
        return out

    def production(self) -> str:
        """The CFG production at this node (as ``Tree.production``): a rule's index key for matching."""
        kids = [json.dumps(c.label) if c.kind == WORD else c.label for c in self.children]
        return f"{self.label} -> {' '.join(kids)}"

    def size(self) -> int:
        """Number of nodes (frontier items included)."""
        return self._size

    @cached_property
    def _size(self) -> int:
        return 1 + sum(c.size() for c in self.children)

    def __str__(self) -> str:
        return format_frag(self)


def format_frag(frag: Frag, lexical: bool = True, marks: bool = True) -> str:
    """Text form of an elementary tree (see the module docstring).

    Parameters
    ----------
    frag : Frag
    lexical : bool
        If False, the unlexicalised form: a preterminal over a word is written as its bare label and a
        lone word as ``*``.
    marks : bool
        If False, the kept/deleted marks are left out (``@``, ``~``).

    Returns
    -------
    str
    """
    if frag.kind == VAR:
        return (("@" if frag.kept else "~") if marks else "") + frag.label
    if frag.kind == WORD:
        if not lexical:
            return "*"
        return ("" if frag.kept or not marks else "~") + json.dumps(frag.label, ensure_ascii=False)
    if not lexical and len(frag.children) == 1 and frag.children[0].kind == WORD:
        w = frag.children[0]
        return frag.label + ("~" if marks and not w.kept else "")
    inner = " ".join(format_frag(c, lexical, marks) for c in frag.children)
    return f"({frag.label} {inner})"


_TOKEN = re.compile(r'\(|\)|~?"(?:[^"\\]|\\.)*"|[@~]?[^\s()"]+|\S')


def parse_frag(text: str) -> Frag:
    """Parse the text form of an elementary tree.

    Raises
    ------
    ModelError
        On malformed text.
    """
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise ModelError(f"empty elementary tree {text!r}")
    frag, pos = _parse(tokens, 0, text)
    if pos != len(tokens):
        raise ModelError(f"trailing text in elementary tree {text!r}")
    return frag


def _parse(tokens: list[str], pos: int, text: str) -> tuple[Frag, int]:
    if pos >= len(tokens):
        raise ModelError(f"truncated elementary tree {text!r}")
    tok = tokens[pos]
    if tok == "(":
        if pos + 1 >= len(tokens) or tokens[pos + 1] in "()" or tokens[pos + 1][0] in '@~"':
            raise ModelError(f"missing node label in elementary tree {text!r}")
        label = tokens[pos + 1]
        pos += 2
        kids: list[Frag] = []
        while True:
            if pos >= len(tokens):
                raise ModelError(f"unbalanced brackets in elementary tree {text!r}")
            if tokens[pos] == ")":
                pos += 1
                break
            child, pos = _parse(tokens, pos, text)
            kids.append(child)
        if not kids:
            raise ModelError(f"node {label!r} without children in elementary tree {text!r}")
        return Frag(NODE, label, tuple(kids)), pos
    if tok == ")":
        raise ModelError(f"unexpected ')' in elementary tree {text!r}")
    kept = not tok.startswith("~")
    body = tok[1:] if tok[0] in "@~" else tok
    if body.startswith('"'):
        if "\\" not in body and len(body) > 2 and body.endswith('"'):  # no escapes: the common case
            return Frag(WORD, body[1:-1], (), kept), pos + 1
        try:
            word = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ModelError(f"bad word {body!r} in elementary tree {text!r}") from exc
        if not isinstance(word, str) or not word:
            raise ModelError(f"bad word {body!r} in elementary tree {text!r}")
        return Frag(WORD, word, (), kept), pos + 1
    if tok[0] not in "@~" or not body:
        raise ModelError(f"bad frontier item {tok!r} in elementary tree {text!r} (use @X, ~X or \"word\")")
    return Frag(VAR, body, (), kept), pos + 1
