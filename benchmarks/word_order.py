"""Word-ordering benchmark on a CoNLL-U dev file: one JSON line per measurement.

Measurements (``--what``):

* ``conditions``: the input conditions of Table 7 of Zhang & Clark (2015), and "bnp" (the bag with its
  base NPs as ordered units, the input of the paper's bag-of-words results) — BLEU (sacrebleu), exact
  match, words recovered, sentences/s — with best-first search (APPROXIMATE) at ``--timeout`` seconds.
* ``tree-beam``: the same conditions with ``--tree-beam K`` (APPROXIMATE): full trees ("dep100", "all")
  decoded by the tree beam DP (certified when nothing was pruned), the other inputs by best-first search
  at ``--timeout`` whose output is completed and re-ordered by the tree beam DP.
* ``lineariser``: the full-tree conditions ordered by the model's head-domain lineariser
  (``dualdecomp order``'s default decoder); with ``--second-stage lineariser`` also the other conditions,
  by best-first search whose completed tree the lineariser orders (the default second stage, the tree
  beam DP, is ``tree-beam``'s).
* ``curve``: BLEU of the words-only condition at each timeout of ``--curve`` (the paper's Figure 7), for
  best-first search alone and followed by the tree beam DP (``--curve-methods``).
* ``exact``: on the full-tree ("all") inputs, how often the exact DP certifies the model's optimum and
  how the best-first output and the tree beam DP's (the first ``--tree-beam``) compare with it under the
  same model (same score, lower score).
* ``lineariser-exact``: on the full-tree ("all") inputs, how often the head-domain lineariser's exact DP
  with its LM term certifies within ``--lineariser-states`` states, and how its default beam search
  compares with the certified optimum under the same model (same order, same score, lower score; a
  higher score would mean a bug and is reported, never hidden).
* ``lm-beam``: the conditions that give no head outside their units (words, POS, ``bnp``) ordered by the
  LM beam search alone (``dualdecomp.models.ordering.bag_lm.search``, APPROXIMATE; certified for the LM when
  nothing was pruned), for each beam of ``--lm-beam`` with the LM ``--lm-beam-lm``.
* ``errors``: on the full-tree ("all") inputs, for each ``--tree-beam`` K, how many tree beam DP outputs
  are the gold ordering, search errors (the gold ordering scores higher under the model) and model
  errors (the output scores at least as high); sentences whose gold tree is not projective are counted
  apart (``dualdecomp.models.ordering.paper.diagnosis``).
Names the rows share with older records keep their old spelling (the ``lineariser`` rows' ``tree_beam``
value ``"linearizer"``, the fields ``linearizer_lm_weight`` and ``linearizer_states``, the measure
``linearizer_exact_vs_beam``); the old spellings of the options and ``--what`` values are still accepted.
The model decodes with its LM term (``--lm``, ``--lm-weight``; default: the weight stored in the model).
The grid the stored weight was chosen from is printed by ``dualdecomp order select-lm``.

Every line carries the peak resident memory of the process so far (``ru_maxrss``).

A long run can be split over processes (``--start``/``--sentences``, ``--seed START``, each with
``--outputs``); ``--join FILES`` then scores all the outputs as one corpus (one sacrebleu BLEU, not a
mean of the parts). Use ``--max-expansions`` for a split run: a wall-clock timeout depends on the load.

Example::

    python benchmarks/word_order.py --model data/word_order_model \\
        --dev ../shared/data/ud-english-ewt/en_ewt-ud-dev.conllu --sentences 200 --timeout 1
"""

from __future__ import annotations

# ``solvers`` package: look in the repository root instead.
import argparse
import json
import math
import resource
import time
from dataclasses import replace

from dualdecomp.app.commands.old_spellings import add_old_spelling
from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.evaluation.ordering import CONDITIONS, certified_share, evaluate, score, text_scores
from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.ordering.bag_lm.search import LMTerm, lm_beam_decode
from dualdecomp.models.ordering.decoding.config import (
    DEFAULT_TREE_BEAM,
    SECOND_STAGES,
    ExactConfig,
    second_stage_name,
)
from dualdecomp.models.ordering.decoding.load import load_decoder, with_decoding_lm
from dualdecomp.models.ordering.paper.diagnosis import (
    GOLD,
    MODEL_ERROR,
    SEARCH_ERROR,
    error_kind,
    gold_derivation,
)
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first, goal_result

