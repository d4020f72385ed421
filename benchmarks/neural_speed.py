"""Decode time and memory of the neural configurations against the old default, in one run (issue W2.2).

The dev sentences of 25 to 35 tokens (``eval.dev``, ``broadcast.dev``, ``written.dev``; parsed once,
outside the measurement) are compressed at free length by each configuration (``neural-mcdonald`` is
the default since W2.2) with
``Compressor.compress`` (potentials — the encoder for the neural component — plus decoding). One JSON
line per configuration: median and mean milliseconds per sentence, the ratio of the median to the old
default's (``config.json`` before W2.2, i.e. McDonald+Dep+LM by DD, measured in the same run), the share
certified, and the peak resident memory of the process (Linux ``VmHWM``) after that configuration ran.
The neural configurations run with the onnxruntime encoder (the default); ``--numpy-encoder CONFIG ...``
adds rows for those configurations with the numpy reference encoder (``DUALDECOMP_ENCODER=numpy``), so
the two encoders are compared in the same run.

``python benchmarks/neural_speed.py [--configs neural neural-dependency-lm ...] [--numpy-encoder neural]
[--limit N]``
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import statistics
import time
from pathlib import Path

from dualdecomp.app.compressor import Compressor
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"
DEV = ("eval.dev.jsonl", "broadcast.dev.jsonl", "written.dev.jsonl")
BASELINE = "mcdonald-dependency-lm"


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", nargs="+",
                   default=[BASELINE, "neural", "neural-mcdonald", "neural-chain-mcdonald",
                            "neural-dependency-lm", "neural-mcdonald-dependency-lm"])
    p.add_argument("--numpy-encoder", nargs="*", default=["neural", "neural-dependency-lm"], metavar="CONFIG",
                   help="configurations also measured with the numpy encoder (default: %(default)s)")
    p.add_argument("--limit", type=int, default=60, help="sentences measured (default: %(default)s)")
    p.add_argument("--min-tokens", type=int, default=25)
    p.add_argument("--max-tokens", type=int, default=35)
    args = p.parse_args(argv)
    items = [it for name in DEV for it in read_corpus(ROOT / "data" / "corpora" / name)
             if args.min_tokens <= it.n <= args.max_tokens][:args.limit]
    sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
    medians: dict[str, float] = {}
    runs = [(name, "default") for name in dict.fromkeys([BASELINE, *args.configs])]
    runs += [(name, "numpy") for name in args.numpy_encoder]
    for name, encoder in runs:
        if encoder == "numpy":
            os.environ["DUALDECOMP_ENCODER"] = "numpy"
        else:
            os.environ.pop("DUALDECOMP_ENCODER", None)
        comp = Compressor(MODEL, name)
        comp.compress(sentences[0])  # compile and load outside the measurement
        times, certified = [], 0
        for s in sentences:
            start = time.perf_counter()
            out = comp.compress(s)
            times.append(1000 * (time.perf_counter() - start))
            certified += bool(out.result.certified)
        label = name if encoder == "default" else f"{name} [numpy encoder]"
        medians[label] = statistics.median(times)
        print(json.dumps({"config": label, "sentences": len(sentences),
                          "mean_tokens": round(sum(s.n for s in sentences) / len(sentences), 1),
                          "median_ms": round(medians[label], 2), "mean_ms": round(statistics.fmean(times), 2),
                          "ratio_to_old_default": round(medians[label] / medians[BASELINE], 3),
                          "certified": round(certified / len(sentences), 3),
                          "peak_rss_mb": round(_peak_mb(), 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
