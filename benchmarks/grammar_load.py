"""Grammar loading: the T3 grammar as JSON against the binary grammar file (W3.3: loading <= 5 s).

Each load runs in a fresh Python process, so its peak resident memory (``resource.getrusage``) is its
own; the growth of the resident set over the load itself (imports aside) is reported too. Loaded with
:func:`load_grammar`: the shipped binary T3 grammar (``grammar.bin``) and the same grammar written as
gzip-compressed JSON (``grammar.json.gz``, the format shipped before). After each load, a first use: the
first 10,000 rules (decoded on first use from the binary file) and their productions' candidates. Prints
one JSON object: seconds (median of ``--repeat`` processes), memory, file sizes and the JSON/binary
load-time ratio.

The binary file is zlib-compressed, so loading inflates it into memory once (~13 MB) instead of
memory-mapping it: the file is 4 times smaller than the uncompressed payload (3.2 MB against 12.8 MB;
the rewriting grammar's memory-mapped layout took 36 MB for these rules) and the inflation costs 0.1 s.

Usage: ``python benchmarks/grammar_load.py [--grammar data/default_model/t3/grammar.bin] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, resource, sys, time
from dualdecomp.solvers.transducer import load_grammar
path = sys.argv[1]
def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
before = rss()
t0 = time.perf_counter()
g = load_grammar(path)
load = time.perf_counter() - t0
t1 = time.perf_counter()
prods = {r.production() for r in g.rules[:10000]}
cands = sum(len(g.candidates(p)) for p in prods)
use = time.perf_counter() - t1
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rules": len(g), "load_s": load, "use_s": use, "peak_rss_mb": peak,
                  "grown_mb": rss() - before, "candidates": cands}))
"""

CONVERT = r"""
import sys
from dualdecomp.solvers.transducer import load_grammar, save_grammar
save_grammar(load_grammar(sys.argv[1], validate=True), sys.argv[2])
"""


def child(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], check=True, capture_output=True, text=True,
                         cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def runs(path: Path, repeat: int) -> dict:
    rows = [child(path) for _ in range(repeat)]
    best = {k: statistics.median(r[k] for r in rows) for k in ("load_s", "use_s", "peak_rss_mb", "grown_mb")}
    return {**best, "rules": rows[0]["rules"], "candidates": rows[0]["candidates"],
            "load_s_all": [round(r["load_s"], 3) for r in rows]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grammar", default=str(ROOT / "data/default_model/t3/grammar.bin"))
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per format (median)")
    args = parser.parse_args()
    src = Path(args.grammar)
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "grammar.json.gz"
        t0 = time.perf_counter()
        # in a child too: a parent holding the decoded grammar would lend its peak resident set to the
        # children it forks (Linux keeps the high-water mark across exec)
        subprocess.run([sys.executable, "-c", CONVERT, str(src), str(text)], check=True, cwd=ROOT)
        convert = time.perf_counter() - t0
        bn = runs(src, args.repeat)
        js = runs(text, args.repeat)
        text_bytes = text.stat().st_size
    assert js["rules"] == bn["rules"] and js["candidates"] == bn["candidates"]
    print(json.dumps({
        "grammar": str(src), "rules": bn["rules"], "binary_bytes": src.stat().st_size,
        "json_gz_bytes": text_bytes,
        "json_load_s": round(js["load_s"], 3), "binary_load_s": round(bn["load_s"], 3),
        "ratio_json_over_binary": round(js["load_s"] / bn["load_s"], 1),
        "json_load_s_all": js["load_s_all"], "binary_load_s_all": bn["load_s_all"],
        "json_first_use_s": round(js["use_s"], 3), "binary_first_use_s": round(bn["use_s"], 3),
        "json_peak_rss_mb": round(js["peak_rss_mb"], 1), "binary_peak_rss_mb": round(bn["peak_rss_mb"], 1),
        "json_rss_growth_mb": round(js["grown_mb"], 1), "binary_rss_growth_mb": round(bn["grown_mb"], 1),
        "decode_all_and_write_json_s": round(convert, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
