r"""Exact skip-bigram dependency parsing (contracts 3 and 4 of docs/architecture.md §2).

A structure is a set K of kept tokens together with a projective dependency tree whose nodes are exactly
the root 0 and K (projective w.r.t. the kept order; the root may have several children). Its score is

    Σ_{h→m} A[h, m] + Σ_{h, side} Σ S[h, s, m] + Σ_t B[s_{t-1}, s_t] + Σ_{k ∈ K} (u_k − lam),

where the sibling term runs, for every head h and side, over its modifiers from the closest outward,
``s`` being the previous (closer) modifier and ``s = h`` for the closest one, and the bigram term runs over
the kept sequence 0 = s_0 < s_1 < … < s_L < s_{L+1} = n+1. Every parser below is a weighted deduction
system whose derivations are in one-to-one correspondence with the structures it searches, run by the
numba kernels of :mod:`dualdecomp.solvers.dependency.kernels` in the (max, +) semiring (and in the counting
semiring by :func:`count_derivations`, which the tests compare with brute-force counts).

Positions are ``0..n``. Notation: ``w_0 = 0`` and ``w_a = u_a − lam`` for a token ``a``; ``next(a)`` is
the first kept position after ``a`` (``n+1`` if none).

The canonical place of dropped words
------------------------------------
Dropped words are skipped only to the right, and always by the same item: the maximal run of dropped
words ``a+1..j`` that follows a kept word (or the root) ``a`` is absorbed by the *premise* of ``a``

    P(a, j)    (a kept, a+1..j dropped, j+1 = next(a)),

the innermost right item of ``a``. Nothing else can skip a word, so the gap between two consecutive kept
words is covered in exactly one way. Consequently the "anticipated next kept word" p of the note's
items, (t, i, j, p), is always ``p = j + 1`` for the one item type whose right end may be a dropped word
(the right triangles), so p needs no index of its own: the note's hook rule
``(a, a, a) ⊢ (a, a, p)  Bigram(a, p)`` followed by the skips of ``a+1..p-1`` *is* the premise
``P(a, p-1)`` with weight ``B[a, p]``, and every bigram (a, next(a)) is scored exactly once, by the
premise of ``a``. The skip-bigram parsers therefore stay O(n^3), first and second order alike (the
hook trick without its O(n^4)): the bigram never needs to be anticipated across a completed item.

First-order systems (Eisner 1996 items; spans ``i <= j``)
---------------------------------------------------------
Items: ``P(a, j)`` (above); ``CR(i, j)`` right triangle: head ``i``, all kept words of ``i+1..j`` are
its descendants, ``j`` kept or dropped; ``CL(i, j)`` left triangle: head ``j >= 1``, ``i`` kept, all kept
words of ``i..j-1`` are its descendants; ``IR(i, j)`` right trapezoid: arc ``i → j`` with the modifiers
of ``i`` inside and the left descendants of ``j``; ``IL(i, j)`` left trapezoid: arc ``j → i``.

    premise   ⊢ P(a, j)                                  weight π(a, j)        0 <= a <= j <= n
    L0        ⊢ CL(a, a)                                                       1 <= a <= n
    R0        P(i, j) ⊢ CR(i, j)
    attach-R  CR(i, r)  CL(r+1, j) ⊢ IR(i, j)            A[i, j]               i <= r < j
    attach-L  CR(i, r)  CL(r+1, j) ⊢ IL(i, j)            A[j, i]               1 <= i <= r < j
    compl-R   IR(i, m)  CR(m, j)   ⊢ CR(i, j)                                  i < m <= j
    compl-L   CL(i, m)  IL(m, j)   ⊢ CL(i, j)                                  1 <= i <= m < j
    goal      CR(0, n)

The four first-order parsers differ only in the premise weights π:

* :func:`parse` (Eisner, all tokens kept): ``π(a, a) = 0``, ``π(a, j) = −inf`` for ``j > a`` (no skips);
* skip parsing (A only, :func:`solve` with ``B = S = None``): ``π(a, j) = w_a``;
* skip-bigram parsing (A + B): ``π(a, j) = w_a + B[a, j+1]`` (the hook, see above);
* :meth:`Dependency.best_given` (fixed yield K): ``π(a, j) = B[a, j+1]`` (0 without B) if ``a ∈ {0} ∪ K``
  and ``j + 1 = next(a)``, else ``−inf``.

Second-order (sibling) systems
------------------------------
Items as above plus the sibling box ``SB(i, j)``: ``i < j`` are adjacent modifiers, on the same side, of
a head outside ``[i, j]`` (the right descendants of ``i`` and the left descendants of ``j``). ``P`` is now
also used directly: ``P(i, r)`` as the left antecedent of an attachment means "``i`` has no right modifier
in ``i+1..r``" — the note's "has not yet taken modifiers" item, which with skipped words must be told
apart from ``CR(i, r)`` (without skips it is implicit in ``r = i``).

    premise, L0, R0, compl-R, compl-L, goal       as in first order
    box       CR(i, r)  CL(r+1, j) ⊢ SB(i, j)                             1 <= i <= r < j
    first-R   P(i, r)   CL(r+1, j) ⊢ IR(i, j)    A[i, j] + S[i, i, j]    i <= r < j
    next-R    IR(i, s)  SB(s, j)   ⊢ IR(i, j)    A[i, j] + S[i, s, j]    i < s < j
    first-L   CR(i, j-1) CL(j, j)  ⊢ IL(i, j)    A[j, i] + S[j, j, i]    1 <= i < j
    next-L    SB(i, s)  IL(s, j)   ⊢ IL(i, j)    A[j, i] + S[j, s, i]    i < s < j

with the same four choices of π: second-order parsing (all kept; :func:`parse` with ``S``),
second-order skip parsing (A + S), second-order skip-bigram parsing (A + S + B) and ``best_given``.
(The left first-modifier rule needs no premise: the right triangle of the modifier ``i`` ends just
before the head ``j``, gap included; the head's own left premise ``CL(j, j)`` never carries a gap.)

Why one derivation per structure
--------------------------------
(1) Every item's left end is kept (premises start at their word; every rule inherits the left end of
its left antecedent). (2) The antecedents of a rule tile its span: attachments and boxes concatenate
``[i..r]`` and ``[r+1..j]``, completions and next-rules overlap exactly in the shared kept word. Hence in
a derivation of the goal the premise spans ``[a..j_a]`` of the used premises partition ``0..n`` and each
``j_a + 1`` is the left end of an item, i.e. kept: ``j_a + 1 = next(a)`` — the kept set K is the set of
words whose premise is used, and every dropped word lies in exactly one premise. (3) Deleting the gaps
(``P(a, j_a) ↦ P(a, a)``) maps derivations to derivations of the gap-free system over the kept
sequence, and re-inserting them (``j_a = next(a) − 1``) is the inverse, so the map is a bijection; the
gap-free systems are Eisner's first-order and McDonald & Pereira's (2006) second-order parsers, which
are unambiguous (every split point is forced: the outermost modifier for completions, the boundary
between the two subtrees for attachments and boxes, the previous sibling for next-rules). Weights: each
arc and each sibling pair is scored by the single rule that creates it, each kept word and its bigram
``(a, next(a))`` by its premise. The tests check the bijection by counting derivations against a
brute-force enumeration of structures.

Costs: O(n^3) time and O(n^2) space for all variants (second order has the extra box item), plus the
sibling scores: a dense S is (n+1)^3, the factored form of the model's features O(n^2)
(:mod:`dualdecomp.solvers.dependency.siblings`).

Integer program (:meth:`Dependency.to_ilp`): the hypergraph of the deduction system, one binary
variable per hyperedge (rule instance) with a finite weight, flow conservation at every item (sum of its
incoming hyperedges = number of uses as an antecedent), goal = 1 and ``keep_a = Σ_j x[premise P(a, j)]``.
This is exact: every binary flow is a derivation. An item cannot be used twice (inflow 2): axioms have a
single incoming hyperedge, and above a latest item used twice all items have inflow <= 1 and so form
one derivation tree of the goal, whose antecedent spans tile (they share at most one position), which
leaves no room for two uses of a span of two or more positions; acyclicity then leads every active
hyperedge to the goal.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pulp

from dualdecomp.core.checks import as_finite, as_keep, as_u, float_array
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.dependency.kernels import (
    first_order_backtrack,
    first_order_chart,
    second_order_backtrack,
    second_order_chart,
)
from dualdecomp.solvers.dependency.siblings import SiblingScores, as_sibling_scores

__all__ = ["Dependency", "SiblingScores", "count_derivations", "hyperedges", "parse", "solve"]


# --------------------------------------------------------------------------------------------------
# validation


def _check_arrays(
    A: object, B: object | None, S: object | None
) -> tuple[int, np.ndarray, np.ndarray | None, SiblingScores | None]:
    """Validate A, B, S; return ``(n, A, B, S)`` with S in factored form (a dense S is not copied)."""
    A = float_array(A, "A")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
        raise InputError(f"A must have shape (n+1, n+1) with n >= 0, got {A.shape}")
    n = A.shape[0] - 1
    if B is not None:
        B = float_array(B, "B", (n + 2, n + 2))
    if S is not None:
        S = as_sibling_scores(S, n)
    return n, A, B, S


# --------------------------------------------------------------------------------------------------
# premises


def _premises(n: int, w: np.ndarray, B: np.ndarray | None, drop: bool) -> np.ndarray:
    """Premise weights ``π(a, j) = w[a] + B[a, j+1]`` for ``a <= j`` (only ``j = a`` unless ``drop``)."""
    N = n + 1
    P = np.broadcast_to(w[:, None], (N, N)).copy()
    if B is not None:
        P += B[:N, 1 : N + 1]
    if drop:
        P[np.tril_indices(N, -1)] = -np.inf
    else:
        diag = P.diagonal().copy()
        P.fill(-np.inf)
        np.fill_diagonal(P, diag)
    return P


def _premises_given(keep: np.ndarray, B: np.ndarray | None) -> np.ndarray:
    """Premise weights of a fixed yield: ``π(a, next(a)-1) = B[a, next(a)]`` for ``a ∈ {0} ∪ K``."""
    n = len(keep)
    P = np.full((n + 1, n + 1), -np.inf)
    seq = [0, *(np.flatnonzero(keep) + 1).tolist(), n + 1]
    for a, b in zip(seq[:-1], seq[1:], strict=True):
        P[a, b - 1] = 0.0 if B is None else B[a, b]
    return P


# --------------------------------------------------------------------------------------------------
# kernels


def _best(A: np.ndarray, S: SiblingScores | None, P: np.ndarray) -> tuple[float, np.ndarray]:
    """Run the (max, +) chart; return the goal score and the heads of positions ``0..n``."""
    n = A.shape[0] - 1
    if S is None:
        CR, _, _, _, bI, bCR, bCL = first_order_chart(A, P, False)
        score = float(CR[0, n])
        if score == -np.inf:
            return score, np.full(n + 1, -1, np.int64)
        return score, first_order_backtrack(bI, bCR, bCL)
    CR, _, _, _, _, bCR, bCL, bIR, bIL, bSB = second_order_chart(A, S.table, S.hs, S.md, S.scale, P, False)
    score = float(CR[0, n])
    if score == -np.inf:
        return score, np.full(n + 1, -1, np.int64)
    return score, second_order_backtrack(bCR, bCL, bIR, bIL, bSB)


def _solution(A: np.ndarray, S: SiblingScores | None, P: np.ndarray) -> Solution:
    score, heads = _best(A, S, P)
    if score == -np.inf:
        raise SolverError("no dependency structure has a finite score (every one uses a -inf entry)")
    heads = heads[1:].copy()
    return Solution(keep=heads >= 0, score=score, heads=heads)


def parse(A: object, S: object | None = None) -> Solution:
    """Best projective dependency tree over all tokens (Eisner; second order when ``S`` is given).

    Parameters
    ----------
    A : array_like
        (n+1, n+1) arc scores ``A[h, m]`` for h -> m; -inf forbids an arc.
    S : array_like or SiblingScores, optional
        (n+1, n+1, n+1) sibling scores ``S[h, s, m]`` (contract 3), dense or factored
        (:class:`~dualdecomp.solvers.dependency.siblings.SiblingScores`, O(n²) memory).

    Returns
    -------
    Solution
        ``keep`` all True, ``heads`` the head of every token (0 = root), ``score`` = Σ A + Σ S.

    Raises
    ------
    InputError
        Wrong shapes, NaN or +inf.
    SolverError
        If every tree has score -inf.
    """
    n, A, _, S = _check_arrays(A, None, S)
    return _solution(A, S, _premises(n, np.zeros(n + 1), None, drop=False))


def solve(
    A: object,
    B: object | None = None,
    S: object | None = None,
    u: object | None = None,
    lam: float = 0.0,
) -> Solution:
    """Best compression with its projective dependency tree (contract 3 of docs/architecture.md §2).

    Dispatches to the skip parser (``A``), the skip-bigram parser (``A``, ``B``), the second-order skip
    parser (``A``, ``S``) or the second-order skip-bigram parser (``A``, ``B``, ``S``); all are exact
    O(n^3) dynamic programs (module docstring).

    Parameters
    ----------
    A : array_like
        (n+1, n+1) arc scores ``A[h, m]`` for h -> m (h in 0..n, m in 1..n); -inf forbids an arc.
    B : array_like, optional
        (n+2, n+2) bigram scores over the kept sequence (contract 1).
    S : array_like or SiblingScores, optional
        (n+1, n+1, n+1) sibling scores ``S[h, s, m]``; ``s = h`` for the closest modifier of a side.
        Dense or factored (:class:`~dualdecomp.solvers.dependency.siblings.SiblingScores`: the same
        numbers in O(n²) memory, computed inside the chart).
    u : array_like, optional
        (n,) score added for every kept token (default 0); -inf forbids keeping the token.
    lam : float
        Finite length multiplier, subtracted for every kept token.

    Returns
    -------
    Solution
        ``keep`` (bool (n,)), ``heads`` (int (n,), 0 = root, -1 = dropped) and ``score`` =
        Σ A + Σ S + bigram(B) + Σ (u - lam)·keep.

    Raises
    ------
    InputError
        Wrong shapes, NaN or +inf in any array, non-finite ``lam``.
    SolverError
        If every structure has score -inf (nothing is feasible).
    """
    n, A, B, S = _check_arrays(A, B, S)
    u, lam = as_u(u, n), as_finite(lam, "lam")
    w = np.concatenate(([0.0], u - lam))
    return _solution(A, S, _premises(n, w, B, drop=True))


def count_derivations(
    A: object,
    B: object | None = None,
    S: object | None = None,
    u: object | None = None,
    lam: float = 0.0,
    *,
    drop: bool = True,
) -> float:
    """Number of derivations of finite score of the parser :func:`solve` (``drop=False``: :func:`parse`).

    The same kernels run in the counting semiring, every finite weight mapped to 1 and -inf to 0. As the
    deduction systems are unambiguous this equals the number of structures of finite score (a debugging
    aid; exact below 2**53).

    Parameters
    ----------
    A, B, S, u, lam
        As in :func:`solve`.
    drop : bool
        Whether tokens may be dropped (``False``: the all-kept parser of :func:`parse`, plus ``B``).

    Returns
    -------
    float
        The number of derivations.
    """
    n, A, B, S = _check_arrays(A, B, S)
    u, lam = as_u(u, n), as_finite(lam, "lam")
    w = np.concatenate(([0.0], u - lam))
    P = np.isfinite(_premises(n, w, B, drop)).astype(np.float64)
    A1 = np.isfinite(A).astype(np.float64)
    if S is None:
        return float(first_order_chart(A1, P, True)[0][0, n])
    S1 = S.finite()
    return float(second_order_chart(A1, S1.table, S1.hs, S1.md, 1.0, P, True)[0][0, n])


# --------------------------------------------------------------------------------------------------
# hypergraph and ILP


Item = tuple[str, int, int]
Hyperedge = tuple[Item, tuple[Item, ...], float, int]


def hyperedges(
    A: np.ndarray, S: np.ndarray | SiblingScores | None, P: np.ndarray, *, prune: bool = True
) -> list[Hyperedge]:
    """The rule instances of the deduction system (module docstring) in topological order.

    Parameters
    ----------
    A : numpy.ndarray
        (n+1, n+1) arc scores.
    S : numpy.ndarray or SiblingScores or None
        (n+1, n+1, n+1) sibling scores (dense or factored); None for the first-order system.
    P : numpy.ndarray
        (n+1, n+1) premise weights π(a, j) (-inf outside ``a <= j``).
    prune : bool
        Drop rule instances of weight -inf and those not on any derivation of the goal.

    Returns
    -------
    list of tuple
        ``(head, tails, weight, word)`` with items ``(type, i, j)``, type in P, CR, CL, IR, IL, SB;
        ``word`` is ``a`` for the premise ``⊢ P(a, j)`` (which keeps ``a``), -1 for every other rule.
    """
    N = A.shape[0]
    second = S is not None
    edges: list[Hyperedge] = []
    add = edges.append
    for a in range(N):
        for j in range(a, N):
            add((("P", a, j), (), float(P[a, j]), a))
        if a >= 1:
            add((("CL", a, a), (), 0.0, -1))
        add((("CR", a, a), (("P", a, a),), 0.0, -1))
    for w in range(1, N):
        for i in range(N - w):
            j = i + w
            if second:
                if i >= 1:
                    for r in range(i, j):
                        add((("SB", i, j), (("CR", i, r), ("CL", r + 1, j)), 0.0, -1))
                for r in range(i, j):
                    add((("IR", i, j), (("P", i, r), ("CL", r + 1, j)), float(A[i, j] + S[i, i, j]), -1))
                for s in range(i + 1, j):
                    add((("IR", i, j), (("IR", i, s), ("SB", s, j)), float(A[i, j] + S[i, s, j]), -1))
                if i >= 1:
                    add((("IL", i, j), (("CR", i, j - 1), ("CL", j, j)), float(A[j, i] + S[j, j, i]), -1))
                    for s in range(i + 1, j):
                        add((("IL", i, j), (("SB", i, s), ("IL", s, j)), float(A[j, i] + S[j, s, i]), -1))
            else:
                for r in range(i, j):
                    tails = (("CR", i, r), ("CL", r + 1, j))
                    add((("IR", i, j), tails, float(A[i, j]), -1))
                    if i >= 1:
                        add((("IL", i, j), tails, float(A[j, i]), -1))
            add((("CR", i, j), (("P", i, j),), 0.0, -1))
            for m in range(i + 1, j + 1):
                add((("CR", i, j), (("IR", i, m), ("CR", m, j)), 0.0, -1))
            if i >= 1:
                for m in range(i, j):
                    add((("CL", i, j), (("CL", i, m), ("IL", m, j)), 0.0, -1))
    if not prune:
        return edges
    derivable: set[Item] = set()
    forward = []
    for e in edges:
        if e[2] != -np.inf and all(t in derivable for t in e[1]):
            derivable.add(e[0])
            forward.append(e)
    useful: set[Item] = {("CR", 0, N - 1)}
    kept = []
    for e in reversed(forward):
        if e[0] in useful:
            useful.update(e[1])
            kept.append(e)
    kept.reverse()
    return kept


class Dependency:
    """The skip(-bigram) dependency parser as a dual-decomposition component (contract 4).

    Parameters
    ----------
    A : array_like
        (n+1, n+1) arc scores.
    B : array_like, optional
        (n+2, n+2) bigram scores.
    S : array_like or SiblingScores, optional
        (n+1, n+1, n+1) sibling scores, dense or factored (kept factored: O(n²) memory).

    Attributes
    ----------
    n : int
        Number of tokens.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=False, length_bias=2)

    def __init__(self, A: object, B: object | None = None, S: object | None = None) -> None:
        if S is not None and not isinstance(S, SiblingScores):
            S = np.array(S, dtype=np.float64)  # own copy: the factored form is a view of it
        n, A, B, S = _check_arrays(A, B, S)
        self.n = n
        self.A = A.copy()
        self.B = None if B is None else B.copy()
        self.S = S  # immutable (read-only arrays)

    def solve(self, u: object | None = None) -> Solution:
        """Argmax of the own score + ``u``·keep (see :func:`solve`; raises ``SolverError`` if infeasible)."""
        return solve(self.A, self.B, self.S, u)

    def with_length_bias(self, bias: float) -> Dependency:
        """This component with ``bias`` added to every finite arc score: ``bias · L`` more for a tree over
        L kept tokens (capability ``length_bias``)."""
        return Dependency(self.A + np.where(np.isfinite(self.A), bias, 0.0), B=self.B, S=self.S)

    def best_given(self, keep: object) -> float:
        """Best own score (Σ A + Σ S + bigram) of a tree over exactly root + the kept tokens.

        Parameters
        ----------
        keep : array_like
            bool (n,).

        Returns
        -------
        float
            The score, -inf if every such tree has a -inf entry.
        """
        keep = as_keep(keep, self.n)
        score, _ = _best(self.A, self.S, _premises_given(keep, self.B))
        return score

    def to_ilp(self, problem: pulp.LpProblem, keep_vars: list) -> pulp.LpAffineExpression:
        """Add the exact hypergraph formulation of the parser to ``problem``.

        One binary variable per rule instance of finite weight that lies on a derivation of the goal;
        flow conservation at every item, goal = 1, ``keep_vars[a-1] = Σ_j x[⊢ P(a, j)]``.

        Parameters
        ----------
        problem : pulp.LpProblem
            The shared problem; variable names get a fresh prefix ``dep{k}_``.
        keep_vars : list of pulp.LpVariable
            The n shared binary keep variables.

        Returns
        -------
        pulp.LpAffineExpression
            The own objective (Σ A + Σ S + bigram), without ``u``.
        """
        if len(keep_vars) != self.n:
            raise InputError(f"expected {self.n} keep variables, got {len(keep_vars)}")
        prefix = unused_prefix(problem, "dep")
        P = _premises(self.n, np.zeros(self.n + 1), self.B, drop=True)
        edges = hyperedges(self.A, self.S, P)
        x = [pulp.LpVariable(f"{prefix}e{k}", cat=pulp.LpBinary) for k in range(len(edges))]
        incoming: dict[Item, list] = {}
        outgoing: dict[Item, list] = {}
        attach: list[list] = [[] for _ in range(self.n + 1)]
        for (head, tails, _, word), var in zip(edges, x, strict=True):
            incoming.setdefault(head, []).append(var)
            for t in tails:
                outgoing.setdefault(t, []).append(var)
            if word >= 0:
                attach[word].append(var)
        goal = ("CR", 0, self.n)
        if goal not in incoming:
            never = pulp.LpVariable(f"{prefix}infeasible", lowBound=0, upBound=0)
            problem += never == 1
        for item, ins in incoming.items():
            if item == goal:
                problem += pulp.lpSum(ins) == 1
            else:
                problem += pulp.lpSum(ins) == pulp.lpSum(outgoing.get(item, []))
        for a in range(1, self.n + 1):
            problem += keep_vars[a - 1] == pulp.lpSum(attach[a])
        return pulp.lpSum(wt * var for (_, _, wt, _), var in zip(edges, x, strict=True) if wt != 0.0)
