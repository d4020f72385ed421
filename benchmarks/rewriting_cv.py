"""Three-fold cross-validation of rewriting recipes on the training corpus (W3.3, the sixteenth rule).

Usage (from the repository root)::

    .venv/bin/python benchmarks/rewriting_cv.py run --recipe embedded --fold 0   # one model, ~5 min
    .venv/bin/python benchmarks/rewriting_cv.py rewrite --recipe embedded --name NAME -- OPTIONS...
    .venv/bin/python benchmarks/rewriting_cv.py score                          # rewriting_cv.json

The rule is written in ``docs/rewriting.md`` ("A larger held-out judgement: cross-validation on train").
Folds are the lines of ``train.jsonl`` by position modulo 3. ``run`` trains the recipe on the other two
folds (``dualdecomp train --kind rewriting`` on a corpus folder holding those lines as ``train.jsonl`` and
the shared ``dev.jsonl``, which chooses the epoch as always) and rewrites the held-out fold's sources at
free length with ``dualdecomp rewrite --input`` (plain text, the model's stored decode setting), as
``benchmarks/rewriting_dev_table.py`` rewrites dev. ``rewrite`` rewrites every held-out fold again with
more options of ``dualdecomp rewrite`` (another decode setting, ``--article-agreement``): the variant
``RECIPE/NAME``. Models and rewrites live under ``.cache/rewriting_cv/`` (not committed). ``score`` pools
the 1,800 held-out rewrites of each recipe, scores them with the code of ``dualdecomp evaluate --task
rewrite`` (``evaluate_rewrites``), per fold and pooled, and runs the rule's paired bootstrap: 1,000
resamples of the sentences (seed 0), the same for every recipe, pooled SARI recomputed on each from the
sentences' SARI counts; each variant is compared with its recipe the same way, and the comparisons the
rules decide by (:data:`RULES`) likewise. ``rewrite --fold F`` rewrites one held-out fold only: a variant
whose setting differs by fold (a nested choice) is rebuilt fold by fold from the settings its grid run
recorded. It writes ``benchmarks/rewriting_cv.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

from dualdecomp.app.rewriting_evaluation import DEFAULT_SETS, read_rewrite_corpus
from dualdecomp.data.jsonl import read_jsonl_numbered, write_lines_atomic
from dualdecomp.data.punctuation import punctuation_pairs
from dualdecomp.models.evaluation.rewriting import SARI_SETTINGS, evaluate_rewrites
from dualdecomp.models.evaluation.sari import _Counts, _OrderCounts, _score, _sentence_counts
from dualdecomp.models.rewriting.articles import article_disagreements

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
CORPUS = SHARED / "rewriting"
WORK = ROOT / ".cache" / "rewriting_cv"
OUT = ROOT / "benchmarks" / "rewriting_cv.json"
FOLDS = 3
PAIRED_MARKS = frozenset('()[]{}"“”')
RESAMPLES = 1000

GOOGLE = SHARED / "google"
COMMON = ["--lm-corpus", str(GOOGLE / "train180k.tsv.gz"), str(GOOGLE / "train20k-b.tsv.gz"),
          "--delete-weight", "0.35", "--bigram-loss", "0.5", "--epochs", "3"]
"""The training options both recipes share (``make rewrite-model``'s, without its add reward and decode
setting)."""

ADD4 = ["--add-reward", "4"]
"""The shipped recipe's loss option beyond :data:`COMMON` (λ 4)."""
SHIPPED_SETTING = ["--lm-scale", "1", "--word-bias", "30", "--substitution-bias", "240",
                   "--insertion-bias", "180"]
"""The decode setting ``make rewrite-model`` stored from the nineteenth rule to the thirty-eighth (the
seventeenth rule's choice for λ 4), at which the recipes of the rules before the thirty-eighth decode
their held-out folds (the thirty-eighth rule's biases, stored since, are in the Makefile)."""

