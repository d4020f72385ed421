"""What loading a configuration costs: seconds, the peak resident memory while it loads, and the memory it
holds after decoding the 60 sentences of ``make neural-bench``.

Each configuration runs in a fresh process of its own (peak memory is a process's high-water mark), which
first loads spaCy and the parser through a McDonald compressor and decodes one sentence, so that what is
measured is the configuration's model alone. One JSON line per configuration::

    python benchmarks/load_cost.py                       # the default
    python benchmarks/load_cost.py --configs neural-chain-mcdonald neural-mcdonald

``rss_before_mb``: resident memory before the model loads (Python, spaCy, the parsed sentences);
``load_s``: ``Compressor(config=...)``; ``peak_mb``: the process's peak resident memory (Linux
``VmHWM``), reached while the model loads; ``rss_after_mb``: resident after the sentences.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _memory_mb() -> dict[str, float]:
    """Resident (``VmRSS``) and peak resident (``VmHWM``) memory of this process, in MB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def measure(config: str | None, limit: int) -> dict:
    """Load ``config`` (None: the default) in this process and decode ``limit`` sentences."""
    sys.path.insert(0, str(HERE))
    from neural_speed import timed_items

    from dualdecomp import Compressor

    items = timed_items(limit)
    Compressor(config="mcdonald").compress_tokens(items[0].text)  # spaCy and the parser, outside
    before = _memory_mb()["VmRSS"]
    start = time.perf_counter()
    compressor = Compressor() if config is None else Compressor(config=config)
    load = time.perf_counter() - start
    for item in items:
        compressor.compress_tokens(item.text)
    memory = _memory_mb()
    return {"config": config or "default", "load_s": round(load, 2), "rss_before_mb": round(before),
            "peak_mb": round(memory["VmHWM"]), "rss_after_mb": round(memory["VmRSS"]),
            "sentences": len(items)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=[None], metavar="NAME",
                        help="configurations to load, each in a fresh process (default: the default)")
    parser.add_argument("--limit", type=int, default=60, help="sentences decoded after loading (60)")
    parser.add_argument("--one", metavar="NAME", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(None if args.one == "default" else args.one, args.limit)), flush=True)
        return
    for config in args.configs:
        child = [sys.executable, __file__, "--one", config or "default", "--limit", str(args.limit)]
        out = subprocess.run(child, capture_output=True, text=True, check=False)
        if out.returncode:
            sys.exit(f"load_cost.py: {config or 'default'} failed:\n{out.stderr[-2000:]}")
        print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
