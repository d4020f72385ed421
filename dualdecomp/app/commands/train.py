"""``dualdecomp train --kind K``: train any kind of the registry (:mod:`dualdecomp.models.registry`).

The kinds and their options come from the registry: each component kind's ``models/K/kind.py`` declares
its :class:`~dualdecomp.models.registry.Trainer` (options and training), and so do the two recipes that
are no kind: ``cotraining`` (bigram and dependency co-trained with dual decomposition in the loop,
``models/cotraining/trainer.py``; its old name ``joint`` is still accepted, not listed) and
``length-bias`` (a configuration's ``length_bias`` calibrated on dev corpora,
``models/length_bias/trainer.py``), ``rewriting`` (``models/rewriting/trainer.py``) and the word-ordering
task's ``word-order``, ``word-order-lineariser`` and ``word-order-lm-beam``
(``models/ordering/{paper,lineariser,bag_lm}/trainer.py``). The options of kind K are added when
``--kind K`` is given (``dualdecomp train --kind K --help`` lists them); without ``--kind`` the kind is
``bigram``. ``dualdecomp t3 train``, ``dualdecomp lm build`` and ``dualdecomp order train``,
``train-lineariser``, ``build-lm-beam`` are the same trainers as ``--kind transducer``, ``--kind lm`` and
``--kind word-order``, ``word-order-lineariser``, ``word-order-lm-beam``.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from functools import partial

from dualdecomp.app.commands.deferred_parser import defer
from dualdecomp.app.commands.mixing_options import add_mixing_arguments, mixing_requested
from dualdecomp.models.registry import Trainer, TrainingContext, get_trainer, trainer_name, trainer_names

DEFAULT_KIND = "bigram"


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``train`` on the CLI's subparsers (the kind's options are added when the command runs:
    :func:`~dualdecomp.app.commands.deferred_parser.defer`)."""
    p = subparsers.add_parser(
        "train", help="train a model of any kind (--kind; default: the McDonald (2006) bigram model)",
        description="Train a model of the kind given by --kind (default: bigram) and write it to --out.\n"
                    "Each kind has its own options: dualdecomp train --kind K --help lists them.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    # type=trainer_name: an old name (joint) is read as its new one (cotraining) before the choices
    p.add_argument("--kind", choices=trainer_names(), default=DEFAULT_KIND, type=trainer_name, metavar="KIND",
                   help=f"what to train: {', '.join(trainer_names())} (default: {DEFAULT_KIND})")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=run)
    defer(p, _add_kind_arguments)
    return p


def _kind_asked(args: list[str]) -> str:
    """The value of the last ``--kind K`` / ``--kind=K`` (argparse's prefix forms included) in ``args``, an
    old name read as its new one (:func:`~dualdecomp.models.registry.trainer_name`)."""
    kind = DEFAULT_KIND
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if len(name) > 3 and "--kind".startswith(name):
            if eq:
                kind = value
            elif i + 1 < len(args):
                kind = args[i + 1]
    return trainer_name(kind)


def _add_kind_arguments(parser: argparse.ArgumentParser, args: list[str]) -> None:
    """Add the options of the kind asked for (an unknown kind is left to ``--kind``'s choices)."""
    kind = _kind_asked(args)
    if kind not in trainer_names():
        return
    trainer = get_trainer(kind)
    group = parser.add_argument_group(f"options of --kind {kind}", textwrap.fill(trainer.summary, width=96))
    add_trainer_arguments(group, trainer)
    if "-h" in args or "--help" in args:
        parser.epilog = "kinds:\n" + "\n".join(
            textwrap.fill(get_trainer(name).summary, width=100, initial_indent=f"  {name:<11} ",
                          subsequent_indent=" " * 14) for name in trainer_names())


def add_trainer_arguments(parser, trainer: Trainer) -> None:
    """Add a trainer's options to a parser (or argument group): its own, then the parameter mixing options
    when it trains that way (``train --kind K`` and the aliases ``t3 train``, ``order train``, ...)."""
    trainer.add_arguments(parser)
    if trainer.parameter_mixing is not None:
        add_mixing_arguments(parser, trainer.parameter_mixing)


def run_trainer(trainer: Trainer, args: argparse.Namespace) -> int:
    """Train with ``trainer`` from parsed options (``train``, ``t3 train``, ``lm build``, ``order train``,
    ...); print its report, if any, as one JSON line. Returns the exit code."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.progress import progress_factory

    quiet = getattr(args, "quiet", False)
    cluster = None
    if trainer.parameter_mixing is not None and mixing_requested(args):
        # lazy: Dask is imported only for a distributed run
        from dualdecomp.app.cluster import cluster_client

        cluster = partial(cluster_client, args.workers, args.scheduler)
    context = TrainingContext(log=lambda msg: None if quiet else print(msg, file=sys.stderr, flush=True),
                              progress_factory=progress_factory(quiet), cluster=cluster)
    report = trainer.train(args, context)
    if report is not None:
        print(json.dumps(report))
    return 0


def run(args: argparse.Namespace) -> int:
    """Train and save the model of ``--kind``; returns the exit code."""
    return run_trainer(get_trainer(args.kind), args)