RECIPES = {
    "embedded": ["--lm-scale", "0.5", "--word-bias", "150", "--substitution-bias", "720",
                 "--insertion-bias", "360"],
    "add4": ["--add-reward", "4", "--lm-scale", "0.75", "--word-bias", "90", "--substitution-bias", "240",
             "--insertion-bias", "0"],
    "add4-lex1": [*ADD4, "--lexical-min-count", "1", *SHIPPED_SETTING],
    "add4-b50": [*ADD4, "--delete-weight", "0.5", *SHIPPED_SETTING],
    "add4-hope": [*ADD4, "--hope-epochs", "2", *SHIPPED_SETTING],
    "add4-lam3": [*ADD4, "--lam", "1e-3", *SHIPPED_SETTING],
    "add4-lam2": [*ADD4, "--lam", "1e-2", *SHIPPED_SETTING],
    "add4-dep": [*ADD4, "--features", "deletion-dep", *SHIPPED_SETTING],
    "add4-loo": [*ADD4, "--leave-one-out", *SHIPPED_SETTING],
    "add4-src2": [*ADD4, "--min-sources", "2", *SHIPPED_SETTING],
    "add4-turk75": [*ADD4, "--loss-set-weights", "asset=0.25", "turkcorpus=0.75", *SHIPPED_SETTING],
    "add4-turk100": [*ADD4, "--loss-set-weights", "turkcorpus=1", *SHIPPED_SETTING],
}
"""Each recipe's options beyond :data:`COMMON`: its add reward and the decode setting chosen for it on dev.
``embedded`` is the recipe embedded until the nineteenth rule; ``add4`` (λ 4) is embedded since, with the
setting the seventeenth rule chose for it (``make rewrite-model``); ``add4-lex1`` is λ 4 with the lexical
paraphrases seen once (the twenty-first rule) and ``add4-b50`` λ 4 with β 0.5 (the twenty-third; its
``--delete-weight`` comes after :data:`COMMON`'s, so it wins) and ``add4-hope`` λ 4 trained towards hope
derivations for two epochs after the oracle's three (the twenty-fourth), ``add4-lam3`` and ``add4-lam2`` λ 4
with the SSVM's L2 weight 10⁻³ and 10⁻² (the twenty-fifth) and ``add4-dep`` λ 4 with the deletion features by
dependency relation (the twenty-sixth), ``add4-loo`` λ 4 trained on leave-one-out charts (the
thirty-sixth) and ``add4-src2`` λ 4 with the extracted rules of two sources or more (the thirty-seventh),
``add4-turk75`` and ``add4-turk100`` λ 4 with the loss's shares weighted 3 : 1 and 1 : 0 towards TurkCorpus
(the forty-seventh), all with the shipped setting."""

RULES = {("add4", "embedded"): "sixteenth", ("add4/nested", "embedded/nested"): "nineteenth",
         ("add4/keep-nested", "add4/keep0"): "twentieth", ("add4-lex1", "add4/keep0"): "twenty-first",
         ("add4-lex1/nested", "add4/nested"): "twenty-second",
         ("add4-b50/nested", "add4/nested"): "twenty-third",
         ("add4-hope/nested", "add4/nested"): "twenty-fourth",
         ("add4-lam3/nested", "add4/nested"): "twenty-fifth",
         ("add4-lam2/nested", "add4/nested"): "twenty-fifth",
         ("add4-dep/nested", "add4/nested"): "twenty-sixth",
         ("add4/paired-nested", "add4/nested"): "twenty-seventh",
         ("add4/paired2-nested", "add4/nested"): "twenty-seventh",
         ("add4/added-nested", "add4/added0"): "twenty-eighth",
         ("add4/added2-nested", "add4/added0"): "twenty-ninth",
         ("add4/added3-nested", "add4/added3-base-nested"): "thirtieth",
         ("add4/keepin-nested", "add4/added0"): "thirty-first",
         ("add4/keepin2-nested", "add4/added0"): "thirty-second",
         ("add4/keepturk-nested", "add4/keep480"): "thirty-third",
         ("add4/keepwb-nested", "add4/keep480"): "thirty-fourth",
         ("add4/content-nested", "add4/keep480"): "thirty-fifth",
         ("add4-loo/keep-nested", "add4/keep-base-nested"): "thirty-sixth",
         ("add4-src2/keep-nested", "add4/keep-base-nested"): "thirty-seventh",
         ("add4/keepbias-nested", "add4/keep480"): "thirty-eighth",
         ("add4/keepjoint-nested", "add4/shipped38"): "thirty-ninth",
         ("add4/similarity-nested", "add4/stored40"): "fortieth",
         ("add4/keepedge-nested", "add4/shipped39"): "forty-first",
         ("add4/keepins-nested", "add4/shipped39"): "forty-second",
         ("add4/turkfirst-nested", "add4/shipped39"): "forty-third",
         ("add4/wordedge-nested", "add4/shipped43"): "forty-fourth",
         ("add4/lmscale-nested", "add4/shipped43"): "forty-fifth",
         ("add4/keeplow-nested", "add4/shipped43"): "forty-sixth",
         ("add4-turk75/turkloss-nested", "add4/shipped43"): "forty-seventh",
         ("add4-turk100/turkloss-nested", "add4/shipped43"): "forty-seventh",
         ("add4-turk75/turkkeep-nested", "add4/shipped43"): "forty-eighth",
         ("add4-turk75/turkmid-nested", "add4/shipped43"): "forty-ninth"}