LINEARISER_LABEL = "linearizer"  # old spelling kept: the rows' "tree_beam" value, as in the recorded runs
OLD_MEASURES = {"linearizer": "lineariser", "linearizer-exact": "lineariser-exact"}  # old spelling kept
"""Old spellings of ``--what`` values, still accepted."""


def peak_mb() -> float:
    """Peak resident memory of this process so far, MB (``ru_maxrss``, Linux: KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _emit(record: dict) -> None:
    print(json.dumps({**record, "peak_rss_mb": peak_mb()}), flush=True)


def _methods(results) -> str:
    """The decoders that produced a run's outputs, e.g. "best-first (approximate) / exact DP"."""
    return " / ".join(sorted({r.method for r in results}))


def _write_outputs(path: str, condition: str, label, examples: list, results: list) -> None:
    """Append one measurement's outputs to ``path`` (``--outputs``; ``label``: the tree beam, None for
    best-first search alone), one JSON line per sentence, for ``--join``."""
    with open(path, "a", encoding="utf-8") as out:
        for ex, r in zip(examples, results, strict=True):
            out.write(json.dumps({"condition": condition, "tree_beam": label, "id": ex.ident,
                                  "text": " ".join(r.words), "complete": r.complete,
                                  "words_out": len(r.order), "words_in": len(ex),
                                  "seconds": round(r.seconds, 4)}) + "\n")


def join_outputs(files: list[str], dev: list) -> list[dict]:
    """Score the ``--outputs`` lines of a run split over processes as one run.

    Parameters
    ----------
    files : list of str
        JSON-lines files written by ``--outputs``.
    dev : list of OrderingExample
        The dev file the outputs were decoded from (references, matched by sentence id).

    Returns
    -------
    list of dict
        One record per (condition, tree beam): BLEU and exact match over all the outputs, words
        recovered, share complete, summed decoding seconds (sentences/s of one process).
    """
    position = {ex.ident: k for k, ex in enumerate(dev)}
    if len(position) != len(dev):
        raise SystemExit("the dev file repeats sentence ids: outputs cannot be matched to it")
    groups: dict[tuple, dict[int, dict]] = {}
    for name in files:
        with open(name, encoding="utf-8") as lines:
            for line in lines:
                out = json.loads(line)
                if out["id"] not in position:
                    raise SystemExit(f"{name}: sentence id {out['id']!r} is not in the dev file")
                group = groups.setdefault((out["condition"], out["tree_beam"]), {})
                if position[out["id"]] in group:
                    raise SystemExit(f"{name}: sentence {out['id']!r} is decoded twice")
                group[position[out["id"]]] = out
    records = []
    for (condition, beam), outs in groups.items():
        ks = sorted(outs)
        bleu, exact = text_scores([outs[k]["text"] for k in ks], [" ".join(dev[k].words) for k in ks])
        seconds = sum(outs[k]["seconds"] for k in ks)
        records.append({"measure": "condition", "condition": condition, "tree_beam": beam,
                        "joined": len(files), "first": ks[0], "last": ks[-1], "bleu": round(bleu, 2),
                        "exact": round(exact, 4),
                        "recovered": round(sum(outs[k]["words_out"] for k in ks)
                                           / max(1, sum(outs[k]["words_in"] for k in ks)), 4),
                        "complete": round(sum(outs[k]["complete"] for k in ks) / len(ks), 4),
                        "sentences": len(ks), "seconds": round(seconds, 2),
                        "sentences_per_second": round(len(ks) / seconds, 2) if seconds > 0 else None})
    return records


