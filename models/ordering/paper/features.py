"""The feature templates of the dependency-based system (Table 2 of the paper), hashed to weight indices.

This module is their readable definition; the decoders and the trainer compute the attachment features
with the compiled ``dualdecomp.models.ordering.paper.feature_kernel`` (``OrderingModel.attach_features``),
which tests check against :func:`attach_features` here, index for index.

Each feature is a tuple ``(template, atom, ...)`` of Python ints; its index is ``hash(tuple) & mask``.
CPython's hash of a tuple of ints does not depend on ``PYTHONHASHSEED`` (only str/bytes hashes are
salted), so indices are stable across processes on 64-bit CPython; atoms of strings come from BLAKE2b
(``dualdecomp.core.hashing.atom``).

Templates of a new arc h -> m (``dir``: m right of h; ``dist``/``size`` normalised by NORM): the
"dependency syntax" block (h, m, their words and tags with dir/dist/size, every word b between h and
m, h-1/h+1 and m-1/m+1, m's leftmost and rightmost dependents, the nearest sibling s and the one
after it s2); the "completed words" block for m, which is complete once attached (its outermost
dependents and valencies); the "surface string" block around the boundary B of the concatenation.
A goal edge adds the completed-word features of the root and the sentence-boundary patterns. A leaf
(word, tag) has two features: word+tag and tag (the paper's leaf edges carry the tag choice).
"""

from __future__ import annotations

import numpy as np

from dualdecomp.models.ordering.paper.edge import NONE_ATOM, Context, Edge

START_ATOM = 1
"""Atom of the position before the first / after the last word of a sentence."""

def norm(value: int) -> int:
    """NORM of the paper: 1, 2, 3, 4, 5, (5, 10], (10, 20], (20, 40], 40+ as bins 1..9."""
    if value <= 5:
        return value
    if value <= 10:
        return 6
    if value <= 20:
        return 7
    if value <= 40:
        return 8
    return 9


def leaf_features(ctx: Context, word: int, tag: int, mask: int) -> np.ndarray:
    """Feature indices of the leaf edge (word, tag)."""
    w = ctx.word_atoms[word]
    p = ctx.tag_atoms[tag]
    return np.array([hash((76, w, p)), hash((77, p))], dtype=np.int64) & mask


def _completed(out: list, c_w: int, c_p: int, left, right, ta, wa) -> None:
    """Templates 42-55: a word whose dependents are all attached."""
    if left:
        lw, lt = left[-1]
        wl, pl = wa[lw], ta[lt]
    else:
        wl = pl = NONE_ATOM
    if right:
        rw, rt = right[-1]
        wr, pr = wa[rw], ta[rt]
    else:
        wr = pr = NONE_ATOM
    lv, rv = len(left), len(right)
    out += [(42, c_w, c_p, wl, pl), (43, c_p, pl), (44, c_w, c_p, pl), (45, c_p, wl, pl),
            (46, c_w, c_p, wr, pr), (47, c_p, pr), (48, c_w, c_p, pr), (49, c_p, wr, pr),
            (50, c_w, c_p, lv), (51, c_w, c_p, rv), (52, c_w, c_p, lv, rv), (53, c_p, lv), (54, c_p, rv),
            (55, c_p, lv, rv)]


