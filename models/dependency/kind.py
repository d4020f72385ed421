"""The ``dependency`` component kind: the skip-bigram dependency compression model (contract 3), trained by
the averaged perceptron with the exact parser in the loop (``dualdecomp train --kind dependency``)."""

from __future__ import annotations

import argparse

from dualdecomp.core.model_files import atomic_directory
from dualdecomp.models.dependency.store import load_dependency_model, save_dependency_model
from dualdecomp.models.registry import ComponentKind, Trainer, TrainingContext
from dualdecomp.models.trainer_options import (
    add_corpus_arguments,
    add_perceptron_arguments,
    check_perceptron_arguments,
)
from dualdecomp.solvers.dependency import Dependency


def _weighted(potentials, weight: float) -> Dependency:
    A, S = potentials
    return Dependency(weight * A, S=None if S is None else S.scaled(weight))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind dependency``."""
    add_corpus_arguments(parser)
    add_perceptron_arguments(parser)
    parser.add_argument("--second-order", action="store_true", help="add sibling features")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> None:
    """Train the dependency model and write it to ``--out``."""
    # lazy: loading the kind to decode does not load its trainer
    from dualdecomp.models.dependency.training import DependencyTrainingConfig, train_dependency

    check_perceptron_arguments(args)
    config = DependencyTrainingConfig(epochs=args.epochs, hash_bits=args.hash_bits,
                                      lexical=not args.no_lexical, second_order=args.second_order,
                                      length_mode=args.length_mode, limit=args.limit, seed=args.seed)
    model, _ = train_dependency(args.train, args.dev, config, log=context.log,
                                progress_factory=context.progress_factory)
    with atomic_directory(args.out) as work:  # all or nothing: no half-written model on a failure
        save_dependency_model(model, work)
    context.log(f"dependency model saved to {args.out}")


KIND = ComponentKind(
    name="dependency",
    load=load_dependency_model,
    potentials=lambda model, sentence, deadline=None: model.potentials(sentence, deadline),
    weighted=_weighted,
    components=(Dependency,),
    save=save_dependency_model,
    trainer=Trainer(summary="the skip-bigram dependency parser's arc (and sibling) model: averaged "
                            "perceptron",
                    add_arguments=add_arguments, train=train_from_options),
    timed=True,
)
