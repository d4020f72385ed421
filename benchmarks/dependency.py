"""Speed of the dependency parsers of ``solvers/dependency.py``: one JSON line per (variant, n).

Each line holds the median wall time of ``repeats`` calls after a warm-up call (numba compilation),
the number of DP operations (rule instances visited by the kernel's inner loops), the time per
operation, and ratios measured in the same run: against first-order skip parsing at the same n
(``vs_skip``) and against the same variant at the previous n (``vs_prev_n``; O(n^3) predicts 8 for a
doubling). Usage: ``python benchmarks/dependency.py [--sizes 30 60] [--repeats 21] [--seed 0]``.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # single thread, before numba is imported

# Run as a script, this directory comes first on sys.path and ``benchmarks/solvers.py`` would shadow the
# ``solvers`` package: look in the repository root instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
if os.path.dirname(_HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(_HERE))

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from solvers import dependency  # noqa: E402

VARIANTS = [  # skip first: the others are compared with it
    "skip",
    "parse",
    "parse_second_order",
    "skip_bigram",
    "second_order_skip",
    "second_order_skip_bigram",
]


def operations(n: int, second_order: bool) -> int:
    """Inner-loop iterations of the chart kernel for n tokens (one per rule instance, weights aside)."""
    total = 0
    for w in range(1, n + 1):
        for i in range(n + 1 - w):
            inner = i >= 1
            if second_order:
                # box, first-R + next-R, first-L + next-L, compl-R, compl-L
                total += w * inner + (2 * w - 1) + w * inner + w + w * inner
            else:
                # shared attach-R/L split, compl-R, compl-L
                total += w + w + w * inner
    return total


def make_call(variant: str, n: int, rng: np.random.Generator) -> Callable[[], object]:
    """A zero-argument call of ``variant`` on a random instance of n tokens."""
    A = rng.normal(size=(n + 1, n + 1))
    B = rng.normal(size=(n + 2, n + 2))
    S = rng.normal(size=(n + 1, n + 1, n + 1))
    u = rng.normal(size=n)
    calls = {
        "parse": lambda: dependency.parse(A),
        "parse_second_order": lambda: dependency.parse(A, S),
        "skip": lambda: dependency.solve(A, u=u, lam=0.5),
        "skip_bigram": lambda: dependency.solve(A, B, u=u, lam=0.5),
        "second_order_skip": lambda: dependency.solve(A, S=S, u=u, lam=0.5),
        "second_order_skip_bigram": lambda: dependency.solve(A, B, S, u=u, lam=0.5),
    }
    return calls[variant]


def median_seconds(call: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls after one warm-up call."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    """Print one JSON line per (variant, n)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 60])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    skip_time: dict[int, float] = {}
    previous: dict[str, tuple[int, float]] = {}
    for n in args.sizes:
        for variant in VARIANTS:
            seconds = median_seconds(make_call(variant, n, rng), args.repeats)
            if variant == "skip":
                skip_time[n] = seconds
            ops = operations(n, second_order="second_order" in variant)
            record = {
                "benchmark": "dependency",
                "variant": variant,
                "n": n,
                "median_ms": round(seconds * 1e3, 4),
                "operations": ops,
                "ns_per_operation": round(seconds * 1e9 / max(ops, 1), 3),
                "vs_skip": round(seconds / skip_time[n], 3) if n in skip_time else None,
                "vs_prev_n": None,
            }
            if variant in previous:
                prev_n, prev_seconds = previous[variant]
                record["vs_prev_n"] = {"n": prev_n, "ratio": round(seconds / prev_seconds, 3)}
            previous[variant] = (n, seconds)
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