"""The comparisons the rules of ``docs/rewriting.md`` decide by (new, old) → the rule: each is bootstrapped
and marked ``RULE_rule_met`` when ``new`` is ahead by more than 0.2 in at least :data:`SHARE_AHEAD` of the
resamples."""
SHARE_AHEAD = {"twenty-fifth": 0.975, "forty-seventh": 0.975}
"""The bootstrap share a rule asks (default 0.95): the twenty-fifth and forty-seventh compare two
candidates with the same baseline, so each must be ahead in 97.5 % (Bonferroni)."""
NOT_WORSE_BY = {"twenty-seventh": 0.1}
"""Rules that weigh a readability constraint against SARI instead of asking for a gain: met when the new
variant's pooled mean SARI is lower by at most this much (no bootstrap bar)."""
TURKCORPUS_BAR = {"forty-third", "forty-fourth", "forty-fifth", "forty-sixth", "forty-seventh",
                  "forty-eighth", "forty-ninth"}
"""Rules that ask the gain of TurkCorpus's SARI: met when the new variant is ahead on TurkCorpus by more
than 0.2 in at least 95 % of the resamples and its pooled mean SARI is not lower."""


def _rule_met(rule: str, row: dict) -> bool:
    """Whether a comparison row of :func:`score` meets ``rule``'s bar: ahead by more than 0.2 in at least
    :data:`SHARE_AHEAD` of the resamples; for :data:`NOT_WORSE_BY`, not lower by more than that; for
    :data:`TURKCORPUS_BAR`, that bar on TurkCorpus's SARI with the mean not lower."""
    if rule in NOT_WORSE_BY:
        return bool(row["mean_sari"] >= -NOT_WORSE_BY[rule])
    share = SHARE_AHEAD.get(rule, 0.95)
    if rule in TURKCORPUS_BAR:
        turk = row["by_set"]["turkcorpus"]
        return bool(turk["sari"] > 0.2 and turk["bootstrap_share_ahead"] >= share and row["mean_sari"] >= 0)
    return bool(row["mean_sari"] > 0.2 and row["bootstrap_share_ahead"] >= share)


def _ahead(diff: np.ndarray) -> dict:
    """The bootstrap's share of resamples with ``diff`` > 0 and its 95 % interval."""
    return {"bootstrap_share_ahead": float(np.mean(diff > 0)),
            "bootstrap_95_interval": [float(np.percentile(diff, 2.5)), float(np.percentile(diff, 97.5))]}


def _fold_lines(fold: int) -> tuple[list[str], list[str]]:
    """The training corpus's lines split into (the other folds, fold ``fold``), in file order."""
    lines = (CORPUS / "train.jsonl").read_text(encoding="utf-8").splitlines()
    rest = [line for i, line in enumerate(lines) if i % FOLDS != fold]
    held = [line for i, line in enumerate(lines) if i % FOLDS == fold]
    return rest, held


