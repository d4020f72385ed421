"""Benchmark of the exact solvers' numba kernels (single thread).

Prints one JSON line per measurement (docs/architecture.md §3):

* ``"kind": "first_call"`` — the first call of each case in this process: numba compilation, or loading
  the on-disk cache (``"numba_cache"`` says which), plus one solve;
* ``"kind": "timing"`` — after that warm-up: the median time of the public call (``median_ms``, input
  validation included) and of the compiled kernel alone (``kernel_median_ms``), the kernel's number of
  DP cell updates (``ops``), ``ns_per_op`` = kernel median / ops, and ``ratio_to_target`` = median_ms /
  the issue's target when there is one. All ratios come from this run.

Run ``python benchmarks/solvers.py [--sizes 30 60] [--seed 0] [--min-seconds 0.3] [--cold]``
(``--cold``: compile into an empty numba cache directory, so ``first_call_ms`` is the compile time).
More solvers (e.g. the dependency parsers) are added as entries of :data:`CASES`.
"""

from __future__ import annotations

import os
import sys

os.environ["NUMBA_NUM_THREADS"] = "1"  # before numba is imported anywhere
if "--cold" in sys.argv[1:]:  # measure compilation: an empty numba cache directory for this process
    import atexit
    import shutil
    import tempfile

    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="dualdecomp-bench-numba-")
    atexit.register(shutil.rmtree, os.environ["NUMBA_CACHE_DIR"], True)

# ``solvers`` package: look in the repository root instead.

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from dualdecomp.core.checks import as_padded_u
from dualdecomp.solvers.bigram import solver as bigram
from dualdecomp.solvers.dependency import solver as dependency
from dualdecomp.solvers.ngram import solver as ngram


@dataclass(frozen=True)
class Prepared:
    """One benchmark instance.

    Attributes
    ----------
    call : callable
        The public API call (input validation included).
    kernel : callable or None
        The compiled kernel alone, on already validated arrays.
    dispatchers : tuple
        The numba dispatchers the case uses (to report cache hits/misses of the first call).
    params : dict
        Extra fields for the JSON line (e.g. the exact length).
    ops : int
        Number of DP cell updates of one kernel call.
    """

    call: Callable[[], Any]
    kernel: Callable[[], Any] | None
    dispatchers: tuple[Any, ...]
    params: dict[str, Any]
    ops: int


@dataclass(frozen=True)
class Case:
    """A solver/mode to benchmark: ``setup(n, rng)`` builds a :class:`Prepared` instance."""

    solver: str
    mode: str
    setup: Callable[[int, np.random.Generator], Prepared]
    targets_ms: Mapping[int, float] = field(default_factory=dict)


def _bigram_case(mode: str) -> Callable[[int, np.random.Generator], Prepared]:
    def setup(n: int, rng: np.random.Generator) -> Prepared:
        B = rng.normal(size=(n + 2, n + 2))
        u = rng.normal(size=n)
        ue = as_padded_u(u, n)
        if mode == "lengths":
            return Prepared(
                call=lambda: bigram.solve_lengths(B, u),
                kernel=lambda: bigram._lengths_kernel(B, ue),
                dispatchers=(bigram._lengths_kernel,),
                params={"length": "all"},
                ops=bigram.dp_updates(n, all_lengths=True),
            )
        if mode == "exact":
            length = n // 2
            return Prepared(
                call=lambda: bigram.solve(B, u, length),
                kernel=lambda: bigram._exact_kernel(B, ue, length),
                dispatchers=(bigram._exact_kernel, bigram._count_tables, bigram._finish, bigram._predecessor),
                params={"length": length},
                ops=bigram.dp_updates(n, length),
            )
        return Prepared(
            call=lambda: bigram.solve(B, u),
            kernel=lambda: bigram._free_kernel(B, ue),
            dispatchers=(bigram._free_kernel,),
            params={"length": None},
            ops=bigram.dp_updates(n),
        )

    return setup


def _trigram_case(mode: str) -> Callable[[int, np.random.Generator], Prepared]:
    def setup(n: int, rng: np.random.Generator) -> Prepared:
        T = rng.normal(size=(n + 2, n + 2, n + 2))
        u = rng.normal(size=n)
        ue = as_padded_u(u, n)
        if mode == "lengths":
            return Prepared(
                call=lambda: ngram.solve_lengths(T, u),
                kernel=lambda: ngram._lengths_kernel(T, ue),
                dispatchers=(ngram._lengths_kernel,),
                params={"length": "all"},
                ops=ngram.dp_updates(n, all_lengths=True),
            )
        if mode == "exact":
            length = n // 2
            return Prepared(
                call=lambda: ngram.solve(T, u, length),
                kernel=lambda: ngram._exact_kernel(T, ue, length),
                dispatchers=(ngram._exact_kernel, ngram._count_tables, ngram._finish, ngram._predecessor),
                params={"length": length},
                ops=ngram.dp_updates(n, length),
            )
        return Prepared(
            call=lambda: ngram.solve(T, u),
            kernel=lambda: ngram._free_kernel(T, ue),
            dispatchers=(ngram._free_kernel,),
            params={"length": None},
            ops=ngram.dp_updates(n),
        )

    return setup


