"""Numba chart kernels of the skip(-bigram) dependency parsers (see ``solvers/dependency.py``).

Every kernel runs one deduction system of ``dualdecomp.solvers.dependency.solver`` in one of two semirings,
chosen by ``count``:

* ``count=False``: (max, +) — the chart holds the best score of every item, with back-pointers;
* ``count=True``: (+, x) — every weight must be 0.0 or 1.0 and the chart holds the number of derivations
  of every item whose rules all have weight 1 (the unambiguity check of the tests).

Each deduction rule is written once: the semiring enters only through :func:`_identities`, :func:`_mul`
and :func:`_plus` (which also keeps the back-pointer in (max, +)), inlined by numba.

The kernels know nothing about tokens, bigrams or multipliers: everything that depends on which words
are kept is folded into the premise weights ``P[a, j]`` (word ``a`` kept and ``a+1..j`` dropped).

Chart layout: every item is an ``(N, N)`` array indexed ``[i, j]`` by its span ``i <= j`` (``N = n+1``
positions ``0..n``). Back-pointer conventions are documented at each kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _identities(count: bool) -> tuple[float, float]:
    """The semiring's zero (no derivation) and one (the empty derivation)."""
    if count:
        return 0.0, 1.0
    return -np.inf, 0.0


@njit(cache=True, inline="always")
def _mul(a: float, b: float, count: bool) -> float:
    """Semiring product: ``a * b`` when counting, ``a + b`` otherwise."""
    if count:
        return a * b
    return a + b


@njit(cache=True, inline="always")
def _plus(acc: float, arg: int, v: float, at: int, count: bool) -> tuple[float, int]:
    """Semiring sum of ``acc`` and a candidate ``v`` derived at ``at``: ``acc + v`` when counting;
    otherwise the larger of the two, with ``at`` as the new back-pointer when ``v`` is strictly larger
    (so ties keep the first candidate, as every chart's back-pointers assume)."""
    if count:
        return acc + v, arg
    if v > acc:
        return v, at
    return acc, arg


@njit(cache=True)
def first_order_chart(A: np.ndarray, P: np.ndarray, count: bool) -> tuple:
    """Fill the chart of the first-order skip parser.

    Parameters
    ----------
    A : numpy.ndarray
        (N, N) arc weights, ``A[h, m]`` for the arc h -> m.
    P : numpy.ndarray
        (N, N) premise weights: ``P[a, j]`` is the weight of the right premise of word ``a`` with the
        dropped words ``a+1..j`` (-inf / 0 when impossible).
    count : bool
        Counting semiring instead of (max, +).

    Returns
    -------
    tuple
        ``(CR, CL, IR, IL, bI, bCR, bCL)``: the four charts and the back-pointers. ``bI[i, j]`` is the
        split ``r`` of both ``IR[i, j]`` and ``IL[i, j]``; ``bCR[i, j]`` is the outermost right modifier
        ``m`` or -1 for the premise; ``bCL[i, j]`` is the outermost left modifier ``m``.
    """
    N = A.shape[0]
    zero, one = _identities(count)
    CR = np.full((N, N), zero)
    CL = np.full((N, N), zero)
    IR = np.full((N, N), zero)
    IL = np.full((N, N), zero)
    bI = np.full((N, N), -1, np.int64)
    bCR = np.full((N, N), -1, np.int64)
    bCL = np.full((N, N), -1, np.int64)
    for a in range(N):
        CR[a, a] = P[a, a]
        if a >= 1:
            CL[a, a] = one
    for w in range(1, N):
        for i in range(N - w):
            j = i + w
            # Attach: CR(i, r) CL(r+1, j) -> IR(i, j) [i -> j] and IL(i, j) [j -> i].
            acc = zero
            arg = -1
            for r in range(i, j):
                v = _mul(CR[i, r], CL[r + 1, j], count)
                acc, arg = _plus(acc, arg, v, r, count)
            bI[i, j] = arg
            IR[i, j] = _mul(acc, A[i, j], count)
            if i >= 1:
                IL[i, j] = _mul(acc, A[j, i], count)
            # Complete right: P(i, j) | IR(i, m) CR(m, j) -> CR(i, j).
            acc = P[i, j]
            arg = -1
            for m in range(i + 1, j + 1):
                v = _mul(IR[i, m], CR[m, j], count)
                acc, arg = _plus(acc, arg, v, m, count)
            CR[i, j] = acc
            bCR[i, j] = arg
            # Complete left: CL(i, m) IL(m, j) -> CL(i, j).
            if i >= 1:
                acc = zero
                arg = -1
                for m in range(i, j):
                    v = _mul(CL[i, m], IL[m, j], count)
                    acc, arg = _plus(acc, arg, v, m, count)
                CL[i, j] = acc
                bCL[i, j] = arg
    return CR, CL, IR, IL, bI, bCR, bCL


