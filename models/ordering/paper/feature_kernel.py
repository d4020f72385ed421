"""The attachment features of :mod:`~dualdecomp.models.ordering.paper.features`, compiled (numba).

Guided learning and best-first search score every way of joining the popped edge with every chart
edge, so computing the hashed features of an attachment is their inner loop. Here it runs in one
numba call on a *packed* edge (an int64 array, :func:`pack_leaf` / :func:`pack_join`) and gives
exactly what the Python definition gives: the same feature tuples in the same order, each hashed as
CPython 3.8+ hashes a tuple of non-negative ints (the xxHash-based ``tuplehash`` of
``Objects/tupleobject.c``, each int hashed to itself modulo the Mersenne prime 2**61 - 1), so the
shipped weights stay valid; and the local score is summed in numpy's pairwise order
(``numpy/core/src/umath/loops_utils.h.src``), so scores and training are bit-for-bit those of the
Python features. Tests compare both with ``hash`` and ``numpy.sum`` on random edges.

Packed edge layout (int64): ``[n, head_pos, head, head_tag, n_left, n_right, left_word, left_tag,
left_tag2, right_word, right_tag, right_tag2, words..., tags...]`` — the last and second-to-last
left / right dependents (-1: none), then the n word indices and n tag ids in surface order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

HEADER = 12
"""Length of the fixed part of a packed edge."""

MERSENNE61 = (1 << 61) - 1
"""CPython hashes a non-negative int to itself modulo this prime."""

_P1 = np.uint64(11400714785074694791)
_P2 = np.uint64(14029467366897019727)
_P5 = np.uint64(2870177450012600261)
_LEN_SALT = np.uint64(2870177450012600261 ^ 3527539)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_MINUS_ONE_HASH = np.uint64(1546275796)
_R31 = np.uint64(31)
_R33 = np.uint64(33)
_NONE = np.uint64(0)
_START = np.uint64(1)


def lanes(atoms) -> np.ndarray:
    """CPython's hash of each (non-negative) atom, as uint64: the values a tuple hash mixes in."""
    return np.array([a % MERSENNE61 for a in atoms], dtype=np.uint64)


