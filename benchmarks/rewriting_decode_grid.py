"""The rewriter's decode-time settings on dev (W3.3): a grid of LM scale × word bias, chosen by a rule.

Usage (from the repository root)::

    .venv/bin/python benchmarks/rewriting_decode_grid.py            # writes rewriting_decode_grid.jsonl
    .venv/bin/python benchmarks/rewriting_decode_grid.py --biases   # rewriting_decode_grid_biases.jsonl

``--biases`` runs the tenth rule of ``docs/rewriting.md`` ("Substitution and insertion biases"): the grid
LM scale × word bias × substitution bias × insertion bias (:data:`GRID_BIASES`), the same choice, and a
two-fold estimate of the choice's optimism (the rule applied to the dev sentences at even positions alone,
its choice scored on the odd ones, and the other way round; ``held_out_mean_sari`` is the mean of the
two held-out scores). ``--content-only`` (the eleventh rule) makes the substitution bias count only
substituted content words (nouns, verbs, adjectives, adverbs: ``bias_counts(hg, content_only=True)``);
give it its own ``--out``.

``--cv RECIPE --out FILE`` runs the seventeenth rule ("A larger held-out judgement: cross-validation on
train"): the grid :data:`GRID_CV` decoded by the three fold models that ``benchmarks/rewriting_cv.py run
--recipe RECIPE`` trained, each on its held-out fold (``.cache/rewriting_cv/``), the 1,800 rewrites scored
pooled as one corpus, and the same choice (with the edge steps :data:`STEPS_CV`); no two-fold estimate.
``--nested`` adds the nineteenth rule's nested estimate: for each fold f the same choice made on the
pooled rewrites of the other two folds alone (``mean_sari_not{f}`` of every row), fold f's rewrites at
that setting, the 1,800 so composed scored pooled (the last row's ``nested``) and written as the variant
``RECIPE/nested`` (``.cache/rewriting_cv/RECIPE/fold{f}/heldout_rewrites_nested.jsonl``) that
``benchmarks/rewriting_cv.py score`` reads.

``--cv add4 --keep-scores --nested --out FILE`` runs the twentieth rule ("Which words matter"): at the
shipped setting (:data:`KEEP_BASE`), the grid :data:`GRID_KEEP` of the weight μ of the compression model's
neural keep log-odds (``data/default_model/neural``), centred on the sentence's mean or raw, added to every
hyperedge per source token it uses (copies or substitutes: ``used_tokens``) — exact, a sum over
hyperedges. The choice (:func:`_choose_keep`: highest pooled mean SARI, ties within 0.01 to fewer
characters, then smaller μ, then centred; a winner at the largest μ extends once to twice it), made on all
folds and, nested, on the other two folds for each fold; the nested rewrites are written as the variant
``add4/keep-nested`` and the μ = 0 rewrites as ``add4/keep0``, which ``benchmarks/rewriting_cv.py score``
compares.

The rule and the grid were written into ``docs/rewriting.md`` ("How decode settings are chosen") before
the first run: on the 200 dev sentences at free length (exact chart), the setting with the highest mean of
ASSET and TurkCorpus corpus SARI; ties (means equal to 0.01) go to fewer characters kept, then to the
setting nearest the default (scale 1, bias 0); a winner on the grid's edge extends the grid once by one
step in that direction (scale × 1.5 or ÷ 1.5, bias ± 30).

Each dev source is parsed as ``dualdecomp rewrite --input FILE --input-format text`` parses a plain-text
line (the batch: ``tokenise_text``, then ``parse_tokens`` over chunks of 64 lines, the default
``--batch-size``, with the line's spacing; spaCy's parses can differ between a lone sentence and a chunk,
so ``parse_text`` would not reproduce the dev table's rows), its derivation forest, hyperedge scores and
bigram matrix are built once, and every setting decodes it with the chart
(``RewriteDecoder`` with ``DecodeSettings(lm_scale, word_bias)``: ``word_bias`` × the words each hyperedge
writes added to its score, the LM weight × ``lm_scale``). The rewrites (sentence-cased as the CLI does) are
scored with the code of ``dualdecomp evaluate --task rewrite`` (``evaluate_rewrites``, which
``dualdecomp.app.rewriting_evaluation.evaluate_rewrite_files`` calls), in memory. The setting (1, 0) must
reproduce ``benchmarks/rewriting_dev/rewriter_free.jsonl`` of the embedded model: the script reports how
many rows match. One JSON row per setting in ``benchmarks/rewriting_decode_grid.jsonl`` and a last row
naming the selected setting. Every setting decodes with the article agreement at its default
(``DecodeSettings.article_agreement``: on since the eighteenth rule; the grids committed before it ran
without it, so a rerun of those moves their rows slightly). The grid decodes the chart alone: the paired
punctuation (``DecodeSettings.paired_punctuation``, on by default since the twenty-seventh rule) is
decoded by the engine in the application, so since that rule ``rewriter_free.jsonl`` differs from the
grid's rows on the sentences where it binds (on dev 5 of the 200 rewrites: see the rule).

``benchmarks/rewriting_decode_grid_parse_text.jsonl`` is the first run (2026-11-26), whose sources were
parsed one by one (``parse_text``, as ``dualdecomp rewrite "TEXT"`` and the trainer's epoch choice do):
its (1, 0) row reproduced only 163 of the 200 rows of ``rewriter_free.jsonl`` (made by the batch), so the
script was changed to the batch's parses and run again before any setting was stored. On that first run
the rule picked scale 1.5, bias 60 (mean SARI 38.52; 38.48 for the edge extension to bias 90).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dualdecomp.app.rewriter import Rewriter
from dualdecomp.app.rewriting_evaluation import (
    DEFAULT_SETS,
    RewriteCorpus,
    default_references_path,
    read_rewrite_corpus,
)
from dualdecomp.data.detokenise import detokenise
from dualdecomp.data.jsonl import read_jsonl_numbered, write_lines_atomic
from dualdecomp.data.parsing import parse_tokens, tokenise_text
from dualdecomp.data.trees import from_dependency
from dualdecomp.models.evaluation.rewriting import evaluate_rewrites
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.rewriting.decode_settings import DecodeSettings
from dualdecomp.models.rewriting.lm_matrix import bigram_matrix
from dualdecomp.models.rewriting.model import bias_counts, hyperedge_scores
from dualdecomp.solvers.rewriting import decode, rewrite_text
from dualdecomp.solvers.rewriting.component import used_tokens

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "rewriting_decode_grid.jsonl"
OUT_BIASES = ROOT / "benchmarks" / "rewriting_decode_grid_biases.jsonl"
SCALES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
BIASES = (-60.0, -30.0, -15.0, 0.0, 15.0, 30.0, 60.0)
GRID = {"lm_scale": SCALES, "word_bias": BIASES}
"""The first grid (LM scale × word bias; the other biases 0)."""
GRID_BIASES = {"lm_scale": (0.5, 0.75, 1.0, 1.25), "word_bias": (0.0, 30.0, 60.0, 90.0, 120.0),
               "substitution_bias": (0.0, 240.0, 480.0, 720.0, 960.0),
               "insertion_bias": (0.0, 120.0, 240.0)}
"""The tenth rule's grid (docs/rewriting.md, "Substitution and insertion biases"): 300 settings."""
STEPS = {"word_bias": 30.0, "substitution_bias": 240.0, "insertion_bias": 120.0}
"""A bias dimension's step: the edge extension and the distance to the neutral setting."""
GRID_CV = {"lm_scale": (0.5, 0.75, 1.0), "word_bias": (30.0, 90.0, 150.0),
           "substitution_bias": (240.0, 480.0, 720.0), "insertion_bias": (0.0, 180.0, 360.0)}
