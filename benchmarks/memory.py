"""Peak memory and time against sentence length for every shipped configuration (issue W2.5).

For the default configuration (``config.json``) and each ``data/default_model/configs/*.json``, one
sentence of n tokens (the tokens of ``written.dev.jsonl`` concatenated; parsed once, outside the
measurement) is compressed at free length with ``--max-tokens`` raised to n, so the measurement is the
real cost of the pipeline (potentials + decoding). For each (configuration, n):

* ``"kind": "point"`` — ``seconds`` (wall clock of ``Compressor.compress``), ``peak_mb`` (the process'
  peak resident set during that call, Linux ``VmHWM`` reset through ``/proc/self/clear_refs`` before it),
  ``extra_mb`` (``peak_mb`` minus the resident set just before the call: what the sentence itself cost);
* ``"kind": "fit"`` — per configuration, the growth exponents: least-squares slopes of log(seconds) and
  log(extra_mb) against log(n) over the points with n >= ``--fit-from`` (a slope of 3 is cubic growth);
* ``"kind": "lm_storage"`` — per n, the bytes of the LM's context-pruned potentials
  (:class:`~dualdecomp.solvers.ngram.packed.PackedTrigram`: distinct contexts S) against the dense
  (n+2)^3 float64 tensor it replaces, and their ratio;
* ``"kind": "sibling_storage"`` — per n (up to ``--sibling-max-n``), the second-order dependency model's
  sibling scores: bytes of the factored form the parser reads
  (:class:`~dualdecomp.solvers.dependency.siblings.SiblingScores`) against the dense (n+1)^3 tensor the
  potentials used to build, and the extra peak memory and time of potentials + one free-length parse with
  each (the dense one only while the tensor is under ``--dense-limit-mb``; the same optimum is checked);
* ``"kind": "bounded"`` — with the default ``--max-tokens`` (300), the cost of a 2,000-token line in a
  batch (its error row, without parsing it): seconds and extra memory.

A configuration stops growing n once one point takes more than ``--max-seconds`` (the sweep says so with
``"stopped"``). Run ``python benchmarks/memory.py [--lengths 10 20 40 80 160 300] [--configs default
lm-only ...] [--max-seconds 60]``; on a shared machine, run a reduced sweep and say so.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"


def _status_mb(field: str) -> float:
    """A ``/proc/self/status`` memory field (VmRSS, VmHWM) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status (Linux only)")


def _reset_peak() -> None:
    """Reset the peak resident set (VmHWM) to the current one (Linux >= 4.0)."""
    Path("/proc/self/clear_refs").write_text("5")


def _tokens(n: int) -> list[str]:
    from dualdecomp.data.jsonl import read_corpus

    items = read_corpus(ROOT / "data" / "corpora" / "written.dev.jsonl")
    out: list[str] = []
    while len(out) < n:
        for it in items:
            out.extend(it.text)
            if len(out) >= n:
                break
    return out[:n]


def _trim() -> None:
    """Give freed heap memory back to the OS (glibc), so the next allocations show in the resident set."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def _measure(compressor, sentence) -> dict:
    _trim()
    _reset_peak()
    before = _status_mb("VmRSS")
    start = time.perf_counter()
    comp = compressor.compress(sentence)
    seconds = time.perf_counter() - start
    peak = _status_mb("VmHWM")
    return {"seconds": round(seconds, 4), "peak_mb": round(peak, 1), "extra_mb": round(peak - before, 1),
            "certified": bool(comp.result.certified), "note": comp.note}


def _slope(xs: list[float], ys: list[float]) -> float | None:
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    lx, ly = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return round(float(np.polyfit(lx, ly, 1)[0]), 2)


def _bounded(compressor_cls, config: str | None) -> dict:
    """A 2,000-token line in a batch under the default --max-tokens: its error row's cost."""
    from dualdecomp.app.batch import BatchOptions, run_batch

    comp = compressor_cls(MODEL, config)
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "in.jsonl"
        inp.write_text(json.dumps({"id": "long", "text": " ".join(_tokens(2000))}) + "\n")
        _trim()
        _reset_peak()
        before = _status_mb("VmRSS")
        start = time.perf_counter()
        rows, _ = run_batch(inp, None, comp, BatchOptions(deterministic=True))
        seconds = time.perf_counter() - start
        peak = _status_mb("VmHWM")
    return {"kind": "bounded", "config": config or "default", "n": 2000, "max_tokens": comp.max_tokens,
            "seconds": round(seconds, 4), "extra_mb": round(peak - before, 1),
            "error_row": "error" in rows[0]}


