"""Score the encoder probe's dev log-odds with the project's metrics (benchmarks/neural_encoder_probe.md).

For each run (``RUN.logits.npz`` in the probe's working folder) and, as a reference, the shipped scorer
(``data/default_model/neural``, run here), on each of the three dev files: the scorer alone at free length
(a word is kept when its log-odds are > 0) and at gold length (for each reference, its number of words
with the highest log-odds: the exact fixed-length decode of a unary scorer). Token F1 and bigram F1 are
those of ``dualdecomp evaluate`` (per reference, the mean over a sentence's references, then the mean
over sentences). CR is in %. The pooled dev loss of each run comes from its record.

Usage::

    python benchmarks/neural_encoder_probe_score.py --work .cache/probe_cpu [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from dualdecomp.data.jsonl import read_corpus
from dualdecomp.models.evaluation.compression import at_reference_lengths, bigram_f1, token_f1
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.solvers.unary import Unary

DEV = {"eval": "Google", "broadcast": "broadcast", "written": "written"}


def dev_items() -> list[tuple[str, object]]:
    """(file label, item) of every dev sentence with a compression, in the order the probe read them."""
    out = []
    for name, label in DEV.items():
        items = read_corpus(f"data/corpora/{name}.dev.jsonl")
        out.extend((label, item) for item in items if item.compressions)
    return out


def score(items: list[tuple[str, object]], logits: list[np.ndarray]) -> dict[str, dict[str, float]]:
    """Per dev file: free-length token F1 / bigram F1 / CR and gold-length token F1 / bigram F1."""
    rows: dict[str, list[tuple[float, ...]]] = {}
    for (label, item), lg in zip(items, logits, strict=True):
        text, refs, scorer = item.text, item.compressions, Unary(lg)
        kept = [t for t, k in zip(text, scorer.solve().keep, strict=True) if k]
        free_t = float(np.mean([token_f1(kept, r) for r in refs]))
        free_b = float(np.mean([bigram_f1(kept, r) for r in refs]))
        gold_t = at_reference_lengths(text, refs, lambda n, u=scorer: u.solve(length=n).keep, token_f1)
        gold_b = at_reference_lengths(text, refs, lambda n, u=scorer: u.solve(length=n).keep, bigram_f1)
        rows.setdefault(label, []).append((free_t, free_b, len(kept) / len(text), gold_t, gold_b))
    names = ("free_token_f1", "free_bigram_f1", "free_cr", "gold_token_f1", "gold_bigram_f1")
    return {label: {n: round(100 * float(np.mean([r[k] for r in vals])), 2) for k, n in enumerate(names)}
            for label, vals in rows.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True, help="the probe's working folder")
    ap.add_argument("--json", type=Path, help="also write the table here")
    ap.add_argument("--no-shipped", action="store_true", help="skip the shipped scorer's row")
    args = ap.parse_args()
    items = dev_items()
    with np.load(args.work / "data.npz") as z:
        index = z["dev/index"]
    if len(index) != len(items) or not np.array_equal(index, np.arange(len(items))):
        raise SystemExit("the probe's dev sentences are not the dev files' sentences in order")
    table = {}
    if not args.no_shipped:
        scorer = load_neural_model("data/default_model/neural")
        table["shipped"] = score(items, [scorer.keep_logits(item.text) for _, item in items])
    for path in sorted(args.work.glob("R?.logits.npz")):
        run = path.name[:2]
        with np.load(path) as z:
            bounds = np.concatenate([[0], np.cumsum(z["words"])])
            logits = [z["logits"][bounds[i]:bounds[i + 1]] for i in range(len(z["words"]))]
        table[run] = score(items, logits)
        record = json.loads((args.work / f"{run}.json").read_text())
        table[run]["record"] = {k: record[k] for k in ("stopped", "steps", "total_steps", "dev_loss",
                                                       "train_seconds")}
    print(json.dumps(table, indent=1))
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
