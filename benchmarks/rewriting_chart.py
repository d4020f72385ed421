"""Speed and memory of the rewriting chart on real sentences (W3.3 item 3).

The first ``--sentences`` sentences of ``../shared/data/rewriting/dev.jsonl`` are parsed (spaCy, the
project's trees; outside the measurement). Each gets the copy/deletion coverage rules of its productions
(:func:`~dualdecomp.solvers.rewriting.rewriting_coverage_rules`) and random rules beyond deletion
(``--seed``): ``--substitutions`` lexical substitutions ``(TAG w) -> (TAG w')`` with ``w'`` a token of
the same tag from the other sentences of the file, and ``--phrasal`` phrasal rules at random internal
nodes, each the node's copy rule with two of its children swapped (reordering) or with one word of the
file inserted. Hyperedge scores are N(0, 1), the LM matrix N(-3, 1) (log-probability-like) over the
sentence's target vocabulary.

For each mode — ``free`` (no budget), ``words`` (exactly ``--word-ratio`` · n words, rounded), ``chars``
(at most ``--char-ratio`` · the source's characters) — it prints one JSON line with the median, 90th
percentile and maximum of the decoding time per sentence (ms; each sentence decoded ``--repeats`` times,
its best time kept), the largest extra peak resident memory of one decode (MB, Linux ``VmHWM`` reset
before each decode), the finite states per vertex (mean over sentences of states / vertices, and the
largest vertex), the allocated table entries, and how many decodes were certified, infeasible (no
rewrite meets the budget) or lost by the beam (``--max-states``: every rewrite within the budget
pruned). Hypergraph building is timed separately (``"kind": "build"``) and the first decode, which
compiles the numba kernels, is left out (``"kind": "compile"``).

Run ``python benchmarks/rewriting_chart.py [--sentences 20] [--repeats 3]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported anywhere

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.trees import Tree, from_dependency
from dualdecomp.solvers.rewriting import (
    Budget,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    rewriting_coverage_rules,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "rewriting" / "dev.jsonl"


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _items(node: Tree) -> list[Frag]:
    return [Frag(WORD, c.label) if c.is_leaf else Frag(VAR, c.label) for c in node.children]


def _copy_parts(node: Tree) -> tuple[Frag, list[Frag], int, int]:
    items = _items(node)
    nvars = sum(1 for f in items if f.kind == VAR)
    nwords = sum(1 for f in items if f.kind == WORD)
    return Frag(NODE, node.label, tuple(items)), items, nvars, nwords


def random_rules(rng: np.random.Generator, tree: Tree, by_tag: dict[str, list[str]], words: list[str],
                 substitutions: int, phrasal: int) -> list[RewriteRule]:
    """Random substitution, reordering and insertion rules matching ``tree`` (module docstring)."""
    nodes = list(tree.preorder())
    pre = [t for t in nodes if t.is_preterminal]
    inner = [t for t in nodes if not t.is_leaf and not t.is_preterminal and t.label != "TOP"]
    rules: list[RewriteRule] = []
    for _ in range(substitutions):
        t = pre[int(rng.integers(0, len(pre)))]
        others = [w for w in by_tag.get(t.label, []) if w != t.children[0].label]
        if not others:
            continue
        w = others[int(rng.integers(0, len(others)))]
        rules.append(RewriteRule(Frag(NODE, t.label, (Frag(WORD, t.children[0].label),)),
                                 Frag(NODE, t.label, (Frag(WORD, w),)), (), (0,), frozenset({"substitute"})))
    for _ in range(phrasal):
        if not inner:
            break
        t = inner[int(rng.integers(0, len(inner)))]
        src, items, nvars, nwords = _copy_parts(t)
        var_pos = [i for i, f in enumerate(items) if f.kind == VAR]
        if len(var_pos) >= 2 and rng.random() < 0.5:
            a, b = sorted(rng.choice(var_pos, size=2, replace=False).tolist())
            tgt = list(items)
            tgt[a], tgt[b] = tgt[b], tgt[a]
            links = list(range(nvars))
            ia, ib = var_pos.index(a), var_pos.index(b)
            links[ia], links[ib] = links[ib], links[ia]
            rules.append(RewriteRule(src, Frag(NODE, t.label, tuple(tgt)), tuple(links),
                                     tuple(range(nwords)), frozenset({"reorder"})))
        else:
            k = int(rng.integers(0, len(items) + 1))
            tgt = [*items[:k], Frag(WORD, words[int(rng.integers(0, len(words)))]), *items[k:]]
            wl: list[int | None] = []
            j = 0
            for i, f in enumerate(tgt):
                if f.kind == WORD:
                    if i == k:
                        wl.append(None)
                    else:
                        wl.append(j)
                        j += 1
            rules.append(RewriteRule(src, Frag(NODE, t.label, tuple(tgt)), tuple(range(nvars)), tuple(wl),
                                     frozenset({"insert"})))
    return rules


def main() -> None:
    ap = argparse.ArgumentParser(description="Time the rewriting chart on dev sentences (module docstring).")
    ap.add_argument("--data", type=Path, default=DATA, help="JSONL with a 'text' field per line")
    ap.add_argument("--sentences", type=int, default=20, help="how many sentences (from the top)")
    ap.add_argument("--repeats", type=int, default=3, help="decodes per sentence and mode (best kept)")
    ap.add_argument("--substitutions", type=int, default=20, help="lexical substitution rules per sentence")
    ap.add_argument("--phrasal", type=int, default=6, help="reordering/insertion rules per sentence")
    ap.add_argument("--word-ratio", type=float, default=0.6, help="words budget: this share of n")
    ap.add_argument("--char-ratio", type=float, default=0.6, help="chars budget: this share of the chars")
    ap.add_argument("--max-states", type=int, default=None, help="beam per vertex (default: exact)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from dualdecomp.data.parsing import parse_text  # lazy: spaCy is slow to import; --help needs none

    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    sentences = [parse_text(r["text"], str(r.get("id", i))) for i, r in enumerate(rows[:args.sentences])]
    by_tag: dict[str, set[str]] = {}
    for s in sentences:
        for w, t in zip(s.tokens, s.tags, strict=True):
            by_tag.setdefault(t, set()).add(w)
    tags = {t: sorted(ws) for t, ws in by_tag.items()}
    vocab = sorted({w for s in sentences for w in s.tokens})
    rng = np.random.default_rng(args.seed)
    cases = []
    t_build = []
    for s in sentences:
        tree = from_dependency(s)
        rules = random_rules(rng, tree, tags, vocab, args.substitutions, args.phrasal)
        t0 = time.perf_counter()
        hg = build_rewrite_hypergraph(tree, rules, rewriting_coverage_rules)
        t_build.append(time.perf_counter() - t0)
        scores = rng.normal(size=hg.num_hyperedges)
        lm = rng.normal(-3.0, 1.0, size=(len(hg.vocab) + 2,) * 2)
        cases.append((s, hg, scores, lm))
    print(json.dumps({"kind": "build", "sentences": len(cases),
                      "median_tokens": statistics.median(s.n for s, *_ in cases),
                      "median_hyperedges": statistics.median(hg.num_hyperedges for _, hg, *_ in cases),
                      "median_vertices": statistics.median(hg.num_vertices for _, hg, *_ in cases),
                      "median_vocab": statistics.median(len(hg.vocab) for _, hg, *_ in cases),
                      "median_build_ms": round(1000 * statistics.median(t_build), 2)}))

    def budget_of(mode: str, s, hg) -> Budget | None:
        if mode == "words":
            return Budget.words(max(1, round(args.word_ratio * s.n)))
        if mode == "chars":
            return Budget.chars(int(args.char_ratio * hg.source_chars))
        return None

    s0, hg0, sc0, lm0 = cases[0]
    t0 = time.perf_counter()
    for mode in ("free", "words", "chars"):
        try:
            decode(hg0, sc0, lm0, budget_of(mode, s0, hg0))
        except InputError:
            pass
    print(json.dumps({"kind": "compile", "seconds": round(time.perf_counter() - t0, 2)}))

    for mode in ("free", "words", "chars"):
        times, extra, per_vertex, peak, cells, certified, infeasible, lost = [], [], [], [], [], 0, 0, 0
        for s, hg, scores, lm in cases:
            budget = budget_of(mode, s, hg)
            best = float("inf")
            d = None
            for _ in range(args.repeats):
                _reset_peak()
                before = _status_mb("VmRSS")
                t0 = time.perf_counter()
                try:
                    d = decode(hg, scores, lm, budget, args.max_states)
                except InputError:  # no rewrite meets the budget
                    d = None
                except SolverError:  # the beam lost every rewrite within the budget
                    d = "lost"
                best = min(best, time.perf_counter() - t0)
                extra.append(_status_mb("VmHWM") - before)
            times.append(best * 1000)
            if d is None or d == "lost":
                infeasible += d is None
                lost += d == "lost"
                continue
            certified += int(d.certified)
            per_vertex.append(d.states / hg.num_vertices)
            peak.append(d.peak_states)
            cells.append(d.cells)
        times.sort()
        print(json.dumps({
            "kind": "decode", "mode": mode, "sentences": len(cases),
            "median_ms": round(statistics.median(times), 2),
            "p90_ms": round(times[min(len(times) - 1, int(0.9 * len(times)))], 2),
            "max_ms": round(times[-1], 2),
            "peak_extra_mb": round(max(extra), 1),
            "mean_states_per_vertex": round(statistics.mean(per_vertex), 1) if per_vertex else None,
            "max_states_one_vertex": max(peak) if peak else None,
            "median_table_cells": statistics.median(cells) if cells else None,
            "certified": certified, "infeasible": infeasible, "beam_lost": lost}))


if __name__ == "__main__":
    main()
