"""Joint decoding of a rewrite with a compression configuration on dev sentences (W3.3 item 3).

The first ``--sentences`` sentences of ``../shared/data/rewriting/dev.jsonl`` are parsed (spaCy; outside
the measurement) and rewritten by ``Rewriter(MODEL, joint=CONFIG)`` (the rewriting chart joined with the
compression configuration by dual decomposition, :mod:`dualdecomp.app.rewriter`) and by the chart alone.
Without ``--model`` a tiny rewriting model is trained first, as in tests/test_rewrite_cli.py (15 training
and 5 dev sources, one epoch; a few seconds).

It prints one JSON line per budget (``--ratio`` values; ``free`` is no budget): the share certified, the
median, 90th percentile and maximum of the joint decoding time per sentence (s; the first decode,
which compiles numba kernels, is decoded once before timing), the median time of the chart alone, the
median gap of the uncertified and how many joint rewrites differ from the chart's own.

Run ``python benchmarks/rewrite_joint.py [--model DIR] [--joint config] [--sentences 50]``.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before numba is imported anywhere

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from dualdecomp.app.rewriter import Rewriter
from dualdecomp.core.errors import DualDecompError
from dualdecomp.data.locations import CHECKOUT_ROOT
from dualdecomp.data.parsing import parse_text
from dualdecomp.solvers.rewriting import Budget

SHARED = CHECKOUT_ROOT.parent / "shared" / "data" / "rewriting"


def _tiny_model(out: Path) -> Path:
    from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings, train_rewrite_model

    settings = RewriteTrainingSettings(data_dir=str(SHARED), out_dir=str(out / "model"),
                                       cache_dir=str(out / "cache"), limit=15, dev_limit=5, epochs=1)
    return train_rewrite_model(settings, say=lambda _: None)


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    """Parse the arguments, decode, print one JSON line per budget."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="rewriting model directory (default: train a tiny one)")
    ap.add_argument("--joint", default="config", help="compression configuration (default: config)")
    ap.add_argument("--joint-model", help="compression model directory (default: the embedded one)")
    ap.add_argument("--sentences", type=int, default=50)
    ap.add_argument("--ratio", type=float, action="append", default=None,
                    help="a character-ratio budget to measure too (repeatable)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(args.model) if args.model else _tiny_model(Path(tmp))
        joint = Rewriter(model, joint=args.joint, joint_model=args.joint_model)
        alone = Rewriter(model)
        lines = (SHARED / "dev.jsonl").read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["text"] for line in lines[:args.sentences]]
        sentences = [parse_text(t) for t in texts]
        joint.rewrite_sentence(sentences[0])  # compile the kernels
        for ratio in [None, *(args.ratio or [])]:
            budget = None if ratio is None else Budget.ratio(ratio)
            times, own, gaps, certified, differ, failed = [], [], [], 0, 0, 0
            for s in sentences:
                try:
                    r = joint.rewrite_sentence(s, budget)
                    a = alone.rewrite_sentence(s, budget)
                except DualDecompError:
                    failed += 1
                    continue
                times.append(r.seconds)
                own.append(a.seconds)
                certified += r.certified
                differ += r.words != a.words
                if not r.certified:
                    gaps.append(r.gap)
            done = len(times)
            print(json.dumps({
                "budget": "free" if ratio is None else f"ratio {ratio}", "joint": args.joint,
                "sentences": len(sentences), "decoded": done, "failed": failed,
                "certified": certified, "certified_share": round(certified / max(done, 1), 3),
                "median_s": round(statistics.median(times), 4), "p90_s": round(_percentile(times, 0.9), 4),
                "max_s": round(max(times), 4), "chart_alone_median_s": round(statistics.median(own), 4),
                "median_gap_uncertified": statistics.median(gaps) if gaps else None,
                "differs_from_chart_alone": differ, "n_median": statistics.median(s.n for s in sentences),
            }), flush=True)


if __name__ == "__main__":
    main()
