"""The dev table of the rewriting task (W3.3 item 5): the baselines' predictions and their scores.

Usage (from the repository root)::

    .venv/bin/python benchmarks/rewriting_dev_table.py predict     # writes benchmarks/rewriting_dev/*.jsonl
    .venv/bin/python benchmarks/rewriting_dev_table.py table       # prints the markdown table

``predict`` makes the prediction files of the baselines, one JSONL row per dev sentence with the dev id:

- ``identity.jsonl``: the source copied (``rewrite`` = the raw source);
- ``deletion_default.jsonl``: ``dualdecomp compress`` with the embedded default model at free length;
- ``t3_deletion.jsonl``: the same with ``--config t3`` (the T3 transducer alone, deletion only);
- ``rewriter_free.jsonl``, ``rewriter_ratio_{0.9,0.75,0.6}.jsonl``: ``dualdecomp rewrite`` with the
  embedded rewriting model, at free length and at most 90 %, 75 % and 60 % of the source's characters.
- ``rewriter_free_learnt.jsonl``: the same at free length with the decode settings at their neutral
  values (``--lm-scale 1 --word-bias 0 --substitution-bias 0 --insertion-bias 0 --keep-weight 0``: the
  learnt weights as they are), to show what the embedded model's settings (chosen on dev,
  ``benchmarks/rewriting_decode_grid.py``, and on cross-validated train) change;
- ``rewriter_free_before50.jsonl``: the same at free length with the decode setting stored before the
  fiftieth rule of ``docs/rewriting.md`` (``--keep-weight 960 --insertion-bias=-270``, the word and
  substitution biases as stored), to show what that rule's training change does by itself;
- ``rewriter_free_nokeep.jsonl``: at free length without the keep classifier (``--keep-weight 0``, the
  stored biases), to show what the classifier changes;
- ``before50_rewriter_free.jsonl`` (kept, not made by ``predict``): the free-length row of the model
  embedded before the fiftieth rule, which ``predict`` made until then
  (``benchmarks/rewriting_dev_confirm.py`` compared the two).

``compress`` reads the raw sources as plain text (one sentence per line, tokenised by spaCy, each
compression detokenised with the original spacing into the row's ``output``), which numbers its rows by
line; ``predict`` gives each row its dev id back (line k is dev sentence k, checked: the row's tokens are
the source's characters without whitespace). ``table`` scores every prediction file with the code of
``dualdecomp evaluate --task rewrite`` (``dualdecomp.app.rewriting_evaluation.evaluate_rewrite_files``)
and prints one markdown table: per system and reference set, SARI (add/keep/delete), BLEU, characters
kept, mean words and the share identical to the source.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from dualdecomp.app.rewriting_evaluation import (
    DEFAULT_SETS,
    default_references_path,
    evaluate_rewrite_files,
    read_rewrite_corpus,
)
from dualdecomp.data.jsonl import read_jsonl_numbered, write_jsonl_atomic

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "rewriting_dev"

BEFORE_50 = ("--keep-weight", "960", "--insertion-bias=-270")
"""The decode setting the embedded model stored from the forty-third rule to the fiftieth (its word and
substitution biases, 360 and 30, are still the stored ones)."""

# name in the table, prediction file, the dualdecomp command and its options (None: not made by dualdecomp;
# command "": the identity, made by ``predict``; command "kept": a stored file ``predict`` does not touch)
SYSTEMS: tuple[tuple[str, str, str, list[str] | None], ...] = (
    ("identity (copy the source)", "identity.jsonl", "", None),
    ("deletion-only default, free length", "deletion_default.jsonl", "compress", []),
    ("T3 deletion-only (--config t3), free length", "t3_deletion.jsonl", "compress", ["--config", "t3"]),
    ("rewriter (embedded model), free length", "rewriter_free.jsonl", "rewrite", []),
    ("rewriter, decode settings neutral (weights as learnt), free length", "rewriter_free_learnt.jsonl",
     "rewrite", ["--lm-scale", "1", "--word-bias", "0", "--substitution-bias", "0", "--insertion-bias", "0",
                 "--keep-weight", "0"]),
    ("rewriter, the decode setting before the fiftieth rule (classifier 960, insertion −270), free length",
     "rewriter_free_before50.jsonl", "rewrite", [*BEFORE_50]),
    ("rewriter without the keep classifier (--keep-weight 0), free length", "rewriter_free_nokeep.jsonl",
     "rewrite", ["--keep-weight", "0"]),
    ("the model embedded before the fiftieth rule, free length", "before50_rewriter_free.jsonl", "kept",
     None),
    ("rewriter, --ratio 0.9", "rewriter_ratio_0.9.jsonl", "rewrite", ["--ratio", "0.9"]),
    ("rewriter, --ratio 0.75", "rewriter_ratio_0.75.jsonl", "rewrite", ["--ratio", "0.75"]),
    ("rewriter, --ratio 0.6", "rewriter_ratio_0.6.jsonl", "rewrite", ["--ratio", "0.6"]),
)


def _run(command: str, sources: tuple[str, ...], options: list[str]) -> list[dict]:
    """Run ``dualdecomp COMMAND`` (compress or rewrite) on the sources as plain text (one per line); its
    rows, in line order."""
    exe = Path(sys.executable).parent / "dualdecomp"
    with tempfile.TemporaryDirectory() as tmp:
        text, out = Path(tmp) / "dev_sources.txt", Path(tmp) / "out.jsonl"
        text.write_text("".join(s + "\n" for s in sources), encoding="utf-8")
        subprocess.run([str(exe), command, "--input", str(text), "--input-format", "text",
                        "--output", str(out), "--deterministic", "--quiet", *options], check=True)
        return [row for _, row in read_jsonl_numbered(out)]


def _relabel(rows: list[dict], ids: tuple[str, ...], sources: tuple[str, ...]) -> list[dict]:
    """Give the k-th row of a line-numbered compress output the k-th dev id, checking it is that source."""
    if len(rows) != len(ids):
        raise SystemExit(f"compress wrote {len(rows)} rows for {len(ids)} sources")
    relabelled = []
    for k, (row, row_id, source) in enumerate(zip(rows, ids, sources, strict=True), start=1):
        if row.get("id") != str(k):
            raise SystemExit(f"row {k} has id {row.get('id')!r}, expected the line number {k}")
        if "".join(str(row.get("text", "")).split()) != "".join(source.split()):
            raise SystemExit(f"row {k} is not dev sentence {row_id}: {row.get('text')!r}")
        relabelled.append({**row, "id": row_id, "line": k})
    return relabelled


def predict(references: Path, commands: tuple[str, ...] = ("", "compress", "rewrite")) -> None:
    """Write the prediction files into benchmarks/rewriting_dev/ (only the systems made by ``commands``:
    ``""`` the identity, ``compress``, ``rewrite``)."""
    corpus = read_rewrite_corpus(references, DEFAULT_SETS)
    if any("\n" in s or "\r" in s for s in corpus.sources):
        raise SystemExit("a source holds a line break: it cannot be one line of plain text")
    OUT.mkdir(parents=True, exist_ok=True)
    for name, file, command, options in SYSTEMS:
        if command not in commands:
            continue
        target = OUT / file
        if command == "":
            rows = [{"id": i, "rewrite": s} for i, s in zip(corpus.ids, corpus.sources, strict=True)]
        else:
            print(f"{name}: dualdecomp {command} {' '.join(options)}", file=sys.stderr)
            rows = _relabel(_run(command, corpus.sources, options), corpus.ids, corpus.sources)
        write_jsonl_atomic(target, rows)
        print(f"wrote {target.relative_to(ROOT)} ({len(rows)} rows)", file=sys.stderr)


def table(references: Path, sets: tuple[str, ...]) -> str:
    """The markdown table of every prediction file of :data:`SYSTEMS`."""
    lines = ["| system | references | SARI | add | keep | delete | BLEU | chars kept | mean words "
             "| identical |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    signatures = set()
    reference_rows = {}
    for name, file, _, _ in SYSTEMS:
        report = evaluate_rewrite_files(OUT / file, references, sets)
        s = report.scores
        if report.failed:
            name += f" ({report.failed} failed)"
        for r in s.sets:
            signatures.add(r.bleu_signature)
            reference_rows[r.name] = r
            lines.append(f"| {name} | {r.name} | {r.sari:.2f} | {r.add:.2f} | {r.keep:.2f} | {r.delete:.2f} "
                         f"| {r.bleu:.2f} | {100 * s.chars_kept:.1f} % | {s.mean_words:.1f} "
                         f"| {100 * s.identical:.1f} % |")
    lines.append("")
    lines.append(f"{s.n} dev sentences. The references keep "
                 + ", ".join(f"{100 * r.reference_chars_kept:.1f} % of the characters ({r.name}, "
                             f"{r.references} references)" for r in reference_rows.values()) + ".")
    lines.append("BLEU signature: " + "; ".join(f"`{sig}`" for sig in sorted(signatures)) + ".")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The rewriting dev table (W3.3): baseline predictions "
                                                 "and their scores.")
    parser.add_argument("step", choices=("predict", "table"),
                        help="predict: write the baselines' prediction files; table: print the table")
    parser.add_argument("--references", type=Path, default=None,
                        help="rewriting dev corpus (default: ../shared/data/rewriting/dev.jsonl)")
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help="reference sets (comma-separated)")
    parser.add_argument("--only", choices=("compress", "rewrite"), default=None,
                        help="predict: remake only the files of this command's systems")
    args = parser.parse_args(argv)
    references = args.references or default_references_path()
    if args.step == "predict":
        predict(references, ("", "compress", "rewrite") if args.only is None else (args.only,))
    else:
        print(table(references, tuple(args.sets.split(","))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
