"""``dualdecomp t3``: train and evaluate the tree transducer (Cohn & Lapata 2009) on a C&L corpus.

``t3 train --train FILE --dev FILE --out DIR`` (the same as ``dualdecomp train --kind transducer``): parse
both sides with spaCy, convert to phrase structure,
extract the STSG, find gold derivations (maximum rules), train the rule weights (loss-augmented large-margin
SGD, or the averaged perceptron), choose λ and the epoch on dev (bigram F1 at gold length) and save the
model (:mod:`dualdecomp.models.transducer.pipeline`). ``--loss`` picks the SSVM loss of Cohn & Lapata §3.6
(``dualdecomp.models.transducer.losses``): token/cfg are exact; ngram/edit/f1 use dual decomposition, exact
when certified (the number of uncertified, APPROXIMATE loss-augmented steps is logged and saved in the model
meta).

``t3 evaluate --model DIR --dev FILE``: CR, token F1, bigram F1 and GR-F1 on the dev file for

* T3 alone, free length (exact chart DP),
* T3 alone, gold length (exact: chart with a length dimension),
* T3 + LM, free and gold length, by beam search with cube pruning — APPROXIMATE (no optimality
  guarantee; it is the paper's baseline search, not an exact method).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dualdecomp.app.commands.deferred_parser import DeferredParser, defer
from dualdecomp.app.commands.help_format import ParagraphHelpFormatter
from dualdecomp.app.commands.train import run_trainer
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.registry import get_trainer

DEFAULT_LM = default_model_dir() / "lm.binary"

DESCRIPTION = """\
Train and evaluate the tree transducer (T3, Cohn & Lapata 2009) on a Clarke & Lapata corpus.

