"""The ``transducer`` component kind: the T3 tree transducer (Cohn & Lapata 2009) over the sentence's
phrase-structure tree; weighting scales every hyperedge's rule score. Trained by loss-augmented
large-margin SGD or the averaged perceptron on an extracted STSG (``dualdecomp train --kind transducer``,
also ``dualdecomp t3 train``; :mod:`dualdecomp.models.transducer.pipeline`)."""

from __future__ import annotations

import argparse
import time

from dualdecomp.core.model_files import atomic_directory
from dualdecomp.models.registry import ComponentKind, Trainer, TrainingContext
from dualdecomp.models.trainer_options import add_corpus_arguments, lm_path
from dualdecomp.models.transducer.losses import LOSSES
from dualdecomp.models.transducer.model import load_t3, save_t3
from dualdecomp.solvers.transducer import Transducer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind transducer`` (and of ``dualdecomp t3 train``)."""
    add_corpus_arguments(parser, dev_required=True)
    parser.add_argument("--depth", type=int, default=1, choices=(0, 1, 2), help="rule specialisation depth")
    parser.add_argument("--method", default="ssvm", choices=("ssvm", "perceptron"))
    parser.add_argument("--lam", type=float, nargs="+", default=[1e-4],
                        help="SSVM regularisation values to try (chosen on dev)")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--loss", default="token", choices=LOSSES,
                        help="SSVM loss (Cohn & Lapata 2009, §3.6); see dualdecomp.models.transducer.losses")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N training sentences")
    parser.add_argument("--hash-bits", type=int, default=18)
    parser.add_argument("--lm", default="default", metavar="PATH",
                        help="KenLM model for tuning the beam's LM weight: a path, 'default' (the embedded "
                             "LM) or 'none' to skip")
    parser.add_argument("--seed", type=int, default=0)


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> None:
    """Extract the grammar, train T3, choose λ and the epoch on dev, and write the model to ``--out``."""
    # lazy: loading the kind to decode does not load its trainer
    from dualdecomp.models.transducer.pipeline import TransducerTrainingSettings, train_t3_model

    lm = lm_path(args.lm)
    settings = TransducerTrainingSettings(
        train=tuple(args.train), dev=tuple(args.dev), depth=args.depth, method=args.method,
        lams=tuple(args.lam), epochs=args.epochs, loss=args.loss, limit=args.limit, hash_bits=args.hash_bits,
        lm=None if lm is None else str(lm), seed=args.seed)
    t0 = time.time()
    model = train_t3_model(settings, log=context.log)
    with atomic_directory(args.out) as work:  # all or nothing: no half-written model on a failure
        save_t3(model, work)
    context.log(f"saved {args.out} ({time.time() - t0:.0f}s)")


KIND = ComponentKind(
    name="transducer",
    load=load_t3,
    potentials=lambda model, sentence: model.component(sentence),
    weighted=lambda t3c, weight: Transducer.from_hypergraph(t3c.hypergraph, weight * t3c.hyperedge_score),
    components=(Transducer,),
    save=save_t3,
    trainer=Trainer(summary="the T3 tree transducer (Cohn & Lapata 2009): grammar extraction, SSVM or "
                            "perceptron (also: dualdecomp t3 train)",
                    add_arguments=add_arguments, train=train_from_options),
)
