"""The rewriting grammar: rules indexed by source production, coverage rules, and the binary file format.

* :class:`RewriteGrammar` — :class:`~dualdecomp.solvers.rewriting.rules.RewriteRule` s deduplicated by
  ``key`` (origins united, counts added), indexed by the CFG production at their source root
  (:meth:`RewriteGrammar.candidates`).
* :func:`rewriting_coverage_rules` — the copy and deletion rules of one source production
  (:func:`dualdecomp.solvers.transducer.coverage_rules`) as rewriting rules: identity links, each target
  word linked to the source word it copies. With them every source tree has a derivation.
* :func:`save_rewrite_grammar` / :func:`load_rewrite_grammar` — one binary array file
  (:mod:`dualdecomp.core.array_file`: memory-mapped, sha256-checked): the distinct elementary trees as
  preorder nodes over interned strings (:mod:`dualdecomp.solvers.transducer.frag_codec`), each rule's
  source and target tree ids, the link lists, the
  origins as a bit mask, the counts, the production of each rule and the 64-bit hashes of the rule keys.
  Loading maps the file, checks the checksum and the array structure (vectorised) and builds the
  production index; a rule is decoded (and validated by :class:`RewriteRule`) the first time it is used,
  so loading does not grow with the rules' size. :meth:`RewriteGrammar.validate` decodes them all.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.array_file import read_array_file, write_array_file
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import verify_file
from dualdecomp.data.trees import Tree
from dualdecomp.solvers.rewriting.rules import RewriteRule
from dualdecomp.solvers.transducer import (
    VAR,
    WORD,
    FragEncoder,
    Rule,
    RuleTable,
    coverage_rules,
    decode_frag,
    decode_strings,
    key_hash,
    production_index,
)

__all__ = ["FORMAT", "ORIGINS", "RewriteGrammar", "RewriteGrammarConfig", "from_deletion_rule",
           "load_rewrite_grammar", "rewriting_coverage_rules", "save_rewrite_grammar"]

FORMAT = "dualdecomp-rewrite-grammar"
VERSION = 1
ORIGINS = ("train", "copy", "delete", "substitute", "lexical", "phrasal")
"""Where a rule may come from: extracted (``train``; ``lexical``/``phrasal`` paraphrase rules counted over
the corpus), coverage (``copy``, ``delete``) or added lexical substitutions (``substitute``)."""


@dataclass(frozen=True)
class RewriteGrammarConfig:
    """Extraction settings (stored with the grammar).

    Attributes
    ----------
    depth : int
        Recursion depth of the specialised (composed) rules, as the deletion extraction's (0: minimal).
    max_variables : int
        Specialised rules with more linked variables are dropped.
    max_nodes : int
        Specialised rules whose source tree has more nodes are dropped.
    max_targets : int
        At most this many (most frequent) specialised target sides per source elementary tree (minimal
        rules are always kept).
    prune_minimal : bool
        Apply the variable/node limits to the minimal rules too (pairs may then lose their derivation).
    phrase_words : int
        Phrasal paraphrase rules: aligned node pairs whose source and target each have at most this many
        words give a fully lexical rule (0: none).
    """

    depth: int = 1
    max_variables: int = 5
    max_nodes: int = 15
    max_targets: int = 50
    prune_minimal: bool = False
    phrase_words: int = 4

    def as_dict(self) -> dict[str, Any]:
        """The settings as a JSON object."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, obj: Any, where: str) -> RewriteGrammarConfig:
        """Read and check settings (ModelError naming ``where``)."""
        if not isinstance(obj, dict) or set(obj) - {f.name for f in fields(cls)}:
            raise ModelError(f"{where}: bad grammar config {obj!r}")
        for k, v in obj.items():
            ok = isinstance(v, bool) if k == "prune_minimal" else (
                isinstance(v, int) and not isinstance(v, bool) and v >= 0)
            if not ok:
                raise ModelError(f"{where}: config.{k} = {v!r} is not valid")
        return cls(**obj)


def from_deletion_rule(rule: Rule) -> RewriteRule:
    """A deletion-only rule of the T3 grammar as a rewriting rule (identity links; each target word
    linked to the kept source word it copies)."""
    src = rule.source.frontier()
    nvars = sum(1 for f in src if f.kind == VAR and f.kept)
    word_ids = [k for k, f in enumerate(f for f in src if f.kind == WORD) if f.kept]
    return RewriteRule(rule.source, rule.target, tuple(range(nvars)), tuple(word_ids), rule.kinds, rule.count)


