"""Grammar loading: the T3 JSON grammar against the binary grammar file (W3.3: loading <= 5 s).

Each load runs in a fresh Python process, so its peak resident memory (``resource.getrusage``) is its
own; the growth of the resident set over the load itself (imports aside) is reported too. Loaded: the
shipped T3 grammar (``load_grammar`` on ``grammar.json.gz``), then the same rules written as a binary
rewriting grammar (:func:`save_rewrite_grammar`) and mapped back (:func:`load_rewrite_grammar`), then a
first use: every production's candidates and the first 10,000 rules decoded. Prints one JSON object:
seconds, memory, file sizes and the JSON/binary load-time ratio.

Usage: ``python benchmarks/grammar_load.py [--grammar data/default_model/t3/grammar.json.gz]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
if kind == "json":
    from dualdecomp.solvers.transducer import load_grammar
else:
    from dualdecomp.solvers.rewriting import load_rewrite_grammar
before = rss()
t0 = time.perf_counter()
if kind == "json":
    g = load_grammar(path)
    load = time.perf_counter() - t0
    n = len(g)
    use = 0.0
else:
    g = load_rewrite_grammar(path)
    load = time.perf_counter() - t0
    n = len(g)
    t1 = time.perf_counter()
    for p in g.productions():
        g.candidates(p)
    for i in range(min(n, 10000)):
        g.rule(i)
    use = time.perf_counter() - t1
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rules": n, "load_s": load, "use_s": use, "peak_rss_mb": peak, "grown_mb": rss() - before}))
"""


def child(kind: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grammar", default=str(ROOT / "data/default_model/t3/grammar.json.gz"))
    args = parser.parse_args()
    from dualdecomp.solvers.rewriting import RewriteGrammar, from_deletion_rule, save_rewrite_grammar
    from dualdecomp.solvers.transducer import load_grammar

    src = Path(args.grammar)
    js = child("json", src)
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "grammar.bin"
        t0 = time.perf_counter()
        t3 = load_grammar(src)
        save_rewrite_grammar(RewriteGrammar([from_deletion_rule(r) for r in t3.rules]), binary)
        convert = time.perf_counter() - t0
        bn = child("binary", binary)
        size = binary.stat().st_size
    print(json.dumps({
        "grammar": str(src), "rules": js["rules"], "json_bytes": src.stat().st_size, "binary_bytes": size,
        "json_load_s": round(js["load_s"], 3), "binary_load_s": round(bn["load_s"], 3),
        "ratio_json_over_binary": round(js["load_s"] / bn["load_s"], 1),
        "binary_first_use_s": round(bn["use_s"], 3),
        "json_peak_rss_mb": round(js["peak_rss_mb"], 1), "binary_peak_rss_mb": round(bn["peak_rss_mb"], 1),
        "json_rss_growth_mb": round(js["grown_mb"], 1), "binary_rss_growth_mb": round(bn["grown_mb"], 1),
        "convert_and_save_s": round(convert, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
