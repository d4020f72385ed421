"""The loss functions of Cohn & Lapata (2009, §3.6) and loss-augmented decoding for T3 training.

Every loss compares a predicted compression (a derivation: its kept tokens and target tree) with one
reference (its tokens and target tree) and has two operations:

* ``value(keep, tree=None)``: the loss of a prediction (``tree``: its target tree, only the CFG loss
  reads it); ``arguments(keep, tree=None)``: the loss arguments of the paper's Table 1;
* ``augmented_argmax(transducer, scale)``: ``max_d score(d) + scale·Δ(d)`` over the derivations of a
  :class:`~dualdecomp.solvers.transducer.solver.Transducer`, as a :class:`LossAugmented`: the derivation, the
  value it achieves, a proved upper bound and ``exact`` (value == bound: the argmax is proved optimal). When
  ``exact`` is False the result is **APPROXIMATE** (a feasible derivation with no optimality proof) and
  ``method`` says so.

The Hamming losses (eq. 12) are ``Δ = FP + max(l − (TP + FP), 0)`` over bags of items, a predicted item
being a true positive iff it occurs in the reference (no clipping), l the reference's number of items.
With ``A(d) = score(d) + s·FP(d)`` and ``B(d) = s·(l − (TP + FP))``,

    max_d [A(d) + max(B(d), 0)] = max( max_d [A(d) + B(d)], max_d A(d) ),

and for all three Hamming losses FP and TP + FP decompose, so each branch is a plain decoding problem:

``token`` — :class:`TokenHamming`, items = tokens. FP is a per-token term and TP + FP the output length:
    solved **exactly** in the length-stratified T3 chart (``Transducer.solve_lengths``), one chart pass.
``ngram`` — :class:`NgramHamming`, items = the bigrams and trigrams (``orders``, any subset of {1, 2, 3})
    of the output padded with two start and two end symbols ``<s> <s> w_1 … w_L </s> </s>`` (all windows
    of the padded sequence, so ``2L + 5`` items with the default orders). This is the one reading of
    "n ≤ 3, padded" that reproduces Table 1's arguments TP = 8, FP = 5 (with unigrams, or with one pad
    symbol, the example gives FP ≥ 6). FP is a sum over consecutive triples (a, b, c) of kept tokens
    (with the boundaries) → the potentials of a :class:`~dualdecomp.solvers.ngram.solver.Trigram` path
    component; TP + FP
    = k·(L + 5) − Σ_{n∈orders} n (k = number of orders) depends on the output length L only, so B is a
    per-token term. Each branch is ``decode([T3, Trigram])`` (dual decomposition); the result is exact
    when the engine's certificates cover the maximum of both branches, APPROXIMATE otherwise.
``cfg`` — :class:`CfgHamming`, items = the CFG productions of the target tree, preterminal → word
    included. Every production of the target tree is the production of one internal node of one rule's
    target elementary tree (a production rooted at a variable site belongs to the child rule; variables
    carry the child's root category), so FP and TP + FP are sums over the rules of the derivation:
    both branches are folded into the hyperedge scores and solved by two Viterbi passes, **exactly**.

The bag-of-tokens losses with clipped counts go through :class:`~solvers.bag_count.BagCount`:

``edit`` — :class:`EditDistance`, eq. 13, ``p + q − 2 Σ_i min(p_i, q_i)`` = q + Σ_i g_i(p_i) with
    ``g_i(p) = p − 2 min(p, q_i)`` (``g(p) = p`` for all types not in the reference): one
    ``decode([T3, BagCount])``; exact when certified, APPROXIMATE otherwise.
``f1`` — :class:`F1Loss`, eq. 14, ``1 − 2 Σ_i min(p_i, q_i) / (L + q)``. For a fixed output length L
    it is separable over the types with coefficient 2/(L + q), so for every length L the T3 chart can
    produce, ``decode([T3, BagCount_L], length=L)`` (exact-length dual decomposition) and the best is
    kept. Lengths whose bound ``max_{|d|=L} score(d) + scale`` (the loss is at most 1) cannot beat the
    best value found are skipped without a decode (a valid proof). Cost: up to n + 1 engine runs per
    call (``LossAugmented.decodes``). Exact when every length is certified or pruned, APPROXIMATE
    otherwise.

Table 1 of the paper: the arguments are reproduced (token TP 3 / FP 1, n-gram TP 8 / FP 5, edit and F1
p = (1, 0, 1, 1, 1), edit 2, F1 1/4). Its Hamming values are normalised by the reference size (token
1/4, CFG 1/9); the losses here are the unnormalised equations (12)–(14), as the training objective uses
them. Two inconsistencies of the table: the printed n-gram value 5/14 does not match l = 13 items (5/13),
and the printed reference tree has an inner ``VP`` the prediction lacks, which makes ``VP -> VBP VBN``
a second CFG false positive (TP 7, FP 2 of ten); the text ("identical syntactic structure", "one
incorrect production of nine") describes the reference without it, which gives TP 8, FP 1.
The gold derivation of a training pair has loss 0 under all five.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.core.result import is_certified
from dualdecomp.data.trees import Tree
from dualdecomp.engine.decode import decode
from dualdecomp.solvers.bag_count import BagCount
from dualdecomp.solvers.ngram import Trigram
from dualdecomp.solvers.transducer import NODE, WORD, Derivation, Frag, Transducer

__all__ = ["LOSSES", "LOSS_FACTORIES", "BagArguments", "CfgHamming", "EditDistance", "F1Loss",
           "HammingArguments", "Loss", "LossAugmented", "NgramHamming", "TokenHamming", "derivation_for_keep",
           "frag_productions", "make_loss", "token_augmented", "tree_productions"]

BOS, EOS = "<s>", "</s>"
PAD = 2


# ----------------------------------------------------------------------------------------------------
# results
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LossAugmented:
    """The result of loss-augmented decoding ``max_d score(d) + scale·Δ(d)``.

    Attributes
    ----------
    derivation : Derivation
        The derivation found; its ``score`` is the model score alone (no loss).
    loss : float
        Δ of that derivation.
    value : float
        ``derivation.score + scale·loss`` (achieved by the derivation).
    bound : float
        A proved upper bound on the maximum (``== value`` up to rounding when ``exact``).
    exact : bool
        True iff the derivation is proved optimal (chart methods always; dual decomposition when the
        certificates cover the maximum). False: the result is APPROXIMATE.
    method : str
        How it was computed (contains ``"APPROXIMATE"`` when not exact).
    decodes : int
        Number of dual-decomposition engine runs (0 for the chart methods).
    """

    derivation: Derivation
    loss: float
    value: float
    bound: float
    exact: bool
    method: str
    decodes: int = 0

    @property
    def approximate(self) -> bool:
        """Not proved optimal."""
        return not self.exact

    @property
    def certified(self) -> bool:
        """Proved optimal (same as ``exact``)."""
        return self.exact


@dataclass(frozen=True)
class HammingArguments:
    """Loss arguments of the Hamming losses (Table 1): true/false positives and the reference size l."""

    tp: int
    fp: int
    ref_items: int


@dataclass(frozen=True)
class BagArguments:
    """Loss arguments of the edit and F1 losses (Table 1).

    Attributes
    ----------
    types : tuple of str
        The reference's word types in order of first occurrence, then ``"<other>"``.
    p : tuple of int
        Predicted count of each type (last: all tokens of types not in the reference).
    q : tuple of int
        Reference count of each type (last: 0).
    """

    types: tuple[str, ...]
    p: tuple[int, ...]
    q: tuple[int, ...]


class Loss(Protocol):
    """The common interface of the losses."""

    name: str

    def value(self, keep: Any, tree: Tree | None = None) -> float:
        """Δ of a prediction (``keep`` over the source tokens; ``tree`` its target tree)."""
        ...

    def arguments(self, keep: Any, tree: Tree | None = None) -> HammingArguments | BagArguments:
        """The loss arguments of a prediction (as in Table 1)."""
        ...

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """``max_d score(d) + scale·Δ(d)`` over the derivations of ``t3``."""
        ...


# ----------------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------------


def _keep(keep: Any, n: int) -> np.ndarray:
    arr = np.asarray(keep)
    if arr.shape != (n,):
        raise InputError(f"keep must have shape ({n},), got {arr.shape}")
    return arr.astype(bool)


def _hamming(tp: int, fp: int, ref_items: int) -> float:
    return float(fp + max(ref_items - (tp + fp), 0))


def derivation_for_keep(transducer: Transducer, keep: Any) -> Derivation | None:
    """The best derivation (model score) whose yield is exactly ``keep``; None if there is none.

    Parameters
    ----------
    transducer : Transducer
    keep : array_like
        bool (n,).

    Returns
    -------
    Derivation or None
        ``score`` is the model score (as ``t3.best_given(keep)``).

    Notes
    -----
    Runs the transducer's Viterbi kernel over the hyperedges compatible with ``keep`` (the mask of
    ``Transducer.best_given``) and backtracks, through the component's private ``_viterbi`` and
    ``_backtrack``.
    """
    hg = transducer.hypergraph
    kv = _keep(keep, transducer.n)
    mask = np.array([bool(kv[hg.kept(e)].all() and not kv[hg.dropped(e)].any())
                     for e in range(hg.num_hyperedges)],
                    dtype=np.bool_)
    best, back = transducer._viterbi(np.zeros(transducer.n), mask)
    score = float(best[hg.root])
    if score == -np.inf:
        return None
    hyperedges = transducer._backtrack(back)
    return Derivation(tuple(hyperedges), transducer.target_tree(hyperedges), kv.copy(), score)


def _own(transducer: Transducer, d: Derivation) -> Derivation:
    """``d`` with its score replaced by the model score of its hyperedges."""
    return replace(d, score=float(transducer.hyperedge_score[list(d.hyperedges)].sum()))


def _pick(transducer: Transducer, loss: Loss, scale: float, keeps: Sequence[np.ndarray]
          ) -> tuple[Derivation, float, float]:
    """Best (derivation, loss, value) among candidate keeps (the plain argmax when none is feasible)."""
    best: tuple[Derivation, float, float] | None = None
    seen: set[bytes] = set()
    for keep in keeps:
        key = np.asarray(keep, dtype=bool).tobytes()
        if key in seen:
            continue
        seen.add(key)
        d = derivation_for_keep(transducer, keep)
        if d is None:
            continue
        lv = loss.value(d.keep, d.tree)
        val = d.score + scale * lv
        if best is None or val > best[2]:
            best = (d, lv, val)
    if best is None:
        d = _own(transducer, transducer.solve_tree())
        lv = loss.value(d.keep, d.tree)
        best = (d, lv, d.score + scale * lv)
    return best


def _certified(value: float, bound: float) -> bool:
    return bool(value >= bound or is_certified(value, bound))


def _label(base: str, exact: bool) -> str:
    return f"{base} (exact, certified)" if exact else f"{base} (APPROXIMATE: not certified)"


def _reference_types(ref_words: Sequence[str]) -> tuple[list[str], dict[str, int], np.ndarray]:
    types: list[str] = []
    index: dict[str, int] = {}
    for w in ref_words:
        if w not in index:
            index[w] = len(types)
            types.append(w)
    q = np.zeros(len(types), dtype=np.int64)
    for w in ref_words:
        q[index[w]] += 1
    return types, index, q


# ----------------------------------------------------------------------------------------------------
# token Hamming (eq. 12 over tokens)
# ----------------------------------------------------------------------------------------------------


def token_augmented(transducer: Transducer, false_positive: np.ndarray, ref_length: int, scale: float = 1.0
                    ) -> tuple[Derivation, float, float]:
    """Exact ``max_d score(d) + scale·(FP(d) + max(l − |d|, 0))`` in the length-stratified chart.

    Parameters
    ----------
    transducer : Transducer
    false_positive : numpy.ndarray
        float (n,): 1 where the source word does not occur in the reference.
    ref_length : int
        l, the reference length.
    scale : float

    Returns
    -------
    (Derivation, loss, value)
        The derivation (model score), its loss and score + scale·loss.
    """
    fp = np.asarray(false_positive, dtype=np.float64)
    u = scale * fp
    table = transducer.solve_lengths(u)
    lengths = np.arange(transducer.n + 1)
    aug = table + scale * np.maximum(ref_length - lengths, 0)
    m = int(np.argmax(aug))
    d = _own(transducer, transducer.solve_tree(u, length=m))
    loss = float(fp @ d.keep + max(ref_length - m, 0))
    return d, loss, float(aug[m])


class TokenHamming:
    """Token Hamming loss (eq. 12): a kept token is a TP iff its word occurs in the reference (no clipping).

    Parameters
    ----------
    source_words : sequence of str
        The source tokens (the keep vectors index them).
    ref_words : sequence of str
        The reference compression's tokens.
    """

    name = "token"

    def __init__(self, source_words: Sequence[str], ref_words: Sequence[str]) -> None:
        self.source_words = tuple(source_words)
        self.ref_words = tuple(ref_words)
        ref = set(self.ref_words)
        self.false_positive = np.array([0.0 if w in ref else 1.0 for w in self.source_words])

    def arguments(self, keep: Any, tree: Tree | None = None) -> HammingArguments:
        """TP, FP and l of a prediction."""
        kv = _keep(keep, len(self.source_words))
        fp = int(self.false_positive @ kv)
        return HammingArguments(int(kv.sum()) - fp, fp, len(self.ref_words))

    def value(self, keep: Any, tree: Tree | None = None) -> float:
        """FP + max(l − |keep|, 0)."""
        a = self.arguments(keep)
        return _hamming(a.tp, a.fp, a.ref_items)

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """Exact, one pass of the length-stratified chart (``options`` are ignored)."""
        d, loss, value = token_augmented(transducer, self.false_positive, len(self.ref_words), scale)
        return LossAugmented(d, loss, value, value, True, "length-stratified chart (exact)")


# ----------------------------------------------------------------------------------------------------
# n-gram Hamming
# ----------------------------------------------------------------------------------------------------


class NgramHamming:
    """n-gram Hamming loss (eq. 12 over the n-grams of the padded output, see the module docstring).

    Parameters
    ----------
    source_words, ref_words : sequence of str
    orders : tuple of int
        The n-gram orders counted, a non-empty subset of {1, 2, 3}; default (2, 3) (Table 1).
    """

    name = "ngram"

    def __init__(self, source_words: Sequence[str], ref_words: Sequence[str],
                 orders: tuple[int, ...] = (2, 3)) -> None:
        if not orders or any(o not in (1, 2, 3) for o in orders) or len(set(orders)) != len(orders):
            raise InputError(f"n-gram orders must be distinct values in 1..3, got {orders!r}")
        self.source_words = tuple(source_words)
        self.ref_words = tuple(ref_words)
        self.orders = tuple(sorted(orders))
        self.ref_items = self.items(self.ref_words)
        self._ref_set = set(self.ref_items)

    def items(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """All n-grams (n in ``orders``) of ``<s> <s> words </s> </s>``."""
        seq = [BOS] * PAD + list(words) + [EOS] * PAD
        return [tuple(seq[i:i + k]) for k in self.orders for i in range(len(seq) - k + 1)]

    def arguments(self, keep: Any, tree: Tree | None = None) -> HammingArguments:
        """TP, FP and l of a prediction."""
        kv = _keep(keep, len(self.source_words))
        pred = self.items([w for w, k in zip(self.source_words, kv, strict=True) if k])
        tp = sum(1 for g in pred if g in self._ref_set)
        return HammingArguments(tp, len(pred) - tp, len(self.ref_items))

    def value(self, keep: Any, tree: Tree | None = None) -> float:
        """FP + max(l − (TP + FP), 0)."""
        a = self.arguments(keep)
        return _hamming(a.tp, a.fp, a.ref_items)

    def false_positive_potentials(self) -> np.ndarray:
        """Trigram potentials (n+2)³ whose path sum over a keep vector is its FP count.

        ``T[a, b, c]`` counts the windows ending at c (unigram c, bigram (b, c), trigram (a, b, c), with
        position 0 read as ``<s>`` and n+1 as ``</s>``) that are not in the reference; on the final
        transition (c = n+1) the window ``(b, </s>, </s>)`` is added. Windows made of boundary symbols
        only (and boundary unigrams) are always in the reference.
        """
        n = len(self.source_words)
        types, index, _ = _reference_types(self.ref_words)
        V = len(types)
        bos, eos, oov = V, V + 1, V + 2
        sym = np.array([bos] + [index.get(w, oov) for w in self.source_words] + [eos], dtype=np.int64)
        ids = {BOS: bos, EOS: eos, **index}
        fp = np.zeros((n + 2, n + 2, n + 2))
        for k in self.orders:
            member = np.zeros((V + 3,) * k, dtype=bool)
            for g in self._ref_set:
                if len(g) == k:
                    member[tuple(ids[w] for w in g)] = True
            if k == 1:
                fp += ~member[sym][None, None, :]
            elif k == 2:
                fp += ~member[sym[:, None], sym[None, :]][None, :, :]
            else:
                fp += ~member[sym[:, None, None], sym[None, :, None], sym[None, None, :]]
                fp[:, :, n + 1] += ~member[sym, eos, eos][None, :]
        return fp

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """Two ``decode([T3, Trigram])`` runs (``options``: engine options of :func:`dualdecomp.decode`).

        Exact iff the best value found reaches the larger of the two dual bounds (certified);
        otherwise APPROXIMATE.
        """
        n = transducer.n
        k = len(self.orders)
        T_a = scale * self.false_positive_potentials()
        T_ab = T_a.copy()
        T_ab[:, :, 1:n + 1] -= scale * k  # B = s·k·(len(ref) − L): −s·k per kept token ...
        const_ab = scale * k * len(self.ref_words)  # ... plus this constant
        results = [(decode([transducer, Trigram(T_ab)], **options), const_ab),
                   (decode([transducer, Trigram(T_a)], **options), 0.0)]
        bound = max(r.dual + c for r, c in results)
        d, loss, value = _pick(transducer, self, scale, [r.keep for r, _ in results])
        exact = _certified(value, bound)
        return LossAugmented(d, loss, value, max(bound, value), exact,
                             _label("two-branch dual decomposition T3 + Trigram", exact), 2)


# ----------------------------------------------------------------------------------------------------
# CFG Hamming
# ----------------------------------------------------------------------------------------------------


def tree_productions(tree: Tree) -> list[str]:
    """The CFG productions of every internal node (preterminal → word included), preorder."""
    return [node.production() for node in tree.preorder() if not node.is_leaf]


def frag_productions(frag: Frag) -> list[str]:
    """The productions of the internal nodes of a target elementary tree (as ``Tree.production``)."""
    out: list[str] = []
    stack = [frag]
    while stack:
        f = stack.pop()
        if f.kind != NODE:
            continue
        kids = [json.dumps(c.label) if c.kind == WORD else c.label for c in f.children]
        out.append(f"{f.label} -> {' '.join(kids)}")
        stack.extend(reversed(f.children))
    return out


class CfgHamming:
    """CFG-production Hamming loss (eq. 12 over the productions of the target trees).

    Parameters
    ----------
    reference : Tree
        The reference target tree.
    """

    name = "cfg"

    def __init__(self, reference: Tree) -> None:
        self.reference = reference
        self.ref_items = tree_productions(reference)
        self._ref_set = set(self.ref_items)

    def arguments(self, keep: Any = None, tree: Tree | None = None) -> HammingArguments:
        """TP, FP and l of a predicted target tree (``keep`` is ignored)."""
        if tree is None:
            raise InputError("the CFG loss needs the predicted target tree")
        pred = tree_productions(tree)
        tp = sum(1 for p in pred if p in self._ref_set)
        return HammingArguments(tp, len(pred) - tp, len(self.ref_items))

    def value(self, keep: Any = None, tree: Tree | None = None) -> float:
        """FP + max(l − (TP + FP), 0) of a predicted target tree."""
        a = self.arguments(keep, tree)
        return _hamming(a.tp, a.fp, a.ref_items)

    def hyperedge_terms(self, transducer: Transducer) -> tuple[np.ndarray, np.ndarray]:
        """(false positives, productions) of every hyperedge's target elementary tree."""
        hg = transducer.hypergraph
        per_rule = []
        for rule in hg.rules:
            prods = frag_productions(rule.target)
            per_rule.append((sum(1 for p in prods if p not in self._ref_set), len(prods)))
        arr = np.array(per_rule, dtype=np.float64).reshape(-1, 2)
        return arr[hg.hyperedge_rule, 0], arr[hg.hyperedge_rule, 1]

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """Exact: two Viterbi passes with the loss folded into the hyperedge scores (``options`` ignored)."""
        hg = transducer.hypergraph
        fp, count = self.hyperedge_terms(transducer)
        a_scores = transducer.hyperedge_score + scale * fp
        branches = [(a_scores - scale * count, scale * len(self.ref_items)), (a_scores, 0.0)]
        best = None
        for scores, const in branches:
            d = Transducer.from_hypergraph(hg, scores).solve_tree()
            if best is None or d.score + const > best[1]:
                best = (d, d.score + const)
        assert best is not None
        d = _own(transducer, best[0])
        loss = self.value(d.keep, d.tree)
        return LossAugmented(d, loss, d.score + scale * loss, best[1], True,
                             "two-branch Viterbi, loss folded into the hyperedge scores (exact)")


