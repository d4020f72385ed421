"""Speed and memory of the default rewrite (W3.3 target: median <= 200 ms per sentence at free length,
decoding; loading reported separately).

Usage: ``.venv/bin/python benchmarks/rewrite_speed.py [--sentences N] [--model DIR]``. Reads the first N
dev sources of ``../shared/data/rewriting/dev.jsonl``, parses them first (spaCy, not timed as decoding),
then times, per sentence, ``Rewriter.rewrite_sentence`` (derivation forest, scores, the LM matrix, the
exact chart, the keep classifier's encoder) at free length and with ``--chars`` at 60 % of the source.
Prints one JSON object: the model's load time (the keep classifier's encoder included unless
``--no-keep-classifier``), the medians / 90th percentiles / maxima in ms, the share certified, and the
peak resident memory of the process (``ru_maxrss``). The first sentence is decoded once before timing
(numba kernels load from their cache or compile).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

from dualdecomp.app.rewriter import Rewriter
from dualdecomp.data.locations import CHECKOUT_ROOT
from dualdecomp.data.parsing import parse_text
from dualdecomp.solvers.rewriting import Budget


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {"median_ms": round(statistics.median(ordered), 2),
            "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2), "max_ms": round(ordered[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--model", default=None)
    parser.add_argument("--dev", default=str(CHECKOUT_ROOT.parent / "shared" / "data" / "rewriting"
                                             / "dev.jsonl"))
    parser.add_argument("--no-article-agreement", action="store_true",
                        help="decode without the model's article agreement (to measure its cost)")
    parser.add_argument("--no-paired-punctuation", action="store_true",
                        help="decode without paired punctuation (to measure its cost)")
    parser.add_argument("--no-keep-classifier", action="store_true",
                        help="decode without the model's keep classifier (keep weight 0: its encoder is "
                             "not loaded; to measure its cost)")
    args = parser.parse_args()
    texts = [json.loads(line)["text"] for line in Path(args.dev).read_text(encoding="utf-8").splitlines()]
    texts = texts[:args.sentences]
    start = time.perf_counter()
    rewriter = Rewriter(args.model, article_agreement=False if args.no_article_agreement else None,
                        paired_punctuation=False if args.no_paired_punctuation else None,
                        keep_weight=0.0 if args.no_keep_classifier else None)
    rewriter.decoder  # noqa: B018 - load the model now (grammar, LM, weights, the keep classifier's encoder)
    load_s = time.perf_counter() - start
    sentences = [parse_text(t) for t in texts]
    rewriter.rewrite_sentence(sentences[0], None, None)
    report: dict[str, object] = {"sentences": len(sentences), "load_s": round(load_s, 3)}
    for name, budget_of in (("free", lambda s, t: None), ("chars_60pct", lambda s, t: Budget.ratio(0.6))):
        ms, certified = [], 0
        for sentence, text in zip(sentences, texts, strict=True):
            t0 = time.perf_counter()
            result = rewriter.rewrite_sentence(sentence, budget_of(sentence, text), None)
            ms.append(1000 * (time.perf_counter() - t0))
            certified += bool(result.certified)
        report[name] = {**_stats(ms), "certified": f"{certified}/{len(sentences)}"}
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
