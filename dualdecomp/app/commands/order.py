"""``dualdecomp order``: syntax-based word ordering (Zhang & Clark 2015) — decode, ``train``, ``evaluate``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from dualdecomp.app.commands.deferred_parser import Prepare, defer
from dualdecomp.app.commands.help_format import ParagraphHelpFormatter
from dualdecomp.app.commands.old_spellings import add_old_spelling
from dualdecomp.app.commands.train import add_trainer_arguments, run_trainer
from dualdecomp.core.errors import DualDecompError, InputError, SolverError
from dualdecomp.data.locations import default_model_dir, word_order_model_dir
from dualdecomp.models.ordering.decoding.config import SECOND_STAGES, second_stage_name
from dualdecomp.models.registry import get_trainer

ORDER_TRAINERS = {"train": "word-order", "train-lineariser": "word-order-lineariser",
                  "build-lm-beam": "word-order-lm-beam"}
"""The subcommands that are aliases of ``dualdecomp train --kind K``: subcommand → K."""

DESCRIPTION = """\
Order a bag of words into a sentence with a dependency tree (learning-guided best-first search of
Zhang & Clark 2015, an APPROXIMATE decoder with a timeout).

Input: --input FILE (.conllu: word order ignored, XPOS and HEAD used as hard constraints where not '_';
.jsonl: {"words": [...], "pos": [...], "heads": [...]} with null for "not given", heads 1-based, 0 = root)
or --words "w1 w2 ...".

Score: the model's plus a KenLM trigram term (--lm, --lm-weight; by default the embedded compression
trigram at the weight stored in the model by order select-lm, chosen on dev; inputs with ordered units
have a weight of their own, order select-lm --units).

Decoders, by input:
* a complete tree: the model's head-domain lineariser (beyond the paper: each head's dependents ordered
  by an exact DP, certified: true when no LM term is used, i.e. --lm-weight 0; with its LM term, chosen
  on dev, a beam search: APPROXIMATE, or with --lineariser-states N an exact DP first, certified when it
  finishes within N states); --no-lineariser: the paper model's tree beam DP (--tree-beam K, 64 by
  default: the exact DP keeping the K best states per step; APPROXIMATE, certified when nothing was
  pruned), and with --exact the paper model's exact DP first, which certifies that model's optimum when
  it finishes;
* other inputs: best-first search, whose output's tree is completed (every word) and ordered again by
  the tree beam DP (--second-stage lineariser: by the lineariser); --tree-beam 0: best-first search
  alone, the paper's method;
* bags that give no tag and no head outside their units: the model's LM beam search (beyond the paper:
  n-gram LMs alone, left to right, APPROXIMATE, certified for the LMs when nothing was pruned;
  --lm-beam 0: never, --lm-beam B: every input without heads outside its units, at beam B).

Output: one JSON line per input. A sentence block or line that cannot be read or ordered gets a row
{"id": ..., "error": ...} and the others go on; the exit code is then 2 (bad input).

Subcommands:
* train: guided learning on CoNLL-U train, selection on dev (see docs/word-ordering.md);
* train-lineariser: the head-domain lineariser (averaged perceptron; epoch and LM weight chosen on dev);
* evaluate: BLEU (sacrebleu), exact match and words recovered on a CoNLL-U file for the input conditions
  of Table 7 of the paper;
* select-lm: choose the LM weight on dev sentences (deterministic rule, docs/word-ordering.md) and store
  it (--write);
* build-lm-beam: estimate the n-gram LM of the LM beam search (beyond the paper: a bag ordered by the LM
  alone, left to right, APPROXIMATE) into a model, choose its beam on dev and store both.
