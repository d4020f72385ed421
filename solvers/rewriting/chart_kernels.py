"""Numba kernels of the rewriting chart (:mod:`dualdecomp.solvers.rewriting.chart`).

Tables. Vertex v has a table ``(F_v, L_v, C_v)`` (flat, from ``toff[v]``): the best score of a
derivation of v whose yield is non-empty, starts with word ``first[v][fi]``, ends with ``last[v][li]``
and has count ``c`` (words, characters or nothing: every count is 0 at free length), plus a scalar
``empty[v]`` for the empty yield (count 0). Scores include the hyperedge scores and the LM bigrams
*inside* the yield (not the sentence boundaries).

A hyperedge is combined left to right over its target items with a *prefix* table ``(F_h, V, C_h)``
(first word: position in the head's start words; last word: vocabulary id) and a prefix-empty scalar.
Appending a non-empty tail ``T`` to a non-empty prefix ``P`` is the split max

    M[f, f2, c]             = max_l  P[f, l, c] + lm[l, f2]
    Q[f, l2, c + s(f2) + c2] = max_{f2, c, c2}  M[f, f2, c] + T[f2, l2, c2]

(``s(f2)``: the count of the space before ``f2``), O(F·V·F2·C + F·F2·L2·C²) per step instead of
O(F·V·F2·L2·C²). Counts beyond the cap ``C_h - 1`` are dropped: counts only grow, so this is exact.

Backtracking replays one hyperedge (:func:`replay`), keeping every prefix table, and walks back through
them (:func:`walk_back`) looking for a predecessor whose value, recomputed by the same floating-point
operations in the same order, equals the current one exactly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG = -np.inf


@njit(cache=True)
def _positions(ptr, idx, v, size):  # pragma: no cover - numba
    """Vocabulary id -> position in vertex v's CSR word list (-1 when absent)."""
    pos = np.full(size, -1, dtype=np.int64)
    for k in range(ptr[v], ptr[v + 1]):
        pos[idx[k]] = k - ptr[v]
    return pos


@njit(cache=True)
def _step_word(P, pe, active, w, fpos, wcost, scost, lm):  # pragma: no cover - numba
    """Append word ``w`` to the prefix (P, pe, active)."""
    Fh, V, C = P.shape
    Q = np.full((Fh, V, C), NEG)
    act = np.zeros(V, dtype=np.bool_)
    wc = wcost[w]
    sc = wc + scost[w]
    for lw in range(V):
        if not active[lw]:
            continue
        b = lm[lw, w]
        for fi in range(Fh):
            for c in range(C - sc):
                a = P[fi, lw, c]
                if a == NEG:
                    continue
                v = a + b
                if v > Q[fi, w, c + sc]:
                    Q[fi, w, c + sc] = v
                    act[w] = True
    fi = fpos[w]
    if pe > NEG and wc < C and fi >= 0:
        if pe > Q[fi, w, wc]:
            Q[fi, w, wc] = pe
            act[w] = True
    return Q, NEG, act


@njit(cache=True)
def _step_tail(P, pe, active, T, te, Ft, Lt, fpos, scost, lm):  # pragma: no cover - numba
    """Append a tail vertex (table T over first words Ft, last words Lt; empty score te) to the prefix."""
    Fh, V, C = P.shape
    nF, nL, Ct = T.shape
    Q = np.full((Fh, V, C), NEG)
    act = np.zeros(V, dtype=np.bool_)
    # non-empty prefix, empty tail
    if te > NEG:
        for lw in range(V):
            if not active[lw]:
                continue
            for fi in range(Fh):
                for c in range(C):
                    a = P[fi, lw, c]
                    if a == NEG:
                        continue
                    v = a + te
                    if v > Q[fi, lw, c]:
                        Q[fi, lw, c] = v
                        act[lw] = True
    # empty prefix, non-empty tail
    if pe > NEG:
        for f2i in range(nF):
            fi = fpos[Ft[f2i]]
            if fi < 0:
                continue
            for l2i in range(nL):
                l2 = Lt[l2i]
                for c2 in range(min(Ct, C)):
                    b = T[f2i, l2i, c2]
                    if b == NEG:
                        continue
                    v = pe + b
                    if v > Q[fi, l2, c2]:
                        Q[fi, l2, c2] = v
                        act[l2] = True
    # both non-empty: split max over lw, then over (f2, c, c2)
    nact = 0
    for lw in range(V):
        if active[lw]:
            nact += 1
    if nact > 0 and nF > 0:
        lst = np.empty(nact, dtype=np.int64)
        k = 0
        for lw in range(V):
            if active[lw]:
                lst[k] = lw
                k += 1
        M = np.full((Fh, nF, C), NEG)
        for f2i in range(nF):
            f2 = Ft[f2i]
            for k in range(nact):
                lw = lst[k]
                b = lm[lw, f2]
                for fi in range(Fh):
                    for c in range(C):
                        a = P[fi, lw, c]
                        if a == NEG:
                            continue
                        v = a + b
                        if v > M[fi, f2i, c]:
                            M[fi, f2i, c] = v
        for fi in range(Fh):
            for f2i in range(nF):
                s = scost[Ft[f2i]]
                for c in range(C):
                    m = M[fi, f2i, c]
                    if m == NEG:
                        continue
                    base = c + s
                    if base >= C:
                        break
                    top = min(Ct, C - base)
                    for l2i in range(nL):
                        l2 = Lt[l2i]
                        for c2 in range(top):
                            b = T[f2i, l2i, c2]
                            if b == NEG:
                                continue
                            v = m + b
                            if v > Q[fi, l2, base + c2]:
                                Q[fi, l2, base + c2] = v
                                act[l2] = True
    return Q, pe + te, act


