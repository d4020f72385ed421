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
* ``"kind": "bounded"`` — with the configuration's default limit (its measured ``max_tokens``; 300
  before W3.1, when this was a 2,000-token line), the cost of a line one token longer in a batch (its
  error row, without parsing it): seconds and extra memory.

A configuration stops growing n once one point takes more than ``--max-seconds`` (the sweep says so with
``"stopped"``). Run ``python benchmarks/memory.py [--lengths 10 20 40 80 160 300] [--configs default
lm-only ...] [--max-seconds 60]``; on a shared machine, run a reduced sweep and say so.

``--fit`` (issue W3.1): the growth of every shipped configuration and its default ``--max-tokens``,
written into its JSON as ``"growth"`` with ``--write`` (:mod:`dualdecomp.models.configuration.growth`;
then the model directory's ``MANIFEST.json`` is rewritten). A configuration with a ``"base"`` inherits its
base's growth and is not measured. For each configuration:

* one runner process loads the model as ``dualdecomp compress`` does (the model, spaCy, one warm-up
  compression so the kernels are compiled): its resident set then is ``baseline_mib``;
* each length n is measured ``--repeats`` times (2), each in a fresh process forked from it
  (``"kind": "fit_point"``; the least CPU time and the most memory are kept): one
  free-length ``Compressor.compress`` of a real sentence of n tokens (sentences of ``eval.dev.jsonl``
  concatenated, parsed once beforehand; parsing is excluded), as the configuration really decodes (a
  sentence over ``fallback.max_tokens`` by its fallback components). Time is the CPU time of that call
  (``time.process_time``: user + system of the process, all its threads), not wall-clock time, so the
  load of other jobs on a shared machine does not count; memory is the peak resident set over the
  resident set just before the call (``extra_mib``, Linux VmHWM reset before it), and the total is
  ``baseline_mib + extra_mib``;
* lengths double from 100 (``--fit-lengths``; a configuration with its own ``max_tokens`` is measured at
  a quarter, half, three quarters and all of it) while the next one is predicted (from the last two
  points' slopes) to stay under ``--stop-seconds`` of CPU and the memory budget; each run is capped by
  ``RLIMIT_CPU`` (``--cpu-limit``) and ``RLIMIT_AS`` (the budget plus a margin), and a run stopped by a cap
  is the upper bound ``exceeded_at``; a configuration with a fallback is also run once at
  ``fallback.max_tokens`` with all its components (``"kind": "fallback_check"``, not in the fit);
* ``"kind": "growth"``: least-squares fits of log(CPU seconds) and log(extra MiB) against log(n) over the
  last two lengths measured (``FIT_POINTS``: the largest, a factor 2 apart, where the leading term
  dominates; a fit over more, smaller lengths underestimated the exponent of the memory, e.g. n^1.5
  instead of n^1.95 for the bigram features, and so overestimated the limit), the memory only over points
  of at least 16 MiB (else ``"memory": null``: not binding), and the limit by the rule of
  :func:`dualdecomp.models.configuration.growth.limit_from_growth`: the largest n whose fitted CPU time stays
  within 60 s and whose ``baseline_mib`` + fitted extra memory within 2,048 MiB (``--budget-seconds``,
  ``--budget-mib``), at most twice the longest length measured and below ``exceeded_at``, rounded down
  to two significant digits, never below ``fallback.max_tokens``.

Run ``nice python benchmarks/memory.py --fit | tee fit.jsonl`` (about 20 minutes for the shipped model on
a 2-core machine; ``benchmarks/memory_fit.jsonl`` is the run the shipped growth comes from), then
``python benchmarks/memory.py --fit --from fit.jsonl --write`` (or ``--fit --write`` at once).
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import pickle
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import this_machine  # the sibling module (this folder is on sys.path)

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


def _tokens(n: int, corpus: str = "written.dev.jsonl") -> list[str]:
    from dualdecomp.data.jsonl import read_corpus

    items = read_corpus(ROOT / "data" / "corpora" / corpus)
    out: list[str] = []
    while len(out) < n:
        for it in items:
            out.extend(it.text)
            if len(out) >= n:
                break
    return out[:n]


def _trim() -> None:
    """Give freed heap memory back to the OS (glibc), so the next allocations show in the resident set."""
    from dualdecomp.core.memory import release_freed_memory

    release_freed_memory()


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
    """A line one token over the configuration's default limit, in a batch: its error row's cost."""
    from dualdecomp.app.batch import BatchOptions, run_batch

    comp = compressor_cls(MODEL, config)
    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "in.jsonl"
        n = comp.max_tokens + 1
        inp.write_text(json.dumps({"id": "long", "text": " ".join(_tokens(n))}) + "\n")
        _trim()
        _reset_peak()
        before = _status_mb("VmRSS")
        start = time.perf_counter()
        rows, _ = run_batch(inp, None, comp, BatchOptions(deterministic=True))
        seconds = time.perf_counter() - start
        peak = _status_mb("VmHWM")
    return {"kind": "bounded", "config": config or "default", "n": n, "max_tokens": comp.max_tokens,
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


# --- --fit: the growth of each configuration and its default --max-tokens (issue W3.1) -------------------

FIT_CORPUS = "eval.dev.jsonl"
FIT_POINTS = 2  # the growth is fitted over the last (largest) lengths measured
MIN_FIT_MIB = 16.0  # memory increments below this are allocator noise, not growth


def _raw_config(name: str) -> dict:
    path = MODEL / "config.json" if name == "default" else MODEL / "configs" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _fit_names() -> list[str]:
    """The configurations measured by --fit: the default and every configs/*.json without a base."""
    names = sorted(q.stem for q in (MODEL / "configs").glob("*.json"))
    return ["default", *[n for n in names if "base" not in _raw_config(n)]]


def _fit_grid(spec: dict, lengths: list[int]) -> list[int]:
    cap = spec.get("max_tokens")
    if isinstance(cap, int):  # a configuration with its own bound: measured up to it
        return sorted({max(cap * k // 4, 2) for k in (1, 2, 3, 4)})
    return lengths


def _predict(points: list[dict], key: str, n: int) -> float:
    """The value of ``key`` at ``n`` extrapolated from the last two points (cubic after a single one)."""
    pts = [p for p in points if p.get(key, 0) > 0]
    if not pts:
        return 0.0
    last = pts[-1]
    slope = 3.0
    if len(pts) >= 2:
        prev = pts[-2]
        slope = max(float(np.log(last[key] / prev[key]) / np.log(last["n"] / prev["n"])), 1.0)
    return last[key] * (n / last["n"]) ** slope


def _run_forked(comp, sentence, cpu_limit: float, as_limit: int | None) -> dict:
    """One measurement in a process forked from the loaded runner (see the module docstring)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: measure, report on the pipe, exit without cleanup
        os.close(r)
        out: dict
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit), int(cpu_limit) + 5))
            if as_limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
            _trim()
            _reset_peak()
            before = _status_mb("VmRSS")
            start = time.process_time()
            wall = time.perf_counter()
            result = comp.compress(sentence)
            cpu = time.process_time() - start
            wall = time.perf_counter() - wall
            peak = _status_mb("VmHWM")
            out = {"cpu_seconds": round(cpu, 4), "wall_seconds": round(wall, 4),
                   "extra_mib": round(peak - before, 1), "certified": bool(result.result.certified),
                   "note": result.note}
        except MemoryError:
            out = {"exceeded": "memory (MemoryError under RLIMIT_AS)"}
        except BaseException as exc:  # noqa: BLE001 (reported, the runner goes on)
            out = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    deadline = time.monotonic() + 4 * cpu_limit + 30
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            status = os.waitpid(pid, 0)[1]
        else:
            time.sleep(0.05)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    if data:
        return json.loads(data)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return {"exceeded": f"time (killed by signal {os.WTERMSIG(status)} at the CPU or wall-clock cap)"}
    return {"exceeded": f"killed (status {status}: out of memory under RLIMIT_AS?)"}


def _repeated(comp, sentence, cpu_limit: float, as_limit: int | None, repeats: int) -> dict:
    """``repeats`` forked runs of one length: the least CPU time (others' load only adds to it), the most
    memory; the first run that fails is the result."""
    runs = []
    for _ in range(repeats):
        run = _run_forked(comp, sentence, cpu_limit, as_limit)
        if "cpu_seconds" not in run:
            return run
        runs.append(run)
    best = min(runs, key=lambda r: r["cpu_seconds"])
    return {**best, "extra_mib": max(r["extra_mib"] for r in runs),
            "cpu_seconds_runs": [r["cpu_seconds"] for r in runs]}


def _runner(args) -> int:
    """Measure one configuration at its lengths (a subprocess of --fit; JSON lines on stdout)."""
    from dualdecomp.app.compressor import Compressor
    from dualdecomp.data.parsing import parse_tokens

    name = args.runner
    with open(args.sentences, "rb") as fh:
        sentences = pickle.load(fh)
    spec = _raw_config(name)
    fallback = (spec.get("fallback") or {}).get("max_tokens")
    grid = _fit_grid(spec, args.fit_lengths)
    comp = Compressor(MODEL, None if name == "default" else name, max_tokens=max([*grid, fallback or 1]))
    warm = parse_tokens([_tokens(10, FIT_CORPUS)])[0]  # loads spaCy, as dualdecomp compress does
    comp.compress(warm)
    comp.compress(warm)
    _trim()
    baseline = _status_mb("VmRSS")
    print(json.dumps({"kind": "fit_baseline", "config": name, "baseline_mib": round(baseline, 1)}),
          flush=True)
    headroom_mib = args.budget_mib - baseline
    as_limit = None
    if headroom_mib > 0:
        as_limit = int((_status_mb("VmSize") + headroom_mib + 512) * 2 ** 20)
    if fallback is not None:
        point = _repeated(comp, sentences[fallback], args.cpu_limit, as_limit, args.repeats)
        print(json.dumps({"kind": "fallback_check", "config": name, "n": fallback, **point}), flush=True)
    points: list[dict] = []
    for n in grid:
        if n <= (fallback or 0):
            continue
        cpu_guess, mib_guess = _predict(points, "cpu_seconds", n), _predict(points, "extra_mib", n)
        if points and (cpu_guess > args.stop_seconds or baseline + mib_guess > 1.25 * args.budget_mib):
            print(json.dumps({"kind": "fit_stop", "config": name, "n": n,
                              "predicted_cpu_seconds": round(cpu_guess, 1),
                              "predicted_total_mib": round(baseline + mib_guess)}), flush=True)
            break
        point = {"n": n, **_repeated(comp, sentences[n], args.cpu_limit, as_limit, args.repeats)}
        print(json.dumps({"kind": "fit_point", "config": name, **point}), flush=True)
        if "cpu_seconds" not in point:
            break
        points.append(point)
    return 0


def _fit_law(points: list[dict], key: str) -> dict | None:
    xs, ys = [p["n"] for p in points], [p[key] for p in points]
    if len(xs) < 2:
        return None
    exponent, intercept = np.polyfit(np.log(xs), np.log(ys), 1)
    return {"exponent": round(float(max(exponent, 0.0)), 3), "coefficient": float(f"{np.exp(intercept):.4g}")}


def _growth(name: str, lines: list[dict], budget_seconds: float, budget_mib: float, measured: str) -> dict:
    """The "growth" object of one configuration from its measurement lines (the rule of the docstring)."""
    from dualdecomp.models.configuration import PowerLaw, limit_from_growth

    base = [ln for ln in lines if ln["kind"] == "fit_baseline" and ln["config"] == name]
    points = [ln for ln in lines if ln["kind"] == "fit_point" and ln["config"] == name]
    good = [p for p in points if "cpu_seconds" in p and p["cpu_seconds"] > 0]
    if not base or len(good) < 2:
        raise SystemExit(f"{name}: fewer than two lengths measured, no growth")
    exceeded = [p["n"] for p in points if "exceeded" in p]
    last = good[-FIT_POINTS:]
    time_law = _fit_law(last, "cpu_seconds")
    memory_law = _fit_law([p for p in last if p["extra_mib"] >= MIN_FIT_MIB], "extra_mib")
    baseline = base[-1]["baseline_mib"]
    lengths = [p["n"] for p in good]
    spec = _raw_config(name)
    floor = (spec.get("fallback") or {}).get("max_tokens") or 1
    limit = limit_from_growth(PowerLaw(**time_law), None if memory_law is None else PowerLaw(**memory_law),
                              baseline, tuple(lengths), budget_seconds, budget_mib,
                              min(exceeded) if exceeded else None, floor)
    return {"time": time_law, "memory": memory_law, "baseline_mib": baseline, "lengths": lengths,
            "exceeded_at": min(exceeded) if exceeded else None,
            "budget": {"seconds": budget_seconds, "mib": budget_mib}, "measured": measured,
            "max_tokens": limit}


def _write_growth(growths: dict[str, dict]) -> None:
    """Write each configuration's growth into its JSON, then the model's MANIFEST.json."""
    from dualdecomp.core.model_files import write_manifest

    for name, growth in growths.items():
        path = MODEL / "config.json" if name == "default" else MODEL / "configs" / f"{name}.json"
        spec = json.loads(path.read_text(encoding="utf-8"))
        spec["growth"] = growth
        path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    write_manifest(MODEL)


def _measured_by_config(lines: list[dict]) -> dict[str, str]:
    """Each configuration's ``measured`` text: that of the last ``fit_setup`` line listing it (a file may
    join runs of different days, each configuration's lines after its own run's setup line)."""
    out: dict[str, str] = {}
    for ln in lines:
        if ln["kind"] == "fit_setup":
            out.update(dict.fromkeys(ln["configs"], ln["measured"]))
    return out


def _fit(args) -> int:
    """--fit: measure (or read ``--from``), print the growth lines, write them with --write."""
    names = args.configs or _fit_names()
    here = this_machine().summary()
    if args.from_file:
        lines = [json.loads(ln) for ln in Path(args.from_file).read_text().splitlines() if ln.strip()]
        measured = _measured_by_config(lines)
    else:
        from dualdecomp.data.parsing import parse_tokens

        when = (f"{here}; the least CPU time of {args.repeats} free-length compressions "
                "(parsing excluded), benchmarks/memory.py --fit")
        measured = dict.fromkeys(names, when)
        wanted = set()
        for name in names:
            spec = _raw_config(name)
            wanted.update(_fit_grid(spec, args.fit_lengths))
            if (spec.get("fallback") or {}).get("max_tokens"):
                wanted.add(spec["fallback"]["max_tokens"])
        sentences = {n: parse_tokens([_tokens(n, FIT_CORPUS)])[0] for n in sorted(wanted)}
        print(json.dumps({"kind": "fit_setup", "configs": names, "lengths": args.fit_lengths,
                          "corpus": FIT_CORPUS, "measured": when}), flush=True)
        lines = []
        with tempfile.TemporaryDirectory() as tmp:
            store = Path(tmp) / "sentences.pickle"
            store.write_bytes(pickle.dumps(sentences))
            for name in names:
                cmd = [sys.executable, __file__, "--runner", name, "--sentences", str(store),
                       "--cpu-limit", str(args.cpu_limit), "--stop-seconds", str(args.stop_seconds),
                       "--repeats", str(args.repeats),
                       "--budget-mib", str(args.budget_mib), "--fit-lengths", *map(str, args.fit_lengths)]
                start = time.perf_counter()
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.config_timeout)
                    out, err, code = proc.stdout, proc.stderr, proc.returncode
                except subprocess.TimeoutExpired as exc:
                    out, err, code = exc.stdout or "", f"runner timed out after {args.config_timeout} s", -1
                    out = out.decode() if isinstance(out, bytes) else out
                for ln in out.splitlines():
                    if ln.startswith("{"):
                        lines.append(json.loads(ln))
                        print(ln, flush=True)
                if code != 0:
                    print(json.dumps({"kind": "fit_runner_failed", "config": name, "code": code,
                                      "stderr": err[-2000:]}), flush=True)
                print(json.dumps({"kind": "fit_runner", "config": name,
                                  "wall_seconds": round(time.perf_counter() - start, 1)}), flush=True)
    growths = {}
    for name in names:
        try:
            growths[name] = _growth(name, lines, args.budget_seconds, args.budget_mib,
                                    measured.get(name, here))
        except SystemExit as exc:
            print(json.dumps({"kind": "growth", "config": name, "error": str(exc)}), flush=True)
            continue
        print(json.dumps({"kind": "growth", "config": name, "growth": growths[name]}), flush=True)
    if args.write:
        _write_growth(growths)
    return 0


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
    p.add_argument("--fit", action="store_true",
                   help="measure each configuration's growth and default --max-tokens (module docstring)")
    p.add_argument("--write", action="store_true", help="with --fit: write the growth into the configs")
    p.add_argument("--from", dest="from_file", default=None,
                   help="with --fit: the JSON lines of an earlier --fit run instead of measuring")
    p.add_argument("--fit-lengths", type=int, nargs="+", default=[100, 200, 400, 800, 1600, 3200, 6400])
    p.add_argument("--cpu-limit", type=float, default=90.0, help="--fit: CPU seconds allowed to one run")
    p.add_argument("--repeats", type=int, default=2,
                   help="--fit: runs per length (the least CPU time and the most memory are kept)")
    p.add_argument("--stop-seconds", type=float, default=40.0,
                   help="--fit: do not run a length predicted to take more CPU seconds than this")
    p.add_argument("--budget-seconds", type=float, default=60.0, help="--fit: the time budget of the limit")
    p.add_argument("--budget-mib", type=float, default=2048.0, help="--fit: the memory budget of the limit")
    p.add_argument("--config-timeout", type=float, default=600.0,
                   help="--fit: wall-clock seconds allowed to one configuration's runner")
    p.add_argument("--runner", default=None, help=argparse.SUPPRESS)
    p.add_argument("--sentences", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.runner:
        return _runner(args)
    if args.fit:
        return _fit(args)

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