def _fold_corpus(fold: int) -> Path:
    """The corpus folder of fold ``fold`` (train: the other folds; dev: the shared dev), and its
    ``heldout.jsonl``; written atomically, as two runs may prepare the same fold at once."""
    folder = WORK / f"fold{fold}"
    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    rest, held = _fold_lines(fold)
    write_lines_atomic(data / "train.jsonl", rest)
    write_lines_atomic(data / "dev.jsonl", (CORPUS / "dev.jsonl").read_text(encoding="utf-8").splitlines())
    write_lines_atomic(folder / "heldout.jsonl", held)
    return folder


def run(recipe: str, fold: int) -> None:
    """Train ``recipe`` without fold ``fold`` and rewrite that fold's sources (module docstring)."""
    folder = _fold_corpus(fold)
    out = WORK / recipe / f"fold{fold}"
    out.mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).parent / "dualdecomp"
    env = {**os.environ, "DUALDECOMP_LMPLZ_DIR": str(ROOT / ".tools" / "bin")}
    if not (out / "model" / "MANIFEST.json").is_file():  # a finished model is kept; its rewrites are redone
        with open(out / "train.log", "w", encoding="utf-8") as log:
            subprocess.run([str(exe), "train", "--kind", "rewriting", "--data", str(folder / "data"),
                            *COMMON, *RECIPES[recipe], "--out", str(out / "model")], check=True, env=env,
                           stdout=log, stderr=subprocess.STDOUT)
    rewrite(recipe, fold)


def _rewrites_path(recipe: str, fold: int, name: str = "") -> Path:
    return WORK / recipe / f"fold{fold}" / f"heldout_rewrites{'_' + name if name else ''}.jsonl"


def rewrite(recipe: str, fold: int, name: str = "", options: tuple[str, ...] = ()) -> None:
    """Rewrite fold ``fold``'s sources with ``recipe``'s model trained without it (its stored setting,
    then ``options`` of ``dualdecomp rewrite``): the variant ``name`` ("" the recipe's own)."""
    folder = WORK / f"fold{fold}"
    out = WORK / recipe / f"fold{fold}"
    corpus = read_rewrite_corpus(folder / "heldout.jsonl", DEFAULT_SETS)
    text = out / "sources.txt"
    text.write_text("".join(s + "\n" for s in corpus.sources), encoding="utf-8")
    exe = Path(sys.executable).parent / "dualdecomp"
    subprocess.run([str(exe), "rewrite", "--model", str(out / "model"), "--input", str(text),
                    "--input-format", "text", "--output", str(_rewrites_path(recipe, fold, name)),
                    "--deterministic", "--quiet", *options], check=True)


def _variant_rewrites(variant: str) -> dict[str, str]:
    """The held-out rewrite of every training source by a variant's fold models ("RECIPE" or
    "RECIPE/NAME"), keyed by id."""
    recipe, _, name = variant.partition("/")
    rewrites: dict[str, str] = {}
    for fold in range(FOLDS):
        corpus = read_rewrite_corpus(WORK / f"fold{fold}" / "heldout.jsonl", DEFAULT_SETS)
        path = _rewrites_path(recipe, fold, name)
        rows = [row for _, row in read_jsonl_numbered(path)]
        if len(rows) != len(corpus.ids):
            raise SystemExit(f"{recipe} fold {fold}: {len(rows)} rewrites for {len(corpus.ids)} sources")
        for row, row_id, source in zip(rows, corpus.ids, corpus.sources, strict=True):
            if "".join(str(row.get("text", "")).split()) != "".join(source.split()):
                raise SystemExit(f"{recipe} fold {fold}: a row is not source {row_id}: {row.get('text')!r}")
            rewrites[row_id] = row["rewrite"]
    return rewrites


def _count_matrix(sources, outputs, references) -> np.ndarray:
    """Each sentence's SARI counts (4 orders x ADD/KEEP/DELETE x right/output/reference) as floats."""
    rows = []
    for source, output, refs in zip(sources, outputs, references, strict=True):
        orders = _sentence_counts(source, output, refs, SARI_SETTINGS["lowercase"],
                                  SARI_SETTINGS["tokenizer"])
        rows.append([float(x) for o in orders for c in (o.add, o.keep, o.delete)
                     for x in (c.right, c.output, c.reference)])
    return np.array(rows)