def _sibling_storage(sentence, warm, dense_limit_mb: float) -> dict:
    """Factored against dense sibling scores of the shipped second-order dependency model on one sentence."""
    from dualdecomp.models.dependency.store import load_dependency_model
    from dualdecomp.solvers.dependency.solver import solve

    model = load_dependency_model(MODEL / "dependency")
    n = sentence.n
    out: dict = {"kind": "sibling_storage", "n": n, "second_order": model.second_order}
    A, S = model.potentials(warm)
    solve(A, S=S)  # compile the kernel outside the measurement
    dense_mb = (n + 1) ** 3 * 8 / 2 ** 20
    for form in ("factored", "dense"):
        if form == "dense" and dense_mb > dense_limit_mb:
            out["dense"] = (f"not run: the tensor alone is {dense_mb:.0f} MB > "
                            f"--dense-limit-mb {dense_limit_mb:g}")
            break
        _trim()
        _reset_peak()
        before = _status_mb("VmRSS")
        start = time.perf_counter()
        A, S = model.potentials(sentence)
        if form == "dense":
            S = S.dense()
        sol = solve(A, S=S)
        seconds = time.perf_counter() - start
        peak = _status_mb("VmHWM")
        out[form] = {"seconds": round(seconds, 3), "extra_mb": round(peak - before, 1), "score": sol.score}
        if form == "factored":
            out["factored_mb"] = round(S.nbytes / 2 ** 20, 2)
        del A, S, sol
    out["dense_tensor_mb"] = round(dense_mb, 1)
    if isinstance(out.get("dense"), dict):
        out["same_score"] = out["dense"]["score"] == out["factored"]["score"]
        ratio = out["dense"]["extra_mb"] / max(out["factored"]["extra_mb"], 0.1)
        out["dense_over_factored_extra_mb"] = round(ratio, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80, 160, 300, 1000, 2000])
    p.add_argument("--configs", nargs="+", default=None,
                   help="'default' and names of configs/*.json (default: all shipped)")
    p.add_argument("--max-seconds", type=float, default=60.0,
                   help="stop growing n for a configuration after a point slower than this")
    p.add_argument("--fit-from", type=int, default=20, help="smallest n used in the growth fit")
    p.add_argument("--sibling-max-n", type=int, default=1000,
                   help="largest n of the sibling-storage measurement (0: skip it)")
    p.add_argument("--dense-limit-mb", type=float, default=1500.0,
                   help="measure the dense sibling tensor only while it is smaller than this")
    p.add_argument("--max-extra-mb", type=float, default=None,
                   help="stop growing n for a configuration after a point taking more extra memory than this")
    p.add_argument("--skip-storage", action="store_true", help="no lm_storage / sibling_storage lines")
    p.add_argument("--storage-only", action="store_true",
                   help="only the lm_storage and sibling_storage measurements (no configuration sweep)")
    args = p.parse_args(argv)

    from dualdecomp.app.compressor import Compressor
    from dualdecomp.core.errors import DualDecompError
    from dualdecomp.data.parsing import parse_tokens

    names = args.configs or ["default", *sorted(q.stem for q in (MODEL / "configs").glob("*.json"))]
    lengths = sorted(set(args.lengths))
    parse_start = time.perf_counter()
    sentences = {n: parse_tokens([_tokens(n)])[0] for n in lengths}
    print(json.dumps({"kind": "setup", "configs": names, "lengths": lengths, "model": str(MODEL),
                      "parse_seconds_all": round(time.perf_counter() - parse_start, 2),
                      "baseline_rss_mb": round(_status_mb("VmRSS"), 1)}), flush=True)
    from dualdecomp.models.lm.model import load_lm

    lm = load_lm(MODEL / "lm.binary")
    for n in [] if args.skip_storage else lengths:
        start = time.perf_counter()
        packed = lm.trigram_rows(sentences[n].tokens)
        dense = (n + 2) ** 3 * 8
        print(json.dumps({"kind": "lm_storage", "n": n, "contexts": int(packed.rows.shape[0]),
                          "packed_mb": round(packed.nbytes / 2 ** 20, 2),
                          "dense_mb": round(dense / 2 ** 20, 2),
                          "dense_over_packed": round(dense / packed.nbytes, 1),
                          "seconds": round(time.perf_counter() - start, 4)}), flush=True)
    for n in [] if args.skip_storage else lengths:
        if n <= args.sibling_max_n:
            print(json.dumps(_sibling_storage(sentences[n], sentences[min(lengths)], args.dense_limit_mb)),
                  flush=True)
    if args.storage_only:
        return 0
    for name in names:
        config = None if name == "default" else name
        xs, ts, ms = [], [], []
        stopped = None
        for n in lengths:
            comp = Compressor(MODEL, config, max_tokens=n)
            comp.compress(sentences[min(lengths)])  # compile the kernels outside the measurement
            try:
                point = _measure(comp, sentences[n])
            except (DualDecompError, MemoryError) as exc:  # e.g. the configuration's own max_tokens
                _trim()
                print(json.dumps({"kind": "point", "config": name, "n": n,
                                  "error": f"{type(exc).__name__}: {exc}"}), flush=True)
                stopped = f"stopped at n = {n}: {type(exc).__name__}"
                break
            print(json.dumps({"kind": "point", "config": name, "n": n, **point}), flush=True)
            xs.append(n)
            ts.append(point["seconds"])
            ms.append(point["extra_mb"])
            if point["seconds"] > args.max_seconds:
                stopped = f"stopped after n = {n} ({point['seconds']} s > --max-seconds {args.max_seconds})"
                break
            if args.max_extra_mb is not None and point["extra_mb"] > args.max_extra_mb:
                stopped = (f"stopped after n = {n} ({point['extra_mb']} MB > --max-extra-mb "
                           f"{args.max_extra_mb:g})")
                break
        fit = [(x, t, m) for x, t, m in zip(xs, ts, ms, strict=True) if x >= args.fit_from]
        print(json.dumps({"kind": "fit", "config": name, "from_n": args.fit_from,
                          "to_n": max(xs, default=None),
                          "time_exponent": _slope([f[0] for f in fit], [f[1] for f in fit]),
                          "memory_exponent": _slope([f[0] for f in fit], [f[2] for f in fit]),
                          "stopped": stopped}), flush=True)
        print(json.dumps(_bounded(Compressor, config)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
