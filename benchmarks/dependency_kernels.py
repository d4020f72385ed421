"""The dependency chart kernels against an earlier version of themselves, in one run (W3.2 item 5).

The kernels of ``solvers/dependency/kernels.py`` at a git revision (``--baseline``; by default
:data:`BEFORE_ONE_DP`, the last version that wrote the max and count rules separately) are loaded from
``git show`` into a temporary module beside the current ones; both fill the same random first- and
second-order charts, in both semirings, and must give identical arrays (bit for bit: the refactoring
only moved code). Prints one JSON line per case (docs/architecture.md §3): the median
seconds of each version, ``ratio`` = current / baseline (measured in this run), and the process's peak
resident memory (``peak_rss_mb``; the charts are O(N²) per item).

Run ``python benchmarks/dependency_kernels.py [--baseline REV] [--sizes 30 60 100] [--repeats 5]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported anywhere

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from dualdecomp.solvers.dependency import kernels as current

ROOT = Path(__file__).resolve().parents[1]
KERNELS = "solvers/dependency/kernels.py"
BEFORE_ONE_DP = "eea190b7f030302e3d312fedbd1402fcf1ef23cc"
"""The kernels before the semiring's sum was written once (``_plus``)."""


def load_revision(rev: str, directory: Path) -> ModuleType:
    """The kernels module as it was at git revision ``rev`` (its numba cache in ``directory``)."""
    source = subprocess.run(["git", "show", f"{rev}:{KERNELS}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    path = directory / "baseline_kernels.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def instance(n: int, count: bool, rng: np.random.Generator) -> dict:
    """Random arc, premise and factored sibling weights for ``n`` words (0/1 weights when counting)."""
    N = n + 1

    def weights(shape):
        return rng.integers(0, 2, shape).astype(float) if count else rng.normal(size=shape)

    P = np.triu(weights((N, N)))
    if not count:
        P[np.tril_indices(N, -1)] = -np.inf
    K, T = 3, 64
    return {"A": weights((N, N)), "P": P, "table": weights(T), "hs": rng.integers(0, T // 2, (K, N, N)),
            "md": rng.integers(0, T // 2, (K, N, N)), "scale": 0.5}


def run(module: ModuleType, order: int, x: dict, count: bool) -> tuple:
    if order == 1:
        return module.first_order_chart(x["A"], x["P"], count)
    return module.second_order_chart(x["A"], x["table"], x["hs"], x["md"], x["scale"], x["P"], count)


def median_seconds(module: ModuleType, order: int, x: dict, count: bool, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run(module, order, x, count)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BEFORE_ONE_DP,
                        help="git revision of the baseline kernels (default: before one DP, one place)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 60, 100])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dualdecomp-kernels-") as tmp:
        baseline = load_revision(args.baseline, Path(tmp))
        rng = np.random.default_rng(args.seed)
        same_everywhere = True
        for n in args.sizes:
            for order in (1, 2):
                for count in (False, True):
                    x = instance(n, count, rng)
                    new, old = run(current, order, x, count), run(baseline, order, x, count)  # warm-up
                    same = all(np.array_equal(a, b) for a, b in zip(new, old, strict=True))
                    same_everywhere &= same
                    t_new = median_seconds(current, order, x, count, args.repeats)
                    t_old = median_seconds(baseline, order, x, count, args.repeats)
                    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                    print(json.dumps({"kernel": f"{'first' if order == 1 else 'second'}_order_chart",
                                      "semiring": "count" if count else "max", "n": n,
                                      "baseline": args.baseline, "identical": bool(same),
                                      "baseline_s": round(t_old, 6), "current_s": round(t_new, 6),
                                      "ratio": round(t_new / t_old, 3), "peak_rss_mb": round(peak, 1)}),
                          flush=True)
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
