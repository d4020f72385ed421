"""Synchronous tree-substitution grammar (STSG) for deletion-only compression: elementary trees, rules,
the grammar, and its JSON file format.

An elementary tree (:class:`Frag`) is made of internal nodes (``NODE``), frontier non-terminals (``VAR``)
and terminals (``WORD``). On the *source* side every frontier item is either kept (a linked variable /
a copied word) or deleted (an ε-aligned variable: the whole source subtree below it is deleted / a deleted
word). On the *target* side every frontier item is kept. Since compression here is by deletion only, the
target frontier, read left to right, is linked one-to-one and in order with the kept source frontier items
(a target variable may change category: ``⟨S, NP⟩ → ⟨[S NP₁ VP_ε], NP₁⟩``).

Text form (used in files and feature names), one elementary tree per string:

* internal node: ``(LABEL child child ...)``
* variable: ``@LABEL`` (kept / linked), ``~LABEL`` (deleted, source only)
* word: ``"word"`` (JSON string; kept), ``~"word"`` (deleted, source only)

e.g. source ``(S (S @WHNP @S) ~CC @S)`` and target ``(S @WHNP (S @NP @VP))``; a bare target variable
``@VP`` is allowed (the rule rewrites the source node into that category).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import (
    ARRAY_FILE,
    atomic_write_bytes,
    read_gzip_capped,
    read_model_bytes,
    verify_file,
)

__all__ = ["NODE", "VAR", "WORD", "Frag", "Grammar", "GrammarConfig", "Rule", "format_frag", "load_grammar",
           "parse_frag", "save_grammar"]

NODE, VAR, WORD = 0, 1, 2
FORMAT = "dualdecomp-stsg"
VERSION = 1
KINDS = ("train", "copy", "delete")


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


@dataclass(frozen=True)
class Rule:
    """A synchronous rule ⟨X, Y⟩ → ⟨α, γ⟩ (deletion only; links implicit and monotone).

    Attributes
    ----------
    source : Frag
        α, rooted at a ``NODE`` labelled X.
    target : Frag
        γ, a ``NODE`` or a bare ``VAR``; its label is Y.
    kinds : frozenset of str
        Where the rule comes from: ``"train"`` (extracted), ``"copy"``, ``"delete"``.
    count : int
        Extraction count (0 for copy/delete rules never seen in training).
    """

    source: Frag
    target: Frag
    kinds: frozenset[str] = field(default=frozenset())
    count: int = 0

    def __post_init__(self) -> None:
        check_rule(self.source, self.target)

    @cached_property
    def key(self) -> str:
        """The identity of the rule: ``"source => target"`` in text form (computed once)."""
        return f"{format_frag(self.source)} => {format_frag(self.target)}"

    @property
    def root(self) -> str:
        """X, the source root label."""
        return self.source.label

    @property
    def target_root(self) -> str:
        """Y, the target root label."""
        return self.target.label

    def production(self) -> str:
        """The CFG production at the source root (as ``Tree.production``): the index key for matching."""
        kids = [json.dumps(c.label) if c.kind == WORD else c.label for c in self.source.children]
        return f"{self.source.label} -> {' '.join(kids)}"


def check_rule(source: Frag, target: Frag) -> None:
    """Validate a rule's two sides (ModelError when invalid); see :class:`Rule`."""
    if source.kind != NODE:
        raise ModelError(f"rule source must be a tree, got {format_frag(source)!r}")
    if target.kind == WORD:
        raise ModelError(f"rule target cannot be a bare word: {format_frag(target)!r}")
    for node in _nodes(target):
        if not node.kept:
            raise ModelError(f"deleted item in a rule target: {format_frag(target)!r}")
    kept = [f for f in source.frontier() if f.kept]
    tgt = target.frontier()
    if len(kept) != len(tgt):
        raise ModelError(f"rule {format_frag(source)} => {format_frag(target)}: {len(kept)} kept source "
                         f"items but {len(tgt)} target items")
    for s, t in zip(kept, tgt, strict=True):
        if s.kind != t.kind or (s.kind == WORD and s.label != t.label):
            raise ModelError(f"rule {format_frag(source)} => {format_frag(target)}: target item "
                             f"{format_frag(t)} does not match source item {format_frag(s)}")


def _nodes(frag: Frag) -> Iterable[Frag]:
    yield frag
    for c in frag.children:
        yield from _nodes(c)


@dataclass(frozen=True)
class GrammarConfig:
    """Extraction settings (stored with the grammar).

    Attributes
    ----------
    depth : int
        Recursion depth of the specialised rules (0: minimal rules only; the paper uses 1).
    max_variables : int
        Specialised rules with more linked variables are dropped (paper: 5).
    max_nodes : int
        Specialised rules whose source tree has more nodes are dropped (paper: 15).
    max_targets : int
        At most this many (most frequent) extracted target trees per source elementary tree (paper: 50).
    prune_minimal : bool
        Apply the variable/node limits to the minimal rules too (default False: minimal rules are always
        kept, so every training pair stays derivable).
    """

    depth: int = 1
    max_variables: int = 5
    max_nodes: int = 15
    max_targets: int = 50
    prune_minimal: bool = False


