"""Numba kernels of the rewriting chart (:mod:`dualdecomp.solvers.rewriting.chart`).

Tables. Vertex v has a table ``(F_v, L_v, C_v)`` (flat, from ``toff[v]``): the best score of a
derivation of v whose yield is non-empty, starts with word ``first[v][fi]``, ends with ``last[v][li]``
and has count ``c`` (words, characters or nothing: every count is 0 at free length), plus a scalar
``empty[v]`` for the empty yield (count 0). Scores include the hyperedge scores and the LM bigrams
*inside* the yield (not the sentence boundaries).

A hyperedge is combined left to right over its target items with a *prefix* table ``(F_e, L_k, C_h)``
and a prefix-empty scalar: ``F_e`` are the words the hyperedge's yield can start with, ``L_k`` the words
the prefix of its first k items can end with (both computed from the vertices' word lists, so the prefix
stays as small as the hyperedge allows), and counts beyond the largest finite one are not visited.
Appending a non-empty tail ``T`` to a non-empty prefix ``P`` is the split max

    M[f, f2, c + s(l, f2)] = max_l  P[f, l, c] + lm[l, f2]
    Q[f, l2, c' + c2]      = max_{f2, c', c2}  M[f, f2, c'] + T[f2, l2, c2]

(``s(l, f2) = scost[f2] · rcost[l]``: the count of the space between the prefix's last word and the
tail's first word, 0 when ``f2`` attaches to the left or ``l`` to the right; 0 for word counts),
O(F·V·F2·C + F·F2·L2·C²) per step instead of O(F·V·F2·L2·C²). Counts beyond the cap ``C_h - 1`` are
dropped: counts only grow, so this is exact.

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
def _compact(mark):  # pragma: no cover - numba
    """The marked vocabulary ids (ascending) and the map id -> position (-1 when unmarked)."""
    n = 0
    for w in range(mark.shape[0]):
        if mark[w]:
            n += 1
    ids = np.empty(n, dtype=np.int64)
    pos = np.full(mark.shape[0], -1, dtype=np.int64)
    k = 0
    for w in range(mark.shape[0]):
        if mark[w]:
            ids[k] = w
            pos[w] = k
            k += 1
    return ids, pos


@njit(cache=True)
def _hyperedge_firsts(e, item_ptr, item_code, fptr, fidx, empty, V):  # pragma: no cover - numba
    """The words hyperedge e's yield can start with, and the map id -> position."""
    mark = np.zeros(V, dtype=np.bool_)
    for p in range(item_ptr[e], item_ptr[e + 1]):
        code = item_code[p]
        if code >= 0:
            mark[code] = True
            break
        t = -code - 1
        for k in range(fptr[t], fptr[t + 1]):
            mark[fidx[k]] = True
        if empty[t] == NEG:
            break
    return _compact(mark)


@njit(cache=True)
def _next_lasts(plast, code, te_finite, nonempty_tail, lidx, lptr, V):  # pragma: no cover - numba
    """The words the prefix can end with after item ``code``."""
    mark = np.zeros(V, dtype=np.bool_)
    if code >= 0:
        mark[code] = True
        return _compact(mark)
    t = -code - 1
    if te_finite:
        for k in range(plast.shape[0]):
            mark[plast[k]] = True
    if nonempty_tail:
        for k in range(lptr[t], lptr[t + 1]):
            mark[lidx[k]] = True
    return _compact(mark)


@njit(cache=True)
def _step_word(P, pe, plast, phi, w, fpos, wcost, scost, rcost, lm):  # pragma: no cover - numba
    """Append word ``w`` to the prefix (P over plast, pe, largest finite count phi)."""
    nPF, nPL, C = P.shape
    Q = np.full((nPF, 1, C), NEG)
    qlast = np.full(1, w, dtype=np.int64)
    qhi = -1
    wc = wcost[w]
    for li in range(nPL):
        b = lm[plast[li], w]
        if b == NEG:
            continue
        sc = wc + scost[w] * rcost[plast[li]]
        top = min(phi, C - 1 - sc) + 1
        for fi in range(nPF):
            for c in range(top):
                a = P[fi, li, c]
                if a == NEG:
                    continue
                v = a + b
                if v > Q[fi, 0, c + sc]:
                    Q[fi, 0, c + sc] = v
                    if c + sc > qhi:
                        qhi = c + sc
    fi = fpos[w]
    if pe > NEG and wc < C and fi >= 0:
        if pe > Q[fi, 0, wc]:
            Q[fi, 0, wc] = pe
            if wc > qhi:
                qhi = wc
    return Q, qlast, qhi, NEG