def concatenated(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The arrays end to end and their boundaries (``offsets[j]:offsets[j + 1]`` is array j), the form
    in which the compiled loops take a list of edges' arrays."""
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    return np.concatenate(arrays), offsets


def pack_leaf(word: int, tag: int) -> np.ndarray:
    """The packed form of a leaf edge."""
    return np.array([1, 0, word, tag, 0, 0, -1, -1, -1, -1, -1, -1, word, tag], dtype=np.int64)


@njit(cache=True)
def pack_join(h, d, right):  # pragma: no cover - compiled
    """The packed edge of attaching packed edge ``d``'s head to packed edge ``h``'s head."""
    nh, nd = h[0], d[0]
    n = nh + nd
    out = np.empty(HEADER + 2 * n, dtype=np.int64)
    out[:HEADER] = h[:HEADER]
    out[0] = n
    first, second = (h, d) if right else (d, h)
    n1, n2 = first[0], second[0]
    out[HEADER:HEADER + n1] = first[HEADER:HEADER + n1]
    out[HEADER + n1:HEADER + n] = second[HEADER:HEADER + n2]
    out[HEADER + n:HEADER + n + n1] = first[HEADER + n1:HEADER + 2 * n1]
    out[HEADER + n + n1:] = second[HEADER + n2:HEADER + 2 * n2]
    if right:
        out[5] = h[5] + 1
        out[11] = h[10]
        out[9] = d[2]
        out[10] = d[3]
    else:
        out[1] = h[1] + nd
        out[4] = h[4] + 1
        out[8] = h[7]
        out[6] = d[2]
        out[7] = d[3]
    return out


@njit(inline="always")
def _mix(acc, lane):  # pragma: no cover - compiled
    acc += lane * _P2
    acc = (acc << _R31) | (acc >> _R33)
    return acc * _P1


@njit(inline="always")
def _finish(acc, length):  # pragma: no cover - compiled
    acc += np.uint64(length) ^ _LEN_SALT
    if acc == _ALL_ONES:
        return _MINUS_ONE_HASH
    return acc


@njit(inline="always")
def _h2(a, b):  # pragma: no cover - compiled
    return _finish(_mix(_mix(_P5, np.uint64(a)), b), 2)


@njit(inline="always")
def _h3(a, b, c):  # pragma: no cover - compiled
    return _finish(_mix(_mix(_mix(_P5, np.uint64(a)), b), c), 3)


@njit(inline="always")
def _h4(a, b, c, d):  # pragma: no cover - compiled
    return _finish(_mix(_mix(_mix(_mix(_P5, np.uint64(a)), b), c), d), 4)


@njit(inline="always")
def _h5(a, b, c, d, e):  # pragma: no cover - compiled
    return _finish(_mix(_mix(_mix(_mix(_mix(_P5, np.uint64(a)), b), c), d), e), 5)


@njit(inline="always")
def _h6(a, b, c, d, e, f):  # pragma: no cover - compiled
    return _finish(_mix(_mix(_mix(_mix(_mix(_mix(_P5, np.uint64(a)), b), c), d), e), f), 6)


@njit(inline="always")
def _lane(table, index):  # pragma: no cover - compiled
    """The lane of a word / tag index, or of the missing atom for -1."""
    if index < 0:
        return _NONE
    return table[index]


@njit(inline="always")
def _norm(value):  # pragma: no cover - compiled
    """NORM of the paper (``features.norm``) as a lane."""
    if value <= 5:
        return np.uint64(value)
    if value <= 10:
        return np.uint64(6)
    if value <= 20:
        return np.uint64(7)
    if value <= 40:
        return np.uint64(8)
    return np.uint64(9)


@njit(inline="always")
def _completed(out, k, c_w, c_p, wl, pl, wr, pr, lv, rv):  # pragma: no cover - compiled
    """Templates 42-55 (``features._completed``); returns the next free slot."""
    out[k] = _h5(42, c_w, c_p, wl, pl)
    out[k + 1] = _h3(43, c_p, pl)
    out[k + 2] = _h4(44, c_w, c_p, pl)
    out[k + 3] = _h4(45, c_p, wl, pl)
    out[k + 4] = _h5(46, c_w, c_p, wr, pr)
    out[k + 5] = _h3(47, c_p, pr)
    out[k + 6] = _h4(48, c_w, c_p, pr)
    out[k + 7] = _h4(49, c_p, wr, pr)
    out[k + 8] = _h4(50, c_w, c_p, lv)
    out[k + 9] = _h4(51, c_w, c_p, rv)
    out[k + 10] = _h5(52, c_w, c_p, lv, rv)
    out[k + 11] = _h3(53, c_p, lv)
    out[k + 12] = _h3(54, c_p, rv)
    out[k + 13] = _h4(55, c_p, lv, rv)
    return k + 14


@njit(inline="always")
def _word_tag_value(out, k, template, w, p, value):  # pragma: no cover - compiled
    """Templates t, t+1, t+2 of one word with a value: (word, tag, value), (word, value), (tag, value)."""
    out[k] = _h4(template, w, p, value)
    out[k + 1] = _h3(template + 1, w, value)
    out[k + 2] = _h3(template + 2, p, value)


@njit(inline="always")
def _tag_at(e, position):  # pragma: no cover - compiled
    return e[HEADER + e[0] + position]


@njit(inline="always")
def _word_at(e, position):  # pragma: no cover - compiled
    return e[HEADER + position]


@njit(inline="always")
def _between(out, k, ph, pm, dd, tlanes, e, lo, hi):  # pragma: no cover - compiled
    """Template 24 for the words at positions ``lo..hi-1`` of edge ``e``; returns the next free slot."""
    for pos in range(lo, hi):
        out[k] = _h5(24, ph, pm, tlanes[_tag_at(e, pos)], dd)
        k += 1
    return k


@njit(cache=True)
def _attach_hashes(h, d, right, goal, wlanes, tlanes, out):  # pragma: no cover - compiled
    """Write the tuple hashes of the attachment's features into ``out``; return how many."""
    wh, ph = _lane(wlanes, h[2]), _lane(tlanes, h[3])
    wm, pm = _lane(wlanes, d[2]), _lane(tlanes, d[3])
    dd = np.uint64(1) if right else np.uint64(0)
    nh, nm = h[0], d[0]
    hp, mp_ = h[1], d[1]
    if right:
        dist = _norm(nh - hp + mp_)
    else:
        dist = _norm(nm - mp_ + hp)
    size = _norm(nh + nm)
    _word_tag_value(out, 0, 1, wh, ph, size)
    _word_tag_value(out, 3, 4, wh, ph, dd)
    _word_tag_value(out, 6, 7, wm, pm, dd)
    _word_tag_value(out, 9, 10, wh, ph, dist)
    _word_tag_value(out, 12, 13, wm, pm, dist)
    out[15] = _h6(16, wh, ph, wm, pm, dd)
    out[16] = _h6(17, wh, ph, wm, pm, dist)
    out[17] = _h5(18, wh, ph, pm, dd)
    out[18] = _h5(19, wh, ph, pm, dist)
    out[19] = _h5(20, ph, wm, pm, dd)
    out[20] = _h5(21, ph, wm, pm, dist)
    out[21] = _h4(22, ph, pm, dd)
    out[22] = _h4(23, ph, pm, dist)
    k = 23
    # template 24: every word between h and m
    if right:
        k = _between(out, k, ph, pm, dd, tlanes, h, hp + 1, nh)
        k = _between(out, k, ph, pm, dd, tlanes, d, 0, mp_)
        hn = _tag_at(h, hp + 1) if hp + 1 < nh else _tag_at(d, 0)
        mprev = _tag_at(d, mp_ - 1) if mp_ > 0 else _tag_at(h, nh - 1)
        out[k] = _h6(26, ph, tlanes[hn], pm, tlanes[mprev], dd)
    else:
        k = _between(out, k, ph, pm, dd, tlanes, d, mp_ + 1, nm)
        k = _between(out, k, ph, pm, dd, tlanes, h, 0, hp)
        hprev = _tag_at(h, hp - 1) if hp > 0 else _tag_at(d, nm - 1)
        mn = _tag_at(d, mp_ + 1) if mp_ + 1 < nm else _tag_at(h, 0)
        out[k] = _h6(25, ph, tlanes[hprev], pm, tlanes[mn], dd)
    k += 1
    pml = _lane(tlanes, d[7])
    pmr = _lane(tlanes, d[10])
    out[k] = _h5(27, wh, pm, pml, dd)
    out[k + 1] = _h5(28, wh, pm, pmr, dd)
    out[k + 2] = _h5(29, ph, pm, pml, dd)
    out[k + 3] = _h5(30, ph, pm, pmr, dd)
    k += 4
    # the nearest sibling on the side of the attachment and the one after it
    if right:
        ws, ps, ps2 = _lane(wlanes, h[9]), _lane(tlanes, h[10]), _lane(tlanes, h[11])
    else:
        ws, ps, ps2 = _lane(wlanes, h[6]), _lane(tlanes, h[7]), _lane(tlanes, h[8])
    out[k] = _h5(31, ph, pm, ps, dd)
    out[k + 1] = _h4(32, ph, ps, dd)
    out[k + 2] = _h4(33, pm, ps, dd)
    out[k + 3] = _h4(34, wh, ws, dd)
    out[k + 4] = _h4(35, wm, ws, dd)
    out[k + 5] = _h4(36, ph, ws, dd)
    out[k + 6] = _h4(37, pm, ws, dd)
    out[k + 7] = _h4(38, wh, ps, dd)
    out[k + 8] = _h4(39, wm, ps, dd)
    out[k + 9] = _h6(40, wh, pm, ps, ps2, dd)
    out[k + 10] = _h6(41, ph, pm, ps, ps2, dd)
    k += 11
    k = _completed(out, k, wm, pm, _lane(wlanes, d[6]), _lane(tlanes, d[7]), _lane(wlanes, d[9]),
                   _lane(tlanes, d[10]), np.uint64(d[4]), np.uint64(d[5]))
    # the surface string at the boundary of the concatenation
    le, re = (h, d) if right else (d, h)
    nl, nr = le[0], re[0]
    w1, p1 = wlanes[_word_at(le, nl - 1)], tlanes[_tag_at(le, nl - 1)]
    w2 = wlanes[_word_at(le, nl - 2)] if nl > 1 else _NONE
    p2 = tlanes[_tag_at(le, nl - 2)] if nl > 1 else _NONE
    w0, p0 = wlanes[_word_at(re, 0)], tlanes[_tag_at(re, 0)]
    w_1 = wlanes[_word_at(re, 1)] if nr > 1 else _NONE
    p_1 = tlanes[_tag_at(re, 1)] if nr > 1 else _NONE
    out[k] = _h3(56, w1, w0)
    out[k + 1] = _h3(57, p1, p0)
    out[k + 2] = _h3(58, w1, p0)
    out[k + 3] = _h3(59, p1, w0)
    out[k + 4] = _h4(60, w1, w0, w_1)
    out[k + 5] = _h4(61, w2, w1, w0)
    out[k + 6] = _h4(62, p1, p0, p_1)
    out[k + 7] = _h4(63, p2, p1, p0)
    out[k + 8] = _h4(64, p1, w0, p_1)
    out[k + 9] = _h4(65, p2, w1, p0)
    k += 10
    if goal:
        k = _goal_hashes(h, d, right, wlanes, tlanes, out, k, le, re)
    return k


@njit(inline="always")
def _surface(le, re, position, from_end, tags, table):  # pragma: no cover - compiled
    """Lane of the word (or tag) at ``position`` from the start / end of ``le + re`` (START past it)."""
    nl, nr = le[0], re[0]
    if position >= nl + nr:
        return _START
    k = nl + nr - 1 - position if from_end else position
    if k < nl:
        index = _tag_at(le, k) if tags else _word_at(le, k)
    else:
        index = _tag_at(re, k - nl) if tags else _word_at(re, k - nl)
    return table[index]


@njit(cache=True)
def _goal_hashes(h, d, right, wlanes, tlanes, out, k, le, re):  # pragma: no cover - compiled
    """Templates 42-55 for the root and 66-75 (sentence boundaries) of a goal edge."""
    wh, ph = _lane(wlanes, h[2]), _lane(tlanes, h[3])
    if right:
        wl, pl, lv = _lane(wlanes, h[6]), _lane(tlanes, h[7]), h[4]
        wr, pr, rv = _lane(wlanes, d[2]), _lane(tlanes, d[3]), h[5] + 1
    else:
        wl, pl, lv = _lane(wlanes, d[2]), _lane(tlanes, d[3]), h[4] + 1
        wr, pr, rv = _lane(wlanes, h[9]), _lane(tlanes, h[10]), h[5]
    k = _completed(out, k, wh, ph, wl, pl, wr, pr, np.uint64(lv), np.uint64(rv))
    w0, w1 = _surface(le, re, 0, False, False, wlanes), _surface(le, re, 1, False, False, wlanes)
    v0, v1 = _surface(le, re, 0, True, False, wlanes), _surface(le, re, 1, True, False, wlanes)
    p0, p1, p2 = (_surface(le, re, 0, False, True, tlanes), _surface(le, re, 1, False, True, tlanes),
                  _surface(le, re, 2, False, True, tlanes))
    q0, q1, q2 = (_surface(le, re, 0, True, True, tlanes), _surface(le, re, 1, True, True, tlanes),
                  _surface(le, re, 2, True, True, tlanes))
    out[k] = _h2(66, w0)
    out[k + 1] = _h3(67, w0, w1)
    out[k + 2] = _h2(68, v0)
    out[k + 3] = _h3(69, v0, v1)
    out[k + 4] = _h2(70, p0)
    out[k + 5] = _h3(71, p0, p1)
    out[k + 6] = _h4(72, p0, p1, p2)
    out[k + 7] = _h2(73, q0)
    out[k + 8] = _h3(74, q0, q1)
    out[k + 9] = _h4(75, q0, q1, q2)
    return k + 10


@njit(cache=True)
def attach_indices(h, d, right, goal, wlanes, tlanes, mask):  # pragma: no cover - compiled
    """Weight indices of the attachment's features (``features.attach_features``, compiled)."""
    out = np.empty(140 + h[0] + d[0], dtype=np.uint64)
    k = _attach_hashes(h, d, right, goal, wlanes, tlanes, out)
    result = np.empty(k, dtype=np.int64)
    m = np.uint64(mask)
    for i in range(k):
        result[i] = np.int64(out[i] & m)
    return result


@njit(cache=True)
def _block_sum(values, start, n):  # pragma: no cover - compiled
    """numpy's pairwise sum of at most 128 values (one block: 8 accumulators, then the rest)."""
    if n < 8:
        total = 0.0
        for i in range(n):
            total += values[start + i]
        return total
    r = np.empty(8)
    for j in range(8):
        r[j] = values[start + j]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += values[start + i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@njit(cache=True)
def pairwise_sum(values, start, n):  # pragma: no cover - compiled
    """Sum of ``values[start:start + n]`` in numpy's pairwise order (bit-identical to ``ndarray.sum``).

    Above 128 values numpy sums the two halves (the first a multiple of 8 long) and adds them; the
    recursion is unrolled into an explicit post-order walk (numba's cache does not keep recursion).
    """
    if n <= 128:
        return _block_sum(values, start, n)
    frames = np.empty((64, 3), dtype=np.int64)  # start, length, children done
    partial = np.empty(64)
    top, done = 1, 0
    frames[0, 0], frames[0, 1], frames[0, 2] = start, n, 0
    while top > 0:
        f_start, f_n, state = frames[top - 1, 0], frames[top - 1, 1], frames[top - 1, 2]
        if f_n <= 128:
            partial[done] = _block_sum(values, f_start, f_n)
            done += 1
            top -= 1
            continue
        half = f_n // 2
        half -= half % 8
        if state == 2:
            partial[done - 2] = partial[done - 2] + partial[done - 1]
            done -= 1
            top -= 1
            continue
        frames[top - 1, 2] = state + 1
        if state == 0:
            frames[top, 0], frames[top, 1] = f_start, half
        else:
            frames[top, 0], frames[top, 1] = f_start + half, f_n - half
        frames[top, 2] = 0
        top += 1
    return partial[0]


@njit(cache=True)
def attach_local_score(h, d, right, goal, wlanes, tlanes, weights):  # pragma: no cover - compiled
    """``weights[attach_indices(...)].sum()`` in one compiled call (the same float, bit for bit)."""
    out = np.empty(140 + h[0] + d[0], dtype=np.uint64)
    k = _attach_hashes(h, d, right, goal, wlanes, tlanes, out)
    return _hashed_sum(weights, out, k, np.empty(k))


@njit(inline="always")
def _hashed_sum(weights, hashes, k, values):  # pragma: no cover - compiled
    """The pairwise sum of the weights the first ``k`` hashes index (masked to the weights' size);
    ``values``: a buffer of at least ``k`` floats."""
    m = np.uint64(weights.size - 1)
    for i in range(k):
        values[i] = weights[np.int64(hashes[i] & m)]
    return pairwise_sum(values, 0, k)


@njit(cache=True)
def attach_local_scores(edge, others, offsets, attachments, wlanes, tlanes, weights):  # pragma: no cover
    """:func:`attach_local_score` of many attachments of one packed edge with others, in one call.

    ``others`` holds packed edges concatenated (``offsets``: their boundaries); each row of
    ``attachments`` is ``(other, edge_is_head, right, goal)``: attach the other edge's head to ``edge``'s
    head (``edge_is_head`` 1) or ``edge``'s head to the other's (0). The same floats, bit for bit.
    """
    longest = 0
    for j in range(offsets.size - 1):
        longest = max(longest, offsets[j + 1] - offsets[j])
    hashes = np.empty(140 + edge.size + longest, dtype=np.uint64)  # a packed edge is longer than its n
    values = np.empty(hashes.size)
    out = np.empty(attachments.shape[0])
    for c in range(attachments.shape[0]):
        j = attachments[c, 0]
        other = others[offsets[j]:offsets[j + 1]]
        right, goal = attachments[c, 2] == 1, attachments[c, 3] == 1
        if attachments[c, 1] == 1:
            k = _attach_hashes(edge, other, right, goal, wlanes, tlanes, hashes)
        else:
            k = _attach_hashes(other, edge, right, goal, wlanes, tlanes, hashes)
        out[c] = _hashed_sum(weights, hashes, k, values)
    return out