"""


def _trainer_options(kind: str) -> Prepare:
    """Add the options of the registry's trainer ``kind`` when the subcommand runs (the trainer's module is
    imported then, not when the CLI starts)."""
    return lambda parser, args: add_trainer_arguments(parser, get_trainer(kind))


def _default_model() -> Path:
    return word_order_model_dir()


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``order`` command (decode by default; subcommands ``train`` and ``evaluate``).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``order`` parser.
    """
    parser = subparsers.add_parser("order", help="order a bag of words (syntax-based word ordering)",
                                   description=DESCRIPTION, formatter_class=ParagraphHelpFormatter)
    parser.set_defaults(func=run, order_command=None)
    _decode_options(parser)
    parser.add_argument("--input", default=None, metavar="FILE", help="inputs (.conllu or .jsonl)")
    parser.add_argument("--words", default=None, metavar="TEXT",
                        help="a bag of words separated by spaces (instead of --input)")
    sub = parser.add_subparsers(dest="order_command",
                                metavar="{train,train-lineariser,evaluate,select-lm,build-lm-beam}")

    # the trainers of the registry (dualdecomp train --kind word-order, ...): the same options and code
    train = sub.add_parser("train", help="train a word-order model (guided learning; = dualdecomp train "
                                         "--kind word-order)")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=run)
    defer(train, _trainer_options("word-order"))

    linear = sub.add_parser("train-lineariser", aliases=["train-linearizer"],  # old spelling kept
                            help="train the head-domain lineariser (orders full trees) into a model "
                                 "(= dualdecomp train --kind word-order-lineariser)")
    linear.set_defaults(func=run, order_command="train-lineariser")  # the same under its old name
    defer(linear, _trainer_options("word-order-lineariser"))

    select = sub.add_parser("select-lm", help="choose the LM weight on dev and store it in the model")
    select.add_argument("--model", required=True, metavar="DIR",
                        help="the trained model (rewritten with --write)")
    select.add_argument("--dev", required=True, metavar="CONLLU", help="dev treebank")
    select.add_argument("--start", type=int, default=1000,
                        help="first dev sentence used (default: %(default)s)")
    select.add_argument("--sentences", type=int, default=50, help="dev sentences used (default: %(default)s)")
    select.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0, 2.0])
    select.add_argument("--lm", default=None, metavar="FILE",
                        help="KenLM model (default: the embedded compression trigram; only that one is "
                             "stored)")
    select.add_argument("--max-expansions", type=int, default=2000, metavar="K")
    select.add_argument("--tree-beam", type=int, default=32, metavar="K",
                        help="beam of the tree DP of the decoder (default %(default)s, the K the selection "
                             "rule was fixed with; decoding defaults to 64; 0 = best-first alone)")
    select.add_argument("--units", action="store_true",
                        help="choose the weight for inputs with ordered units, on the bnp condition "
                             "(base NPs as units; positive weights only), stored beside the other")
    select.add_argument("--write", action="store_true", help="store the chosen weight in model.json")
    select.set_defaults(func=run)

    lm_beam = sub.add_parser("build-lm-beam",
                             help="estimate the LM beam's n-gram LM into a model, choose its beam on dev, "
                                  "store both (= dualdecomp train --kind word-order-lm-beam)")
    lm_beam.set_defaults(func=run)
    defer(lm_beam, _trainer_options("word-order-lm-beam"))

    evaluate = sub.add_parser("evaluate", help="BLEU / exact match / words recovered on a treebank")
    evaluate.add_argument("--data", required=True, metavar="CONLLU", help="gold treebank (e.g. EWT dev)")
    evaluate.add_argument("--conditions", nargs="+", default=["words", "pos50", "pos100", "dep50", "dep100",
                                                              "all"],
                          help="Table 7's conditions (default), and 'bnp': the bag with its base NPs as "
                               "ordered units (the input of the paper's bag-of-words results)")
    evaluate.add_argument("--sentences", type=int, default=None, metavar="N", help="first N sentences")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--quiet", action="store_true")
    _decode_options(evaluate)
    evaluate.set_defaults(func=run)
    return parser


