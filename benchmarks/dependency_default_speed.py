"""Decode time of two configurations, interleaved (W3.5, a shared machine): by default, the default with and
without the dependency component.

``benchmarks/neural_speed.py`` times one configuration after the other, so on a machine shared with
other jobs a change of load between the two runs moves their ratio. This script times both on the same
60 dev sentences of 25 to 35 tokens (as ``neural_speed.py`` picks them), **alternating** the two
configurations sentence by sentence (the order swapped every sentence), ``--rounds`` times over. It
prints the machine first (``benchmarks/machine.py``: CPU, cores, int8 and bfloat16 instructions), then one
JSON line per configuration (median wall-clock ms and median CPU ms per sentence, CPU being
``time.process_time``: user + system of the process, all threads) and one line with the ratios of the
medians, candidate over default.

``--model M --configs A B`` times configurations A and B of the model folder M instead (B over A in the
ratios).

``python benchmarks/dependency_default_speed.py [--rounds 3] [--model M] [--configs A B]``
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import statistics
import time
from pathlib import Path

from machine import this_machine  # the sibling module (this folder is on sys.path)

from dualdecomp.app.compressor import Compressor
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"
DEV = ("eval.dev.jsonl", "broadcast.dev.jsonl", "written.dev.jsonl")
CONFIGS = ("neural-chain-mcdonald", "neural-chain-mcdonald-dependency")


def main(argv: list[str] | None = None) -> int:
    """Time the two configurations interleaved and print their medians and ratios."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3, help="passes over the sentences (default: %(default)s)")
    p.add_argument("--limit", type=int, default=60, help="sentences measured (default: %(default)s)")
    p.add_argument("--model", type=Path, default=MODEL, help="model folder (default: the shipped one)")
    p.add_argument("--configs", nargs=2, default=list(CONFIGS), metavar=("A", "B"),
                   help="the two configurations, B over A in the ratios (default: %(default)s)")
    args = p.parse_args(argv)
    configs = tuple(args.configs)
    if configs[0] == configs[1]:
        p.error("--configs needs two different configurations")
    items = [it for name in DEV for it in read_corpus(ROOT / "data" / "corpora" / name)
             if 25 <= it.n <= 35][:args.limit]
    sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
    print(json.dumps(this_machine().as_json()), flush=True)
    comps = {name: Compressor(args.model, name) for name in configs}
    for comp in comps.values():
        comp.compress(sentences[0])  # compile and load outside the measurement
    wall: dict[str, list[float]] = {name: [] for name in configs}
    cpu: dict[str, list[float]] = {name: [] for name in configs}
    certified = {name: 0 for name in configs}
    for r in range(args.rounds):
        for i, s in enumerate(sentences):
            order = configs if (i + r) % 2 == 0 else configs[::-1]
            for name in order:
                w0, c0 = time.perf_counter(), time.process_time()
                out = comps[name].compress(s)
                wall[name].append(1000 * (time.perf_counter() - w0))
                cpu[name].append(1000 * (time.process_time() - c0))
                certified[name] += bool(out.result.certified)
    medians = {}
    for name in configs:
        medians[name] = (statistics.median(wall[name]), statistics.median(cpu[name]))
        print(json.dumps({"config": name, "sentences": len(sentences), "rounds": args.rounds,
                          "median_wall_ms": round(medians[name][0], 2),
                          "median_cpu_ms": round(medians[name][1], 2),
                          "certified": round(certified[name] / len(wall[name]), 3)}), flush=True)
    base, cand = medians[configs[0]], medians[configs[1]]
    print(json.dumps({"ratio_wall": round(cand[0] / base[0], 3), "ratio_cpu": round(cand[1] / base[1], 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