@njit(cache=True)
def first_order_backtrack(bI: np.ndarray, bCR: np.ndarray, bCL: np.ndarray) -> np.ndarray:
    """Follow the back-pointers of :func:`first_order_chart` from the goal ``CR(0, n)``.

    Returns
    -------
    numpy.ndarray
        int (N,): ``heads[k]`` is the head of position ``k`` (``heads[0] = -1`` for the root and -1 for
        every dropped word).
    """
    N = bI.shape[0]
    heads = np.full(N, -1, np.int64)
    # Item codes: 0 = CR, 1 = CL, 2 = IR, 3 = IL.
    st_t = np.empty(4 * N + 4, np.int64)
    st_i = np.empty(4 * N + 4, np.int64)
    st_j = np.empty(4 * N + 4, np.int64)
    top = 0
    st_t[0] = 0
    st_i[0] = 0
    st_j[0] = N - 1
    top = 1
    while top > 0:
        top -= 1
        t = st_t[top]
        i = st_i[top]
        j = st_j[top]
        if t == 0:
            m = bCR[i, j]
            if m >= 0:
                st_t[top], st_i[top], st_j[top] = 2, i, m
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 0, m, j
                top += 2
        elif t == 1:
            if i < j:
                m = bCL[i, j]
                st_t[top], st_i[top], st_j[top] = 1, i, m
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 3, m, j
                top += 2
        else:
            if t == 2:
                heads[j] = i
            else:
                heads[i] = j
            r = bI[i, j]
            st_t[top], st_i[top], st_j[top] = 0, i, r
            st_t[top + 1], st_i[top + 1], st_j[top + 1] = 1, r + 1, j
            top += 2
    return heads


@njit(cache=True, inline="always")
def _sibling(
    table: np.ndarray, hs: np.ndarray, mdv: np.ndarray, scale: float, h: int, s: int, count: bool
) -> float:
    """``S[h, s, m]`` of the factored sibling scores: the semiring product of ``table[hs[k, h, s] +
    mdv[k]]`` over the templates k, ``mdv[k] = md[k, h, m]`` (in (max, +) the sum times ``scale``; when
    counting the product of the 0/1 entries)."""
    v = 1.0 if count else 0.0
    for k in range(hs.shape[0]):
        v = _mul(v, table[hs[k, h, s] + mdv[k]], count)
    if count:
        return v
    return scale * v


@njit(cache=True)
def second_order_chart(
    A: np.ndarray, table: np.ndarray, hs: np.ndarray, md: np.ndarray, scale: float, P: np.ndarray, count: bool
) -> tuple:
    """Fill the chart of the second-order (sibling) skip parser.

    The sibling weights are given in the factored form of
    :class:`dualdecomp.solvers.dependency.siblings.SiblingScores` and computed on the fly,
    ``S[h, s, m] = scale·Σ_k table[hs[k, h, s] + md[k, h, m]]``, so the chart needs O(K·N² + |table|) memory
    instead of an (N, N, N) tensor.

    Parameters
    ----------
    A : numpy.ndarray
        (N, N) arc weights.
    table, hs, md, scale
        The factored sibling weights ``S[h, s, m]`` (``s = h`` for the closest modifier): float64 (T,),
        int (K, N, N), int (K, N, N) and a float factor (ignored when counting).
    P : numpy.ndarray
        (N, N) premise weights, as in :func:`first_order_chart`.
    count : bool
        Counting semiring instead of (max, +).

    Returns
    -------
    tuple
        ``(CR, CL, IR, IL, SB, bCR, bCL, bIR, bIL, bSB)``. ``bIR[i, j]`` is ``r`` (< N) for the closest
        modifier built from ``P(i, r) CL(r+1, j)``, or ``N + s`` when built from ``IR(i, s) SB(s, j)``;
        ``bIL[i, j]`` is -1 for the closest modifier (``CR(i, j-1) CL(j, j)``) or the sibling ``s`` of
        ``SB(i, s) IL(s, j)``; ``bSB[i, j]`` is the split ``r``; ``bCR``/``bCL`` as in first order.
    """
    N = A.shape[0]
    zero, one = _identities(count)
    CR = np.full((N, N), zero)
    CL = np.full((N, N), zero)
    IR = np.full((N, N), zero)
    IL = np.full((N, N), zero)
    SB = np.full((N, N), zero)
    bCR = np.full((N, N), -1, np.int64)
    bCL = np.full((N, N), -1, np.int64)
    bIR = np.full((N, N), -1, np.int64)
    bIL = np.full((N, N), -1, np.int64)
    bSB = np.full((N, N), -1, np.int64)
    K = hs.shape[0]
    mdv = np.empty(K, np.int64)
    for a in range(N):
        CR[a, a] = P[a, a]
        if a >= 1:
            CL[a, a] = one
    for w in range(1, N):
        for i in range(N - w):
            j = i + w
            # Sibling box: CR(i, r) CL(r+1, j) -> SB(i, j) (i, j adjacent modifiers of one head).
            if i >= 1:
                acc = zero
                arg = -1
                for r in range(i, j):
                    v = _mul(CR[i, r], CL[r + 1, j], count)
                    acc, arg = _plus(acc, arg, v, r, count)
                SB[i, j] = acc
                bSB[i, j] = arg
            # Right attachment i -> j: closest modifier P(i, r) CL(r+1, j), weight S[i, i, j] ...
            acc = zero
            arg = -1
            for r in range(i, j):
                v = _mul(P[i, r], CL[r + 1, j], count)
                acc, arg = _plus(acc, arg, v, r, count)
            for k in range(K):
                mdv[k] = md[k, i, j]
            acc = _mul(acc, _sibling(table, hs, mdv, scale, i, i, count), count)
            # ... or next modifier after s: IR(i, s) SB(s, j), weight S[i, s, j].
            for s in range(i + 1, j):
                sib = _sibling(table, hs, mdv, scale, i, s, count)
                v = _mul(_mul(IR[i, s], SB[s, j], count), sib, count)
                acc, arg = _plus(acc, arg, v, N + s, count)
            IR[i, j] = _mul(acc, A[i, j], count)
            bIR[i, j] = arg
            # Left attachment j -> i: closest modifier CR(i, j-1) CL(j, j), weight S[j, j, i] ...
            if i >= 1:
                for k in range(K):
                    mdv[k] = md[k, j, i]
                sib = _sibling(table, hs, mdv, scale, j, j, count)
                acc = _mul(_mul(CR[i, j - 1], CL[j, j], count), sib, count)
                arg = -1
                # ... or next modifier after s: SB(i, s) IL(s, j), weight S[j, s, i].
                for s in range(i + 1, j):
                    sib = _sibling(table, hs, mdv, scale, j, s, count)
                    v = _mul(_mul(SB[i, s], IL[s, j], count), sib, count)
                    acc, arg = _plus(acc, arg, v, s, count)
                IL[i, j] = _mul(acc, A[j, i], count)
                bIL[i, j] = arg
            # Complete right: P(i, j) | IR(i, m) CR(m, j) -> CR(i, j).
            acc = P[i, j]
            arg = -1
            for m in range(i + 1, j + 1):
                v = _mul(IR[i, m], CR[m, j], count)
                acc, arg = _plus(acc, arg, v, m, count)
            CR[i, j] = acc
            bCR[i, j] = arg
            # Complete left: CL(i, m) IL(m, j) -> CL(i, j).
            if i >= 1:
                acc = zero
                arg = -1
                for m in range(i, j):
                    v = _mul(CL[i, m], IL[m, j], count)
                    acc, arg = _plus(acc, arg, v, m, count)
                CL[i, j] = acc
                bCL[i, j] = arg
    return CR, CL, IR, IL, SB, bCR, bCL, bIR, bIL, bSB