def rewriting_coverage_rules(node: Tree) -> list[RewriteRule]:
    """The copy and deletion rules of the production at an internal source node, as rewriting rules.

    Parameters
    ----------
    node : Tree

    Returns
    -------
    list of RewriteRule
        Origins ``{"copy"}`` or ``{"delete"}``, count 0 (see
        :func:`dualdecomp.solvers.transducer.coverage_rules`).
    """
    return [from_deletion_rule(r) for r in coverage_rules(node)]


class _Store:
    """The arrays of a loaded grammar file; decodes rule ``i`` on demand."""

    def __init__(self, where: str, arrays: dict[str, np.ndarray], strings: list[str]) -> None:
        self.where = where
        self.a = arrays
        self.strings = strings

    def decode(self, i: int) -> RewriteRule:
        a, where = self.a, self.where
        lab, shp, fb = a["node_labels"], a["node_shapes"], a["frag_bounds"]
        src = decode_frag(lab, shp, fb, int(a["source"][i]), self.strings, where)
        tgt = decode_frag(lab, shp, fb, int(a["target"][i]), self.strings, where)
        lo, hi = a["links_offsets"][i], a["links_offsets"][i + 1]
        links = tuple(a["links"][lo:hi].tolist())
        lo, hi = a["word_links_offsets"][i], a["word_links_offsets"][i + 1]
        words = tuple(None if w < 0 else w for w in a["word_links"][lo:hi].tolist())
        mask = int(a["origins"][i])
        origins = frozenset(o for k, o in enumerate(ORIGINS) if mask >> k & 1)
        try:
            rule = RewriteRule(src, tgt, links, words, origins, int(a["counts"][i]))
        except ModelError as exc:
            raise ModelError(f"{where}: rule {i}: {exc}") from None
        if rule.production() != self.strings[int(a["production"][i])]:
            raise ModelError(f"{where}: rule {i}: stored production does not match its source tree")
        return rule


class RewriteGrammar(RuleTable[RewriteRule]):
    """Rewriting rules indexed by the CFG production at their source root.

    Parameters
    ----------
    rules : sequence of RewriteRule
        Added in order; rules with the same ``key`` are merged (origins united, counts added).
    config : RewriteGrammarConfig, optional
    """

    def __init__(self, rules: Sequence[RewriteRule] = (), config: RewriteGrammarConfig | None = None) -> None:
        super().__init__()
        self.config = config or RewriteGrammarConfig()
        for r in rules:
            self.add(r)

    def __repr__(self) -> str:
        return f"RewriteGrammar({len(self)} rules)"

    def merge(self, old: RewriteRule, new: RewriteRule) -> RewriteRule:
        """Origins united, counts added."""
        return RewriteRule(old.source, old.target, old.links, old.word_links, old.origins | new.origins,
                           old.count + new.count)


def save_rewrite_grammar(grammar: RewriteGrammar, path: str | os.PathLike[str]) -> Path:
    """Write a grammar as a binary array file (module docstring); same grammar, same bytes.

    Returns
    -------
    Path
    """
    enc = FragEncoder()
    n = len(grammar)
    source = np.zeros(n, dtype=np.int32)
    target = np.zeros(n, dtype=np.int32)
    links: list[int] = []
    links_off = np.zeros(n + 1, dtype=np.int64)
    words: list[int] = []
    words_off = np.zeros(n + 1, dtype=np.int64)
    origins = np.zeros(n, dtype=np.uint8)
    counts = np.zeros(n, dtype=np.int64)
    production = np.zeros(n, dtype=np.int32)
    hashes = np.zeros(n, dtype=np.int64)
    for i, r in enumerate(grammar):
        source[i] = enc.add(r.source)
        target[i] = enc.add(r.target)
        links.extend(r.links)
        links_off[i + 1] = len(links)
        words.extend(-1 if w is None else w for w in r.word_links)
        words_off[i + 1] = len(words)
        unknown = r.origins - set(ORIGINS)
        if unknown:
            raise ModelError(f"rule {r.key}: origins {sorted(unknown)} cannot be stored (known: {ORIGINS})")
        origins[i] = sum(1 << k for k, o in enumerate(ORIGINS) if o in r.origins)
        counts[i] = r.count
        production[i] = enc.string(r.production())
        hashes[i] = key_hash(r.key)
    order = np.argsort(hashes, kind="stable")
    arrays = {**enc.arrays(), "source": source, "target": target, "links": np.array(links, dtype=np.int32),
              "links_offsets": links_off, "word_links": np.array(words, dtype=np.int32),
              "word_links_offsets": words_off, "origins": origins, "counts": counts,
              "production": production, "key_hashes": hashes[order], "key_ids": order.astype(np.int64)}
    meta = {"config": grammar.config.as_dict(), "origins": list(ORIGINS), "rules": n}
    return write_array_file(path, FORMAT, VERSION, meta, arrays)


