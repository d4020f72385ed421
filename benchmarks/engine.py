"""Benchmark of the dual-decomposition engine against the exact ILP on the Clarke & Lapata dev sentences.

The problem is the joint Bigram + Trigram decode of every sentence of ``broadcast.dev.jsonl`` and
``written.dev.jsonl``: the bigram potentials of the trained model
(``dualdecomp.models.bigram.store.load_model``; random
potentials of the same sizes when it cannot be loaded, which the ``setup`` line says) plus the KenLM
trigram tensor of ``data/default_model/lm.binary``, at free length and at each sentence's gold length
(the first reference compression).

Prints one JSON line per measurement (docs/architecture.md §3), every ratio from this run:

* ``"kind": "setup"`` — data, model and LM used;
* ``"kind": "certificates"`` — for each length setting, length method, iteration budget (50, 200, 1000)
  and with/without tightening: certificate rate, mean gap (all sentences and uncertified ones), mean
  iterations, number of length gaps found by the bisection;
* ``"kind": "timing"`` — per length setting: mean seconds per sentence of the DD (default options) and of
  the ILP (CBC by default) in the same run, their ratio (mean ILP / mean DD, and the median of the
  per-sentence ratios), and how many certified DD answers have the ILP's optimal value;
* ``"kind": "summary"`` — the issue's goals (≥ 99 % certified with tightening, DD ≥ 20x faster than
  the ILP) against what was measured.

Run ``python benchmarks/engine.py [--limit N] [--modes free gold] [--no-ilp] [--ilp-solver highs]``.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FILES = ("broadcast.dev.jsonl", "written.dev.jsonl")
BUDGETS = (50, 200, 1000)


@dataclass(frozen=True)
class Instance:
    """One dev sentence with its potentials."""

    file: str
    id: str
    n: int
    gold: int | None
    B: np.ndarray
    T: np.ndarray


def emit(row: dict) -> None:
    print(json.dumps(row, allow_nan=False), flush=True)


def load_instances(files: list[str], limit: int | None, model_dir: str, lm_path: str,
                   seed: int) -> tuple[list[Instance], dict]:
    """Parse the dev sentences and compute their bigram and trigram potentials."""
    from dualdecomp.data.alignment import keep_vector
    from dualdecomp.data.jsonl import read_corpus
    from dualdecomp.data.parsing import parse_tokens
    from dualdecomp.models.lm.model import load_lm

    setup: dict = {"kind": "setup", "files": files}
    try:
        from dualdecomp.models.bigram.store import load_model

        model = load_model(model_dir)
        setup["bigram_model"] = f"trained model {model_dir}"
    except Exception as exc:  # noqa: BLE001 - any failure means: fall back, and say why
        model = None
        setup["bigram_model"] = ("RANDOM potentials N(0, 10^2) of the same sizes "
                                 f"({type(exc).__name__}: {exc})")
    lm = load_lm(lm_path)
    setup["lm"] = lm_path
    rng = np.random.default_rng(seed)
    out: list[Instance] = []
    for name in files:
        items = read_corpus(ROOT / "data" / "corpora" / name)
        sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
        for item, sentence in zip(items, sentences, strict=True):
            n = sentence.n
            if model is not None:
                B = model.potentials(sentence)
            else:
                B = rng.normal(scale=10.0, size=(n + 2, n + 2))
            T = lm.trigram_tensor(sentence.tokens)
            gold = int(keep_vector(item.text, item.compressions[0]).sum()) if item.compressions else None
            out.append(Instance(name, item.id, n, gold, np.asarray(B, dtype=np.float64), T))
    if limit is not None:
        out = out[:limit]
    ns = [it.n for it in out]
    setup.update(sentences=len(out), mean_n=float(np.mean(ns)), max_n=int(max(ns)),
                 with_gold=sum(it.gold is not None for it in out))
    return out, setup


def components(inst: Instance) -> list:
    from dualdecomp.solvers.bigram.solver import Bigram
    from dualdecomp.solvers.ngram.solver import Trigram

    return [Bigram(inst.B), Trigram(inst.T)]


def length_of(inst: Instance, mode: str) -> int | None:
    return None if mode == "free" else inst.gold


def finite_mean(values: list[float]) -> float | None:
    vals = [v for v in values if math.isfinite(v)]
    return float(np.mean(vals)) if vals else None


def certificate_rows(instances: list[Instance], mode: str, method: str, budgets: list[int]) -> list[dict]:
    from dualdecomp import decode

    rows = []
    for budget in budgets:
        for tighten in (False, True):
            results = [decode(components(it), length=length_of(it, mode), max_iterations=budget,
                              tighten=tighten, length_method=method) for it in instances]
            gaps = [r.gap for r in results]
            uncert = [r.gap for r in results if not r.certified]
            rows.append({
                "kind": "certificates", "length": mode, "length_method": method if mode != "free" else None,
                "max_iterations": budget, "tighten": tighten, "sentences": len(results),
                "certified": sum(r.certified for r in results),
                "rate": sum(r.certified for r in results) / len(results),
                "mean_gap": finite_mean(gaps), "mean_gap_uncertified": finite_mean(uncert),
                "infinite_gaps": sum(not math.isfinite(g) for g in gaps),
                "mean_iterations": float(np.mean([r.iterations for r in results])),
                "length_gaps": sum(r.length_gap for r in results),
                "mean_seconds": float(np.mean([r.seconds for r in results])),
            })
    return rows


def timing_row(instances: list[Instance], mode: str, solver: str, time_limit: float | None,
               progress: bool) -> dict:
    from dualdecomp import decode, ilp
    from dualdecomp.core.errors import SolverError

    dd_times, ilp_times, ratios = [], [], []
    agree = certified_both = dd_cert = ilp_cert = failures = 0
    for k, inst in enumerate(instances):
        comps = components(inst)
        length = length_of(inst, mode)
        t0 = time.perf_counter()
        dd = decode(comps, length=length)
        t_dd = time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            exact = ilp.decode(comps, length=length, solver=solver, time_limit=time_limit)
        except SolverError:
            exact = None
            failures += 1
        t_ilp = time.perf_counter() - t0
        dd_times.append(t_dd)
        ilp_times.append(t_ilp)
        ratios.append(t_ilp / max(t_dd, 1e-9))
        dd_cert += dd.certified
        if exact is not None:
            ilp_cert += exact.certified
            if dd.certified and exact.certified:
                certified_both += 1
                agree += abs(dd.primal - exact.primal) <= 1e-9 * max(1.0, abs(exact.primal))
        if progress:
            print(f"  [{mode}] {k + 1}/{len(instances)} n={inst.n} dd={t_dd:.4f}s ilp={t_ilp:.3f}s",
                  file=sys.stderr, flush=True)
    mean_dd, mean_ilp = float(np.mean(dd_times)), float(np.mean(ilp_times))
    return {"kind": "timing", "length": mode, "ilp_solver": solver, "sentences": len(instances),
            "dd_mean_seconds": mean_dd, "ilp_mean_seconds": mean_ilp, "ratio_ilp_over_dd": mean_ilp / mean_dd,
            "median_per_sentence_ratio": float(statistics.median(ratios)),
            "min_per_sentence_ratio": float(min(ratios)),
            "dd_certified": dd_cert, "ilp_certified": ilp_cert, "both_certified": certified_both,
            "same_optimal_value": agree, "ilp_failures": failures}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", default=list(FILES))
    parser.add_argument("--limit", type=int, default=None, help="only the first N sentences")
    parser.add_argument("--modes", nargs="+", default=["free", "gold"], choices=["free", "gold"])
    parser.add_argument("--methods", nargs="+", default=["bisection", "exact"],
                        choices=["bisection", "exact"], help="length methods measured at gold length")
    parser.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    parser.add_argument("--model", default=str(ROOT / "data" / "default_model"))
    parser.add_argument("--lm", default=str(ROOT / "data" / "default_model" / "lm.binary"))
    parser.add_argument("--seed", type=int, default=0, help="seed of the random fallback potentials")
    parser.add_argument("--no-ilp", action="store_true", help="skip the ILP timing")
    parser.add_argument("--ilp-solver", default="cbc", choices=["cbc", "highs"])
    parser.add_argument("--ilp-time-limit", type=float, default=None)
    parser.add_argument("--progress", action="store_true", help="per-sentence ILP progress on stderr")
    args = parser.parse_args(argv)

    instances, setup = load_instances(args.files, args.limit, args.model, args.lm, args.seed)
    emit(setup)
    from dualdecomp import decode

    decode(components(instances[0]), length=instances[0].gold)  # warm-up: numba caches

    best_with: dict[str, float] = {}
    for mode in args.modes:
        usable = [it for it in instances if mode == "free" or it.gold is not None]
        for method in (args.methods if mode == "gold" else ["bisection"]):
            for row in certificate_rows(usable, mode, method, args.budgets):
                emit(row)
                if row["tighten"] and row["max_iterations"] == max(args.budgets) and method == "bisection":
                    best_with[mode] = row["rate"]
    ratios: dict[str, float] = {}
    if not args.no_ilp:
        for mode in args.modes:
            usable = [it for it in instances if mode == "free" or it.gold is not None]
            row = timing_row(usable, mode, args.ilp_solver, args.ilp_time_limit, args.progress)
            ratios[mode] = row["ratio_ilp_over_dd"]
            emit(row)
    emit({"kind": "summary", "goal_certified_rate": 0.99, "goal_speedup": 20.0,
          "certified_rate_with_tightening_default_options": best_with,
          "certified_goal_met": {k: v >= 0.99 for k, v in best_with.items()},
          "speedup_ilp_over_dd": ratios, "speedup_goal_met": {k: v >= 20.0 for k, v in ratios.items()}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