def dependency_operations(n: int, second_order: bool) -> int:
    """Inner-loop iterations of the dependency chart kernel for n tokens (one per rule instance)."""
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


def _dependency_case(variant: str) -> Callable[[int, np.random.Generator], Prepared]:
    def setup(n: int, rng: np.random.Generator) -> Prepared:
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
        return Prepared(call=calls[variant], kernel=None, dispatchers=(), params={"length": None},
                        ops=dependency_operations(n, "second_order" in variant))

    return setup


#: Benchmarked cases (free length, exact length n // 2, every length via ``solve_lengths``; the dependency
#: parsers of contract 3); targets (ms) are the issue's.
CASES: list[Case] = [
    Case("bigram", "free", _bigram_case("free")),
    Case("bigram", "exact", _bigram_case("exact"), {30: 0.2, 60: 1.0}),
    Case("bigram", "lengths", _bigram_case("lengths")),
    Case("trigram", "free", _trigram_case("free")),
    Case("trigram", "exact", _trigram_case("exact"), {30: 5.0, 60: 50.0}),
    Case("trigram", "lengths", _trigram_case("lengths")),
    Case("dependency", "parse", _dependency_case("parse")),
    Case("dependency", "skip", _dependency_case("skip")),
    Case("dependency", "skip_bigram", _dependency_case("skip_bigram"), {30: 10.0, 60: 150.0}),
    Case("dependency", "parse_second_order", _dependency_case("parse_second_order")),
    Case("dependency", "second_order_skip", _dependency_case("second_order_skip")),
    Case("dependency", "second_order_skip_bigram", _dependency_case("second_order_skip_bigram"),
         {30: 50.0, 60: 800.0}),
]


def _median_seconds(fn: Callable[[], Any], min_seconds: float, min_repeats: int = 20) -> tuple[float, int]:
    """Median wall time of ``fn()`` over enough repeats to fill ``min_seconds`` (at least min_repeats)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_repeats or (time.perf_counter() - start < min_seconds and len(times) < 100_000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _cache_state(dispatchers: Sequence[Any]) -> str:
    hits = sum(sum(d.stats.cache_hits.values()) for d in dispatchers)
    misses = sum(sum(d.stats.cache_misses.values()) for d in dispatchers)
    return "hit" if misses == 0 and hits > 0 else ("miss" if hits == 0 else "mixed")


def run(cases: Sequence[Case], sizes: Sequence[int], seed: int, min_seconds: float) -> list[dict[str, Any]]:
    """Benchmark every case at every size; print and return the JSON records.

    Parameters
    ----------
    cases : sequence of Case
        What to benchmark.
    sizes : sequence of int
        Sentence lengths n.
    seed : int
        Seed of the random potentials.
    min_seconds : float
        Minimum measuring time per timing (the median is over at least 20 calls).

    Returns
    -------
    list of dict
        The records, in print order.
    """
    records: list[dict[str, Any]] = []

    def emit(record: dict[str, Any]) -> None:
        records.append(record)
        print(json.dumps(record), flush=True)

    base = {"benchmark": "solvers", "numba_threads": numba.config.NUMBA_NUM_THREADS, "seed": seed}
    for case in cases:
        for index, n in enumerate(sizes):
            rng = np.random.default_rng([seed, n])
            prepared = case.setup(n, rng)
            head = {**base, "solver": case.solver, "mode": case.mode, "n": n, **prepared.params}
            if index == 0:
                t0 = time.perf_counter()
                prepared.call()
                first = time.perf_counter() - t0
                emit(
                    {
                        **head,
                        "kind": "first_call",
                        "first_call_ms": first * 1e3,
                        "numba_cache": _cache_state(prepared.dispatchers),
                    }
                )
            else:
                prepared.call()  # warm-up (new array sizes do not recompile)
            median, repeats = _median_seconds(prepared.call, min_seconds)
            record: dict[str, Any] = {
                **head,
                "kind": "timing",
                "repeats": repeats,
                "median_ms": median * 1e3,
                "ops": prepared.ops,
            }
            if prepared.kernel is not None:
                prepared.kernel()
                kmedian, _ = _median_seconds(prepared.kernel, min_seconds)
                record["kernel_median_ms"] = kmedian * 1e3
                record["ns_per_op"] = kmedian * 1e9 / prepared.ops
                record["wrapper_overhead_ratio"] = median / kmedian
            else:  # public call only (the dependency wrappers do little besides the kernel)
                record["ns_per_op"] = median * 1e9 / prepared.ops
            target = case.targets_ms.get(n)
            if target is not None:
                record["target_ms"] = target
                record["ratio_to_target"] = median * 1e3 / target
                record["meets_target"] = median * 1e3 <= target
            emit(record)
    return records


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: parse options and run every case."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 60], help="sentence lengths n")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random potentials")
    parser.add_argument("--min-seconds", type=float, default=0.3, help="measuring time per timing")
    parser.add_argument("--only", nargs="*", default=None, help="solver names to run (default: all)")
    parser.add_argument(
        "--cold", action="store_true", help="compile into an empty numba cache (first_call = compile time)"
    )
    args = parser.parse_args(argv)
    cases = [c for c in CASES if args.only is None or c.solver in args.only]
    run(cases, args.sizes, args.seed, args.min_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
