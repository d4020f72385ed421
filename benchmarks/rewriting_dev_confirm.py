"""A candidate rewriting model against the embedded one on dev, once (W3.3, the fiftieth rule).

Usage (from the repository root)::

    .venv/bin/python benchmarks/rewriting_dev_confirm.py --model DIR --name NAME [--against FILE] \
        [-- OPTIONS...]

The rule is written in ``docs/rewriting.md`` (the fiftieth rule). The candidate model ``DIR`` (trained by
``dualdecomp train --kind rewriting --out DIR``) rewrites the 200 dev sources at free length exactly as
``benchmarks/rewriting_dev_table.py`` makes the rewriter's row (plain text, ``--deterministic``, the
model's stored decode setting unless ``OPTIONS`` override it), into
``benchmarks/rewriting_dev/candidate_NAME.jsonl``. Both it and the embedded model's row
(``--against``, default ``benchmarks/rewriting_dev/rewriter_free.jsonl``, made by the dev table; the
fiftieth rule's run compared with the model embedded before it, whose row is kept as
``before50_rewriter_free.jsonl``) are scored with the code of
``dualdecomp evaluate --task rewrite``, and the difference is bootstrapped as the cross-validation's is
(``benchmarks/rewriting_cv.py``: 1,000 resamples of the sentences, seed 0, pooled SARI recomputed from
the sentences' counts). The result, with the rule's verdict, is written to
``benchmarks/rewriting_dev_confirm.json`` under ``NAME``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from dualdecomp.app.rewriting_evaluation import (
    DEFAULT_SETS,
    RewriteCorpus,
    default_references_path,
    read_rewrite_corpus,
)
from dualdecomp.data.jsonl import read_jsonl_numbered, write_jsonl_atomic
from dualdecomp.models.evaluation.rewriting import evaluate_rewrites

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rewriting_cv import RESAMPLES, bootstrap_sets, lead, resample_weights  # noqa: E402  (a sibling script)
from rewriting_dev_table import OUT as DEV_OUT  # noqa: E402
from rewriting_dev_table import _relabel, _run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "rewriting_dev_confirm.json"
SHIPPED = DEV_OUT / "rewriter_free.jsonl"


def _rewrites(path: Path) -> dict[str, dict]:
    """The rows of a prediction file by id."""
    return {str(row["id"]): row for _, row in read_jsonl_numbered(path)}


def compare(corpus: RewriteCorpus, candidate: dict[str, dict], shipped: dict[str, dict]) -> dict:
    """Score both systems on dev and bootstrap the candidate's lead (module docstring).

    Parameters
    ----------
    corpus : RewriteCorpus
        The dev sources and references.
    candidate, shipped : dict of str to dict
        Each system's prediction rows by dev id (``rewrite`` and ``certified``).

    Returns
    -------
    dict
        Per system its scores, mean SARI and certified count; the lead in mean SARI and per reference set,
        each with its bootstrap share ahead and 95 % interval; and ``rule_met`` (the fiftieth rule).
    """
    n = len(corpus.ids)
    weights = resample_weights(n)
    result: dict = {"resamples": RESAMPLES, "seed": 0, "systems": {}}
    boot: dict[str, dict[str, np.ndarray]] = {}
    for name, rows in (("candidate", candidate), ("shipped", shipped)):
        outputs = [str(rows[i]["rewrite"]) for i in corpus.ids]
        scores = evaluate_rewrites(corpus.sources, outputs, corpus.references)
        boot[name] = bootstrap_sets(name, corpus.sources, outputs, corpus.references, scores, weights)
        result["systems"][name] = {"scores": scores.to_dict(),
                                   "mean_sari": sum(s.sari for s in scores.sets) / len(scores.sets),
                                   "certified": sum(bool(rows[i].get("certified")) for i in corpus.ids)}
    new, old = result["systems"]["candidate"], result["systems"]["shipped"]
    result["candidate minus shipped"] = ahead = lead(new, old, boot["candidate"], boot["shipped"])
    result["rule_met"] = bool(new["certified"] == n and ahead["by_set"]["turkcorpus"]["sari"] > 0
                              and ahead["mean_sari"] > 0)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, type=Path, help="the candidate model's directory")
    parser.add_argument("--name", required=True, help="the candidate's name in the result")
    parser.add_argument("--against", type=Path, default=SHIPPED,
                        help="the prediction file of the model to compare with (default: the dev table's)")
    parser.add_argument("options", nargs="*", help="more options of dualdecomp rewrite (after --)")
    args = parser.parse_args()
    if not args.against.exists():
        raise SystemExit(f"{args.against} is missing: run `rewriting_dev_table.py predict --only rewrite`")
    corpus = read_rewrite_corpus(default_references_path(), DEFAULT_SETS)
    target = DEV_OUT / f"candidate_{args.name}.jsonl"
    rows = _relabel(_run("rewrite", corpus.sources, ["--model", str(args.model), *args.options]),
                    corpus.ids, corpus.sources)
    write_jsonl_atomic(target, rows)
    result = compare(corpus, _rewrites(target), _rewrites(args.against))
    result["model"], result["options"] = str(args.model), args.options
    against = args.against.resolve()
    result["against"] = str(against.relative_to(ROOT) if against.is_relative_to(ROOT) else against)
    stored = json.loads(RESULT.read_text(encoding="utf-8")) if RESULT.exists() else {}
    stored[args.name] = result
    RESULT.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    for name, row in result["systems"].items():
        sets = row["scores"]["sets"]
        print(f"{name:10s} mean SARI {row['mean_sari']:.2f}  " + "  ".join(
            f"{s} {sets[s]['sari']:.2f} (BLEU {sets[s]['bleu']:.1f})" for s in DEFAULT_SETS)
            + f"  chars kept {100 * row['scores']['chars_kept']:.1f} %  certified {row['certified']}")
    print("candidate minus shipped", json.dumps(result["candidate minus shipped"]))
    print("fiftieth rule met:", result["rule_met"])


if __name__ == "__main__":
    main()