@njit(cache=True)
def _step_tail(P, pe, plast, phi, T, te, Ft, Lt, fpos, scost, rcost, lm, qlast,
               qpos):  # pragma: no cover - numba
    """Append a tail vertex (table T over first words Ft, last words Lt; empty score te) to the prefix;
    the new prefix ends with the words ``qlast`` (``qpos``: id -> position)."""
    nPF, nPL, C = P.shape
    nF, nL, Ct = T.shape
    Q = np.full((nPF, qlast.shape[0], C), NEG)
    qhi = -1
    # non-empty prefix, empty tail
    if te > NEG:
        for li in range(nPL):
            qi = qpos[plast[li]]
            for fi in range(nPF):
                for c in range(phi + 1):
                    a = P[fi, li, c]
                    if a == NEG:
                        continue
                    v = a + te
                    if v > Q[fi, qi, c]:
                        Q[fi, qi, c] = v
                        if c > qhi:
                            qhi = c
    # empty prefix, non-empty tail
    if pe > NEG:
        for f2i in range(nF):
            fi = fpos[Ft[f2i]]
            if fi < 0:
                continue
            for l2i in range(nL):
                qi = qpos[Lt[l2i]]
                for c2 in range(min(Ct, C)):
                    b = T[f2i, l2i, c2]
                    if b == NEG:
                        continue
                    v = pe + b
                    if v > Q[fi, qi, c2]:
                        Q[fi, qi, c2] = v
                        if c2 > qhi:
                            qhi = c2
    # both non-empty: split max over the prefix's last word (count shifted by the space before the
    # tail), then over (f2, c', c2)
    if nPL > 0 and nF > 0 and phi >= 0:
        M = np.full((nPF, nF, phi + 2), NEG)
        for f2i in range(nF):
            f2 = Ft[f2i]
            for li in range(nPL):
                b = lm[plast[li], f2]
                if b == NEG:
                    continue
                s = scost[f2] * rcost[plast[li]]
                for fi in range(nPF):
                    for c in range(phi + 1):
                        a = P[fi, li, c]
                        if a == NEG:
                            continue
                        v = a + b
                        if v > M[fi, f2i, c + s]:
                            M[fi, f2i, c + s] = v
        for fi in range(nPF):
            for f2i in range(nF):
                for base in range(phi + 2):
                    m = M[fi, f2i, base]
                    if m == NEG:
                        continue
                    if base >= C:
                        break
                    top = min(Ct, C - base)
                    for l2i in range(nL):
                        qi = qpos[Lt[l2i]]
                        for c2 in range(top):
                            b = T[f2i, l2i, c2]
                            if b == NEG:
                                continue
                            v = m + b
                            if v > Q[fi, qi, base + c2]:
                                Q[fi, qi, base + c2] = v
                                if base + c2 > qhi:
                                    qhi = base + c2
    return Q, qlast, qhi, pe + te


@njit(cache=True)
def _tail_view(t, table, toff, fptr, lptr, cdim):  # pragma: no cover - numba
    nF = fptr[t + 1] - fptr[t]
    nL = lptr[t + 1] - lptr[t]
    return table[toff[t]:toff[t + 1]].reshape((nF, nL, cdim[t]))