@njit(cache=True)
def _run_hyperedge(e, keep_all, item_ptr, item_code, score, table, empty, toff, fptr, fidx, lptr, lidx,
                   cdim, fpos, V, C, Fh, wcost, scost, lm):  # pragma: no cover - numba
    """Combine hyperedge e's items; return the final prefix, or (keep_all) every prefix stacked."""
    K = item_ptr[e + 1] - item_ptr[e]
    P = np.full((Fh, V, C), NEG)
    pe = score[e]
    active = np.zeros(V, dtype=np.bool_)
    nstore = K + 1 if keep_all else 1
    Ps = np.full((nstore, Fh, V, C), NEG)
    pes = np.full(nstore, NEG)
    if keep_all:
        pes[0] = pe
    for k in range(K):
        code = item_code[item_ptr[e] + k]
        if code >= 0:
            P, pe, active = _step_word(P, pe, active, code, fpos, wcost, scost, lm)
        else:
            t = -code - 1
            nF = fptr[t + 1] - fptr[t]
            nL = lptr[t + 1] - lptr[t]
            T = table[toff[t]:toff[t + 1]].reshape((nF, nL, cdim[t]))
            P, pe, active = _step_tail(P, pe, active, T, empty[t], fidx[fptr[t]:fptr[t + 1]],
                                       lidx[lptr[t]:lptr[t + 1]], fpos, scost, lm)
        if keep_all:
            Ps[k + 1] = P
            pes[k + 1] = pe
    if not keep_all:
        Ps[0] = P
        pes[0] = pe
    return Ps, pes, active


@njit(cache=True)
def forward(nv, V, head, last_of_head, score, item_ptr, item_code, fptr, fidx, lptr, lidx, cdim, toff,
            wcost, scost, lm, max_states):  # pragma: no cover - numba
    """The inside pass: every vertex table, its back pointers, and whether the beam pruned.

    Returns
    -------
    table, back : flat float64 / int64 (``toff[nv]``)
    empty, back_empty : per vertex
    pruned : bool
    """
    table = np.full(toff[nv], NEG)
    back = np.full(toff[nv], -1, dtype=np.int64)
    empty = np.full(nv, NEG)
    back_empty = np.full(nv, -1, dtype=np.int64)
    pruned = False
    for e in range(head.shape[0]):
        h = head[e]
        Fh = fptr[h + 1] - fptr[h]
        nLh = lptr[h + 1] - lptr[h]
        C = cdim[h]
        fpos = _positions(fptr, fidx, h, V)
        lpos = _positions(lptr, lidx, h, V)
        Ps, pes, active = _run_hyperedge(e, False, item_ptr, item_code, score, table, empty, toff, fptr, fidx,
                                         lptr, lidx, cdim, fpos, V, C, Fh, wcost, scost, lm)
        P = Ps[0]
        if pes[0] > empty[h]:
            empty[h] = pes[0]
            back_empty[h] = e
        base = toff[h]
        for lw in range(V):
            if not active[lw]:
                continue
            li = lpos[lw]
            if li < 0:
                continue
            for fi in range(Fh):
                for c in range(C):
                    a = P[fi, lw, c]
                    if a == NEG:
                        continue
                    j = base + (fi * nLh + li) * C + c
                    if a > table[j]:
                        table[j] = a
                        back[j] = e
        if max_states > 0 and last_of_head[e]:
            if _prune(table, back, empty, back_empty, h, toff, max_states):
                pruned = True
    return table, back, empty, back_empty, pruned


@njit(cache=True)
def _prune(table, back, empty, back_empty, h, toff, max_states):  # pragma: no cover - numba
    """Keep the ``max_states`` best states of vertex h (the empty yield counts as one); True if it cut."""
    lo, hi = toff[h], toff[h + 1]
    count = 1 if empty[h] > NEG else 0
    for j in range(lo, hi):
        if table[j] > NEG:
            count += 1
    if count <= max_states:
        return False
    vals = np.empty(hi - lo + 1)
    vals[: hi - lo] = table[lo:hi]
    vals[hi - lo] = empty[h]
    order = np.argsort(-vals, kind="mergesort")
    for r in range(max_states, order.shape[0]):
        j = order[r]
        if j == hi - lo:
            empty[h] = NEG
            back_empty[h] = -1
        else:
            table[lo + j] = NEG
            back[lo + j] = -1
    return True


