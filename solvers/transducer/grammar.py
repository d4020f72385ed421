"""Synchronous tree-substitution grammar (STSG) for deletion-only compression: rules, the grammar, and
its two file formats.

A rule pairs two elementary trees (:class:`~dualdecomp.solvers.transducer.frag.Frag`, text form in
:mod:`dualdecomp.solvers.transducer.frag`). On the *source* side every frontier item is either kept (a
linked variable / a copied word) or deleted (an ε-aligned variable: the whole source subtree below it is
deleted / a deleted word). On the *target* side every frontier item is kept. Since compression here is by
deletion only, the target frontier, read left to right, is linked one-to-one and in order with the kept
source frontier items (a target variable may change category: ``⟨S, NP⟩ → ⟨[S NP₁ VP_ε], NP₁⟩``),
e.g. source ``(S (S @WHNP @S) ~CC @S)`` and target ``(S @WHNP (S @NP @VP))``; a bare target variable
``@VP`` is allowed (the rule rewrites the source node into that category).

Files (:func:`save_grammar`, :func:`load_grammar`):

* JSON (``.json``, gzip-compressed ``.json.gz``): the rules in text form; loading parses and validates
  every rule (about 45 s for the shipped 250,609 rules).
* binary (``.bin``): one zlib-compressed array file (:mod:`dualdecomp.core.array_file`, sha256-checked):
  the distinct elementary trees stored once as preorder nodes over interned strings
  (:mod:`dualdecomp.solvers.transducer.frag_codec`, compact form), each rule's source and target tree ids,
  its kinds as a bit mask, its count, the string id of its production and a 32-bit hash of its key.
  Loading inflates and checks the arrays (vectorised) and builds the production index; a rule is decoded
  and validated the first time it is used (:class:`~dualdecomp.solvers.transducer.rule_table.RuleTable`),
  and :meth:`Grammar.find` looks a key up by its hash. The payload is inflated into memory once (12.8 MB
  for the shipped grammar) instead of memory-mapped: the file is 4 times smaller, small enough to ship.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.array_file import is_array_file, read_array_file, write_array_file
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import (
    ARRAY_FILE,
    atomic_write_bytes,
    read_gzip_capped,
    read_model_bytes,
    verify_file,
)
from dualdecomp.solvers.transducer.frag import NODE, VAR, WORD, Frag, format_frag, parse_frag
from dualdecomp.solvers.transducer.frag_codec import (
    FragEncoder,
    decode_frag,
    expand_frag_arrays,
    key_hash,
    narrow,
    production_index,
)
from dualdecomp.solvers.transducer.rule_table import RuleTable

__all__ = ["NODE", "VAR", "WORD", "Frag", "Grammar", "GrammarConfig", "Rule", "format_frag", "load_grammar",
           "parse_frag", "save_grammar", "short_key_hash"]

FORMAT = "dualdecomp-stsg"
VERSION = 1
BINARY_FORMAT = "dualdecomp-stsg-binary"
BINARY_VERSION = 1
KINDS = ("train", "copy", "delete")


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
        return self.source.production()


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


class Grammar(RuleTable[Rule]):
    """A set of rules indexed by the CFG production at their source root.

    Parameters
    ----------
    rules : sequence of Rule
        Distinct rules (by ``key``); duplicates are merged (kinds united, counts added).
    config : GrammarConfig, optional

    Notes
    -----
    ``rules`` is a read-only sequence (by id); a grammar loaded from a binary file decodes each rule on
    first use (:class:`~dualdecomp.solvers.transducer.rule_table.RuleTable`).
    """

    def __init__(self, rules: Sequence[Rule] = (), config: GrammarConfig | None = None) -> None:
        super().__init__()
        self.config = config or GrammarConfig()
        for r in rules:
            self.add(r)

    def __repr__(self) -> str:
        return f"Grammar({len(self)} rules)"

    def merge(self, old: Rule, new: Rule) -> Rule:
        """Kinds united, counts added."""
        return Rule(old.source, old.target, old.kinds | new.kinds, old.count + new.count)


def short_key_hash(key: str) -> int:
    """The 32-bit key hash of the binary file (the top bits of
    :func:`~dualdecomp.solvers.transducer.frag_codec.key_hash`)."""
    return key_hash(key) >> 31


def save_grammar(grammar: Grammar, path: str | os.PathLike[str]) -> Path:
    """Write a grammar: binary when ``path`` ends in ``.bin``, else JSON (rules in text form),
    gzip-compressed when it ends in ``.gz`` (module docstring). The same grammar gives the same bytes.

    Returns
    -------
    Path
    """
    out = Path(path)
    if out.suffix == ".bin":
        return _save_binary(grammar, out)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "config": _config_dict(grammar.config),
        "rules": [{"source": format_frag(r.source), "target": format_frag(r.target),
                   "kinds": sorted(r.kinds), "count": r.count} for r in grammar.rules],
    }
    data = (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")
    # mtime=0: the same grammar always gives the same bytes
    payload = gzip.compress(data, mtime=0) if out.suffix == ".gz" else data
    atomic_write_bytes(out, lambda fh: fh.write(payload))
    return out


def load_grammar(path: str | os.PathLike[str], validate: bool = False) -> Grammar:
    """Read a grammar file written by :func:`save_grammar`: binary (recognised by its magic bytes) or
    JSON (``.gz``: gzip-compressed).

    Parameters
    ----------
    path : path
    validate : bool
        Binary files: decode and check every rule now (by default each rule is decoded and checked on
        first use). JSON files are always checked whole.

    Raises
    ------
    ModelError
        Missing or unreadable file, checksum mismatch (the binary file's own sha256, and the model
        directory's manifest when one lists it), wrong format/version, malformed arrays, or an invalid rule
        (JSON, or binary with ``validate``; the message names it).
    """
    p = Path(path)
    if is_array_file(p):
        grammar = _load_binary(p)
        if validate:
            grammar.validate()
        return grammar
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
    config = _read_config(doc.get("config"), p)
    rules_doc = doc.get("rules")
    if not isinstance(rules_doc, list):
        raise ModelError(f"{p}: rules must be a list")
    grammar = Grammar(config=config)
    for i, r in enumerate(rules_doc):
        grammar.add(_read_rule(r, f"{p}: rule {i}"))
    verify_file(p)
    return grammar


def _config_dict(config: GrammarConfig) -> dict[str, Any]:
    return {k: getattr(config, k) for k in GrammarConfig.__dataclass_fields__}


def _read_config(cfg: Any, p: str | os.PathLike[str]) -> GrammarConfig:
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
    return config


def _save_binary(grammar: Grammar, out: Path) -> Path:
    enc = FragEncoder()
    n = len(grammar)
    source, target, kinds, counts, production = ([0] * n for _ in range(5))
    hashes = np.zeros(n, dtype=np.uint32)
    for i, r in enumerate(grammar.rules):
        source[i], target[i] = enc.add(r.source), enc.add(r.target)
        kinds[i] = sum(1 << k for k, name in enumerate(KINDS) if name in r.kinds)
        counts[i] = r.count
        production[i] = enc.string(r.production())
        hashes[i] = short_key_hash(r.key)
    arrays = {**enc.compact_arrays(), "source": narrow(source), "target": narrow(target),
              "kinds": narrow(kinds).astype(np.uint8), "counts": narrow(counts),
              "production": narrow(production), "key_hashes": hashes}
    meta = {"config": _config_dict(grammar.config), "kinds": list(KINDS), "rules": n}
    return write_array_file(out, BINARY_FORMAT, BINARY_VERSION, meta, arrays, compress=True)


class _Store:
    """The arrays of a loaded binary grammar; decodes rule ``i`` on demand."""

    def __init__(self, where: str, arrays: dict[str, np.ndarray], bounds: np.ndarray, strings: list[str]):
        self.where, self.a, self.bounds, self.strings = where, arrays, bounds, strings

    def decode(self, i: int) -> Rule:
        a, where = self.a, self.where
        lab, shp = a["node_labels"], a["node_shapes"]
        src = decode_frag(lab, shp, self.bounds, int(a["source"][i]), self.strings, where)
        tgt = decode_frag(lab, shp, self.bounds, int(a["target"][i]), self.strings, where)
        try:
            rule = Rule(src, tgt, _KIND_SETS[int(a["kinds"][i])], int(a["counts"][i]))
        except ModelError as exc:
            raise ModelError(f"{where}: rule {i}: {exc}") from None
        if rule.production() != self.strings[int(a["production"][i])]:
            raise ModelError(f"{where}: rule {i}: stored production does not match its source tree")
        return rule


_KIND_SETS = tuple(frozenset(k for b, k in enumerate(KINDS) if m >> b & 1) for m in range(1 << len(KINDS)))
_RULE_ARRAYS = ("source", "target", "kinds", "counts", "production", "key_hashes")


def _load_binary(p: Path) -> Grammar:
    where = os.fspath(p)
    f = read_array_file(p, BINARY_FORMAT, BINARY_VERSION)
    a = f.arrays
    for k in _RULE_ARRAYS:
        if k not in a or a[k].ndim != 1 or not np.issubdtype(a[k].dtype, np.unsignedinteger):
            raise ModelError(f"{where}: array {k!r} missing or not a vector of unsigned integers")
    if f.meta.get("kinds") != list(KINDS):
        raise ModelError(f"{where}: rule kinds {f.meta.get('kinds')!r} differ from {list(KINDS)}")
    config = _read_config(f.meta.get("config"), where)
    bounds, strings = expand_frag_arrays(a, where)
    n, nfrags = len(a["kinds"]), len(bounds) - 1
    ok = (all(len(a[k]) == n for k in _RULE_ARRAYS) and f.meta.get("rules") == n
          and all(bool(np.all(a[k] < nfrags)) for k in ("source", "target"))
          and bool(np.all((a["kinds"] > 0) & (a["kinds"] < 1 << len(KINDS))))
          and bool(np.all(a["production"] < len(strings))))
    if not ok:
        raise ModelError(f"{where}: malformed grammar arrays")
    verify_file(p)
    grammar = Grammar(config=config)
    grammar.attach(n, _Store(where, a, bounds, strings).decode, production_index(a["production"], strings),
                   a["key_hashes"], short_key_hash)
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