# ----------------------------------------------------------------------------------------------------
# bags of tokens with clipped counts: edit distance and F1
# ----------------------------------------------------------------------------------------------------


class _BagLoss:
    """Shared by the edit and F1 losses: reference types, counts and the type of every source token."""

    def __init__(self, source_words: Sequence[str], ref_words: Sequence[str]) -> None:
        self.source_words = tuple(source_words)
        self.ref_words = tuple(ref_words)
        self.types, index, self.q = _reference_types(self.ref_words)
        K = len(self.types)
        self.token_type = np.array([index.get(w, K) for w in self.source_words], dtype=np.int64)
        self._counts = np.bincount(self.token_type, minlength=K + 1)

    def arguments(self, keep: Any, tree: Tree | None = None) -> BagArguments:
        """The count vectors p (predicted) and q (reference), the last cell for all other types."""
        kv = _keep(keep, len(self.source_words))
        p = np.bincount(self.token_type[kv], minlength=len(self.types) + 1)
        return BagArguments((*self.types, "<other>"), tuple(int(x) for x in p),
                            (*(int(x) for x in self.q), 0))

    def _clipped(self, keep: Any) -> tuple[int, int]:
        """(p, Σ_i min(p_i, q_i)) of a prediction."""
        a = self.arguments(keep)
        return sum(a.p), sum(min(x, y) for x, y in zip(a.p, a.q, strict=True))

    def bag(self, coefficient: float, other: float) -> BagCount:
        """BagCount with g_i(c) = other·c + coefficient·min(c, q_i) for reference types, other·c else."""
        gains = []
        for t in range(len(self.types)):
            c = np.arange(self._counts[t] + 1, dtype=np.float64)
            gains.append(other * c + coefficient * np.minimum(c, self.q[t]))
        gains.append(other * np.arange(self._counts[len(self.types)] + 1, dtype=np.float64))
        return BagCount(self.token_type, gains, name="loss")


