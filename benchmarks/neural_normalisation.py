"""Does the training-time normalisation matter on cased dev text? (issue W2.2)

The neural scorer is trained on the Google training portion, lowercased with every token containing a
digit written ``##`` (and on cased JSONL corpora normalised the same way at training time), and its
inputs are normalised the same way at inference (:func:`dualdecomp.data.normalisation.mask_digits`;
the uncased tokenizer lowercases). This script scores the scorer alone at free length (keep the tokens
with positive log-odds) on each dev file twice: with the normalisation, and with the raw cased tokens
(digits kept), and prints token F1 and compression rate per dev file, one JSON line each.

``python benchmarks/neural_normalisation.py [--model data/default_model/neural]``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from unittest import mock

import numpy as np

from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.models.evaluation.compression import token_f1
from dualdecomp.models.neural import pieces
from dualdecomp.models.neural.store import load_neural_model

ROOT = Path(__file__).resolve().parents[1]
DEV = ("broadcast.dev.jsonl", "written.dev.jsonl", "eval.dev.jsonl")


def _score(scorer, items) -> tuple[float, float]:
    f1s, rates = [], []
    for it in items:
        keep = scorer.keep_logits(it.text) > 0
        system = [t for t, k in zip(it.text, keep, strict=True) if k]
        refs = [[t for t, k in zip(it.text, keep_vector(it.text, c), strict=True) if k]
                for c in it.compressions]
        f1s.append(np.mean([token_f1(system, r) for r in refs]))
        rates.append(keep.mean())
    return 100 * float(np.mean(f1s)), 100 * float(np.mean(rates))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(ROOT / "data" / "default_model" / "neural"))
    args = p.parse_args(argv)
    scorer = load_neural_model(args.model)
    for name in DEV:
        items = [it for it in read_corpus(ROOT / "data" / "corpora" / name) if it.compressions]
        f1, cr = _score(scorer, items)
        with mock.patch.object(pieces, "mask_digits", lambda w: w):
            raw_f1, raw_cr = _score(scorer, items)
        print(json.dumps({"dev": name, "normalised": {"token_f1": round(f1, 2), "cr": round(cr, 1)},
                          "raw_cased_digits": {"token_f1": round(raw_f1, 2), "cr": round(raw_cr, 1)}}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
