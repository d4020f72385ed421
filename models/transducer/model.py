"""A trained T3 model: grammar + hashed rule weights, saved as a directory of JSON/npz files.

Directory layout: ``model.json`` (format ``dualdecomp-t3``, version, hash_bits, lm_weight, meta),
``grammar.bin`` (``dualdecomp.solvers.transducer.grammar.save_grammar``, the binary grammar: loads in well
under a second, each rule decoded and checked on first use; a directory written before it, with
``grammar.json.gz`` or ``grammar.json``, is read too) and ``weights.npz`` (non-zero ``indices``/``values``).
Everything is validated on load (ModelError).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import (
    read_json,
    read_sparse_weights,
    verify_directory,
    verify_files,
    write_json,
    write_manifest,
    write_sparse_weights,
)
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import Tree, from_dependency
from dualdecomp.models.transducer.features import RuleFeaturiser
from dualdecomp.models.transducer.training import hyperedge_scores
from dualdecomp.solvers.transducer import Grammar, Transducer, build_hypergraph, load_grammar, save_grammar

__all__ = ["TransducerModel", "load_t3", "save_t3", "source_tree"]

FORMAT = "dualdecomp-t3"
VERSION = 1
GRAMMAR_FILE = "grammar.bin"
OLD_GRAMMAR_FILES = ("grammar.json.gz", "grammar.json")  # read when there is no grammar.bin


@dataclass
class TransducerModel:
    """Grammar and weights (treat both as read-only: hypergraphs and their scores are cached per source
    tree).

    Attributes
    ----------
    grammar : Grammar
    weights : numpy.ndarray
        float64 (2**hash_bits,).
    hash_bits : int
    lm_weight : float
        Weight of the LM log10 probability in the (approximate) T3 + LM beam search.
    meta : dict
    """

    grammar: Grammar
    weights: np.ndarray
    hash_bits: int
    lm_weight: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.featuriser = RuleFeaturiser(self.hash_bits)
        # source tree (text) -> (hypergraph, unit hyperedge scores): matching a large grammar is the costly
        # part, and the configurations of a comparison table decode the same sentences again
        self._built: dict[str, tuple[Any, np.ndarray]] = {}

    CACHE_SIZE = 4096

    def transducer(self, tree: Tree, weight: float = 1.0) -> Transducer:
        """The T3 component for a source tree under this model.

        Parameters
        ----------
        tree : Tree
            The source tree (leaves indexed 0..n-1), e.g. :func:`source_tree` of a parsed sentence.
        weight : float
            Every hyperedge score (w·φ) is multiplied by this, so the component's objective is
            ``weight`` × the T3 score.

        Returns
        -------
        Transducer
        """
        key = str(tree)
        if key not in self._built:
            if len(self._built) >= self.CACHE_SIZE:
                self._built.pop(next(iter(self._built)))
            hg = build_hypergraph(tree, self.grammar)
            self._built[key] = (hg, hyperedge_scores(hg, self.weights, self.featuriser))
        hg, scores = self._built[key]
        if weight != 1.0:
            scores = float(weight) * scores
        return Transducer.from_hypergraph(hg, scores)

    def component(self, sentence: Sentence, weight: float = 1.0) -> Transducer:
        """The T3 component (docs/architecture.md §2, contract 4) of a parsed sentence, scaled by ``weight``.

        The source tree is the phrase-structure conversion of the sentence's dependency parse
        (:func:`source_tree`), exactly as ``dualdecomp t3 train`` / ``t3 evaluate`` build it.
        """
        return self.transducer(source_tree(sentence), weight)


def source_tree(sentence: Sentence) -> Tree:
    """The T3 source tree of a parsed sentence (its dependency parse converted to phrase structure)."""
    return from_dependency(sentence)


def save_t3(model: TransducerModel, directory: str | os.PathLike[str]) -> Path:
    """Write the model directory (created if needed)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    save_grammar(model.grammar, out / GRAMMAR_FILE)
    for name in OLD_GRAMMAR_FILES:  # superseded: the directory holds one grammar
        (out / name).unlink(missing_ok=True)
    write_sparse_weights(out / "weights.npz", model.weights)
    write_json(out / "model.json", {"format": FORMAT, "version": VERSION, "hash_bits": model.hash_bits,
                                    "lm_weight": model.lm_weight, "meta": model.meta})
    write_manifest(out)
    return out


_GRAMMARS: dict[tuple[str, int, int], Grammar] = {}


def _cached_grammar(path: Path) -> Grammar:
    """:func:`load_grammar`, read once per process for an unchanged file (a large JSON grammar takes
    minutes to parse, and a binary one keeps the rules it decoded; the configurations of one model
    directory share its T3 model). Decoding never changes it."""
    try:
        st = path.stat()
    except OSError:
        return load_grammar(path)  # raises the ModelError
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _GRAMMARS:
        if len(_GRAMMARS) >= 4:
            _GRAMMARS.pop(next(iter(_GRAMMARS)))
        _GRAMMARS[key] = load_grammar(path)
    return _GRAMMARS[key]


def load_t3(directory: str | os.PathLike[str]) -> TransducerModel:
    """Read and validate a model directory written by :func:`save_t3`."""
    d = Path(directory)
    verify_directory(d)  # every listed file (the grammar too), before any is read
    spec = read_json(d / "model.json", "missing (not a T3 model directory)")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT or spec.get("version") != VERSION:
        raise ModelError(f"{d}/model.json: not a {FORMAT} version {VERSION} model")
    bits = spec.get("hash_bits")
    if not isinstance(bits, int) or isinstance(bits, bool) or not 8 <= bits <= 26:
        raise ModelError(f"{d}/model.json: hash_bits must be an integer in [8, 26]")
    lm_weight = spec.get("lm_weight")
    if isinstance(lm_weight, bool) or not isinstance(lm_weight, int | float) or not np.isfinite(lm_weight):
        raise ModelError(f"{d}/model.json: lm_weight must be a finite number")
    w = read_sparse_weights(d / "weights.npz", 1 << bits)  # before the grammar: cheap checks first
    verify_files(d / "model.json", d / "weights.npz")
    grammar_path = next((d / name for name in (GRAMMAR_FILE, *OLD_GRAMMAR_FILES) if (d / name).exists()),
                        d / GRAMMAR_FILE)
    grammar = _cached_grammar(grammar_path)
    return TransducerModel(grammar, w, bits, float(lm_weight), dict(spec.get("meta") or {}))