@njit(cache=True)
def second_order_backtrack(
    bCR: np.ndarray, bCL: np.ndarray, bIR: np.ndarray, bIL: np.ndarray, bSB: np.ndarray
) -> np.ndarray:
    """Follow the back-pointers of :func:`second_order_chart` from the goal ``CR(0, n)``.

    Returns
    -------
    numpy.ndarray
        int (N,): head of every position, -1 for the root and for dropped words.
    """
    N = bCR.shape[0]
    heads = np.full(N, -1, np.int64)
    # Item codes: 0 = CR, 1 = CL, 2 = IR, 3 = IL, 4 = SB (premises P and CL(a, a) need no expansion).
    st_t = np.empty(4 * N + 4, np.int64)
    st_i = np.empty(4 * N + 4, np.int64)
    st_j = np.empty(4 * N + 4, np.int64)
    st_t[0] = 0
    st_i[0] = 0
    st_j[0] = N - 1
    top = 1
    while top > 0:
        top -= 1
        t = st_t[top]
        i = st_i[top]
        j = st_j[top]
        if t == 0:
            m = bCR[i, j]
            if m >= 0:
                st_t[top], st_i[top], st_j[top] = 2, i, m
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 0, m, j
                top += 2
        elif t == 1:
            if i < j:
                m = bCL[i, j]
                st_t[top], st_i[top], st_j[top] = 1, i, m
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 3, m, j
                top += 2
        elif t == 2:
            heads[j] = i
            b = bIR[i, j]
            if b < N:
                st_t[top], st_i[top], st_j[top] = 1, b + 1, j
                top += 1
            else:
                s = b - N
                st_t[top], st_i[top], st_j[top] = 2, i, s
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 4, s, j
                top += 2
        elif t == 3:
            heads[i] = j
            s = bIL[i, j]
            if s < 0:
                st_t[top], st_i[top], st_j[top] = 0, i, j - 1
                top += 1
            else:
                st_t[top], st_i[top], st_j[top] = 4, i, s
                st_t[top + 1], st_i[top + 1], st_j[top + 1] = 3, s, j
                top += 2
        else:
            r = bSB[i, j]
            st_t[top], st_i[top], st_j[top] = 0, i, r
            st_t[top + 1], st_i[top + 1], st_j[top + 1] = 1, r + 1, j
            top += 2
    return heads