@njit(cache=True)
def _apply(code, P, plast, phi, pe, table, empty, toff, fptr, fidx, lptr, lidx, cdim, fpos, V, wcost, scost,
           rcost, lm):  # pragma: no cover - numba
    """Append item ``code`` to the prefix: (Q, qlast, qhi, qe)."""
    if code >= 0:
        return _step_word(P, pe, plast, phi, code, fpos, wcost, scost, rcost, lm)
    t = -code - 1
    T = _tail_view(t, table, toff, fptr, lptr, cdim)
    qlast, qpos = _next_lasts(plast, code, empty[t] > NEG, T.shape[0] > 0, lidx, lptr, V)
    return _step_tail(P, pe, plast, phi, T, empty[t], fidx[fptr[t]:fptr[t + 1]], lidx[lptr[t]:lptr[t + 1]],
                      fpos, scost, rcost, lm, qlast, qpos)


@njit(cache=True)
def _final_prefix(e, C, item_ptr, item_code, score, table, empty, toff, fptr, fidx, lptr, lidx, cdim, V,
                  wcost, scost, rcost, lm):  # pragma: no cover - numba
    """Combine hyperedge e's items: the final prefix (P, its last words, largest count, empty score) and
    its first words."""
    hf, fpos = _hyperedge_firsts(e, item_ptr, item_code, fptr, fidx, empty, V)
    P = np.full((hf.shape[0], 0, C), NEG)
    plast = np.empty(0, dtype=np.int64)
    phi = -1
    pe = score[e]
    for p in range(item_ptr[e], item_ptr[e + 1]):
        P, plast, phi, pe = _apply(item_code[p], P, plast, phi, pe, table, empty, toff, fptr, fidx, lptr,
                                   lidx, cdim, fpos, V, wcost, scost, rcost, lm)
    return P, plast, phi, pe, hf


@njit(cache=True)
def forward(nv, V, head, last_of_head, score, item_ptr, item_code, fptr, fidx, lptr, lidx, cdim, toff,
            wcost, scost, rcost, lm, max_states):  # pragma: no cover - numba
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
        nLh = lptr[h + 1] - lptr[h]
        C = cdim[h]
        P, plast, phi, pe, hf = _final_prefix(e, C, item_ptr, item_code, score, table, empty, toff, fptr,
                                              fidx, lptr, lidx, cdim, V, wcost, scost, rcost, lm)
        if pe > empty[h]:
            empty[h] = pe
            back_empty[h] = e
        fpos_h = _positions(fptr, fidx, h, V)
        lpos_h = _positions(lptr, lidx, h, V)
        base = toff[h]
        for li in range(plast.shape[0]):
            lh = lpos_h[plast[li]]
            if lh < 0:
                continue
            for fi in range(hf.shape[0]):
                fh = fpos_h[hf[fi]]
                if fh < 0:
                    continue
                for c in range(phi + 1):
                    a = P[fi, li, c]
                    if a == NEG:
                        continue
                    j = base + (fh * nLh + lh) * C + c
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
           scost, rcost, lm):  # pragma: no cover - numba
    """Every prefix of hyperedge e (head h), for :func:`walk_back`.

    Returns
    -------
    Ps : (K + 1, F_e, Lmax, C_h) prefix tables (last-word axis padded)
    lasts : (K + 1, Lmax) their last words (-1 padding); nls : (K + 1,) how many
    pes : (K + 1,) prefix-empty scores
    hf, fpos : the hyperedge's first words and the map id -> position
    """
    C = cdim[h]
    K = item_ptr[e + 1] - item_ptr[e]
    hf, fpos = _hyperedge_firsts(e, item_ptr, item_code, fptr, fidx, empty, V)
    # the last-word lists depend only on the tables' shapes: size the padding first
    plast = np.empty(0, dtype=np.int64)
    lmax = 1
    for p in range(item_ptr[e], item_ptr[e + 1]):
        code = item_code[p]
        nonempty = code >= 0 or fptr[-code] > fptr[-code - 1]
        te_finite = code < 0 and empty[-code - 1] > NEG
        plast, _ = _next_lasts(plast, code, te_finite, nonempty, lidx, lptr, V)
        lmax = max(lmax, plast.shape[0])
    Ps = np.full((K + 1, hf.shape[0], lmax, C), NEG)
    lasts = np.full((K + 1, lmax), -1, dtype=np.int64)
    nls = np.zeros(K + 1, dtype=np.int64)
    pes = np.full(K + 1, NEG)
    P = np.full((hf.shape[0], 0, C), NEG)
    plast = np.empty(0, dtype=np.int64)
    phi = -1
    pe = score[e]
    pes[0] = pe
    for k in range(K):
        P, plast, phi, pe = _apply(item_code[item_ptr[e] + k], P, plast, phi, pe, table, empty, toff, fptr,
                                   fidx, lptr, lidx, cdim, fpos, V, wcost, scost, rcost, lm)
        n = plast.shape[0]
        Ps[k + 1, :, :n, :] = P
        lasts[k + 1, :n] = plast
        nls[k + 1] = n
        pes[k + 1] = pe
    return Ps, lasts, nls, pes, hf, fpos