def _unpaired(text: str) -> bool:
    """Whether a rewrite has a bracket or quotation mark outside every pair (``punctuation_pairs`` of
    its marks, read character by character)."""
    marks = [c for c in text if c in PAIRED_MARKS]
    return 2 * len(punctuation_pairs(marks)) != len(marks)


def _pooled_sari(sums: np.ndarray) -> float:
    """Pooled corpus SARI from summed counts, by the scoring code of ``sari_corpus`` (deletion by F1)."""
    x = sums.reshape(4, 3, 3)
    orders = [_OrderCounts(*(_Counts(*(Fraction(v) for v in x[n, op])) for op in range(3))) for n in range(4)]
    return _score(orders, "f1", "scores").sari


def resample_weights(n: int) -> np.ndarray:
    """The bootstrap's resamples of ``n`` sentences (:data:`RESAMPLES` of them, seed 0), each as how many
    times it draws every sentence: float (RESAMPLES, n)."""
    samples = np.random.default_rng(0).integers(0, n, size=(RESAMPLES, n))
    return np.stack([np.bincount(s, minlength=n) for s in samples]).astype(float)


def bootstrap_sets(label: str, sources, outputs, references_by_set, pooled, weights: np.ndarray
                   ) -> dict[str, np.ndarray]:
    """Each reference set's pooled SARI of ``outputs`` on every resample of ``weights``, recomputed from
    the sentences' counts; the counts summed over all sentences must give ``pooled``'s SARI
    (``evaluate_rewrites``), else the run stops naming ``label``."""
    boot = {}
    for name in DEFAULT_SETS:
        counts = _count_matrix(sources, outputs, references_by_set[name])
        check, expected = _pooled_sari(counts.sum(axis=0)), pooled.by_set(name).sari
        if abs(check - expected) > 1e-6:
            raise SystemExit(f"{label}/{name}: summed counts give {check}, evaluate {expected}")
        boot[name] = np.array([_pooled_sari(w @ counts) for w in weights])
    return boot


def lead(new: dict, old: dict, boot_new: dict[str, np.ndarray], boot_old: dict[str, np.ndarray]) -> dict:
    """How far system ``new`` is ahead of ``old`` (each a row with ``mean_sari`` and ``scores``, the
    ``to_dict`` of its ``evaluate_rewrites``): in mean SARI and per reference set, each with the share of
    the resamples where it is ahead and the 95 % interval (``boot_*``: :func:`bootstrap_sets`)."""
    def mean(boot: dict[str, np.ndarray]) -> np.ndarray:
        return sum(boot.values()) / len(DEFAULT_SETS)

    sets_new, sets_old = new["scores"]["sets"], old["scores"]["sets"]
    return {"mean_sari": new["mean_sari"] - old["mean_sari"], **_ahead(mean(boot_new) - mean(boot_old)),
            "by_set": {name: {"sari": sets_new[name]["sari"] - sets_old[name]["sari"],
                              **_ahead(boot_new[name] - boot_old[name])} for name in DEFAULT_SETS}}


