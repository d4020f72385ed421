"""The scaled linear model of word ordering: hashed weights, the tag dictionary, edge building, save/load.

Saved as a directory with ``model.json`` (tag set, tag dictionary, settings, provenance) and
``weights.npz`` (the non-zero weights: indices and float64 values); never pickle.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import read_json, read_npz
from dualdecomp.data.ordering.inputs import OrderingExample, OrderingInput
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Context, Edge, make_context
from dualdecomp.models.ordering.paper.feature_kernel import (
    attach_indices,
    attach_local_score,
    attach_local_scores,
    concatenated,
    pack_join,
    pack_leaf,
)
from dualdecomp.models.ordering.paper.features import leaf_features

FORMAT = "dualdecomp-word-order/1"


@dataclass(frozen=True)
class OrderingModel:
    """Weights and lexicon of the dependency-based ordering model: only what training learns and
    ``save`` writes.

    The models it is decoded with (the KenLM term, the head-domain lineariser, the LM beam) are held by
    the decoder (``dualdecomp.models.ordering.decoding.decoder.OrderingDecoder``); the methods that build
    edges take the LM term as an argument (``lm``; None: the model alone, as the trainer uses it).

    Attributes
    ----------
    weights : numpy.ndarray
        float64 of shape ``(2**hash_bits,)`` (the trainer updates it in place).
    tag_names : tuple of str
        The tag set (tag id = position).
    word_tags : dict
        Word → tuple of tag ids it may take (the tag dictionary, §4.3).
    open_tags : tuple of int
        Tags tried for a word missing from the dictionary.
    hash_bits : int
    meta : dict
        Provenance (training data, learner, epochs, dev scores) and the decoders' settings chosen on dev
        (``meta["decode"]``: LM weights, the LM beam).
    """

    weights: np.ndarray
    tag_names: tuple[str, ...]
    word_tags: dict[str, tuple[int, ...]]
    open_tags: tuple[int, ...]
    hash_bits: int
    meta: dict = field(default_factory=dict)

    @property
    def mask(self) -> int:
        """``2**hash_bits - 1``."""
        return (1 << self.hash_bits) - 1

    @property
    def tag_index(self) -> dict[str, int]:
        """Tag name → id."""
        return {t: k for k, t in enumerate(self.tag_names)}

    def dictionary_tags(self, word: str) -> tuple[int, ...]:
        """Tags a word without a given tag may take."""
        tags = self.word_tags.get(word)
        if tags is None:
            tags = self.word_tags.get(word.lower(), self.open_tags)
        return tags

    def context(self, inp: OrderingInput) -> Context:
        """The feature/constraint context of an input."""
        return make_context(inp, self.tag_names, self.tag_index, self.dictionary_tags)

    # --- edges ---------------------------------------------------------------------------------

    def leaves(self, ctx: Context, gold_tags: tuple[int, ...] | None = None, lm: OrderingLM | None = None
               ) -> list[Edge]:
        """Every leaf edge: each word with each tag it may take (``gold`` set when ``gold_tags`` given;
        ``lm``: the LM term added to every edge's score, or None)."""
        out = []
        w = self.weights
        for k in range(ctx.n):
            for tag in ctx.leaf_tags[k]:
                local = leaf_features(ctx, k, tag, self.mask)
                score = float(w[local].sum())
                if lm is not None:
                    score += lm.leaf(ctx.words, k, ctx.full == 1 << k)
                out.append(Edge(1 << k, (k,), (tag,), k, 0, tag, (), (), 1, local, local, None,
                                gold_tags is not None and gold_tags[k] == tag, score, pack_leaf(k, tag)))
        return out

    def attach_score(self, ctx: Context, head: Edge, dep: Edge, right: bool, lm: OrderingLM | None = None
                     ) -> float:
        """F of the edge that attaching would build, from the current scores of its two parts (with the
        LM term ``lm``, if any)."""
        goal = (head.mask | dep.mask) == ctx.full
        local_score = attach_local_score(head.packed, dep.packed, right, goal, ctx.word_lanes, ctx.tag_lanes,
                                         self.weights)
        return self._joined_score(ctx, head, dep, right, local_score, lm)

    def attach_scores(self, ctx: Context, edge: Edge, others: list[Edge],
                      attachments: list[tuple[int, bool, bool]], lm: OrderingLM | None = None) -> list[float]:
        """:meth:`attach_score` of many attachments of ``edge`` with edges of ``others``, the features
        in one compiled call (the same floats).

        Parameters
        ----------
        ctx : Context
        edge : Edge
        others : list of Edge
        attachments : list of (int, bool, bool)
            ``(k, edge_is_head, right)``: ``others[k]``'s head becomes a dependent of ``edge``'s head
            (``edge_is_head``) or ``edge``'s head of ``others[k]``'s, on the right or the left.
        lm : OrderingLM, optional
            The LM term added to the scores.

        Returns
        -------
        list of float
        """
        packed, offsets = concatenated([e.packed for e in others])
        rows = np.array([(k, edge_is_head, right, (edge.mask | others[k].mask) == ctx.full)
                         for k, edge_is_head, right in attachments], dtype=np.int64)
        local = attach_local_scores(edge.packed, packed, offsets, rows, ctx.word_lanes, ctx.tag_lanes,
                                    self.weights).tolist()
        out = []
        for (k, edge_is_head, right), local_score in zip(attachments, local, strict=True):
            head, dep = (edge, others[k]) if edge_is_head else (others[k], edge)
            out.append(self._joined_score(ctx, head, dep, right, local_score, lm))
        return out

    def attach_features(self, ctx: Context, head: Edge, dep: Edge, right: bool) -> np.ndarray:
        """Weight indices of the features of attaching ``dep``'s head to ``head``'s head (compiled
        ``dualdecomp.models.ordering.paper.feature_kernel``; the templates: ``features.attach_features``)."""
        goal = (head.mask | dep.mask) == ctx.full
        return attach_indices(head.packed, dep.packed, right, goal, ctx.word_lanes, ctx.tag_lanes, self.mask)

    def _joined_score(self, ctx: Context, head: Edge, dep: Edge, right: bool, local_score: float,
                      lm: OrderingLM | None) -> float:
        """F of the attached edge: its parts, the new action's local score and the LM term."""
        score = head.score + dep.score + local_score
        if lm is not None:
            left, rest = (head, dep) if right else (dep, head)
            if (head.mask | dep.mask) == ctx.full:  # a goal edge: the sentence's ends too
                return score + lm.join(ctx.words, left.words, rest.words, True)
            # otherwise the term reads only the last k words of the left part and the first k of the right
            key = (lm.weight, left.words[-lm.k:], rest.words[:lm.k])
            term = ctx.lm_terms.get(key)
            if term is None:
                term = ctx.lm_terms[key] = lm.join(ctx.words, left.words, rest.words, False)
            score += term
        return score

    def attach(self, ctx: Context, head: Edge, dep: Edge, right: bool, gold: bool = False,
               with_phi: bool = True, lm: OrderingLM | None = None) -> Edge:
        """Build the edge of attaching ``dep``'s head to ``head``'s head (``can_attach`` must hold).

        ``with_phi=False`` (decoding) skips the full feature vector ``phi`` (set to None), which only
        the trainer needs; ``feature_vector`` rebuilds it from the ``local`` arrays. ``lm``: the LM term
        added to the score, or None.
        """
        local = self.attach_features(ctx, head, dep, right)
        new = (dep.head, dep.head_tag)
        if right:
            words, tags = head.words + dep.words, head.tags + dep.tags
            hpos, left, rights = head.head_pos, head.left, head.right + (new,)
        else:
            words, tags = dep.words + head.words, dep.tags + head.tags
            hpos, left, rights = head.head_pos + len(dep.words), head.left + (new,), head.right
        phi = np.concatenate((head.phi, dep.phi, local)) if with_phi else None
        score = self._joined_score(ctx, head, dep, right, float(self.weights[local].sum()), lm)
        return Edge(head.mask | dep.mask, words, tags, head.head, hpos, head.head_tag, left, rights,
                    head.size + dep.size + 1, local, phi, (head, dep, right), gold, score,
                    pack_join(head.packed, dep.packed, right))

    def feature_vector(self, edge: Edge) -> np.ndarray:
        """All feature indices of an edge (its actions' ``local`` arrays), whether or not it kept ``phi``."""
        parts, stack = [], [edge]
        while stack:
            e = stack.pop()
            parts.append(e.local)
            if e.kids is not None:
                stack.append(e.kids[0])
                stack.append(e.kids[1])
        return np.concatenate(parts)

    def rescore(self, edge: Edge) -> None:
        """Recompute F(e) = phi(e) . theta in place (after a weight update; models without an LM)."""
        edge.score = float(self.weights[edge.phi].sum())

    # --- persistence ---------------------------------------------------------------------------

    def save(self, directory: str | Path, meta: dict | None = None) -> None:
        """Write ``model.json`` and ``weights.npz`` into ``directory`` (created if missing)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        nonzero = np.flatnonzero(self.weights)
        np.savez_compressed(out / "weights.npz", index=nonzero.astype(np.int64),
                            value=self.weights[nonzero].astype(np.float64))
        doc = {"format": FORMAT, "hash_bits": self.hash_bits, "tag_names": list(self.tag_names),
               "open_tags": [self.tag_names[t] for t in self.open_tags],
               "word_tags": {w: [self.tag_names[t] for t in tags]
                             for w, tags in sorted(self.word_tags.items())},
               "meta": {**self.meta, **(meta or {})}}
        text = json.dumps(doc, ensure_ascii=False, indent=0) + "\n"
        (out / "model.json").write_text(text, encoding="utf-8")


def load_model(directory: str | Path) -> OrderingModel:
    """Load a model saved by :meth:`OrderingModel.save` (its weights; the decoders saved beside it:
    ``dualdecomp.models.ordering.decoding.load.load_decoder``).

    Parameters
    ----------
    directory : str or Path

    Raises
    ------
    ModelError
        Missing or invalid files.
    """
    path = Path(directory)
    doc = read_json(path / "model.json", "missing (word-order model not found)")
    arrays = read_npz(path / "weights.npz", "missing (word-order model not found)")
    if "index" not in arrays or "value" not in arrays:
        raise ModelError(f"{path / 'weights.npz'}: not a word-order model's weights (no index and value)")
    index, value = arrays["index"], arrays["value"]
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise ModelError(f"{path / 'model.json'}: not a word-order model (format {found!r})")
    bits = int(doc["hash_bits"])
    weights = np.zeros(1 << bits, dtype=np.float64)
    if index.size and (index.min() < 0 or index.max() >= weights.size):
        raise ModelError(f"{path / 'weights.npz'}: weight index out of range for {bits} hash bits")
    weights[index] = value
    names = tuple(doc["tag_names"])
    tag_id = {t: k for k, t in enumerate(names)}
    return OrderingModel(weights=weights, tag_names=names,
                         word_tags={w: tuple(tag_id[t] for t in tags)
                                    for w, tags in doc["word_tags"].items()},
                         open_tags=tuple(tag_id[t] for t in doc["open_tags"]), hash_bits=bits,
                         meta=doc.get("meta", {}))


def new_model(examples: list[OrderingExample], hash_bits: int = 20, min_share: float = 0.05,
              open_share: float = 0.02) -> OrderingModel:
    """A zero-weight model with the tag dictionary of the training sentences.

    Parameters
    ----------
    examples : list of OrderingExample
    hash_bits : int
        log2 of the number of weights.
    min_share : float
        A word may take a tag that is at least this share of its training occurrences.
    open_share : float
        Tags of unknown words: those that are at least this share of the tags of words seen once.

    Returns
    -------
    OrderingModel
    """
    counts: dict[str, Counter] = {}
    tags: Counter = Counter()
    for ex in examples:
        for w, p in zip(ex.words, ex.pos, strict=True):
            counts.setdefault(w, Counter())[p] += 1
            tags[p] += 1
    names = tuple(sorted(tags))
    tag_id = {t: k for k, t in enumerate(names)}
    word_tags = {}
    hapax: Counter = Counter()
    for w, c in counts.items():
        total = sum(c.values())
        word_tags[w] = tuple(sorted(tag_id[t] for t, k in c.items() if k >= min_share * total))
        if total == 1:
            hapax.update(c)
    hapax_total = sum(hapax.values()) or 1
    open_tags = tuple(sorted(tag_id[t] for t, k in hapax.items() if k >= open_share * hapax_total))
    return OrderingModel(weights=np.zeros(1 << hash_bits, dtype=np.float64), tag_names=names,
                         word_tags=word_tags, open_tags=open_tags or tuple(range(len(names))),
                         hash_bits=hash_bits)


