"""T3 + trigram LM by beam search with cube pruning — APPROXIMATE (Cohn & Lapata 2009, §3.4).

This is the paper's baseline search for the intersection of the transducer with an n-gram LM, kept as
a baseline only: it has **no optimality guarantee** (search errors are possible and not detected).
Objective of a derivation d with kept positions s_1 < ... < s_L:
``score_T3(d) + lm_weight · LM(s)``, LM as in contract 2 (``T[0,0,s_1] + Σ T[s_{t-2}, s_{t-1}, s_t]``
with ``</s>`` = n+1, i.e. the trigrams of ``0, 0, s_1, ..., s_L, n+1``; the empty string scores
``T[0,0,n+1]``), T from ``dualdecomp.models.lm.model.LanguageModel.trigram_tensor``.

Search: bottom-up over the hypergraph; each vertex keeps a beam of partial target strings. Items of a
vertex are generated hyperedge by hyperedge by cube pruning (Chiang 2007): the combinations of the tails'
sorted beams are visited best-first under a heuristic (the sum of the tails' scores, i.e. the LM terms across
the junctions are left out of the heuristic), then rescored exactly with the junction trigrams. Items are
recombined by (LM context = first two and last two tokens, length), which is exact for a trigram LM.

Free length (``length=None``): a beam keeps the ``beam`` best unique items and at most ``2·beam``
combinations are popped per hyperedge (the paper's 100 unique / 200 items by default). The root beam is
finished with the ``<s>``/``</s>`` trigrams; the result is its best item, and ``by_length`` holds the best
finished item of every length present in the root beam (lengths pruned away are absent: use ``length=``
for a guaranteed length).

Length target (``length=L``), to decode at a given (e.g. gold) length:

* **Reachability.** An item of length m at vertex v is discarded unless ``L - (n - span_v) <= m <= L``
  (``span_v`` = ``vertex_span``, the number of source tokens under v's node; the tokens outside it can
  add at most ``n - span_v`` words). At the root span = n, so only items of exactly L survive. Before an
  hyperedge's cube is explored, tail items that cannot fit the head's range whatever the other tails yield are
  dropped, and combinations of the wrong total length are skipped without being built.
* **Length-aware beam.** Let M be the number of distinct lengths among a vertex's candidates and
  ``k = max(1, beam // (2·M))``. The beam first reserves the k best items of *every* length, then fills up
  to ``beam`` items with the best remaining ones by score (so about half the beam is spread over the
  lengths, the rest goes to the best items; if M > beam the beam holds one item per length, M > beam items).
* **Pop budget.** Per hyperedge, at most ``2·beam`` combinations of a reachable length are popped, and at most
  ``10·beam`` combinations in all (those of an unreachable length are skipped, but still counted).
* **Result.** The best root item of length exactly L. If none survived the pruning, the result falls back
  to the exact T3-only best derivation of length L (``Transducer.solve(length=L)``, LM ignored in the
  choice, its LM score is added to ``score``) and ``fallback`` is True: the length is never silently
  wrong. If no derivation of T3 has L kept tokens (``Transducer.solve_lengths()``), SolverError.

Either way the result is labelled ``approximate=True``.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

from dualdecomp.core.checks import as_length
from dualdecomp.core.component import capabilities_of
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.result import Result
from dualdecomp.solvers.transducer.solver import Transducer

__all__ = ["BeamResult", "beam_search", "lm_score"]

_TOTAL_POP_FACTOR = 10
"""With a length target, at most ``_TOTAL_POP_FACTOR · beam`` combinations are popped per hyperedge."""


@dataclass(frozen=True)
class BeamResult:
    """Output of the APPROXIMATE beam search.

    Attributes
    ----------
    keep : numpy.ndarray
        bool (n,), the best finished item (of the target length when one was given).
    score : float
        Its T3 + lm_weight·LM score (not certified).
    by_length : dict
        Length → keep of the best finished root item of that length (with a target: only the target).
    approximate : bool
        Always True.
    fallback : bool
        True iff a target length was given, no root item of that length survived the beam, and ``keep``
        is the exact T3-only best derivation of that length instead.
    """

    keep: np.ndarray
    score: float
    by_length: dict[int, np.ndarray] = field(default_factory=dict)
    approximate: bool = True
    fallback: bool = False


def _join_lm(T: np.ndarray, a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """LM trigrams created by concatenating a and b (both non-empty, 1-based positions)."""
    out = 0.0
    if len(a) >= 2:
        out += T[a[-2], a[-1], b[0]]
    if len(b) >= 2:
        out += T[a[-1], b[0], b[1]]
    return out


def _finish(T: np.ndarray, seq: tuple[int, ...], n: int) -> float:
    """The trigrams involving ``<s>`` or ``</s>`` of a complete sequence."""
    if not seq:
        return T[0, 0, n + 1]
    if len(seq) == 1:
        return T[0, 0, seq[0]] + T[0, seq[0], n + 1]
    return T[0, 0, seq[0]] + T[0, seq[0], seq[1]] + T[seq[-2], seq[-1], n + 1]


def lm_score(T: np.ndarray, keep: np.ndarray) -> float:
    """Contract-2 LM score of a keep vector: the trigrams of ``0, 0, s_1, ..., s_L, n+1``.

    Parameters
    ----------
    T : numpy.ndarray
        Trigram potentials (n+2, n+2, n+2).
    keep : numpy.ndarray
        bool (n,).

    Returns
    -------
    float
    """
    n = T.shape[0] - 2
    seq = [0, 0, *(int(p) + 1 for p in np.flatnonzero(keep)), n + 1]
    return float(sum(T[seq[i], seq[i + 1], seq[i + 2]] for i in range(len(seq) - 2)))


def _select(items: list[tuple[float, tuple[int, ...]]], beam: int, by_length: bool
            ) -> list[tuple[float, tuple[int, ...]]]:
    """The beam of a vertex from its candidates (see the module docstring), best first."""
    items = sorted(items, key=lambda it: -it[0])
    if not by_length or len(items) <= beam:
        return items[:beam]
    groups: dict[int, int] = {}
    for _, seq in items:
        groups[len(seq)] = groups.get(len(seq), 0) + 1
    k = max(1, beam // (2 * len(groups)))
    taken: dict[int, int] = {}
    reserved = [False] * len(items)
    for i, (_, seq) in enumerate(items):
        m = len(seq)
        if taken.get(m, 0) < k:
            taken[m] = taken.get(m, 0) + 1
            reserved[i] = True
    room = beam - sum(reserved)
    out = []
    for i, it in enumerate(items):
        if reserved[i]:
            out.append(it)
        elif room > 0:
            out.append(it)
            room -= 1
    return out


def beam_search(transducer: Transducer, T: np.ndarray, lm_weight: float = 1.0, beam: int = 100,
                length: int | None = None) -> BeamResult:
    """APPROXIMATE best derivation of T3 score + lm_weight · trigram LM (see module docstring).

    Parameters
    ----------
    transducer : Transducer
    T : numpy.ndarray
        Trigram potentials (n+2, n+2, n+2), contract 2.
    lm_weight : float
    beam : int
        Unique items per vertex (2·beam candidates popped per hyperedge).
    length : int, optional
        Target number of kept tokens: prune unreachable items, spread the beams over lengths, return an
        item of exactly this length (falling back to the exact T3-only chart if the beam lost it).

    Returns
    -------
    BeamResult

    Raises
    ------
    InputError
        Bad ``T``, ``beam`` or ``length``.
    SolverError
        No derivation of T3 keeps exactly ``length`` tokens.
    """
    hg = transducer.hypergraph
    n = transducer.n
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (n + 2,) * 3:
        raise InputError(f"T must have shape {(n + 2,) * 3}, got {T.shape}")
    if isinstance(beam, bool) or not isinstance(beam, int | np.integer) or beam < 1:
        raise InputError(f"beam must be a positive integer, got {beam!r}")
    target = as_length(length, n)
    nv = len(hg.vertex_node)
    lo: list[int] = []  # per vertex: reachable item lengths lo[v]..hi[v] (with a target)
    hi: list[int] = []
    if target is not None:
        if transducer.solve_lengths()[target] == -np.inf:
            raise SolverError(f"no derivation keeps exactly {target} tokens")
        span = np.asarray(hg.vertex_span, dtype=np.int64)
        lo = [int(target - (n - s)) for s in span]
        hi = [target] * nv
    max_valid = 2 * beam
    max_pops = 2 * beam if target is None else _TOTAL_POP_FACTOR * beam
    # item: (score incl. internal LM, seq of 1-based positions)
    beams: list[list[tuple[float, tuple[int, ...]]]] = [[] for _ in range(nv)]
    cands: list[dict[tuple, tuple[float, tuple[int, ...]]]] = [{} for _ in range(nv)]
    last_node = None
    pending: list[int] = []

    def close(vertices: list[int]) -> None:
        for v in set(vertices):
            beams[v] = _select(list(cands[v].values()), beam, target is not None)
            cands[v] = {}

    for e in range(hg.num_hyperedges):
        node = int(hg.hyperedge_node[e])
        if node != last_node:
            close(pending)
            pending = []
            last_node = node
        h = int(hg.hyperedge_head[e])
        pending.append(h)
        rule = hg.rules[int(hg.hyperedge_rule[e])]
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
        nwords = len(pieces) - len(tails)
        if target is not None:
            # drop tail items that cannot fit the head's range whatever the other tails yield
            mins = [min(len(s) for _, s in b) for b in tail_beams]
            maxs = [max(len(s) for _, s in b) for b in tail_beams]
            tot_min, tot_max = nwords + sum(mins), nwords + sum(maxs)
            tail_beams = [[it for it in b if lo[h] - (tot_max - maxs[k]) <= len(it[1])
                           <= hi[h] - (tot_min - mins[k])] for k, b in enumerate(tail_beams)]
            if any(not b for b in tail_beams):
                continue
        base = float(transducer.hyperedge_score[e])

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
                if seq and part:
                    lm += _join_lm(T, seq, part)
                score += s_part
                seq = seq + part
            return score + lm_weight * lm, seq

        start = (0,) * len(tails)
        heur0 = base + sum(b[0][0] for b in tail_beams)
        heap = [(-heur0, start)]
        seen = {start}
        popped = valid = 0
        while heap and valid < max_valid and popped < max_pops:
            _, idx = heapq.heappop(heap)
            popped += 1
            ok = True
            if target is not None:
                m = nwords + sum(len(tail_beams[k][idx[k]][1]) for k in range(len(idx)))
                ok = lo[h] <= m <= hi[h]
            if ok:
                valid += 1
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

    def keep_of(seq: tuple[int, ...]) -> np.ndarray:
        k = np.zeros(n, dtype=bool)
        k[[p - 1 for p in seq]] = True
        return k

    best_score, best_seq = -np.inf, None
    by_length: dict[int, tuple[float, tuple[int, ...]]] = {}
    for score, seq in beams[hg.root]:
        if target is not None and len(seq) != target:
            continue
        total = score + lm_weight * _finish(T, seq, n)
        if best_seq is None or total > best_score:
            best_score, best_seq = total, seq
        if len(seq) not in by_length or total > by_length[len(seq)][0]:
            by_length[len(seq)] = (total, seq)
    if best_seq is None:
        if target is None:  # pragma: no cover - every hyperedge pops at least one combination
            raise SolverError("beam search found no derivation")
        sol = transducer.solve(length=target)
        score = float(sol.score) + lm_weight * lm_score(T, sol.keep)
        return BeamResult(sol.keep.copy(), score, {target: sol.keep.copy()}, fallback=True)
    lengths_out = {m: keep_of(s) for m, (_, s) in by_length.items()}
    return BeamResult(keep_of(best_seq), float(best_score), lengths_out)


def beam_decode(components: list, length: int | None = None, beam: int = 100) -> Result:
    """Decode the components T3 + LM by :func:`beam_search` — APPROXIMATE, never certified.

    The configurations' decoder ``{"decoder": "beam"}`` (the paper's baseline): ``components`` must be
    one component exposing a derivation forest (capability ``derivation_forest``: the
    :class:`~dualdecomp.solvers.transducer.solver.Transducer`) and one exposing trigram potentials
    (capability ``trigram_potentials``: the :class:`~dualdecomp.solvers.ngram.solver.Trigram`, its
    potentials already weighted). The result has ``certified=False``, an infinite ``dual`` and ``gap`` (no
    bound is proved) and a note saying it is approximate (and when the exact-length fallback was used).

    Parameters
    ----------
    components : list
        The Transducer and Trigram components, in any order.
    length : int, optional
        Exact number of kept tokens.
    beam : int
        Unique items per vertex.

    Returns
    -------
    dualdecomp.core.result.Result
    """

    forests = [c for c in components if capabilities_of(c).derivation_forest]
    rescorers = [c for c in components if capabilities_of(c).trigram_potentials]
    if len(forests) != 1 or len(rescorers) != 1 or len(components) != 2:
        raise InputError("the beam decoder needs exactly one transducer and one lm component")
    start = time.perf_counter()
    res = beam_search(forests[0], rescorers[0].T, lm_weight=1.0, beam=beam, length=length)
    notes = ["APPROXIMATE: T3+LM beam search with cube pruning (no certificate)"]
    if res.fallback:
        notes.append(f"no beam item of length {length} survived: exact T3-only derivation of that length")
    return Result(res.keep, res.score, np.inf, np.inf, False, seconds=time.perf_counter() - start,
                  notes=tuple(notes))