def score(only: list[str] | None = None) -> None:
    """Score the pooled held-out rewrites of every recipe run on all folds (or of the recipes and variants
    ``only``); bootstrap (module docstring)."""
    corpus = read_rewrite_corpus(CORPUS / "train.jsonl", DEFAULT_SETS)
    names = sorted({p.name[len("heldout_rewrites_"):-len(".jsonl")]
                    for p in WORK.glob("*/fold0/heldout_rewrites_*.jsonl")})
    recipes = [f"{r}/{n}" if n else r for r in RECIPES for n in ["", *names]
               if all(_rewrites_path(r, f, n).exists() for f in range(FOLDS))]
    recipes = [r for r in recipes if only is None or r in only]
    if not recipes:
        raise SystemExit("no recipe has rewrites for every fold: run `rewriting_cv.py run` first")
    n = len(corpus.ids)
    weights = resample_weights(n)
    result: dict = {"folds": FOLDS, "resamples": RESAMPLES, "seed": 0, "recipes": {}}
    boot_sets: dict[str, dict[str, np.ndarray]] = {}
    for recipe in recipes:
        rewrites = _variant_rewrites(recipe)
        outputs = [rewrites[i] for i in corpus.ids]
        pooled = evaluate_rewrites(corpus.sources, outputs, corpus.references)
        per_fold = []
        for fold in range(FOLDS):
            idx = [k for k in range(n) if k % FOLDS == fold]
            scores = evaluate_rewrites([corpus.sources[k] for k in idx], [outputs[k] for k in idx],
                                       {s: [corpus.references[s][k] for k in idx] for s in DEFAULT_SETS})
            per_fold.append({s.name: s.sari for s in scores.sets})
        boot_sets[recipe] = bootstrap_sets(recipe, corpus.sources, outputs, corpus.references, pooled,
                                           weights)
        mean = sum(s.sari for s in pooled.sets) / len(pooled.sets)
        disagreements = sum(bool(article_disagreements(o.split(), src.split()))
                            for o, src in zip(outputs, corpus.sources, strict=True))
        result["recipes"][recipe] = {"options": RECIPES[recipe.partition("/")[0]], "mean_sari": mean,
                                     "scores": pooled.to_dict(), "per_fold_sari": per_fold,
                                     "rewrites_with_article_disagreement": disagreements,
                                     "rewrites_with_unpaired_punctuation": sum(map(_unpaired, outputs))}
    pairs = [*RULES, *((v, v.partition("/")[0]) for v in recipes if "/" in v)]
    for new, old in pairs:  # the rules' comparisons; each variant vs its recipe
        if new in boot_sets and old in boot_sets:
            result[f"{new} minus {old}"] = lead(result["recipes"][new], result["recipes"][old],
                                                boot_sets[new], boot_sets[old])
    for (new, old), rule in RULES.items():
        if f"{new} minus {old}" in result:
            row = result[f"{new} minus {old}"]
            row[f"{rule}_rule_met"] = _rule_met(rule, row)
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for recipe, row in result["recipes"].items():
        sets = row["scores"]["sets"]
        print(f"{recipe:20s} mean SARI {row['mean_sari']:.2f}  " + "  ".join(
            f"{name} {sets[name]['sari']:.2f} (BLEU {sets[name]['bleu']:.1f})" for name in DEFAULT_SETS)
            + f"  chars kept {100 * row['scores']['chars_kept']:.1f} %"
            + f"  article disagreements {row['rewrites_with_article_disagreement']}"
            + f"  unpaired punctuation {row['rewrites_with_unpaired_punctuation']}")
    for key, row in result.items():
        if " minus " in key:
            print(key, json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run", help="train one recipe without one fold and rewrite that fold")
    one.add_argument("--recipe", choices=sorted(RECIPES), required=True)
    one.add_argument("--fold", type=int, choices=range(FOLDS), required=True)
    again = sub.add_parser("rewrite", help="rewrite every held-out fold again with more options of "
                                            "dualdecomp rewrite (after --), as variant NAME")
    again.add_argument("--recipe", choices=sorted(RECIPES), required=True)
    again.add_argument("--name", required=True, help="the variant's name (letters, digits, '-')")
    again.add_argument("--fold", type=int, choices=range(FOLDS), default=None,
                       help="rewrite this held-out fold only (default: every fold)")
    again.add_argument("options", nargs=argparse.REMAINDER, help="-- then options of dualdecomp rewrite")
    scoring = sub.add_parser("score", help="score the pooled held-out rewrites, bootstrap, write "
                                           "rewriting_cv.json")
    scoring.add_argument("--only", nargs="+", metavar="RECIPE", default=None,
                         help="score these recipes and variants (RECIPE/NAME) alone")
    args = parser.parse_args()
    if args.command == "run":
        run(args.recipe, args.fold)
    elif args.command == "rewrite":
        if not args.name.replace("-", "").isalnum():
            parser.error("--name: letters, digits and '-' only")
        options = tuple(args.options[1:] if args.options[:1] == ["--"] else args.options)
        for fold in range(FOLDS) if args.fold is None else [args.fold]:
            rewrite(args.recipe, fold, args.name, options)
    else:
        score(args.only)


if __name__ == "__main__":
    main()
