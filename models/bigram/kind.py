"""The ``bigram`` component kind: McDonald's (2006) bigram model (contract 1), trained by the averaged
perceptron or k-best MIRA (``dualdecomp train``, the default kind), in one process or by iterative
parameter mixing on Dask."""

from __future__ import annotations

import argparse
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_directory
from dualdecomp.models.bigram.store import load_model, save_model
from dualdecomp.models.registry import ComponentKind, Trainer, TrainingContext, get_kind
from dualdecomp.models.trainer_options import (
    add_corpus_arguments,
    add_perceptron_arguments,
    check_perceptron_arguments,
    copy_lm,
    lm_path,
)
from dualdecomp.solvers.bigram import Bigram


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train [--kind bigram]``."""
    add_corpus_arguments(parser)
    add_perceptron_arguments(parser)
    parser.add_argument("--lm", default="default", metavar="PATH",
                        help="KenLM model for the LM feature: a path, 'default' (the embedded LM) or 'none'")
    parser.add_argument("--trainer", choices=("perceptron", "mira"), default="perceptron",
                        help="averaged structured perceptron, or averaged k-best MIRA")
    parser.add_argument("--k", type=int, default=5, help="k of k-best MIRA")
    parser.add_argument("--C", type=float, default=1.0, help="MIRA's clip of each multiplier")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> None:
    """Train the bigram model and write it (``model.json``, ``weights.npz`` and the LM) to ``--out``."""
    # lazy: loading the kind to decode does not load its trainer
    from dualdecomp.models.bigram.training import TrainingConfig, train

    check_perceptron_arguments(args)
    if context.cluster is not None and args.trainer != "perceptron":
        raise InputError("--workers/--scheduler train the bigram model's perceptron only")
    source = lm_path(args.lm)
    lm = get_kind("lm").load(source) if source is not None else None  # the LM feature
    config = TrainingConfig(epochs=args.epochs, hash_bits=args.hash_bits, lexical=not args.no_lexical,
                            length_mode=args.length_mode, seed=args.seed, trainer=args.trainer, k=args.k,
                            C=args.C)
    if args.k < 1 or not args.C > 0:
        raise InputError("--k must be >= 1 and --C > 0")
    common = {"lm": lm, "limit": args.limit, "log": context.log, "progress_factory": context.progress_factory}
    if context.cluster is not None:
        # lazy: Dask is imported only for a distributed run
        from dualdecomp.models.bigram.distributed_training import ParameterMixing

        with context.cluster() as client:
            mixing = ParameterMixing(client, args.shards or sum(client.nthreads().values()), args.mixing)
            model, _ = train(args.train, args.dev, config, perceptron=mixing, **common)
    else:
        model, _ = train(args.train, args.dev, config, **common)
    out = Path(args.out)
    with atomic_directory(out) as work:  # all or nothing: no half-written model on a failure
        lm_file = None
        if source is not None:
            lm_file = "lm.binary"
            copy_lm(source, work / lm_file)
        save_model(model, work, lm_file=lm_file)
    context.log(f"model saved to {out}")


KIND = ComponentKind(
    name="bigram",
    load=load_model,
    potentials=lambda model, sentence: model.potentials(sentence),
    weighted=lambda B, weight: Bigram(weight * B),
    components=(Bigram,),
    save=save_model,
    trainer=Trainer(summary="McDonald's (2006) bigram model: averaged perceptron or k-best MIRA",
                    add_arguments=add_arguments, train=train_from_options,
                    parameter_mixing="bigram perceptron"),
)