@njit(cache=True)
def replay(e, h, item_ptr, item_code, score, table, empty, toff, fptr, fidx, lptr, lidx, cdim, V, wcost,
           scost, lm):  # pragma: no cover - numba
    """Every prefix table of hyperedge e (head h): (K + 1, F_h, V, C_h) and the prefix-empty scores."""
    fpos = _positions(fptr, fidx, h, V)
    Ps, pes, _ = _run_hyperedge(e, True, item_ptr, item_code, score, table, empty, toff, fptr, fidx, lptr,
                                lidx, cdim, fpos, V, cdim[h], fptr[h + 1] - fptr[h], wcost, scost, lm)
    return Ps, pes


@njit(cache=True)
def walk_back(e, h, Ps, pes, is_empty, fi, lw, c, item_ptr, item_code, table, empty, toff, fptr, fidx, lptr,
              lidx, cdim, wcost, scost, lm):  # pragma: no cover - numba
    """The state of every item of hyperedge e given the head's final state.

    Parameters
    ----------
    is_empty, fi, lw, c
        The final prefix state: empty yield, or (first-word position, last word id, count).

    Returns
    -------
    numpy.ndarray of int64
        (K, 4): per item ``[kind, f2i, l2i, c2]``, kind 0 a word, 1 an empty tail, 2 a non-empty tail with
        state (f2i, l2i, c2) in the tail's table; ``kind = -1`` if no predecessor was found (a bug).
    """
    K = item_ptr[e + 1] - item_ptr[e]
    V = Ps.shape[2]
    fpos = _positions(fptr, fidx, h, V)
    out = np.full((K, 4), -1, dtype=np.int64)
    for k in range(K - 1, -1, -1):
        P = Ps[k]
        pe = pes[k]
        val = pes[k + 1] if is_empty else Ps[k + 1][fi, lw, c]
        code = item_code[item_ptr[e] + k]
        if code >= 0:
            if is_empty:
                return out
            w = code
            out[k, 0] = 0
            wc = wcost[w]
            sc = wc + scost[w]
            if pe > NEG and c == wc and fpos[w] == fi and pe == val:
                is_empty = True
                continue
            found = False
            c1 = c - sc
            if c1 >= 0:
                for l1 in range(V):
                    a = P[fi, l1, c1]
                    if a > NEG and a + lm[l1, w] == val:
                        lw = l1
                        c = c1
                        found = True
                        break
            if not found:
                out[k, 0] = -1
                return out
            continue
        t = -code - 1
        nF = fptr[t + 1] - fptr[t]
        nL = lptr[t + 1] - lptr[t]
        Ct = cdim[t]
        T = table[toff[t]:toff[t + 1]].reshape((nF, nL, Ct))
        te = empty[t]
        if is_empty:
            out[k, 0] = 1
            continue
        if te > NEG and P[fi, lw, c] > NEG and P[fi, lw, c] + te == val:
            out[k, 0] = 1
            continue
        l2i = -1
        for j in range(nL):
            if lidx[lptr[t] + j] == lw:
                l2i = j
        if l2i < 0:
            out[k, 0] = -1
            return out
        found = False
        if pe > NEG and c < Ct:
            for f2i in range(nF):
                if fpos[fidx[fptr[t] + f2i]] == fi:
                    b = T[f2i, l2i, c]
                    if b > NEG and pe + b == val:
                        out[k, 0] = 2
                        out[k, 1] = f2i
                        out[k, 2] = l2i
                        out[k, 3] = c
                        is_empty = True
                        found = True
                        break
        if found:
            continue
        for f2i in range(nF):
            f2 = fidx[fptr[t] + f2i]
            s = scost[f2]
            for c1 in range(c - s + 1):
                c2 = c - s - c1
                if c2 >= Ct:
                    continue
                b = T[f2i, l2i, c2]
                if b == NEG:
                    continue
                for l1 in range(V):
                    a = P[fi, l1, c1]
                    if a > NEG and (a + lm[l1, f2]) + b == val:
                        out[k, 0] = 2
                        out[k, 1] = f2i
                        out[k, 2] = l2i
                        out[k, 3] = c2
                        lw = l1
                        c = c1
                        found = True
                        break
                if found:
                    break
            if found:
                break
        if not found:
            out[k, 0] = -1
            return out
    return out


@njit(cache=True)
def count_bounds(nv, head, item_ptr, item_code, wcost, smax):  # pragma: no cover - numba
    """Per vertex, an upper bound on the count of its yield (words or characters, spaces included)."""
    hi = np.zeros(nv, dtype=np.int64)
    for e in range(head.shape[0]):
        total = 0
        for p in range(item_ptr[e], item_ptr[e + 1]):
            code = item_code[p]
            if code >= 0:
                total += wcost[code] + smax
            else:
                total += hi[-code - 1] + smax
        if total > hi[head[e]]:
            hi[head[e]] = total
    return hi
