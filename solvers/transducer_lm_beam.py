"""T3 + trigram LM by beam search with cube pruning — APPROXIMATE (Cohn & Lapata 2009, §3.4).

This is the paper's baseline search for the intersection of the transducer with an n-gram LM, kept as
a baseline only: it has **no optimality guarantee** (search errors are possible and not detected).
Objective of a derivation d with kept positions s_1 < ... < s_L:
``score_T3(d) + lm_weight · LM(s)``, LM as in contract 2 (``T[0,0,s_1] + Σ T[s_{t-2}, s_{t-1}, s_t]``
with ``</s>`` = n+1), T from ``models.lm.LanguageModel.trigram_tensor``.

Search: bottom-up over the hypergraph; each vertex keeps a beam of partial target strings. Items of a
vertex are generated edge by edge by cube pruning (Chiang 2007): the combinations of the tails' sorted
beams are visited best-first under a heuristic (the sum of the tails' scores, i.e. the LM terms across
the junctions are left out of the heuristic), then rescored exactly with the junction trigrams. A beam
keeps at most ``beam`` unique items — unique by (LM context = first two and last two tokens, length) —
and at most ``2·beam`` popped candidates per edge (the paper's 100 unique / 200 items by default). The
root beam is finished with the ``<s>``/``</s>`` trigrams; ``by_length`` holds the best finished item of
every length present in the root beam (used for gold-length evaluation; lengths pruned away are absent).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from solvers.transducer import Transducer

__all__ = ["BeamResult", "beam_search"]


@dataclass(frozen=True)
class BeamResult:
    """Output of the APPROXIMATE beam search.

    Attributes
    ----------
    keep : numpy.ndarray
        bool (n,), best finished item.
    score : float
        Its T3 + lm_weight·LM score (not certified).
    by_length : dict
        Length → keep of the best finished root item of that length.
    approximate : bool
        Always True.
    """

    keep: np.ndarray
    score: float
    by_length: dict[int, np.ndarray]
    approximate: bool = True


def _join_lm(T: np.ndarray, a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """LM trigrams created by concatenating a and b (both non-empty, 1-based positions)."""
    out = 0.0
    if len(a) >= 2:
        out += T[a[-2], a[-1], b[0]]
    if len(b) >= 2:
        out += T[a[-1], b[0], b[1]]
    return out


def _finish(T: np.ndarray, seq: tuple[int, ...], n: int) -> float:
    if len(seq) == 1:
        return T[0, 0, seq[0]] + T[0, seq[0], n + 1]
    return T[0, 0, seq[0]] + T[0, seq[0], seq[1]] + T[seq[-2], seq[-1], n + 1]


def beam_search(t3: Transducer, T: np.ndarray, lm_weight: float = 1.0, beam: int = 100,
                lengths: list[int] | None = None) -> BeamResult:
    """APPROXIMATE best derivation of T3 score + lm_weight · trigram LM (see module docstring).

    Parameters
    ----------
    t3 : Transducer
    T : numpy.ndarray
        Trigram potentials (n+2, n+2, n+2), contract 2.
    lm_weight : float
    beam : int
        Unique items per vertex (2·beam candidates popped per edge).
    lengths : list of int, optional
        Unused by the search itself; documented for callers that read ``by_length``.

    Returns
    -------
    BeamResult
    """
    hg = t3.hypergraph
    n = t3.n
    nv = len(hg.vertex_node)
    # item: (score incl. internal LM, seq of 1-based positions)
    beams: list[list[tuple[float, tuple[int, ...]]]] = [[] for _ in range(nv)]
    cands: list[dict[tuple, tuple[float, tuple[int, ...]]]] = [{} for _ in range(nv)]
    order = range(hg.num_edges)
    last_node = None
    pending: list[int] = []

    def close(vertices: list[int]) -> None:
        for v in set(vertices):
            items = sorted(cands[v].values(), key=lambda it: -it[0])[:beam]
            beams[v] = items
            cands[v] = {}

    for e in order:
        node = int(hg.edge_node[e])
        if node != last_node:
            close(pending)
            pending = []
            last_node = node
        h = int(hg.edge_head[e])
        pending.append(h)
        rule = hg.rules[int(hg.edge_rule[e])]
        # frontier pieces in order: ("w", pos) or ("t", vertex)
        pieces: list[tuple[str, int]] = []
        tails = hg.tails(e).tolist()
        ti = 0
        for f, j in zip(rule.source.frontier(), hg.frontier[e], strict=True):
            if not f.kept:
                continue
            if f.kind == 2:  # WORD
                pieces.append(("w", hg.tree.nodes[j].index + 1))
            else:
                pieces.append(("t", tails[ti]))
                ti += 1
        tail_beams = [beams[t] for t in tails]
        if any(not b for b in tail_beams):
            continue
        base = float(t3.edge_score[e])

        def build(idx: tuple[int, ...], base=base, pieces=pieces, tail_beams=tail_beams
                  ) -> tuple[float, tuple[int, ...]]:
            score = base
            seq: tuple[int, ...] = ()
            lm = 0.0
            k = 0
            for kind, val in pieces:
                if kind == "w":
                    part: tuple[int, ...] = (val,)
                    s_part = 0.0
                else:
                    s_part, part = tail_beams[k][idx[k]]
                    k += 1
                if seq:
                    lm += _join_lm(T, seq, part)
                score += s_part
                seq = seq + part
            return score + lm_weight * lm, seq

        start = (0,) * len(tails)
        heur0 = base + sum(b[0][0] for b in tail_beams)
        heap = [(-heur0, start)]
        seen = {start}
        popped = 0
        while heap and popped < 2 * beam:
            _, idx = heapq.heappop(heap)
            popped += 1
            score, seq = build(idx)
            key = (seq[:2], seq[-2:], len(seq))
            old = cands[h].get(key)
            if old is None or score > old[0]:
                cands[h][key] = (score, seq)
            for k in range(len(idx)):
                nxt = idx[:k] + (idx[k] + 1,) + idx[k + 1:]
                if nxt[k] < len(tail_beams[k]) and nxt not in seen:
                    seen.add(nxt)
                    heur = base + sum(tail_beams[m][nxt[m]][0] for m in range(len(nxt)))
                    heapq.heappush(heap, (-heur, nxt))
    close(pending)
    best_score, best_seq = -np.inf, ()
    by_length: dict[int, tuple[float, tuple[int, ...]]] = {}
    for score, seq in beams[hg.root]:
        total = score + lm_weight * _finish(T, seq, n)
        if total > best_score:
            best_score, best_seq = total, seq
        if len(seq) not in by_length or total > by_length[len(seq)][0]:
            by_length[len(seq)] = (total, seq)

    def keep_of(seq: tuple[int, ...]) -> np.ndarray:
        k = np.zeros(n, dtype=bool)
        k[[p - 1 for p in seq]] = True
        return k

    lengths_out = {m: keep_of(s) for m, (_, s) in by_length.items()}
    return BeamResult(keep_of(best_seq), float(best_score), lengths_out)
