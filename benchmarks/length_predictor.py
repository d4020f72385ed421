"""A per-sentence length predictor against the per-corpus length bias, with the shipped default (W3.5).

Google dev (``eval.dev.jsonl``) is cut in two halves as ``make neural-lengths`` cuts it (the first
``n // 2`` lines, then the rest). On the **second** (held-out) half, each sentence is compressed by the
shipped default, Neural+Chain+McDonald by DD, in five ways, and scored by token F1 and compression rate
against its references (macro-averaged over sentences, each sentence's score averaged over its
references, as ``dualdecomp evaluate`` does):

- ``free``: at free length, no length bias (``--config neural-chain-mcdonald``);
- ``news bias``: at free length with the news length bias, calibrated on the first half
  (``--config neural-chain-mcdonald-news``);
- ``expected``: at the fixed length ``L = round(sum_k sigmoid(s_k))``, the token scorer's expected number
  of kept tokens (``s_k`` its keep log-odds, ``data/default_model/neural``);
- ``fitted``: at ``L = round(a * sum_k sigmoid(s_k) + b * n + c)``, least squares on the first half's
  reference lengths (one row per reference);
- ``fitted on free``: at ``L = round(a * F + b * n + c)`` where ``F`` is the default's own free length
  (least squares on the first half, likewise).

Every fixed ``L`` is clipped to ``[1, n]``. One JSON line per way, then one with the fitted
coefficients. The full file's ``free`` and ``expected`` rows (no fitting) are printed too.

``python benchmarks/length_predictor.py [--limit N]``
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
from pathlib import Path

import numpy as np

from dualdecomp.app.compressor import Compressor
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.models.evaluation.compression import compression_rate, token_f1
from dualdecomp.models.neural.store import load_neural_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"
DEV = ROOT / "data" / "corpora" / "eval.dev.jsonl"
DEFAULT = "neural-chain-mcdonald"
NEWS = "neural-chain-mcdonald-news"


def _kept(tokens: list[str], keep) -> list[str]:
    return [t for t, k in zip(tokens, keep, strict=True) if k]


def _score(rows: list[dict], outputs: list[list[str]]) -> dict:
    """Token F1 and CR (percent), macro over sentences, references averaged within a sentence."""
    pairs = list(zip(rows, outputs, strict=True))
    f1 = [np.mean([token_f1(out, ref) for ref in row["refs"]]) for row, out in pairs]
    cr = [compression_rate(row["text"], out) for row, out in pairs]
    return {"token_f1": round(100 * float(np.mean(f1)), 2), "cr": round(100 * float(np.mean(cr)), 2),
            "sentences": len(rows)}


def _fit(features: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of ``targets ~ features @ coef``."""
    return np.linalg.lstsq(features, targets, rcond=None)[0]


def _clip(length: float, n: int) -> int:
    return int(min(max(round(length), 1), n))


def main(argv: list[str] | None = None) -> int:
    """Run the experiment and print one JSON line per way of choosing the length."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=None, help="first N sentences of each half (a quick run)")
    args = p.parse_args(argv)
    items = [it for it in read_corpus(DEV) if it.compressions]
    half = len(items) // 2
    halves = {"first": items[:half][:args.limit], "second": items[half:][:args.limit]}
    default = Compressor(MODEL, DEFAULT)
    news = Compressor(MODEL, NEWS)
    scorer = load_neural_model(MODEL / "neural")
    rows: dict[str, list[dict]] = {}
    for name, part in halves.items():
        sentences = parse_tokens([it.text for it in part], ids=[it.id for it in part])
        out = []
        for it, s in zip(part, sentences, strict=True):
            refs = [_kept(it.text, keep_vector(it.text, c)) for c in it.compressions]
            expected = float(np.sum(1.0 / (1.0 + np.exp(-scorer.keep_logits(s.tokens)))))
            free = default.compress(s)
            out.append({"text": list(it.text), "sentence": s, "refs": refs, "expected": expected,
                        "n": s.n, "free": _kept(it.text, free.keep), "certified": [free.result.certified]})
        rows[name] = out
    # the predictors, fitted on the first half's reference lengths (one row per reference)
    first = rows["first"]
    targets = np.array([len(r) for row in first for r in row["refs"]], dtype=float)
    on_expected = np.array([[row["expected"], row["n"], 1.0] for row in first for _ in row["refs"]])
    on_free = np.array([[len(row["free"]), row["n"], 1.0] for row in first for _ in row["refs"]])
    coef_expected, coef_free = _fit(on_expected, targets), _fit(on_free, targets)
    second = rows["second"]
    ways: dict[str, list[list[str]]] = {"free": [], "news bias": [], "expected": [], "fitted": [],
                                        "fitted on free": []}
    certified = []
    for row in second:
        s, n = row["sentence"], row["n"]
        lengths = [_clip(row["expected"], n),
                   _clip(coef_expected @ [row["expected"], n, 1.0], n),
                   _clip(coef_free @ [len(row["free"]), n, 1.0], n)]
        outs = default.compress_lengths(s, lengths)
        biased = news.compress(s)
        certified += [o.result.certified for o in outs] + [biased.result.certified] + row["certified"]
        ways["free"].append(row["free"])
        ways["news bias"].append(_kept(row["text"], biased.keep))
        for way, o in zip(("expected", "fitted", "fitted on free"), outs, strict=True):
            ways[way].append(_kept(row["text"], o.keep))
    refs_cr = _score(second, [r["refs"][0] for r in second])["cr"]
    for way, outputs in ways.items():
        print(json.dumps({"half": "second", "way": way, **_score(second, outputs), "ref_cr": refs_cr}),
              flush=True)
    everything = first + second
    full_expected = [_kept(row["text"], default.compress(row["sentence"],
                                                         _clip(row["expected"], row["n"])).keep)
                     for row in first] + ways["expected"]
    print(json.dumps({"half": "full", "way": "free", **_score(everything, [r["free"] for r in everything])}))
    print(json.dumps({"half": "full", "way": "expected", **_score(everything, full_expected)}))
    print(json.dumps({"fitted": [round(float(x), 4) for x in coef_expected],
                      "fitted_on_free": [round(float(x), 4) for x in coef_free],
                      "features": ["predictor", "n", "1"],
                      "certified_share_second_half": round(float(np.mean(certified)), 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
