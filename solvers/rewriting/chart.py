"""The exact chart of a rewriting STSG with a target bigram LM and exact budgets (W3.3, item 3).

:func:`decode` maximises, over the target derivations of one source tree
(:func:`~dualdecomp.solvers.rewriting.hypergraph.build_rewrite_hypergraph`),

    Σ hyperedge scores  +  Σ lm[a, b] over the bigrams of ⟨s⟩ yield ⟨/s⟩

where ``lm`` is a dense matrix over the sentence's target vocabulary plus ``bos = V`` (row) and
``eos = V + 1`` (column): ``lm[i, j]`` is the score of word j after word i (the caller fills it, e.g.
from KenLM). The LM is integrated exactly: every vertex keeps a table over (first word, last word[,
count]) of its yield (:mod:`~dualdecomp.solvers.rewriting.chart_kernels`), so the bigram across two
items of a hyperedge is scored when they are joined, left to right in target order. An empty yield
(everything deleted) is a state of its own; the empty rewrite scores ``lm[bos, eos]``.

Budgets (:class:`Budget`) add a count to the state: ``words(N)``, exactly N target words;
``chars(N)``, at most N characters of the detokenised output
(:func:`~dualdecomp.solvers.rewriting.text.text_chars`); ``ratio(R)``, at most ``floor(R · S + 1e-9)``
characters where S is the source's characters by the same rule (``RewriteHypergraph.source_chars``). The
space between two words depends only on those two words (``space_between``), and the tables know the
last word of every prefix and the first word of every tail (for the LM), so the count is exact.

``max_states``: after a vertex's table is complete, if it holds more than ``max_states`` finite states
(the empty yield counts as one) only the best ``max_states`` are kept; a decode where this cut anything is
returned with ``certified=False`` and method ``"chart beam (APPROXIMATE)"``; otherwise the result is the
proved optimum (``certified=True``, method ``"exact chart"``).

Infeasible budgets: when no derivation meets the budget, an exact decode raises
:class:`~dualdecomp.core.errors.InputError` (the request cannot be met for this sentence; the message
says what can), a pruned decode raises :class:`~dualdecomp.core.errors.SolverError` (the beam lost every
derivation within the budget; a larger ``max_states`` may find one).

Ties: within a vertex the first hyperedge (in hypergraph order) reaching a state's maximum wins; at the
root the empty yield wins only when strictly better, then the first state in (first, last, count) order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.solvers.rewriting import chart_kernels as K
from dualdecomp.solvers.rewriting.hypergraph import RewriteHypergraph, build_rewrite_hypergraph
from dualdecomp.solvers.rewriting.rules import Operations
from dualdecomp.solvers.rewriting.text import detokenise_words, joins_left, joins_right, text_chars

__all__ = ["EXACT", "APPROXIMATE", "Budget", "RewriteDerivation", "build_rewrite_hypergraph", "decode",
           "derivation_score", "lm_score"]

EXACT = "exact chart"
APPROXIMATE = "chart beam (APPROXIMATE)"


@dataclass(frozen=True)
class Budget:
    """A budget on the rewrite (module docstring); build with :meth:`words`, :meth:`chars`, :meth:`ratio`.

    Attributes
    ----------
    kind : {"words", "chars", "ratio"}
    value : float
        N (words, characters) or R.
    """

    kind: Literal["words", "chars", "ratio"]
    value: float

    def __post_init__(self) -> None:
        if self.kind not in ("words", "chars", "ratio"):
            raise InputError(f"unknown budget kind {self.kind!r}")
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(v)) or v < 0:
            raise InputError(f"a {self.kind} budget must be a finite number >= 0, got {v!r}")
        if self.kind != "ratio" and int(v) != v:
            raise InputError(f"a {self.kind} budget must be a whole number, got {v!r}")

    @classmethod
    def words(cls, n: int) -> Budget:
        """Exactly ``n`` target words."""
        return cls("words", n)

    @classmethod
    def chars(cls, n: int) -> Budget:
        """At most ``n`` characters of the detokenised rewrite."""
        return cls("chars", n)

    @classmethod
    def ratio(cls, r: float) -> Budget:
        """At most ``floor(r · source characters)`` characters."""
        return cls("ratio", r)

    @property
    def counts_chars(self) -> bool:
        """Whether the budget counts characters (else words)."""
        return self.kind != "words"

    def limit(self, source_chars: int) -> int:
        """The count the budget allows: N words (exactly), or the most characters."""
        if self.kind == "ratio":
            return int(math.floor(float(self.value) * source_chars + 1e-9))
        return int(self.value)


@dataclass(frozen=True)
class RewriteDerivation:
    """The best target derivation found by :func:`decode`.

    Attributes
    ----------
    hyperedges : tuple of int
        Hyperedge ids, top-down (preorder of the derivation, tails in target order).
    words : tuple of str
        The target yield.
    score : float
        Objective: hyperedge scores + LM score.
    lm_score : float
        The LM part (bigrams of ⟨s⟩ words ⟨/s⟩; 0 without an LM).
    operations : Operations
        Summed over the hyperedges (words under deleted variables included).
    certified : bool
        True iff no beam pruning happened: the derivation is proved optimal.
    method : str
        ``EXACT`` or ``APPROXIMATE``.
    count : int
        The budget's count of the yield (words or characters; 0 without a budget).
    limit : int or None
        The budget's limit (None without a budget).
    states : int
        Finite states over all vertex tables (empty yields included).
    peak_states : int
        The most finite states of one vertex.
    cells : int
        Entries allocated for the vertex tables (each a float64 score and an int64 back pointer).
    """

    hyperedges: tuple[int, ...]
    words: tuple[str, ...]
    score: float
    lm_score: float
    operations: Operations
    certified: bool
    method: str
    count: int = 0
    limit: int | None = None
    states: int = 0
    peak_states: int = 0
    cells: int = 0

    @property
    def text(self) -> str:
        """The detokenised rewrite (:func:`~dualdecomp.solvers.rewriting.text.detokenise_words`)."""
        return detokenise_words(self.words)

    @property
    def chars(self) -> int:
        """Characters of :attr:`text`."""
        return text_chars(self.words)


def lm_score(hg: RewriteHypergraph, lm: np.ndarray | None, words: Sequence[str]) -> float:
    """LM score of a yield: Σ ``lm`` over the bigrams of ⟨s⟩ words ⟨/s⟩ (0 without an LM)."""
    if lm is None:
        return 0.0
    ids = {w: i for i, w in enumerate(hg.vocab)}
    seq = [hg.bos, *(ids[w] for w in words), hg.eos]
    return float(sum(lm[a, b] for a, b in zip(seq, seq[1:], strict=False)))


def derivation_score(hg: RewriteHypergraph, hyperedge_scores: Any, lm: np.ndarray | None,
                     hyperedges: Sequence[int]) -> tuple[float, tuple[str, ...]]:
    """Recompute a derivation's objective from its hyperedges (any order): (score, yield).

    Raises
    ------
    InputError
        The hyperedges do not form one derivation of the root vertex.
    """
    scores = np.asarray(hyperedge_scores, dtype=np.float64)
    at: dict[int, int] = {}
    for e in hyperedges:
        h = int(hg.hyperedge_head[e])
        if h in at:
            raise InputError(f"two hyperedges rewrite vertex {h}")
        at[h] = int(e)
    used: list[int] = []

    def expand(v: int) -> list[str]:
        if v not in at:
            raise InputError(f"vertex {v} has no hyperedge in the derivation")
        e = at[v]
        used.append(e)
        out: list[str] = []
        for code in hg.items(e).tolist():
            out.extend([hg.vocab[code]] if code >= 0 else expand(-code - 1))
        return out

    words = expand(hg.root)
    if sorted(used) != sorted(int(e) for e in hyperedges):
        raise InputError("hyperedges outside the derivation")
    total = float(sum(scores[e] for e in used)) + lm_score(hg, lm, words)
    return total, tuple(words)


@dataclass(frozen=True)
class _Chart:
    """Arrays shared by the forward pass and the backtracking."""

    cdim: np.ndarray
    toff: np.ndarray
    wcost: np.ndarray
    scost: np.ndarray
    rcost: np.ndarray
    lm: np.ndarray
    scores: np.ndarray


def _check_inputs(hg: RewriteHypergraph, hyperedge_scores: Any, lm: Any, max_states: Any
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    scores = np.ascontiguousarray(np.asarray(hyperedge_scores, dtype=np.float64))
    if scores.shape != (hg.num_hyperedges,) or not np.isfinite(scores).all():
        raise InputError(f"hyperedge scores must be {hg.num_hyperedges} finite numbers")
    V = len(hg.vocab)
    if lm is None:
        lmat = np.zeros((V + 2, V + 2))
    else:
        lmat = np.ascontiguousarray(np.asarray(lm, dtype=np.float64))
        if lmat.shape != (V + 2, V + 2):
            raise InputError(f"the LM matrix must be {V + 2}x{V + 2} (vocabulary + BOS + EOS), "
                             f"got {lmat.shape}")
        if np.isnan(lmat).any() or (lmat == np.inf).any():
            raise InputError("the LM matrix contains NaN or +inf")
    if max_states is None:
        ms = 0
    else:
        if isinstance(max_states, bool) or int(max_states) != max_states or max_states < 1:
            raise InputError(f"max_states must be a whole number >= 1, got {max_states!r}")
        ms = int(max_states)
    return scores, lmat, ms


def decode(hg: RewriteHypergraph, hyperedge_scores: Any, lm: np.ndarray | None = None,
           budget: Budget | None = None, max_states: int | None = None) -> RewriteDerivation:
    """The best target derivation under hyperedge scores, a bigram LM and a budget (module docstring).

    Parameters
    ----------
    hg : RewriteHypergraph
    hyperedge_scores : array-like
        One finite score per hyperedge.
    lm : numpy.ndarray, optional
        (V + 2, V + 2) bigram scores over ``hg.vocab`` + BOS + EOS; ``-inf`` forbids a bigram.
    budget : Budget, optional
    max_states : int, optional
        Beam size per vertex table (None: exact).

    Returns
    -------
    RewriteDerivation

    Raises
    ------
    InputError
        Bad scores, LM matrix or ``max_states``; or no derivation meets the budget (exact decode).
    SolverError
        The beam pruned every derivation that meets the budget.
    """
    scores, lmat, ms = _check_inputs(hg, hyperedge_scores, lm, max_states)
    V = len(hg.vocab)
    nv = hg.num_vertices
    limit = None if budget is None else budget.limit(hg.source_chars)
    wcost = np.zeros(V, dtype=np.int64)
    scost = np.zeros(V, dtype=np.int64)
    rcost = np.ones(V, dtype=np.int64)  # space between a and b: scost[b] * rcost[a] (text.space_between)
    if budget is not None:
        if budget.counts_chars:
            wcost[:] = [len(w) for w in hg.vocab]
            scost[:] = [0 if joins_left(w) else 1 for w in hg.vocab]
            rcost[:] = [0 if joins_right(w) else 1 for w in hg.vocab]
        else:
            wcost[:] = 1
        hi = K.count_bounds(nv, hg.hyperedge_head, hg.item_ptr, hg.item_code, wcost,
                            1 if budget.counts_chars else 0)
        cdim = np.minimum(hi, limit) + 1
    else:
        cdim = np.ones(nv, dtype=np.int64)
    nF = np.diff(hg.first_ptr)
    nL = np.diff(hg.last_ptr)
    toff = np.zeros(nv + 1, dtype=np.int64)
    np.cumsum(nF * nL * cdim, out=toff[1:])
    last_of_head = np.zeros(hg.num_hyperedges, dtype=np.bool_)
    seen: set[int] = set()
    for e in range(hg.num_hyperedges - 1, -1, -1):
        h = int(hg.hyperedge_head[e])
        if h not in seen:
            seen.add(h)
            last_of_head[e] = True
    table, back, empty, back_empty, pruned = K.forward(
        nv, V, hg.hyperedge_head, last_of_head, scores, hg.item_ptr, hg.item_code, hg.first_ptr, hg.first_idx,
        hg.last_ptr, hg.last_idx, cdim, toff, wcost, scost, rcost, lmat, ms)
    ch = _Chart(cdim, toff, wcost, scost, rcost, lmat, scores)
    finite = np.concatenate([[0], np.cumsum(table > -np.inf)])
    per_vertex = finite[toff[1:]] - finite[toff[:-1]] + (empty > -np.inf)
    root_state = _best_root(hg, ch, table, empty, budget, limit, bool(pruned))
    hyperedges: list[int] = []
    words: list[str] = []
    _expand(hg, ch, table, back, empty, back_empty, hg.root, root_state, hyperedges, words)
    ops = Operations(*(int(x) for x in hg.operations[hyperedges].sum(axis=0))) if hyperedges \
        else Operations()
    total = float(sum(scores[e] for e in hyperedges))
    lms = lm_score(hg, lmat if lm is not None else None, words)
    count = 0
    if budget is not None:
        count = text_chars(words) if budget.counts_chars else len(words)
    return RewriteDerivation(
        hyperedges=tuple(hyperedges), words=tuple(words), score=total + lms, lm_score=lms,
        operations=ops, certified=not pruned, method=APPROXIMATE if pruned else EXACT, count=count,
        limit=limit, states=int(per_vertex.sum()), peak_states=int(per_vertex.max(initial=0)),
        cells=int(toff[-1]))


def _best_root(hg: RewriteHypergraph, ch: _Chart, table: np.ndarray, empty: np.ndarray,
               budget: Budget | None, limit: int | None, pruned: bool) -> tuple[bool, int, int, int]:
    """The root's best final state, sentence boundaries scored: (is_empty, fi, last word id, count)."""
    r = hg.root
    first = hg.first_idx[hg.first_ptr[r]:hg.first_ptr[r + 1]]
    last = hg.last_idx[hg.last_ptr[r]:hg.last_ptr[r + 1]]
    C = int(ch.cdim[r])
    T = table[ch.toff[r]:ch.toff[r + 1]].reshape(len(first), len(last), C)
    vals = T + ch.lm[hg.bos, first][:, None, None] + ch.lm[last, hg.eos][None, :, None]
    if budget is not None and not budget.counts_chars:
        mask = np.zeros(C, dtype=bool)
        if limit is not None and limit < C:
            mask[limit] = True
        vals = np.where(mask[None, None, :], vals, -np.inf)
    empty_ok = budget is None or budget.counts_chars or limit == 0
    empty_val = empty[r] + ch.lm[hg.bos, hg.eos] if empty_ok else -np.inf
    best = -np.inf
    state = (True, 0, 0, 0)
    if vals.size:
        k = int(np.argmax(vals))
        fi, li, c = np.unravel_index(k, vals.shape)
        best = float(vals[fi, li, c])
        state = (False, int(fi), int(last[li]), int(c))
    if empty_val > best:
        best = float(empty_val)
        state = (True, 0, 0, 0)
    if best == -np.inf:
        if pruned:
            raise SolverError(f"the beam (max_states) pruned every rewrite within the budget {_say(budget)}")
        raise InputError(f"no rewrite of this sentence meets the budget {_say(budget)}"
                         + _feasible(hg, ch, budget))
    return state