def _decode_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, metavar="DIR",
                        help="word-order model directory (default: the shipped data/word_order_model)")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="seconds per input, all stages together (default: %(default)s, the paper's "
                             "limit of best-first search): every decoder stops at that deadline and returns "
                             "what it has, finished greedily where it can be, with \"timed_out\": true "
                             "and a note naming the stages cut short")
    parser.add_argument("--max-expansions", type=int, default=None, metavar="K",
                        help="also stop best-first search after K pops")
    parser.add_argument("--chart-size", type=int, default=32, help="chart beam (default: %(default)s)")
    parser.add_argument("--lm", default=None, metavar="FILE",
                        help="KenLM model (order 2 or 3) added to the ordering score (default: the embedded "
                             "compression trigram)")
    parser.add_argument("--lm-weight", type=float, default=None, metavar="W",
                        help="weight of the LM term for every input; 0 = no LM (default: the weights the "
                             "model stores, selected on dev: one for inputs with ordered units, one for "
                             "the others)")
    parser.add_argument("--exact", action="store_true",
                        help="decode full-tree inputs with the paper model's exact DP first (certified)")
    parser.add_argument("--exact-states", type=int, default=100_000,
                        help="state limit of the exact DP before it gives up uncertified")
    parser.add_argument("--tree-beam", type=int, default=None, metavar="K",
                        help="beam of the paper model's tree DP, which completes best-first outputs (and "
                             "decodes full trees with --no-lineariser; approximate; default 64, chosen on "
                             "dev); 0 = best-first search alone")
    parser.add_argument("--tree-beam-attachments", type=int, default=None, metavar="N",
                        help="bound the tree beam DP's work per sentence without a clock: its beam is "
                             "halved until the tree's worst case of attachments (K^2 c(c+1) summed over "
                             "the nodes with c children) is at most N (default: no bound)")
    no_lineariser = parser.add_argument("--no-lineariser", action="store_true",
                                        help="order full trees with the tree beam DP instead of the model's "
                                             "head-domain lineariser")
    add_old_spelling(parser, "--no-linearizer", no_lineariser)
    states = parser.add_argument("--lineariser-states", type=int, default=0, metavar="N",
                                 help="with the lineariser's LM term, try its exact DP first (certified when "
                                      "it finishes within N states; default 0: the beam search only)")
    add_old_spelling(parser, "--linearizer-states", states)
    parser.add_argument("--second-stage", type=second_stage_name, choices=SECOND_STAGES, default="tree-beam",
                        help="what orders the completed tree of a best-first output (default: %(default)s, "
                             "chosen on dev)")
    parser.add_argument("--lm-beam", type=int, default=None, metavar="B",
                        help="order every input without given heads outside its units by an n-gram LM "
                             "alone, searched left to right with a beam of B states (beyond the paper; "
                             "approximate, certified for the LM when nothing was pruned; its tree is "
                             "spaCy's parse, constrained); 0 = never (default: the model's stored LM "
                             "beam, for the inputs its stored rule says)")
    parser.add_argument("--lm-beam-lm", default=None, metavar="FILE",
                        help="KenLM model (any order, lowercased) of the LM beam, alone (default: the "
                             "model's LM beam's LMs, else the embedded compression trigram)")


def run(args: argparse.Namespace) -> int:
    """Run ``order`` (decode), ``order train`` or ``order evaluate``; returns the exit code.

    Raises
    ------
    InputError
        Bad input or options.
    ModelError
        Missing or invalid model.
    """
    if args.order_command in ORDER_TRAINERS:
        return run_trainer(get_trainer(ORDER_TRAINERS[args.order_command]), args)
    if args.order_command == "evaluate":
        return _evaluate(args)
    if args.order_command == "select-lm":
        return _select_lm(args)
    return _decode(args)