"""The seventeenth rule's grid (docs/rewriting.md, "cross-validation on train"): 81 settings."""
STEPS_CV = {"word_bias": 60.0, "substitution_bias": 240.0, "insertion_bias": 180.0}
"""The edge extension's steps of :data:`GRID_CV` (its spacing)."""
GRID_KEEP = {"keep_weight": (0.0, 7.5, 15.0, 30.0, 60.0, 120.0), "keep_centred": (1.0, 0.0)}
"""The twentieth rule's grid (docs/rewriting.md, "Which words matter"): μ × form (1 centred, 0 raw)."""
KEEP_BASE = DecodeSettings(1.0, 30.0, 240.0, 180.0)
"""The decode setting shipped from the nineteenth rule to the thirty-eighth, at which the grids of the
twentieth to thirty-eighth rules decode (the thirty-eighth rule's biases, stored since, are in the
Makefile)."""
KEEP_SCORER = ROOT / "data" / "default_model" / "neural"
TIE = 0.01
CHUNK = 64  # lines parsed together: dualdecomp rewrite's default --batch-size


def _keep_sums(hg, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per hyperedge: the sum of the keep log-odds of the source tokens it uses, and how many it uses."""
    ptr, idx = used_tokens(hg)
    counts = np.diff(ptr)
    owner = np.repeat(np.arange(hg.num_hyperedges), counts)
    return np.bincount(owner, weights=logits[idx], minlength=hg.num_hyperedges), counts.astype(float)


def parsed_sources(sources: tuple[str, ...]) -> list:
    """The sources parsed as ``dualdecomp rewrite --input`` parses plain text: ``tokenise_text``, then
    ``parse_tokens`` over chunks of :data:`CHUNK` lines, with each line's spacing."""
    sentences = []
    for start in range(0, len(sources), CHUNK):
        pieces = [tokenise_text(text)[0] for text in sources[start:start + CHUNK]]
        parsed = parse_tokens([toks for toks, _ in pieces], ids=[str(k) for k in range(len(pieces))])
        sentences.extend(dataclasses.replace(s, spaces=spaces) for s, (_, spaces) in zip(parsed, pieces,
                                                                                          strict=True))
    return sentences


def _prepare(rewriter: Rewriter, sources: tuple[str, ...], content_only: bool = False,
             scorer=None) -> list[tuple]:
    """Per source: (hypergraph, w·φ scores, bias counts per hyperedge, bigram matrix, the source, the
    rewriter's decoder, and with a keep ``scorer`` (sums of keep log-odds per hyperedge, tokens used per
    hyperedge, the sentence's mean log-odds), else None)."""
    return prepare_sentences(rewriter, parsed_sources(sources), content_only, scorer)


def prepare_sentences(rewriter: Rewriter, sentences: list, content_only: bool = False,
                      scorer=None) -> list[tuple]:
    """:func:`_prepare` of sources already parsed (:func:`parsed_sources`)."""
    dec = rewriter.decoder
    out = []
    for sentence in sentences:
        hg = dec.hypergraph(from_dependency(sentence))
        base = hyperedge_scores(hg, dec.model.weights, dec.featuriser)
        bigrams = bigram_matrix(dec.lm, hg.vocab) if dec.lm is not None else None
        keep = None
        if scorer is not None:
            logits = scorer.keep_logits(sentence.tokens)
            keep = (*_keep_sums(hg, logits), float(logits.mean()))
        out.append((hg, base, bias_counts(hg, content_only), bigrams,
                    detokenise(sentence, np.ones(sentence.n, dtype=bool)), dec, keep))
    return out


def _rewrites(prepared: list[tuple], settings: DecodeSettings, keep_weight: float = 0.0,
              keep_centred: bool = True) -> tuple[list[str], int]:
    """The rewrites of every prepared source under ``settings`` (as RewriteDecoder.decode computes them,
    each by the decoder it was prepared with), plus ``keep_weight`` × the keep log-odds (centred or raw)
    of the tokens each hyperedge uses, and how many were certified."""
    decoders: dict[int, object] = {}
    texts, certified = [], 0
    for hg, base, counts, bigrams, source, model_decoder, keep in prepared:
        dec = decoders.setdefault(id(model_decoder), replace(model_decoder, settings=settings))
        scores = dec.biased(base, counts)
        if keep_weight:
            sums, used, mean = keep
            scores = scores + keep_weight * (sums - mean * used if keep_centred else sums)
        der = decode(hg, scores, dec.lm_matrix(hg, bigrams), None, dec.max_states)
        certified += bool(der.certified)
        texts.append(rewrite_text(der.words, source))
    return texts, certified


def _score(corpus, texts: list[str], positions: list[int] | None = None) -> dict:
    """:func:`_row` of the rewrites (in corpus order) at ``positions`` (None: all) against the corpus."""
    keep = range(len(texts)) if positions is None else positions
    refs = {name: [corpus.references[name][k] for k in keep] for name in DEFAULT_SETS}
    return _row(evaluate_rewrites([corpus.sources[k] for k in keep], [texts[k] for k in keep], refs))


def setting_row(setting: dict, corpus, texts: list[str], certified: int, seconds: float,
                splits: dict[str, list[int]]) -> dict:
    """A grid row: the setting, :func:`_score` of its rewrites, how many were certified and the decode
    time, and the mean SARI, each set's SARI and the characters kept on each of ``splits`` (name →
    positions)."""
    row = {**setting, **_score(corpus, texts),
           "certified": certified, "n": len(texts), "decode_seconds": round(seconds, 2)}
    for half, positions in splits.items():
        part = _score(corpus, texts, positions)
        row.update({f"mean_sari_{half}": part["mean_sari"], f"chars_kept_{half}": part["chars_kept"],
                    **{f"sari_{name}_{half}": part[f"sari_{name}"] for name in DEFAULT_SETS}})
    return row


def _row(s) -> dict:
    """The scores of a row: SARI per set and its parts, the mean, characters kept, mean words."""
    row = {f"sari_{r.name}": round(r.sari, 4) for r in s.sets}
    row["mean_sari"] = round(float(np.mean([r.sari for r in s.sets])), 4)
    for r in s.sets:
        row[f"parts_{r.name}"] = {"add": round(r.add, 4), "keep": round(r.keep, 4),
                                  "delete": round(r.delete, 4)}
    row.update({f"bleu_{r.name}": round(r.bleu, 4) for r in s.sets})
    row["chars_kept"] = round(s.chars_kept, 4)
    row["mean_words"] = round(s.mean_words, 3)
    return row


def _distance(row: dict) -> float:
    """How far a setting lies from the neutral one (scale 1, biases 0), in grid steps."""
    return abs(np.log(row["lm_scale"])) + sum(abs(row.get(k, 0.0)) / step for k, step in STEPS.items())


def _keep_distance(row: dict) -> tuple[float, float]:
    """The twentieth rule's order after characters: the smaller μ, then centred."""
    return row["keep_weight"], -row["keep_centred"]


def _select(rows: list[dict], key: str = "mean_sari", distance=_distance, chars: str | None = None) -> dict:
    """The rule: highest ``key``; within TIE of it, fewer characters kept (``chars``, by default the
    characters of ``key``'s sentences), then nearest the neutral setting (``distance``)."""
    best = max(r[key] for r in rows)
    near = [r for r in rows if best - r[key] < TIE]
    chars = chars or key.replace("mean_sari", "chars_kept")  # mean_sari_even → chars_kept_even
    return min(near, key=lambda r: (r[chars], distance(r)))


def _step(name: str, value: float, up: bool, steps: dict[str, float]) -> float:
    if name == "lm_scale":
        return value * 1.5 if up else value / 1.5
    return value + steps[name] if up else value - steps[name]


def _edge_extension(winner: dict, grid: dict[str, tuple[float, ...]],
                    steps: dict[str, float]) -> list[dict[str, float]]:
    """The settings one step beyond each grid edge the winner lies on (empty when inside): per dimension
    the winner's value, plus the next one out when it is on that dimension's edge."""
    values = []
    for name, axis in grid.items():
        v = winner[name]
        values.append([v] if v not in (min(axis), max(axis)) else [v, _step(name, v, v == max(axis), steps)])
    settings = [dict(zip(grid, combo, strict=True)) for combo in itertools.product(*values)]
    return [x for x in settings if any(x[k] != winner[k] for k in grid)]


def _halves(corpus) -> dict[str, list[int]]:
    """The two-fold split of the tenth rule: the dev sentences at even and at odd positions."""
    n = len(corpus.ids)
    return {"even": list(range(0, n, 2)), "odd": list(range(1, n, 2))}


def _fold_slices(corpora: list) -> list[slice]:
    """Where each fold's sentences lie in the pooled corpus (the folds' corpora, consecutive blocks)."""
    starts = np.cumsum([0, *(len(c.ids) for c in corpora)])
    return [slice(int(a), int(b)) for a, b in zip(starts, starts[1:], strict=False)]


def _other_folds(corpora: list) -> dict[str, list[int]]:
    """The nested split of the nineteenth rule: for each fold f, the positions of the other folds in the
    pooled corpus, named ``not{f}``."""
    slices = _fold_slices(corpora)
    return {f"not{f}": [k for g, part in enumerate(slices) if g != f for k in range(part.start, part.stop)]
            for f in range(len(slices))}


def _choose(rows: dict[tuple, dict], grid: dict[str, tuple[float, ...]], run, key: str = "mean_sari",
            steps: dict[str, float] = STEPS) -> dict:
    """The rule on ``key`` over the grid's settings alone: the best, then once the edge extension
    (``run`` decodes a setting not yet in ``rows``) and the best of the grid and that extension (rows
    decoded for another choice's extension are not candidates)."""
    keys = [tuple(combo) for combo in itertools.product(*grid.values())]
    winner = _select([rows[k] for k in keys], key)
    extension = _edge_extension(winner, grid, steps)
    for setting in extension:
        if tuple(setting.values()) not in rows:
            run(setting)
    keys += [tuple(x.values()) for x in extension]
    return {"winner": _select([rows[k] for k in keys], key) if extension else winner,
            "extended": [list(x.values()) for x in extension]}


def choose_doubling(rows: dict[tuple, dict], grid: dict[str, tuple[float, ...]], weight: str | None, run,
                    key: str = "mean_sari", distance=_distance, select=None) -> dict:
    """The choice on ``key`` over ``grid``'s settings (``_select`` with ``distance``, or ``select(rows)``
    when given): the best, and a winner at the outermost ``weight`` (the largest in size: the most
    negative of a negative axis) extended once to twice it, its other values kept (``run`` decodes that
    setting when not yet in ``rows``); ``weight`` None: no extension."""
    pick = select or (lambda candidates: _select(candidates, key, distance))
    keys = [tuple(combo) for combo in itertools.product(*grid.values())]
    winner = pick([rows[k] for k in keys])
    if weight is None or winner[weight] != max(grid[weight], key=abs):
        return {"winner": winner, "extended": []}
    beyond = {name: 2 * winner[name] if name == weight else winner[name] for name in grid}
    if tuple(beyond.values()) not in rows:
        run(beyond)
    return {"winner": pick([rows[k] for k in [*keys, tuple(beyond.values())]]),
            "extended": [list(beyond.values())]}


def _choose_keep(rows: dict[tuple, dict], run, key: str = "mean_sari") -> dict:
    """The twentieth rule's choice on ``key`` over :data:`GRID_KEEP` (module docstring): the best, and a
    winner at the largest μ extended once to twice it in its form."""
    return choose_doubling(rows, GRID_KEEP, "keep_weight", run, key, _keep_distance)


def _write_variant(recipe: str, fold: int, name: str, fold_corpus, texts: list[str], setting: dict) -> None:
    """Fold ``fold``'s rewrites as the variant ``RECIPE/NAME`` that ``rewriting_cv.py score`` reads."""
    path = ROOT / ".cache" / "rewriting_cv" / recipe / f"fold{fold}" / f"heldout_rewrites_{name}.jsonl"
    write_lines_atomic(path, [json.dumps({"id": i, "text": src, "rewrite": t, "setting": setting})
                              for i, src, t in zip(fold_corpus.ids, fold_corpus.sources, texts, strict=True)])


def _nested(recipe: str, corpora: list, corpus, texts_of: dict[tuple, list[str]], dims, choose,
            name: str = "nested") -> dict:
    """The nineteenth rule's nested estimate: each fold (``corpora``, pooled as ``corpus``) rewritten at
    the setting ``choose(key)`` makes on the other folds' rewrites alone (``key`` their pooled mean SARI;
    ``dims`` the setting's names); the composed rewrites pooled, scored and written as ``RECIPE/NAME``."""
    composed: list[str] = []
    folds = []
    for f, (fold_corpus, part) in enumerate(zip(corpora, _fold_slices(corpora), strict=True)):
        choice = choose(f"mean_sari_not{f}")
        w = choice["winner"]
        texts = texts_of[tuple(w[k] for k in dims)][part]
        composed += texts
        folds.append({"fold": f, "selected": {k: w[k] for k in dims},
                      f"mean_sari_not{f}": w[f"mean_sari_not{f}"], "extended": choice["extended"]})
        _write_variant(recipe, f, name, fold_corpus, texts, folds[-1]["selected"])
    return {"folds": folds, **_score(corpus, composed)}


def write_result(path: Path, rows: dict[tuple, dict], selected: dict) -> None:
    """The grid's rows and then the selection, one JSON object a line, to ``path``; the selection printed."""
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in [*rows.values(), selected]),
                    encoding="utf-8")
    print(json.dumps(selected))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The rewriter's decode settings on dev (grid and rule).")
    parser.add_argument("--references", type=Path, default=None,
                        help="rewriting dev corpus (default: ../shared/data/rewriting/dev.jsonl)")
    parser.add_argument("--model", default=None, help="rewriting model directory (default: embedded)")
    parser.add_argument("--biases", action="store_true",
                        help="the tenth rule's grid: LM scale x word, substitution and insertion biases, "
                             "with its two-fold estimate of the choice's optimism")
    parser.add_argument("--content-only", action="store_true",
                        help="the eleventh rule: the substitution bias counts content words only")
    parser.add_argument("--cv", metavar="RECIPE", default=None,
                        help="the seventeenth rule: the grid GRID_CV decoded by the fold models of "
                             "benchmarks/rewriting_cv.py's RECIPE on their held-out folds, scored pooled")
    parser.add_argument("--nested", action="store_true",
                        help="with --cv, the nineteenth rule: each fold at the setting chosen on the "
                             "other two folds, pooled, written as the variant RECIPE/nested")
    parser.add_argument("--keep-scores", action="store_true",
                        help="with --cv add4, the twentieth rule: the weight of the compression model's "
                             "neural keep log-odds at the shipped setting")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"JSONL result (default: {OUT.name}; with --biases {OUT_BIASES.name})")
    args = parser.parse_args(argv)
    if args.cv is not None and (args.biases or args.model or args.references or args.out is None):
        parser.error("--cv takes its models and sentences from the folds: give --out, not --biases, "
                     "--model or --references")
    if args.nested and args.cv is None:
        parser.error("--nested needs --cv")
    if args.keep_scores and args.cv != "add4":
        parser.error("--keep-scores needs --cv add4")
    grid = GRID_KEEP if args.keep_scores else GRID_CV if args.cv else GRID_BIASES if args.biases else GRID
    steps = STEPS_CV if args.cv else STEPS
    out_path = args.out or (OUT_BIASES if args.biases else OUT)
    if args.cv is None:
        parts = [(args.model, args.references or default_references_path())]
    else:
        work = ROOT / ".cache" / "rewriting_cv"
        parts = [(str(work / args.cv / f"fold{f}" / "model"), work / f"fold{f}" / "heldout.jsonl")
                 for f in range(3)]
    start = time.perf_counter()
    prepared, corpora = [], []
    scorer = load_neural_model(KEEP_SCORER) if args.keep_scores else None
    for model, references in parts:
        corpora.append(read_rewrite_corpus(references, DEFAULT_SETS))
        rewriter = Rewriter(model)
        prepared += _prepare(rewriter, corpora[-1].sources, args.content_only, scorer)
    corpus = RewriteCorpus(ids=sum((c.ids for c in corpora), ()),
                           sources=sum((c.sources for c in corpora), ()),
                           references={name: sum((c.references[name] for c in corpora), ())
                                       for name in DEFAULT_SETS})
    print(f"prepared {len(prepared)} charts in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    model_settings = rewriter.decoder.settings
    splits = _halves(corpus) if args.biases else _other_folds(corpora) if args.nested else {}
    rows: dict[tuple, dict] = {}
    texts_of: dict[tuple, list[str]] = {}

    def run(setting: dict[str, float]) -> None:
        t0 = time.perf_counter()
        if args.keep_scores:
            settings = KEEP_BASE
            texts, certified = _rewrites(prepared, settings, setting["keep_weight"],
                                         bool(setting["keep_centred"]))
        else:
            settings = DecodeSettings(**setting)
            texts, certified = _rewrites(prepared, settings)
        row = setting_row(setting, corpus, texts, certified, time.perf_counter() - t0, splits)
        if settings == model_settings:
            free = ROOT / "benchmarks" / "rewriting_dev" / "rewriter_free.jsonl"
            if args.model is None and args.cv is None and free.is_file():
                shipped = {r["id"]: r.get("rewrite") for _, r in read_jsonl_numbered(free)}
                row["same_as_rewriter_free"] = sum(shipped.get(i) == t for i, t in zip(corpus.ids, texts,
                                                                                       strict=True))
        rows[tuple(setting.values())] = row
        if args.nested or args.keep_scores:
            texts_of[tuple(setting.values())] = texts
        print(json.dumps(row), file=sys.stderr, flush=True)

    for combo in itertools.product(*grid.values()):
        run(dict(zip(grid, combo, strict=True)))

    def choose(key: str = "mean_sari") -> dict:
        if args.keep_scores:
            return _choose_keep(rows, run, key)
        return _choose(rows, grid, run, key, steps)

    choice = choose()
    winner = choice["winner"]
    where = f"the 3-fold held-out rewrites of {args.cv}" if args.cv else "dev"
    selected = {"selected": {k: winner[k] for k in grid}, "mean_sari": winner["mean_sari"],
                "extended": choice["extended"],
                "rule": f"highest mean of ASSET and TurkCorpus corpus SARI on {where} at free length; "
                        f"ties within {TIE} by fewer characters kept, then "
                        + ("the smaller keep weight, then centred; a winner at the largest weight extends "
                           "once" if args.keep_scores else
                           "nearest the neutral setting; an edge winner extends once")}
    if args.biases:  # the two-fold estimate: chosen on one half, scored on the other
        folds, held_out = {}, []
        for half, other in (("even", "odd"), ("odd", "even")):
            fold = _choose(rows, grid, run, f"mean_sari_{half}")
            w = fold["winner"]
            folds[f"chosen_on_{half}"] = {"selected": {k: w[k] for k in grid},
                                          f"mean_sari_{half}": w[f"mean_sari_{half}"],
                                          f"held_out_mean_sari_{other}": w[f"mean_sari_{other}"],
                                          f"full_dev_choice_mean_sari_{other}": winner[f"mean_sari_{other}"],
                                          "extended": fold["extended"]}
            held_out.append(w[f"mean_sari_{other}"])
        selected["two_fold"] = folds
        selected["held_out_mean_sari"] = round(float(np.mean(held_out)), 4)
    if args.nested:
        name = "keep-nested" if args.keep_scores else "nested"
        selected["nested"] = _nested(args.cv, corpora, corpus, texts_of, list(grid), choose, name)
    if args.keep_scores:  # μ = 0, the shipped decode, as the variant the rule compares with
        for f, (fold_corpus, part) in enumerate(zip(corpora, _fold_slices(corpora), strict=True)):
            _write_variant(args.cv, f, "keep0", fold_corpus, texts_of[(0.0, 1.0)][part], KEEP_BASE.as_dict())
    write_result(out_path, rows, selected)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