def _say(budget: Budget | None) -> str:
    if budget is None:
        return "(none)"
    if budget.kind == "words":
        return f"of exactly {int(budget.value)} words"
    if budget.kind == "chars":
        return f"of at most {int(budget.value)} characters"
    return f"of at most {budget.value:g} of the source's characters"


def _feasible(hg: RewriteHypergraph, ch: _Chart, budget: Budget | None) -> str:
    """What the sentence allows, for the infeasibility message."""
    if budget is None:
        return ""
    nv = hg.num_vertices
    if budget.counts_chars:
        return f" (the source has {hg.source_chars} characters)"
    hi = K.count_bounds(nv, hg.hyperedge_head, hg.item_ptr, hg.item_code, np.ones(len(hg.vocab), np.int64), 0)
    return f" (its rewrites have at most {int(hi[hg.root])} words)"


def _expand(hg: RewriteHypergraph, ch: _Chart, table: np.ndarray, back: np.ndarray, empty: np.ndarray,
            back_empty: np.ndarray, v: int, state: tuple[bool, int, int, int], hyperedges: list[int],
            words: list[str]) -> None:
    """Backtrack vertex ``v`` in ``state`` (is_empty, fi, last word id, count): append its hyperedges
    (preorder) and its yield."""
    is_empty, fi, lw, c = state
    if is_empty:
        e = int(back_empty[v])
    else:
        lpos = int(np.searchsorted(hg.last_idx[hg.last_ptr[v]:hg.last_ptr[v + 1]], lw))
        nL = int(hg.last_ptr[v + 1] - hg.last_ptr[v])
        e = int(back[ch.toff[v] + (fi * nL + lpos) * ch.cdim[v] + c])
    if e < 0:  # pragma: no cover - back pointers exist for every finite state
        raise SolverError("rewriting chart: missing back pointer")
    hyperedges.append(e)
    Ps, lasts, nls, pes, _, fpos = K.replay(e, v, hg.item_ptr, hg.item_code, ch.scores, table, empty, ch.toff,
                                            hg.first_ptr, hg.first_idx, hg.last_ptr, hg.last_idx, ch.cdim,
                                            len(hg.vocab), ch.wcost, ch.scost, ch.rcost, ch.lm)
    f_local = -1 if is_empty else int(fpos[hg.first_idx[hg.first_ptr[v] + fi]])
    steps = K.walk_back(e, Ps, lasts, nls, pes, fpos, is_empty, f_local, lw, c, hg.item_ptr, hg.item_code,
                        table, empty, ch.toff, hg.first_ptr, hg.first_idx, hg.last_ptr, hg.last_idx, ch.cdim,
                        ch.wcost, ch.scost, ch.rcost, ch.lm)
    for code, (kind, f2i, l2i, c2) in zip(hg.items(e).tolist(), steps.tolist(), strict=True):
        if kind < 0:  # pragma: no cover - the replay repeats the forward arithmetic exactly
            raise SolverError("rewriting chart: backtracking failed")
        if code >= 0:
            words.append(hg.vocab[code])
            continue
        t = -code - 1
        if kind == 1:
            _expand(hg, ch, table, back, empty, back_empty, t, (True, 0, 0, 0), hyperedges, words)
        else:
            lw = int(hg.last_idx[hg.last_ptr[t] + l2i])
            _expand(hg, ch, table, back, empty, back_empty, t, (False, f2i, lw, c2), hyperedges, words)