def attach_features(ctx: Context, head: Edge, dep: Edge, right: bool, mask: int) -> np.ndarray:
    """Feature indices of attaching ``dep``'s head to ``head``'s head on the given side.

    Parameters
    ----------
    ctx : Context
    head, dep : Edge
        The head edge and the dependent edge (disjoint).
    right : bool
        Whether ``dep`` is concatenated to the right of ``head``.
    mask : int
        ``2**hash_bits - 1``.

    Returns
    -------
    numpy.ndarray of int64
        One index per feature instance (a feature may repeat, e.g. the between-word template).
    """
    wa, ta = ctx.word_atoms, ctx.tag_atoms
    wh, ph = wa[head.head], ta[head.head_tag]
    wm, pm = wa[dep.head], ta[dep.head_tag]
    d = 1 if right else 0
    nh, nm = len(head.words), len(dep.words)
    if right:
        dist = nh - head.head_pos + dep.head_pos
        between = head.tags[head.head_pos + 1:] + dep.tags[:dep.head_pos]
        side = head.right
        left_edge, right_edge = head, dep
    else:
        dist = nm - dep.head_pos + head.head_pos
        between = dep.tags[dep.head_pos + 1:] + head.tags[:head.head_pos]
        side = head.left
        left_edge, right_edge = dep, head
    dist = norm(dist)
    size = norm(nh + nm)
    f: list = [
        (1, wh, ph, size), (2, wh, size), (3, ph, size),
        (4, wh, ph, d), (5, wh, d), (6, ph, d),
        (7, wm, pm, d), (8, wm, d), (9, pm, d),
        (10, wh, ph, dist), (11, wh, dist), (12, ph, dist),
        (13, wm, pm, dist), (14, wm, dist), (15, pm, dist),
        (16, wh, ph, wm, pm, d), (17, wh, ph, wm, pm, dist),
        (18, wh, ph, pm, d), (19, wh, ph, pm, dist),
        (20, ph, wm, pm, d), (21, ph, wm, pm, dist),
        (22, ph, pm, d), (23, ph, pm, dist),
    ]
    f += [(24, ph, pm, ta[b], d) for b in between]
    if right:  # h < m: POS(h+1), POS(m-1)
        hn = head.tags[head.head_pos + 1] if head.head_pos + 1 < nh else dep.tags[0]
        mp = dep.tags[dep.head_pos - 1] if dep.head_pos > 0 else head.tags[-1]
        f.append((26, ph, ta[hn], pm, ta[mp], d))
    else:  # h > m: POS(h-1), POS(m+1)
        hp = head.tags[head.head_pos - 1] if head.head_pos > 0 else dep.tags[-1]
        mn = dep.tags[dep.head_pos + 1] if dep.head_pos + 1 < nm else head.tags[0]
        f.append((25, ph, ta[hp], pm, ta[mn], d))
    pml = ta[dep.left[-1][1]] if dep.left else NONE_ATOM
    pmr = ta[dep.right[-1][1]] if dep.right else NONE_ATOM
    f += [(27, wh, pm, pml, d), (28, wh, pm, pmr, d), (29, ph, pm, pml, d), (30, ph, pm, pmr, d)]
    if side:
        sw, st = side[-1]
        ws, ps = wa[sw], ta[st]
        ps2 = ta[side[-2][1]] if len(side) > 1 else NONE_ATOM
    else:
        ws = ps = ps2 = NONE_ATOM
    f += [(31, ph, pm, ps, d), (32, ph, ps, d), (33, pm, ps, d), (34, wh, ws, d), (35, wm, ws, d),
          (36, ph, ws, d), (37, pm, ws, d), (38, wh, ps, d), (39, wm, ps, d),
          (40, wh, pm, ps, ps2, d), (41, ph, pm, ps, ps2, d)]
    _completed(f, wm, pm, dep.left, dep.right, ta, wa)
    # surface string at the boundary B (first word of the right phrase)
    lw, lt, rw, rt = left_edge.words, left_edge.tags, right_edge.words, right_edge.tags
    w1, p1 = wa[lw[-1]], ta[lt[-1]]
    w2, p2 = (wa[lw[-2]], ta[lt[-2]]) if len(lw) > 1 else (NONE_ATOM, NONE_ATOM)
    w0, p0 = wa[rw[0]], ta[rt[0]]
    w_1, p_1 = (wa[rw[1]], ta[rt[1]]) if len(rw) > 1 else (NONE_ATOM, NONE_ATOM)
    f += [(56, w1, w0), (57, p1, p0), (58, w1, p0), (59, p1, w0), (60, w1, w0, w_1), (61, w2, w1, w0),
          (62, p1, p0, p_1), (63, p2, p1, p0), (64, p1, w0, p_1), (65, p2, w1, p0)]
    if (head.mask | dep.mask) == ctx.full:
        _goal(f, ctx, head, dep, right)
    return np.array(list(map(hash, f)), dtype=np.int64) & mask


def _goal(f: list, ctx: Context, head: Edge, dep: Edge, right: bool) -> None:
    """Templates 42-55 for the root and 66-75 (sentence boundaries) of a goal edge."""
    wa, ta = ctx.word_atoms, ctx.tag_atoms
    if right:
        words, tags = head.words + dep.words, head.tags + dep.tags
        left, rights = head.left, head.right + ((dep.head, dep.head_tag),)
    else:
        words, tags = dep.words + head.words, dep.tags + head.tags
        left, rights = head.left + ((dep.head, dep.head_tag),), head.right
    _completed(f, wa[head.head], ta[head.head_tag], left, rights, ta, wa)
    w = [wa[k] for k in words[:3]] + [START_ATOM] * 3
    p = [ta[k] for k in tags[:3]] + [START_ATOM] * 3
    wl = [wa[k] for k in words[-3:][::-1]] + [START_ATOM] * 3
    pl = [ta[k] for k in tags[-3:][::-1]] + [START_ATOM] * 3
    f += [(66, w[0]), (67, w[0], w[1]), (68, wl[0]), (69, wl[0], wl[1]), (70, p[0]), (71, p[0], p[1]),
          (72, p[0], p[1], p[2]), (73, pl[0]), (74, pl[0], pl[1]), (75, pl[0], pl[1], pl[2])]