def _decoder(args: argparse.Namespace):
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.deadline import Deadline
    from dualdecomp.models.ordering.decoding.config import DEFAULT_TREE_BEAM, ExactConfig
    from dualdecomp.models.ordering.decoding.load import load_decoder, with_decoding_lm
    from dualdecomp.models.ordering.paper.search import SearchConfig

    tree_beam = DEFAULT_TREE_BEAM if args.tree_beam is None else args.tree_beam
    if args.timeout is not None and not args.timeout > 0:  # (NaN too; inf: no limit)
        raise InputError("--timeout must be a positive number of seconds")
    if args.chart_size < 1:
        raise InputError("--chart-size must be at least 1")
    if args.lm_weight is not None and not 0 <= args.lm_weight < float("inf"):
        raise InputError("--lm-weight must be a non-negative number")
    if tree_beam < 0:
        raise InputError("--tree-beam must be 0 (off) or a positive beam")
    if args.exact_states < 1:
        raise InputError("--exact-states must be at least 1")
    if args.tree_beam_attachments is not None and args.tree_beam_attachments < 1:
        raise InputError("--tree-beam-attachments must be at least 1")
    if args.lineariser_states < 0:
        raise InputError("--lineariser-states must be 0 (off) or a positive state limit")
    if args.lm_beam is not None and args.lm_beam < 0:
        raise InputError("--lm-beam must be 0 (never) or a positive LM beam")
    decoder = with_decoding_lm(load_decoder(args.model or _default_model()), args.lm, args.lm_weight,
                               args.lineariser_states)
    decoder, lm_beam_inputs = _with_lm_beam(decoder, args)
    search = SearchConfig(chart_size=args.chart_size, timeout=args.timeout,
                          max_expansions=args.max_expansions)
    exact = ExactConfig(max_states=args.exact_states if args.exact else None, beam=tree_beam or None,
                        lineariser=not args.no_lineariser and bool(tree_beam),
                        second_stage=args.second_stage, beam_attachments=args.tree_beam_attachments,
                        lm_beam=lm_beam_inputs)
    decoder.warm_up(search, exact)  # kernels compiled before any input's deadline starts
    return lambda inp: decoder.decode(inp, search, exact, Deadline.start(args.timeout))


def _with_lm_beam(decoder, args: argparse.Namespace):
    """The decoder with the LM beam the options ask for, and the inputs it orders (``ExactConfig.lm_beam``).

    ``--lm-beam B`` (B > 0): every input it can order, at beam B, with ``--lm-beam-lm`` or the model's LM
    beam's LMs or the embedded trigram; ``--lm-beam 0`` or ``--lm-weight 0`` (no LM): none; otherwise the
    model's stored LM beam for the inputs without tags when its stored ``default`` says so.
    """
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.models.lm.model import load_lm
    from dualdecomp.models.ordering.bag_lm.search import LMBeam, LMTerm

    if args.lm_beam is None:
        if args.lm_beam_lm is not None:
            raise InputError("--lm-beam-lm needs --lm-beam B")
        stored = decoder.lm_beam
        takes = stored is not None and stored.default and args.lm_weight != 0
        return decoder, "untagged" if takes else "none"
    if args.lm_beam == 0:
        return decoder, "none"
    if args.lm_beam_lm is not None:
        terms = (LMTerm(load_lm(args.lm_beam_lm)),)
    elif decoder.lm_beam is not None:
        terms = decoder.lm_beam.terms
    else:
        terms = (LMTerm(load_lm(default_model_dir() / "lm.binary")),)
    return replace(decoder, lm_beam=LMBeam(terms=terms, beam=args.lm_beam)), "applicable"


