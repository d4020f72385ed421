"""``dualdecomp train --kind word-order-lineariser`` (alias ``dualdecomp order train-lineariser``): the
head-domain lineariser (averaged perceptron, :func:`~dualdecomp.models.ordering.lineariser.training.
train_lineariser`) trained on a CoNLL-U treebank, its epoch and then its LM weight chosen on dev; written
into a word-order model directory (``linearizer.json``, ``linearizer.npz``; ``make word-order-lineariser``
runs it with the shipped model's settings). One JSON line per epoch and per LM weight tried on stdout.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_directory
from dualdecomp.models.registry import Trainer, TrainingContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind word-order-lineariser`` (and ``order train-lineariser``)."""
    parser.add_argument("--train", required=True, metavar="CONLLU", help="training treebank")
    parser.add_argument("--dev", required=True, metavar="CONLLU", help="dev treebank (epoch and LM weight)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="model directory: linearizer.json and linearizer.npz are (re)written there")
    parser.add_argument("--epochs", type=int, default=12, help="epochs tried (default: %(default)s)")
    parser.add_argument("--hash-bits", type=int, default=22)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=1000,
                        help="first dev sentence used (default: %(default)s)")
    parser.add_argument("--sentences", type=int, default=200,
                        help="dev sentences used (default: %(default)s)")
    parser.add_argument("--lm-weights", type=float, nargs="+", default=[0.0, 1.0, 2.0, 4.0, 8.0, 16.0],
                        help="LM weights tried on dev with the chosen epoch (default: %(default)s)")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Train the lineariser, choose its epoch and LM weight on dev, write it into ``--out`` and return the
    report (``selected_epoch``, ``selected_lm_weight``, ``written``)."""
    # lazy: listing or parsing the trainer's options loads no training code
    from dualdecomp.data.locations import default_model_dir
    from dualdecomp.data.ordering.reading import read_conllu_examples
    from dualdecomp.models.lm import load_lm
    from dualdecomp.models.ordering.lineariser.training import selection_bleu, train_lineariser
    from dualdecomp.models.ordering.lm_term import OrderingLM

    if args.epochs < 1 or args.sentences < 1 or args.start < 0 or not 10 <= args.hash_bits <= 26:
        raise InputError("--epochs and --sentences must be >= 1, --start >= 0, --hash-bits in 10..26")
    if any(not 0 <= w < float("inf") for w in args.lm_weights):
        raise InputError("--lm-weights must be non-negative numbers")
    train = read_conllu_examples(args.train)
    dev = read_conllu_examples(args.dev, limit=args.start + args.sentences)[args.start:]
    if not train or not dev:
        raise InputError("no training or no dev sentences")

    def log(entry):
        context.record({"epoch": entry.epoch, "mistakes": entry.mistakes, "domains": entry.domains,
                        "dev_bleu": entry.selection})

    lineariser, _ = train_lineariser(train, args.epochs, args.hash_bits, args.seed, progress=log,
                                     select=lambda lin: selection_bleu(lin, dev))
    lm = load_lm(default_model_dir() / "lm.binary") if any(w > 0 for w in args.lm_weights) else None
    grid = []
    for weight in args.lm_weights:
        term = OrderingLM(lm, weight) if weight > 0 else None
        grid.append({"lm_weight": weight, "bleu": selection_bleu(lineariser, dev, lm=term)})
        context.record(grid[-1])
    chosen = max(grid, key=lambda g: (g["bleu"], -g["lm_weight"]))["lm_weight"]
    meta = {**lineariser.meta, "train_file": Path(args.train).name, "selection": {
        "rule": "epoch: highest BLEU of the averaged weights on the full-tree 'all' inputs of the dev "
                "sentences, no LM (ties: the earlier epoch); then the LM weight of the grid with the highest "
                "BLEU there (ties: the smaller weight)",
        "dev_file": Path(args.dev).name, "start": args.start, "sentences": len(dev),
        "lm": "default compression trigram (data/default_model/lm.binary)", "grid": grid}}
    with atomic_directory(args.out, manifest=False) as work:  # the model's other files are kept
        replace(lineariser, lm_weight=chosen, meta=meta).save(work)
    return {"selected_epoch": lineariser.meta["epoch"], "selected_lm_weight": chosen,
            "written": str(args.out)}


TRAINER = Trainer(summary="the head-domain lineariser of a word-order model (averaged perceptron; epoch and "
                          "LM weight chosen on dev; = dualdecomp order train-lineariser)",
                  add_arguments=add_arguments, train=train_from_options)