_SHAPES = {"node_labels": 1, "node_shapes": 1, "frag_bounds": 1, "strings": 1, "string_offsets": 1,
           "source": 1, "target": 1, "links": 1, "links_offsets": 1,
           "word_links": 1, "word_links_offsets": 1, "origins": 1, "counts": 1, "production": 1,
           "key_hashes": 1, "key_ids": 1}


def load_rewrite_grammar(path: str | os.PathLike[str], validate: bool = False) -> RewriteGrammar:
    """Map a grammar file written by :func:`save_rewrite_grammar`.

    Parameters
    ----------
    path : path
    validate : bool
        Decode and check every rule now (by default each rule is decoded and checked on first use).

    Raises
    ------
    ModelError
        Missing or refused file, checksum mismatch (the file's own sha256, and the model directory's
        manifest when one lists it), wrong format or version, malformed arrays; with ``validate``, any
        invalid rule. The message names the file.
    """
    where = os.fspath(path)
    f = read_array_file(path, FORMAT, VERSION)
    a = f.arrays
    missing = set(_SHAPES) - set(a)
    if missing:
        raise ModelError(f"{where}: arrays {sorted(missing)} missing")
    for k, nd in _SHAPES.items():
        if a[k].ndim != nd or not np.issubdtype(a[k].dtype, np.integer):
            raise ModelError(f"{where}: array {k!r} has the wrong shape or type")
    config = RewriteGrammarConfig.from_dict(f.meta.get("config"), where)
    if f.meta.get("origins") != list(ORIGINS):
        raise ModelError(f"{where}: origins {f.meta.get('origins')!r} differ from {list(ORIGINS)}")
    n = len(a["origins"])
    strings = decode_strings(a["strings"], a["string_offsets"], where)
    nodes = a["node_labels"]
    nfrags = len(a["frag_bounds"]) - 1

    def monotone(x: np.ndarray, length: int, top: int) -> bool:
        return bool(x.size == length and x[0] == 0 and x[-1] == top and np.all(np.diff(x) >= 0))

    ok = (len(a["node_shapes"]) == len(nodes) and monotone(a["frag_bounds"], nfrags + 1, len(nodes))
          and bool(np.all(np.diff(a["frag_bounds"]) > 0))
          and all(len(a[k]) == n and bool(np.all((a[k] >= 0) & (a[k] < nfrags)))
                  for k in ("source", "target"))
          and monotone(a["links_offsets"], n + 1, len(a["links"]))
          and monotone(a["word_links_offsets"], n + 1, len(a["word_links"]))
          and all(len(a[k]) == n for k in ("counts", "production", "key_hashes", "key_ids"))
          and bool(np.all(a["counts"] >= 0))
          and bool(np.all((a["origins"] > 0) & (a["origins"] < 1 << len(ORIGINS))))
          and bool(np.all((a["production"] >= 0) & (a["production"] < len(strings))))
          and bool(np.all(np.diff(a["key_hashes"]) >= 0))
          and np.array_equal(np.sort(a["key_ids"]), np.arange(n)))
    if not ok:
        raise ModelError(f"{where}: malformed grammar arrays")
    verify_file(path)
    grammar = RewriteGrammar(config=config)
    grammar.attach(n, _Store(where, a, strings).decode, production_index(a["production"], strings),
                   a["key_hashes"], key_hash, hash_ids=a["key_ids"])
    if validate:
        grammar.validate()
    return grammar