def _decode(args: argparse.Namespace) -> int:
    """Order each input and print its row; an input that cannot be read or ordered gets an error row
    (``{"id": ..., "error": ...}``) and the others go on. Returns 0, or the highest exit code of the
    failed inputs (2: bad input)."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.batch import safe_text
    from dualdecomp.data.ordering.inputs import OrderingInput
    from dualdecomp.data.ordering.reading import UnreadInput, iter_inputs

    if args.input is not None and args.words is not None:
        raise InputError("give either --input FILE or --words TEXT, not both")
    if args.input is not None:
        inputs = iter_inputs(args.input)
    else:
        words = (args.words or "").split()
        if not words:
            raise InputError("the bag of words is empty (give --words TEXT or --input FILE)")
        inputs = iter([OrderingInput(tuple(words), (None,) * len(words), (None,) * len(words), "argv")])
    decode = _decoder(args)
    code, failed, total, first = 0, 0, 0, None
    for inp in inputs:
        total += 1
        row, failure = _order_row(decode, inp, UnreadInput)
        row = {k: safe_text(v) if isinstance(v, str) else v for k, v in row.items()}
        if failure:
            failed += 1
            code = max(code, failure)
            first = first or row
        print(json.dumps(row, ensure_ascii=False), flush=True)
    if first is not None:
        print(f"dualdecomp order: {failed} of {total} inputs failed (see their 'error' field; the first, "
              f"{first['id']!r}: {first['error']})", file=sys.stderr)
    return code


def _order_row(decode, inp, unread_type) -> tuple[dict, int]:
    """The output row of one input and its exit code (0, or the failure's: 2 for bad input)."""
    if isinstance(inp, unread_type):
        return {"id": inp.ident, "error": inp.message}, InputError.exit_code
    try:
        result = decode(inp)
    except DualDecompError as exc:
        return {"id": inp.ident, "error": str(exc)}, exc.exit_code
    except MemoryError:
        return ({"id": inp.ident, "error": f"out of memory ordering this input ({len(inp)} words)"},
                SolverError.exit_code)
    return {"id": inp.ident, **result.as_json()}, 0


def _select_lm(args: argparse.Namespace) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.data.ordering.reading import read_conllu_examples
    from dualdecomp.models.ordering.decoding import lm_selection
    from dualdecomp.models.ordering.decoding.load import load_decoder

    if args.start < 0 or args.sentences < 1 or args.max_expansions < 1 or args.tree_beam < 0:
        raise InputError("--start and --tree-beam must be >= 0, --sentences and --max-expansions >= 1")
    if any(not 0 <= w < float("inf") for w in args.weights):
        raise InputError("--weights must be non-negative numbers")
    if args.units and min(args.weights) <= 0:
        raise InputError("--units takes positive --weights (--lm-weight 0 decodes any input without the LM)")
    if args.write and args.lm is not None:
        raise InputError("--write stores a weight for the embedded LM only: leave out --lm")
    conditions = lm_selection.UNITS_SELECTION_CONDITIONS if args.units else lm_selection.SELECTION_CONDITIONS
    decoder = load_decoder(args.model)
    model = decoder.model
    dev = read_conllu_examples(args.dev, limit=args.start + args.sentences)[args.start:]

    def log(s):
        print(json.dumps({"lm_weight": s.weight, "bleu": s.bleu, "mean": round(s.mean, 4)}), flush=True)

    weight, scores = lm_selection.select_lm_weight(decoder, dev, args.weights, args.lm, args.max_expansions,
                                                   log=log, tree_beam=args.tree_beam or None,
                                                   conditions=conditions)
    selection = {"rule": "highest mean BLEU of the conditions " + " and ".join(conditions) + ", best-first "
                 "search with an expansion limit, then the tree beam DP; ties: the smaller weight",
                 "dev_file": Path(args.dev).name, "start": args.start, "sentences": len(dev),
                 "max_expansions": args.max_expansions, "tree_beam": args.tree_beam,
                 "grid": [{"lm_weight": s.weight, "bleu": s.bleu} for s in scores]}
    decode_meta = dict(model.meta.get("decode", {}))
    if args.units:
        decode_meta["units"] = {"lm_weight": weight, "selection": selection}
    else:  # the weight for inputs with units, if one is stored, stays
        decode_meta.update({"lm": "default compression trigram (data/default_model/lm.binary)",
                            "lm_weight": weight, "selection": selection})
    if args.write:
        model.save(args.model, {"decode": decode_meta})
    print(json.dumps({"selected_lm_weight": weight, "units": bool(args.units), "written": bool(args.write)}))
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.progress import progress_factory
    from dualdecomp.data.ordering.reading import read_conllu_examples
    from dualdecomp.models.evaluation.ordering import CONDITIONS, evaluate

    for c in args.conditions:
        if c not in CONDITIONS:
            raise InputError(f"unknown condition {c!r} (choose from {', '.join(CONDITIONS)})")
    examples = read_conllu_examples(args.data, limit=args.sentences)
    decode = _decoder(args)
    make = progress_factory(args.quiet)
    for c in args.conditions:
        scores, results = evaluate(examples, decode, c, seed=args.seed, progress=make(len(examples), c))
        method = ", ".join(sorted({r.method for r in results}))
        print(json.dumps({"condition": c, "method": method, "timeout": args.timeout,
                          "certified": sum(r.certified for r in results),
                          "timed_out": sum(r.timed_out for r in results), **scores.as_json()}), flush=True)
    return 0
