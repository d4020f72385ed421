"""The scale of the shipped potentials: what a bonus of 1.0 on a token means (docs/components/your-own.md).

For every token k of the first dev sentences and every component of a configuration (as the decoder gets
it: at its weight, summable bigram paths summed, the length bias inside the component that takes it), the
**keep score difference** Δ_k = (the component's best score with token k kept) − (its best score with k
dropped), from two of its own exact solves with u_k = ±M (M = 1e6). A user's per-token bonus w_k
(``Unary``) changes that component's choice for token k alone when it passes −Δ_k, so |Δ_k| is the scale a
bonus competes with. Prints one JSON object per configuration: per component, the median, the 10th and
the 90th percentile of |Δ_k| over the tokens (finite ones; the count of −inf, i.e. forbidden, choices
apart), and the median |score| of the joint compression per token.

Usage: ``python benchmarks/potential_scale.py [--config NAME ...] [--sentences 50]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from dualdecomp import Compressor, decode
from dualdecomp.data.parsing import parse_tokens

ROOT = Path(__file__).resolve().parents[1]
DEV = [ROOT / "data" / "corpora" / f"{name}.dev.jsonl" for name in ("broadcast", "written", "eval")]
M = 1e6


def keep_differences(component, n: int) -> np.ndarray:
    """Δ_k for k = 0..n-1 (module docstring); -inf/+inf where one side is impossible."""
    out = np.empty(n)
    for k in range(n):
        u = np.zeros(n)
        u[k] = M
        kept = component.solve(u)
        kept_score = kept.score - M if kept.keep[k] else -np.inf
        u[k] = -M
        dropped = component.solve(u)
        dropped_score = dropped.score if not dropped.keep[k] else -np.inf
        out[k] = kept_score - dropped_score
    return out


def measure(config: str | None, sentences: list[list[str]]) -> dict:
    """The statistics of one configuration (module docstring)."""
    compressor = Compressor(config=config)
    deltas: dict[str, list[float]] = {}
    forbidden: dict[str, int] = {}
    per_token = []
    for sentence in parse_tokens(sentences):
        comps, _ = compressor.components(sentence)
        for k, comp in enumerate(comps):
            name = f"{k}:{type(comp).__name__}"
            d = keep_differences(comp, sentence.n)
            deltas.setdefault(name, []).extend(np.abs(d[np.isfinite(d)]).tolist())
            forbidden[name] = forbidden.get(name, 0) + int((~np.isfinite(d)).sum())
        result = decode(comps)
        per_token.append(abs(result.primal) / sentence.n)
    stats = {name: {"median": round(float(np.median(v)), 3), "p10": round(float(np.percentile(v, 10)), 3),
                    "p90": round(float(np.percentile(v, 90)), 3), "tokens": len(v),
                    "forbidden": forbidden[name]} for name, v in deltas.items()}
    return {"config": config or "default (config.json)", "name": compressor.joint.config.name,
            "length_bias": compressor.joint.config.length_bias, "sentences": len(sentences),
            "abs_keep_difference": stats,
            "median_abs_score_per_token": round(float(np.median(per_token)), 3)}


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", nargs="*", default=["default"],
                    help="configurations (default: the model's config.json, named 'default')")
    ap.add_argument("--sentences", type=int, default=50, help="first N sentences of each dev file")
    args = ap.parse_args(argv)
    sentences = []
    for path in DEV:
        with path.open(encoding="utf-8") as fh:
            for line, _ in zip(fh, range(args.sentences), strict=False):
                sentences.append(json.loads(line)["text"].split())
    for config in args.config:
        print(json.dumps(measure(None if config == "default" else config, sentences)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