t3 train --train FILE --dev FILE --out DIR (the same as dualdecomp train --kind transducer): parse both
sides with spaCy, convert them to phrase structure, extract the STSG, find gold derivations (maximum
rules), train the rule weights (loss-augmented large-margin SGD, or the averaged perceptron), choose
lambda and the epoch on dev (bigram F1 at gold length) and save the model. --loss picks the SSVM loss of
Cohn & Lapata section 3.6: token and cfg are exact; ngram, edit and f1 use dual decomposition, exact when
certified (the number of uncertified, APPROXIMATE loss-augmented steps is logged and saved in the
model's meta).

t3 evaluate --model DIR --dev FILE: CR, token F1, bigram F1 and GR-F1 on the dev file for
* T3 alone, free length (exact chart DP),
* T3 alone, gold length (exact: a chart with a length dimension),
* T3 + LM, free and gold length, by beam search with cube pruning: APPROXIMATE (no optimality
  guarantee; it is the paper's baseline search, not an exact method).
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``t3`` command (sub-actions ``train`` and ``evaluate``).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = subparsers.add_parser("t3", help="tree transducer (T3) baseline: train / evaluate",
                                   description=DESCRIPTION, formatter_class=ParagraphHelpFormatter)
    parser.set_defaults(func=run, t3_command=None)
    sub = parser.add_subparsers(dest="t3_command", metavar="{train,evaluate}")
    tr = sub.add_parser("train", help="extract a grammar and train T3 (= dualdecomp train --kind transducer)")
    tr.add_argument("--quiet", action="store_true", help="no progress messages")
    tr.set_defaults(func=run)
    defer(tr, _add_train_arguments)
    ev = sub.add_parser("evaluate", help="evaluate a T3 model on a dev/test corpus")
    ev.add_argument("--model", required=True, help="model directory from t3 train")
    ev.add_argument("--dev", required=True, help="gold corpus (JSONL)")
    ev.add_argument("--lm", default=str(DEFAULT_LM), help="KenLM model for T3 + LM ('none' to skip)")
    ev.add_argument("--beam", type=int, default=100, help="unique items per cell in the beam search")
    ev.add_argument("--out-dir", default=None, help="write the system outputs (JSONL) here")
    ev.add_argument("--json", action="store_true", help="print the reports as JSON lines")
    ev.set_defaults(func=run)
    return parser


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _add_train_arguments(parser: argparse.ArgumentParser, args: list[str]) -> None:
    """The transducer kind's training options (the same as ``dualdecomp train --kind transducer``)."""
    get_trainer("transducer").add_arguments(parser)


def _train(args) -> int:
    return run_trainer(get_trainer("transducer"), args)


def _evaluate(args) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.app.evaluation import evaluate
    from dualdecomp.data.jsonl import read_corpus
    from dualdecomp.models.transducer.data import tree_pairs
    from dualdecomp.models.transducer.model import load_t3

    t0 = time.time()
    model = load_t3(args.model)
    items = [it for it in read_corpus(args.dev) if it.compressions]
    pairs = tree_pairs(items)
    transducers = [model.transducer(p.source) for p in pairs]
    fallback = sum(t.fallback for t in transducers)
    systems: dict[str, list[dict]] = {"T3 free (exact)": [], "T3 gold length (exact)": []}
    for it, transducer in zip(items, transducers, strict=True):
        t = time.time()
        keep = transducer.solve().keep
        systems["T3 free (exact)"].append({"id": it.id, "keep": keep.astype(int).tolist(),
                                           "seconds": time.time() - t})
        refs = []
        for ref in it.compressions:
            try:
                refs.append({"keep": transducer.solve(length=len(ref)).keep.astype(int).tolist()})
            except SolverError:
                refs = None
                break
        row: dict = {"id": it.id, "references": refs} if refs is not None else \
            {"id": it.id, "error": "no derivation of the gold length"}
        systems["T3 gold length (exact)"].append(row)
    extra: dict[str, dict] = {}  # per system: beam fallback counts added to its report line
    if args.lm and args.lm != "none":
        # lazy: keeps `dualdecomp --help` and the other commands fast
        from dualdecomp.models.lm.model import LanguageModel
        from dualdecomp.solvers.transducer.lm_beam import beam_search

        lm = LanguageModel(args.lm)
        free, gold = [], []
        beam_fallback = gold_outputs = 0
        for it, transducer in zip(items, transducers, strict=True):
            T = lm.trigram_tensor(it.text)
            res = beam_search(transducer, T, lm_weight=model.lm_weight, beam=args.beam)
            free.append({"id": it.id, "keep": res.keep.astype(int).tolist()})
            # gold length: one length-targeted beam per distinct reference length (exact T3-only chart
            # as fallback when the beam loses that length, counted in the report)
            by_len = {}
            try:
                for m in sorted({len(r) for r in it.compressions}):
                    by_len[m] = beam_search(transducer, T, lm_weight=model.lm_weight, beam=args.beam,
                                            length=m)
            except SolverError:
                gold.append({"id": it.id, "error": "no derivation of the gold length"})
                continue
            refs = [{"keep": by_len[len(ref)].keep.astype(int).tolist(),
                     "fallback": by_len[len(ref)].fallback} for ref in it.compressions]
            beam_fallback += sum(r["fallback"] for r in refs)
            gold_outputs += len(refs)
            gold.append({"id": it.id, "references": refs})
        systems[f"T3+LM free (beam {args.beam}, APPROXIMATE)"] = free
        systems[f"T3+LM gold length (beam {args.beam}, APPROXIMATE)"] = gold
        extra[f"T3+LM gold length (beam {args.beam}, APPROXIMATE)"] = {
            "fallback": beam_fallback, "gold_outputs": gold_outputs}
    print(f"# T3 on {args.dev}: {len(items)} sentences; {fallback} needed coverage fallback rules; "
          f"lm_weight={model.lm_weight:g}")
    for name, rows in systems.items():
        if args.out_dir:
            out = Path(args.out_dir)
            out.mkdir(parents=True, exist_ok=True)
            slug = name.split(" (")[0].replace(" ", "_").replace("+", "p")
            with open(out / f"{slug}.jsonl", "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r) + "\n")
        report = evaluate(items, enumerate(rows, start=1), source=name)
        if args.json:
            print(json.dumps({"system": name, **report.to_dict(), **extra.get(name, {})}))
        else:
            more = extra.get(name)
            tail = (f"; fallback to the exact T3 chart {more['fallback']}/{more['gold_outputs']} outputs"
                    if more else "")
            print(f"{name}: {report.to_line()}{tail}")
    _log(f"done ({time.time() - t0:.0f}s)")
    return 0


def run(args) -> int:
    """Entry point of ``dualdecomp t3``."""
    if args.t3_command == "train":
        return _train(args)
    if args.t3_command == "evaluate":
        return _evaluate(args)
    raise InputError("usage: dualdecomp t3 {train,evaluate} ... (see dualdecomp t3 --help)")


def main(argv: list[str] | None = None) -> int:
    """Run the command standalone (``python -m dualdecomp.app.commands.t3 train ...``)."""
    parser = argparse.ArgumentParser(prog="dualdecomp")
    add_parser(parser.add_subparsers(dest="command", parser_class=DeferredParser))
    args = parser.parse_args(["t3", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