@njit(cache=True)
def _find(ids, n, w):  # pragma: no cover - numba
    for k in range(n):
        if ids[k] == w:
            return k
    return -1


@njit(cache=True)
def walk_back(e, Ps, lasts, nls, pes, fpos, is_empty, fi, lw, c, item_ptr, item_code, table, empty, toff,
              fptr, fidx, lptr, lidx, cdim, wcost, scost, rcost, lm):  # pragma: no cover - numba
    """The state of every item of hyperedge e given its final prefix state.

    Parameters
    ----------
    Ps, lasts, nls, pes, fpos
        From :func:`replay`.
    is_empty, fi, lw, c
        The final prefix state: empty yield, or (position among the hyperedge's first words, last word id,
        count).

    Returns
    -------
    numpy.ndarray of int64
        (K, 4): per item ``[kind, f2i, l2i, c2]``, kind 0 a word, 1 an empty tail, 2 a non-empty tail with
        state (f2i, l2i, c2) in the tail's table; ``kind = -1`` if no predecessor was found (a bug).
    """
    K = item_ptr[e + 1] - item_ptr[e]
    out = np.full((K, 4), -1, dtype=np.int64)
    for k in range(K - 1, -1, -1):
        P = Ps[k]
        pe = pes[k]
        plast = lasts[k]
        npl = nls[k]
        if is_empty:
            val = pes[k + 1]
        else:
            lk = _find(lasts[k + 1], nls[k + 1], lw)
            if lk < 0:
                return out
            val = Ps[k + 1][fi, lk, c]
        code = item_code[item_ptr[e] + k]
        if code >= 0:
            if is_empty:
                return out
            w = code
            out[k, 0] = 0
            wc = wcost[w]
            if pe > NEG and c == wc and fpos[w] == fi and pe == val:
                is_empty = True
                continue
            found = False
            for l1 in range(npl):
                c1 = c - wc - scost[w] * rcost[plast[l1]]
                if c1 < 0:
                    continue
                a = P[fi, l1, c1]
                if a > NEG and a + lm[plast[l1], w] == val:
                    lw = plast[l1]
                    c = c1
                    found = True
                    break
            if not found:
                out[k, 0] = -1
                return out
            continue
        t = -code - 1
        T = _tail_view(t, table, toff, fptr, lptr, cdim)
        nF, nL, Ct = T.shape
        te = empty[t]
        if is_empty:
            out[k, 0] = 1
            continue
        if te > NEG:
            li = _find(plast, npl, lw)
            if li >= 0 and P[fi, li, c] > NEG and P[fi, li, c] + te == val:
                out[k, 0] = 1
                continue
        l2i = _find(lidx[lptr[t]:lptr[t + 1]], nL, lw)
        if l2i < 0:
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
            for l1 in range(npl):
                s = scost[f2] * rcost[plast[l1]]
                for c1 in range(c - s + 1):
                    c2 = c - s - c1
                    if c2 >= Ct:
                        continue
                    b = T[f2i, l2i, c2]
                    if b == NEG:
                        continue
                    a = P[fi, l1, c1]
                    if a > NEG and (a + lm[plast[l1], f2]) + b == val:
                        out[k, 0] = 2
                        out[k, 1] = f2i
                        out[k, 2] = l2i
                        out[k, 3] = c2
                        lw = plast[l1]
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
