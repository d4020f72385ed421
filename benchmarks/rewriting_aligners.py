"""Monolingual word aligners of the rewriting corpus, judged on hand alignments (W3.3 item 1).

Candidates, scored on ``tests/fixtures/rewriting/alignment_gold.jsonl`` (30 hand-aligned train pairs;
:mod:`dualdecomp.data.rewriting.alignment_scoring`):

* ``lexical``: the project aligner (:func:`dualdecomp.data.rewriting.align_words`, spaCy lemmas);
* ``lexical-3stage``: the same without its fourth stage (one-for-one substitutions between links);
* ``eflomal-{fwd,rev,intersect,union,gdfa}``: eflomal (PyPI ``eflomal``, HMM + fertility, default
  iterations) trained on every train pair (each source with each of its 18 rewrites, both reference sets,
  the gold pairs among them, the project tokens), in each direction, and symmetrised (grow-diag-final-and
  as in Koehn et al. 2005). eflomal's sampler takes no seed, so it runs ``--runs`` times: each line reports
  one run, and the table the mean and the range.

Prints one JSON line per measurement, then a Markdown table. Needs ``pip install eflomal`` for the eflomal
rows (skipped with a note otherwise). Parsing the train file takes about 75 s on 2 cores the first time;
``--cache`` keeps the parses.

Run: ``.venv/bin/python benchmarks/rewriting_aligners.py [--runs 3] [--cache PATH]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from dualdecomp.data.rewriting import align_words, parse_texts, read_rewriting
from dualdecomp.data.rewriting.alignment_scoring import read_gold_alignments, score_alignments

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "tests" / "fixtures" / "rewriting" / "alignment_gold.jsonl"
TRAIN = ROOT.parent / "shared" / "data" / "rewriting" / "train.jsonl"


def grow_diag_final_and(fwd: set[tuple[int, int]], rev: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Symmetrise two directional alignments (source, target pairs): grow-diag-final-and."""
    union = fwd | rev
    out = set(fwd & rev)
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]

    def aligned_s():
        return {i for i, _ in out}

    def aligned_t():
        return {j for _, j in out}

    added = True
    while added:
        added = False
        for i, j in sorted(out):
            for di, dj in neighbours:
                p = (i + di, j + dj)
                if p in union and p not in out and (p[0] not in aligned_s() or p[1] not in aligned_t()):
                    out.add(p)
                    added = True
    for direction in (fwd, rev):  # final-and: both words still unaligned
        for p in sorted(direction):
            if p[0] not in aligned_s() and p[1] not in aligned_t():
                out.add(p)
    return out


def run_eflomal(pairs: list[tuple[tuple[str, ...], tuple[str, ...]]]):
    """Forward and reverse eflomal links of each pair (sets of (source, target))."""
    from eflomal import Aligner

    with tempfile.TemporaryDirectory() as tmp:
        fwd_path, rev_path = Path(tmp) / "fwd", Path(tmp) / "rev"
        Aligner().align([" ".join(s) for s, _ in pairs], [" ".join(t) for _, t in pairs],
                        links_filename_fwd=str(fwd_path), links_filename_rev=str(rev_path), quiet=True)

        def read(path: Path) -> list[set[tuple[int, int]]]:
            return [{tuple(map(int, x.split("-"))) for x in line.split()}
                    for line in path.read_text().splitlines()]

        return read(fwd_path), read(rev_path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Score monolingual word aligners on the hand alignments.")
    ap.add_argument("--runs", type=int, default=3, help="eflomal runs (it takes no seed)")
    ap.add_argument("--cache", default=None, help="parse cache file (see data/rewriting/parsed.py)")
    ap.add_argument("--train", default=str(TRAIN), help="the rewriting train file")
    args = ap.parse_args(argv)

    gold = read_gold_alignments(GOLD)
    rows: dict[str, list] = {}
    parsed = parse_texts([t for g in gold for t in (g.source, g.target)], cache=args.cache)
    for k, g in enumerate(gold):
        s, t = parsed[2 * k], parsed[2 * k + 1]
        if s.tokens != g.source_tokens or t.tokens != g.target_tokens:
            raise SystemExit(f"gold pair {g.id}: the pipeline's tokens differ from the gold file's")
    for name, kw in (("lexical", {}), ("lexical-3stage", {"substitutions": False})):
        start = time.perf_counter()
        pred = [align_words(parsed[2 * k].tokens, parsed[2 * k + 1].tokens, parsed[2 * k].lemmas,
                            parsed[2 * k + 1].lemmas, **kw) for k in range(len(gold))]
        sc = score_alignments(gold, pred)
        rows[name] = [sc]
        print(json.dumps({"aligner": name, "run": 0, **sc.__dict__,
                          "seconds": round(time.perf_counter() - start, 4)}))

    try:
        import eflomal  # noqa: F401
    except ImportError:
        print(json.dumps({"aligner": "eflomal", "skipped": "pip install eflomal"}))
    else:
        examples = read_rewriting(args.train)
        texts = [t for ex in examples for t in (ex.text, *(r for rs in ex.references.values() for r in rs))]
        by_text = dict(zip(texts, parse_texts(texts, cache=args.cache, progress=sys.stderr.isatty()),
                           strict=True))
        pairs = [(by_text[ex.text].tokens, by_text[r].tokens)
                 for ex in examples for rs in ex.references.values() for r in rs]
        index: dict[tuple[str, str, int], int] = {}
        pos = 0
        for ex in examples:
            for name, rs in ex.references.items():
                for k in range(len(rs)):
                    index[(ex.id, name, k)] = pos
                    pos += 1
        where = [index[(g.id, g.reference_set, g.reference_index)] for g in gold]
        for run in range(args.runs):
            start = time.perf_counter()
            fwd, rev = run_eflomal(pairs)
            seconds = time.perf_counter() - start
            variants = {
                "eflomal-fwd": [fwd[w] for w in where],
                "eflomal-rev": [rev[w] for w in where],
                "eflomal-intersect": [fwd[w] & rev[w] for w in where],
                "eflomal-union": [fwd[w] | rev[w] for w in where],
                "eflomal-gdfa": [grow_diag_final_and(fwd[w], rev[w]) for w in where],
            }
            for name, pred in variants.items():
                sc = score_alignments(gold, pred)
                rows.setdefault(name, []).append(sc)
                print(json.dumps({"aligner": name, "run": run, **sc.__dict__, "pairs": len(pairs),
                                  "seconds": round(seconds, 1)}))

    print("\n| aligner | precision | recall | F1 | AER | runs |")
    print("|---|---|---|---|---|---|")
    for name, scs in rows.items():
        cells = []
        for attr in ("precision", "recall", "f1", "aer"):
            vals = [getattr(s, attr) for s in scs]
            mean = statistics.fmean(vals)
            cells.append(f"{mean:.3f}" if len(vals) == 1 else f"{mean:.3f} ({min(vals):.3f}–{max(vals):.3f})")
        print(f"| {name} | {' | '.join(cells)} | {len(scs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