class EditDistance(_BagLoss):
    """Edit distance over bags of tokens (eq. 13): ``p + q − 2 Σ_i min(p_i, q_i)``.

    Parameters
    ----------
    source_words, ref_words : sequence of str
    """

    name = "edit"

    def value(self, keep: Any, tree: Tree | None = None) -> float:
        """p + q − 2 Σ_i min(p_i, q_i)."""
        p, tp = self._clipped(keep)
        return float(p + len(self.ref_words) - 2 * tp)

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """One ``decode([T3, BagCount])`` (``options``: engine options); exact iff certified."""
        const = scale * len(self.ref_words)
        r = decode([transducer, self.bag(-2.0 * scale, scale)], **options)
        d, loss, value = _pick(transducer, self, scale, [r.keep])
        bound = r.dual + const
        exact = _certified(value, bound)
        return LossAugmented(d, loss, value, max(bound, value), exact,
                             _label("dual decomposition T3 + BagCount", exact), 1)


class F1Loss(_BagLoss):
    """F1 loss over bags of tokens with clipped counts (eq. 14): ``1 − 2 Σ_i min(p_i, q_i) / (p + q)``.

    With an empty prediction and an empty reference the loss is 0.

    Parameters
    ----------
    source_words, ref_words : sequence of str
    """

    name = "f1"

    def value(self, keep: Any, tree: Tree | None = None) -> float:
        """1 − 2·TP/(p + q) with clipped TP."""
        p, tp = self._clipped(keep)
        total = p + len(self.ref_words)
        return 0.0 if total == 0 else 1.0 - 2.0 * tp / total

    def augmented_argmax(self, transducer: Transducer, scale: float = 1.0, **options: Any) -> LossAugmented:
        """One exact-length ``decode([T3, BagCount_L], length=L)`` per output length L (best first).

        ``options`` are engine options (default ``length_method="exact"``). Lengths whose bound
        ``max_{|d|=L} score(d) + scale`` cannot beat the best value found are skipped. Exact iff every
        remaining length was certified; otherwise APPROXIMATE.
        """
        opts = {"length_method": "exact", **options}
        q = len(self.ref_words)
        table = transducer.solve_lengths()
        lengths = [m for m in np.argsort(-table, kind="stable").tolist() if table[m] > -np.inf]
        best: tuple[Derivation, float, float] | None = None
        bound = -np.inf
        decodes = 0
        for m in lengths:
            ub = float(table[m]) + max(scale, 0.0)
            if best is not None and best[2] >= ub:
                bound = max(bound, ub)
                break  # the remaining lengths have smaller bounds
            coef = 0.0 if m + q == 0 else -2.0 * scale / (m + q)
            r = decode([transducer, self.bag(coef, 0.0)], length=m, **opts)
            decodes += 1
            bound = max(bound, r.dual + scale)
            cand = _pick(transducer, self, scale, [r.keep])
            if best is None or cand[2] > best[2]:
                best = cand
        assert best is not None
        d, loss, value = best
        exact = _certified(value, bound)
        return LossAugmented(d, loss, value, max(bound, value), exact,
                             _label("per-length dual decomposition T3 + BagCount", exact), decodes)


