"""``dualdecomp train --kind word-order`` (alias ``dualdecomp order train``): the paper's word-order model
trained by guided learning on a CoNLL-U treebank, the epoch selected on dev
(:func:`~dualdecomp.models.ordering.paper.train_run.train_model`; ``make word-order-model`` runs it with
the shipped model's settings). In one process, or by iterative parameter mixing on Dask (``--workers``,
``--scheduler``: :mod:`dualdecomp.models.ordering.paper.parallel_training`). The model selected so far is
written to ``--out`` after every epoch; one JSON line per epoch on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_directory
from dualdecomp.models.registry import Trainer, TrainingContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind word-order`` (and ``dualdecomp order train``)."""
    parser.add_argument("--train", required=True, metavar="CONLLU", help="training treebank")
    parser.add_argument("--dev", required=True, metavar="CONLLU", help="dev treebank (model selection)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output model directory")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--max-sentences", type=int, default=None, metavar="N",
                        help="train on the first N eligible sentences (default: all)")
    parser.add_argument("--max-length", type=int, default=25, metavar="L",
                        help="train on sentences of at most L words (default: %(default)s)")
    parser.add_argument("--learner", choices=("scaled-mira", "perceptron"), default="scaled-mira")
    parser.add_argument("--train-expansions", type=int, default=400, metavar="K",
                        help="pops per training sentence at most (default: %(default)s)")
    parser.add_argument("--train-chart-size", type=int, default=32)
    parser.add_argument("--hash-bits", type=int, default=20)
    parser.add_argument("--dev-sentences", type=int, default=100)
    parser.add_argument("--dev-expansions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--base-nps", action="store_true",
                        help="train on bags that keep base NPs as ordered units, as the paper does (and "
                             "select the epoch on the 'bnp' condition)")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Train the paper's model, write it to ``--out`` (after every epoch: the model selected so far) and
    return the report (``saved``, ``selected_epoch``, ``nonzero_weights``)."""
    # lazy: listing or parsing the trainer's options loads no training code
    from dualdecomp.data.ordering.reading import read_conllu_examples
    from dualdecomp.models.ordering.paper.train_run import RunConfig, train_model
    from dualdecomp.models.ordering.paper.training import TrainConfig
    from dualdecomp.models.ordering.paper.training import Trainer as GuidedLearning

    for name in ("epochs", "max_length", "train_expansions", "train_chart_size", "dev_sentences",
                 "dev_expansions"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1")
    if not 10 <= args.hash_bits <= 26:
        raise InputError("--hash-bits must be between 10 and 26")
    train = read_conllu_examples(args.train)
    dev = read_conllu_examples(args.dev)
    config = RunConfig(epochs=args.epochs, max_sentences=args.max_sentences, max_length=args.max_length,
                       hash_bits=args.hash_bits, dev_sentences=args.dev_sentences,
                       dev_expansions=args.dev_expansions,
                       train=TrainConfig(learner=args.learner, chart_size=args.train_chart_size,
                                         max_expansions=args.train_expansions, seed=args.seed,
                                         base_nps=args.base_nps))
    files = {"train_file": Path(args.train).name, "dev_file": Path(args.dev).name}

    def save(model, meta):  # after every epoch: the model selected so far
        meta["training"].update(files)
        with atomic_directory(args.out, manifest=False) as work:  # never half a model, even at Ctrl-C
            model.save(work, meta)

    def run_training(trainer=GuidedLearning):
        return train_model(train, dev, config, log=context.record, progress_factory=context.progress_factory,
                           checkpoint=save, trainer=trainer)

    if context.cluster is not None:
        # lazy: Dask is imported only for a distributed run
        from dualdecomp.models.ordering.paper.parallel_training import MixingTrainer

        with context.cluster() as client:
            shards = args.shards or sum(client.nthreads().values())
            model, meta = run_training(lambda m, c: MixingTrainer(m, c, client, shards, args.mixing))
    else:
        model, meta = run_training()
    save(model, meta)
    return {"saved": str(args.out), "selected_epoch": meta["training"]["selected_epoch"],
            "nonzero_weights": meta["training"]["nonzero_weights"]}


TRAINER = Trainer(summary="the paper's word-order model (Zhang & Clark 2015): guided learning on a CoNLL-U "
                          "treebank, the epoch chosen on dev (= dualdecomp order train)",
                  add_arguments=add_arguments, train=train_from_options, parameter_mixing="guided learning")