class Grammar:
    """A set of rules indexed by the CFG production at their source root.

    Parameters
    ----------
    rules : sequence of Rule
        Distinct rules (by ``key``); duplicates are merged (kinds united, counts added).
    config : GrammarConfig, optional
    """

    def __init__(self, rules: Sequence[Rule] = (), config: GrammarConfig | None = None) -> None:
        self.config = config or GrammarConfig()
        self.rules: list[Rule] = []
        self._ids: dict[str, int] = {}
        self._by_production: dict[str, list[int]] = {}
        for r in rules:
            self.add(r)

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return f"Grammar({len(self.rules)} rules)"

    def add(self, rule: Rule) -> int:
        """Add a rule (merged with an existing one of the same key); returns its id."""
        key = rule.key
        rid = self._ids.get(key)
        if rid is not None:
            old = self.rules[rid]
            self.rules[rid] = Rule(old.source, old.target, old.kinds | rule.kinds, old.count + rule.count)
            return rid
        rid = len(self.rules)
        self.rules.append(rule)
        self._ids[key] = rid
        self._by_production.setdefault(rule.production(), []).append(rid)
        return rid

    def find(self, key: str) -> int | None:
        """Id of the rule with that key, or None."""
        return self._ids.get(key)

    def candidates(self, production: str) -> list[int]:
        """Ids of the rules whose source root has this production (they may still fail deeper)."""
        return self._by_production.get(production, [])


def save_grammar(grammar: Grammar, path: str | os.PathLike[str]) -> Path:
    """Write a grammar as JSON (rules in text form), gzip-compressed when ``path`` ends in ``.gz``.

    Returns
    -------
    Path
    """
    out = Path(path)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "config": {k: getattr(grammar.config, k) for k in GrammarConfig.__dataclass_fields__},
        "rules": [{"source": format_frag(r.source), "target": format_frag(r.target),
                   "kinds": sorted(r.kinds), "count": r.count} for r in grammar.rules],
    }
    data = (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
    # mtime=0: the same grammar always gives the same bytes
    payload = gzip.compress(data, mtime=0) if out.suffix == ".gz" else data
    atomic_write_bytes(out, lambda fh: fh.write(payload))
    return out


def load_grammar(path: str | os.PathLike[str]) -> Grammar:
    """Read and validate a grammar file written by :func:`save_grammar` (``.gz``: gzip-compressed).

    Raises
    ------
    ModelError
        Missing or unreadable file, wrong format/version, or any invalid rule (the message names it).
    """
    p = Path(path)
    try:
        raw = read_gzip_capped(p) if p.suffix == ".gz" else read_model_bytes(p, ARRAY_FILE)
        doc = json.loads(raw.decode("utf-8"))
    except FileNotFoundError as exc:
        raise ModelError(f"{p}: grammar file not found") from exc
    except (OSError, EOFError, ValueError, RecursionError, zlib.error) as exc:  # zlib.error: bad deflate data
        raise ModelError(f"{p}: unreadable or not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelError(f"{p}: not a dualdecomp STSG grammar (format field missing or wrong)")
    if doc.get("version") != VERSION:
        raise ModelError(f"{p}: grammar version {doc.get('version')!r} not supported (expected {VERSION})")
    cfg = doc.get("config")
    if not isinstance(cfg, dict):
        raise ModelError(f"{p}: config must be an object")
    try:
        config = GrammarConfig(**cfg)
    except TypeError as exc:
        raise ModelError(f"{p}: bad config ({exc})") from exc
    for name in ("depth", "max_variables", "max_nodes", "max_targets"):
        v = getattr(config, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ModelError(f"{p}: config.{name} must be a non-negative integer")
    rules_doc = doc.get("rules")
    if not isinstance(rules_doc, list):
        raise ModelError(f"{p}: rules must be a list")
    grammar = Grammar(config=config)
    for i, r in enumerate(rules_doc):
        grammar.add(_read_rule(r, f"{p}: rule {i}"))
    verify_file(p)
    return grammar


def _read_rule(obj: Any, where: str) -> Rule:
    if not isinstance(obj, dict):
        raise ModelError(f"{where}: must be an object")
    src, tgt = obj.get("source"), obj.get("target")
    kinds, count = obj.get("kinds"), obj.get("count", 0)
    if not isinstance(src, str) or not isinstance(tgt, str):
        raise ModelError(f"{where}: source and target must be strings")
    if not isinstance(kinds, list) or not kinds or any(k not in KINDS for k in kinds):
        raise ModelError(f"{where}: kinds must be a non-empty list of {KINDS}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ModelError(f"{where}: count must be a non-negative integer")
    try:
        return Rule(parse_frag(src), parse_frag(tgt), frozenset(kinds), count)
    except ModelError as exc:
        raise ModelError(f"{where}: {exc}") from None