def main() -> None:
    """Run the chosen measurements and print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="data/word_order_model")
    parser.add_argument("--dev", required=True)
    parser.add_argument("--sentences", type=int, default=200, help="N dev sentences (from --start)")
    parser.add_argument("--start", type=int, default=0, help="skip the first dev sentences")
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--max-expansions", type=int, default=None,
                        help="conditions/tree-beam: stop best-first search after K pops instead of the "
                             "timeout (deterministic, as in `order select-lm`)")
    parser.add_argument("--chart-size", type=int, default=32)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS))
    parser.add_argument("--curve", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0, 5.0])
    parser.add_argument("--curve-sentences", type=int, default=100)
    parser.add_argument("--curve-methods", nargs="+", choices=("best-first", "tree-beam"),
                        default=["best-first", "tree-beam"],
                        help="decoders of the curve (tree-beam: the first --tree-beam)")
    parser.add_argument("--exact-states", type=int, default=100_000)
    parser.add_argument("--tree-beam", type=int, nargs="+", default=[DEFAULT_TREE_BEAM],
                        help="beam sizes of the tree beam DP (--what tree-beam)")
    states = parser.add_argument("--lineariser-states", type=int, default=0,
                                 help="state limit of the lineariser's exact DP with its LM term (0: beam "
                                      "only)")
    add_old_spelling(parser, "--linearizer-states", states)
    parser.add_argument("--second-stage", type=second_stage_name, choices=SECOND_STAGES, default="tree-beam",
                        help="second stage of --what lineariser for inputs without a full tree")
    parser.add_argument("--what", nargs="+", type=_measure_name,
                        choices=("conditions", "tree-beam", "lineariser", "lineariser-exact", "curve",
                                 "exact", "errors", "lm-beam"),
                        default=["conditions", "tree-beam", "lineariser", "lm-beam", "curve", "exact"])
    parser.add_argument("--lm", default=None, help="KenLM model (default: the embedded compression trigram)")
    parser.add_argument("--lm-weight", type=float, default=None, help="default: the model's stored weight")
    parser.add_argument("--tree-beam-attachments", type=int, default=None, metavar="N",
                        help="the tree beam DP's bound per sentence on its worst case of attachments "
                             "(ExactConfig.beam_attachments; default: none)")
    parser.add_argument("--lm-beam", type=int, nargs="+", default=None,
                        help="beams of the LM beam search (--what lm-beam; default: the model's)")
    parser.add_argument("--lm-beam-lm", default=None,
                        help="KenLM model of the LM beam search, alone (default: the model's LMs)")
    parser.add_argument("--seed", type=int, default=0,
                        help="sentence k (from --start) uses seed + k (give --seed START to split a run)")
    parser.add_argument("--outputs", default=None,
                        help="append the conditions and tree-beam measures' outputs here (JSON lines: "
                             "condition, tree beam (null: best-first alone), id, text, complete, words, "
                             "seconds), for --join over a run split across processes")
    parser.add_argument("--join", nargs="+", default=None, metavar="FILE",
                        help="decode nothing: score the --outputs files of a split run together, one corpus "
                             "BLEU per condition and tree beam (sentences matched to --dev by their ids)")
    args = parser.parse_args()
    if args.join:
        for record in join_outputs(args.join, read_conllu_examples(args.dev)):
            _emit({"data": args.dev.rsplit("/", 1)[-1], **record})
        return
    timeout = None if args.max_expansions is not None else args.timeout

    decoder = with_decoding_lm(load_decoder(args.model), args.lm, args.lm_weight, args.lineariser_states)
    model, lm = decoder.model, decoder.lm
    lm_weight = lm.weight if lm is not None else 0.0
    dev = read_conllu_examples(args.dev, limit=args.start + max(args.sentences, args.curve_sentences))
    dev = dev[args.start:]
    base = {"data": args.dev.rsplit("/", 1)[-1], "model": args.model, "chart_size": args.chart_size,
            "start": args.start, "lm_weight": lm_weight, "max_expansions": args.max_expansions}
    if decoder.units_lm is not None:
        base["units_lm_weight"] = decoder.units_lm.weight
    if args.tree_beam_attachments is not None:
        base["tree_beam_attachments"] = args.tree_beam_attachments
    if decoder.lineariser is not None:
        lineariser_lm = decoder.lineariser_lm
        base["linearizer_lm_weight"] = lineariser_lm.weight if lineariser_lm is not None else 0.0
        base["linearizer_states"] = args.lineariser_states
    search = SearchConfig(chart_size=args.chart_size, timeout=timeout, max_expansions=args.max_expansions)

    if "conditions" in args.what:
        examples = dev[:args.sentences]
        for condition in args.conditions:
            scores, results = evaluate(examples, lambda inp: decoder.decode(inp, search), condition,
                                       args.seed)
            _emit({**base, "measure": "condition", "condition": condition, "timeout": timeout,
                   "method": "best-first (approximate)", **scores.as_json()})
            if args.outputs:
                _write_outputs(args.outputs, condition, None, examples, results)

    decoders = []  # (label in the output lines, decoder settings)
    if "tree-beam" in args.what:
        bound = args.tree_beam_attachments
        decoders += [(beam, ExactConfig(max_states=None, beam=beam, beam_attachments=bound))
                     for beam in args.tree_beam]
    if "lineariser" in args.what:
        if decoder.lineariser is None:
            raise SystemExit(f"{args.model} has no head-domain lineariser (order train-lineariser)")
        decoders.append((LINEARISER_LABEL, ExactConfig(max_states=None, beam=args.tree_beam[0],
                                                       lineariser=True, second_stage=args.second_stage)))
    for label, config in decoders:
        examples = dev[:args.sentences]
        conditions = args.conditions
        if label == LINEARISER_LABEL and config.second_stage == "tree-beam":  # others: as --what tree-beam
            conditions = [c for c in conditions if CONDITIONS[c][1] == 1.0]
        for condition in conditions:
            scores, results = evaluate(examples, lambda inp, c=config: decoder.decode(inp, search, c),
                                       condition, args.seed)
            _emit({**base, "measure": "condition", "condition": condition, "timeout": timeout,
                   "tree_beam": label, "method": _methods(results), **scores.as_json(),
                   "certified": certified_share(results),
                   "max_seconds": round(max((r.seconds for r in results), default=0.0), 2)})
            if args.outputs:
                _write_outputs(args.outputs, condition, label, examples, results)

    if "lm-beam" in args.what:
        _lm_beam(decoder, dev[:args.sentences], args, base)

    if "curve" in args.what:
        examples = dev[:args.curve_sentences]
        for method in args.curve_methods:
            for timeout in args.curve:
                search = SearchConfig(chart_size=args.chart_size, timeout=timeout)
                beam = args.tree_beam[0] if method == "tree-beam" else None
                exact = ExactConfig(max_states=None, beam=beam) if beam else None
                scores, results = evaluate(examples, lambda inp, s=search, e=exact: decoder.decode(inp, s, e),
                                           "words", args.seed)
                _emit({**base, "measure": "timeout_curve", "condition": "words", "timeout": timeout,
                       "tree_beam": exact.beam if exact else None,
                       "method": _methods(results), **scores.as_json()})

    if "exact" in args.what:
        examples = dev[:args.sentences]
        search = SearchConfig(chart_size=args.chart_size, timeout=args.timeout)
        certified = same = lower = higher = 0
        gaps = []
        exact_results, first_results, exact_examples, beam_results = [], [], [], []
        dp_seconds = beam_seconds = 0.0
        beam_same = 0
        for k, ex in enumerate(examples):
            inp = ex.as_input(1.0, 1.0, args.seed + k)
            start = time.perf_counter()
            found = exact_linearisation(model, inp, args.exact_states, lm=lm)
            elapsed = time.perf_counter() - start
            if not (found.certified and found.best is not None):
                continue
            first = best_first(model, inp, search, lm=lm)
            start = time.perf_counter()
            beamed = exact_linearisation(model, inp, beam=args.tree_beam[0], lm=lm).best
            beam_seconds += time.perf_counter() - start
            beam_same += math.isclose(beamed.scaled, found.best.scaled, rel_tol=0, abs_tol=1e-9)
            beam_results.append(goal_result(model.context(inp), beamed, 0, 0.0, method="tree beam DP"))
            dp_seconds += elapsed
            certified += 1
            optimum = found.best.scaled
            if first.complete and math.isclose(first.score, optimum, rel_tol=0, abs_tol=1e-9):
                same += 1
            elif first.complete and first.score > optimum + 1e-9:
                higher += 1  # impossible if the DP is exact; reported, never hidden
            else:
                lower += 1
                if first.complete:
                    gaps.append(optimum - first.score)
            exact_results.append(goal_result(model.context(inp), found.best, found.states, elapsed,
                                             method="exact DP", certified=True))
            first_results.append(first)
            exact_examples.append(ex)
        exact_scores = score(exact_examples, exact_results, dp_seconds)
        first_scores = score(exact_examples, first_results, sum(r.seconds for r in first_results))
        _emit({**base, "measure": "exact_vs_best_first", "condition": "all", "sentences": len(examples),
               "certified": certified, "certified_share": round(certified / max(1, len(examples)), 4),
               "best_first_same_score": same, "best_first_lower_or_incomplete": lower,
               "best_first_higher": higher,
               "mean_scaled_gap_when_lower": round(sum(gaps) / len(gaps), 6) if gaps else 0.0,
               "exact_on_certified": exact_scores.as_json(),
               "best_first_on_certified": first_scores.as_json(), "timeout": args.timeout,
               "tree_beam": args.tree_beam[0], "tree_beam_same_score": beam_same,
               "tree_beam_on_certified": score(exact_examples, beam_results, beam_seconds).as_json()})

    if "lineariser-exact" in args.what:
        _lineariser_exact(decoder, dev[:args.sentences], args, base)

    if "errors" in args.what:
        examples = dev[:args.sentences]
        for beam in args.tree_beam:
            counts = {GOLD: 0, SEARCH_ERROR: 0, MODEL_ERROR: 0, "no_gold_derivation": 0}
            for k, ex in enumerate(examples):
                inp, order = ex.shuffled(1.0, 1.0, args.seed + k)
                gold = gold_derivation(model, inp, order, lm)
                if gold is None:
                    counts["no_gold_derivation"] += 1
                    continue
                counts[error_kind(gold, exact_linearisation(model, inp, beam=beam, lm=lm).best)] += 1
            _emit({**base, "measure": "errors", "condition": "all", "tree_beam": beam,
                   "sentences": len(examples), **counts})


def _measure_name(value: str) -> str:
    """A ``--what`` value, its old spelling (:data:`OLD_MEASURES`) accepted."""
    return OLD_MEASURES.get(value, value)


def _lm_beam(decoder, examples, args, base: dict) -> None:
    """The ``lm-beam`` measure: the LM beam search on the conditions it decodes, for each beam."""
    if args.lm_beam_lm is not None:
        terms = (LMTerm(load_lm(args.lm_beam_lm)),)
    elif decoder.lm_beam is not None:
        terms = decoder.lm_beam.terms
    else:
        raise SystemExit("--what lm-beam needs --lm-beam-lm FILE (the model has no LM beam)")
    lms = " + ".join(f"{t.weight:g} x {t.lm.path}" for t in terms)
    conditions = [c for c in args.conditions if CONDITIONS[c].dep == 0.0]
    beams = args.lm_beam or [decoder.lm_beam.beam if decoder.lm_beam is not None else 256]
    for beam in beams:
        for condition in conditions:
            scores, results = evaluate(examples, lambda inp, b=beam: lm_beam_decode(terms, inp, b), condition,
                                       args.seed)
            _emit({**base, "measure": "condition", "condition": condition, "lm_beam": beam,
                   "lm_beam_lm": lms, "method": _methods(results), **scores.as_json(),
                   "certified": certified_share(results),
                   "max_seconds": round(max((r.seconds for r in results), default=0.0), 2)})
            if args.outputs:
                _write_outputs(args.outputs, condition, f"lm-beam-{beam}", examples, results)


def _lineariser_exact(decoder, examples, args, base: dict) -> None:
    """The ``lineariser-exact`` measure: certificates of the lineariser's exact DP with its LM term, and the
    beam search's outputs against them."""
    if decoder.lineariser is None or decoder.lineariser_lm is None or args.lineariser_states < 1:
        raise SystemExit("--what lineariser-exact needs a lineariser with its LM term and "
                         "--lineariser-states N")
    exact, beam = decoder.lineariser, replace(decoder.lineariser, lm_states=0)
    counts = {"certified": 0, "beam_same_order": 0, "beam_same_score": 0, "beam_lower": 0, "beam_higher": 0}
    gaps, seconds = [], 0.0
    for k, ex in enumerate(examples):
        inp = ex.as_input(1.0, 1.0, args.seed + k)
        start = time.perf_counter()
        found = exact.linearise(inp.words, inp.pos, inp.heads, lm=decoder.lineariser_lm)
        seconds += time.perf_counter() - start
        if not found.certified:
            continue
        counts["certified"] += 1
        beamed = beam.linearise(inp.words, inp.pos, inp.heads, lm=decoder.lineariser_lm)
        if beamed.order == found.order:
            counts["beam_same_order"] += 1
        elif math.isclose(beamed.score, found.score, rel_tol=0, abs_tol=1e-9):
            counts["beam_same_score"] += 1
        elif beamed.score < found.score:
            counts["beam_lower"] += 1
            gaps.append(found.score - beamed.score)
        else:
            counts["beam_higher"] += 1  # impossible if the DP is exact
    _emit({**base, "measure": "linearizer_exact_vs_beam", "condition": "all", "sentences": len(examples),
           **counts, "certified_share": round(counts["certified"] / max(1, len(examples)), 4),
           "mean_gap_when_lower": round(sum(gaps) / len(gaps), 4) if gaps else 0.0,
           "exact_dp_sentences_per_second": round(len(examples) / max(seconds, 1e-9), 2)})


if __name__ == "__main__":
    main()