# ----------------------------------------------------------------------------------------------------
# factory
# ----------------------------------------------------------------------------------------------------


LOSS_FACTORIES: dict[str, Callable[[Sequence[str], Tree], Loss]] = {
    "token": lambda source_words, reference: TokenHamming(source_words, reference.words()),
    "ngram": lambda source_words, reference: NgramHamming(source_words, reference.words()),
    "cfg": lambda source_words, reference: CfgHamming(reference),
    "edit": lambda source_words, reference: EditDistance(source_words, reference.words()),
    "f1": lambda source_words, reference: F1Loss(source_words, reference.words()),
}
"""The registry of losses: name → ``factory(source_words, reference)`` (:func:`make_loss`). Adding a loss is
one class with the :class:`Loss` operations and one entry here."""

LOSSES = tuple(LOSS_FACTORIES)
"""Names of the losses (``make_loss``, ``TrainConfig.loss``, ``dualdecomp train --kind transducer
--loss``)."""


def make_loss(kind: str, source_words: Sequence[str], reference: Tree) -> Loss:
    """The loss ``kind`` (one of :data:`LOSSES`) of a source sentence against a reference.

    Parameters
    ----------
    kind : str
    source_words : sequence of str
        The source tokens.
    reference : Tree
        The reference target tree (its words are the reference tokens).

    Returns
    -------
    Loss

    Raises
    ------
    InputError
        Unknown ``kind``.
    """
    factory = LOSS_FACTORIES.get(kind) if isinstance(kind, str) else None
    if factory is None:
        raise InputError(f"unknown loss {kind!r} (known: {', '.join(LOSSES)})")
    return factory(source_words, reference)
