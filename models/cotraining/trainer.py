"""``dualdecomp train --kind cotraining`` (old name, still accepted: ``--kind joint``): the bigram and
dependency models trained together, dual decomposition in the perceptron loop
(:mod:`dualdecomp.models.cotraining.training`). Not a component kind: it co-trains two
(read and written through their :class:`~dualdecomp.models.registry.ComponentKind`), so it declares only
a :class:`~dualdecomp.models.registry.Trainer`.

It starts from the bigram and dependency models of ``--init`` (a model directory holding ``model.json``
and ``dependency/``) and writes ``OUT/joint/bigram``, ``OUT/joint/dependency`` and the configuration
``OUT/config.json`` (or ``OUT/configs/NAME.json`` with ``--config-name NAME``) combining them with the LM
(copied to ``OUT/lm.binary`` unless it is already there); the bigram model's own LM feature file goes
into ``OUT/joint/bigram/lm.binary``. The folder ``OUT/joint/`` keeps its name (a model directory's layout
that configurations name). ``--init`` is checked before training (a bigram model made by ``dualdecomp
train`` has no ``dependency/``: the message says how to add one). ``OUT/joint/`` is written all at once
(:func:`~dualdecomp.core.model_files.atomic_directory`), the LM and the configuration file each
atomically, the configuration last; an ``OUT`` this run created is removed again if writing fails.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import atomic_directory
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.configuration import ComponentSpec, JointConfig, save_config
from dualdecomp.models.cotraining.training import CotrainingConfig, cotrain
from dualdecomp.models.registry import Trainer, TrainingContext, get_kind
from dualdecomp.models.trainer_options import add_corpus_arguments, add_seed_and_limit, copy_lm, lm_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind cotraining``."""
    add_corpus_arguments(parser)
    parser.add_argument("--init", default=None, metavar="DIR",
                        help="directory with the bigram model and dependency/ to start from (default: the "
                             "embedded default model)")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lm", default="default", metavar="PATH",
                        help="KenLM model of the LM component: a path, 'default' (the embedded LM) or 'none'")
    parser.add_argument("--lm-weight", type=float, default=2.0, help="fixed weight of the LM component")
    parser.add_argument("--step", type=float, default=0.1, help="size of each perceptron update")
    parser.add_argument("--dep-weight", type=float, default=1.0,
                        help="multiply the starting dependency weights by this")
    parser.add_argument("--tree", choices=("parse", "latent"), default="parse",
                        help="gold tree = the reference's parse, or latent (best tree over the gold words)")
    parser.add_argument("--config-name", default=None, metavar="NAME",
                        help="write configs/NAME.json instead of config.json")
    add_seed_and_limit(parser)


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> None:
    """Co-train the bigram and dependency models of ``--init``; write them and the configuration."""
    if args.epochs < 1:
        raise InputError("--epochs must be >= 1")
    bigram_kind, dependency_kind, lm_kind = get_kind("bigram"), get_kind("dependency"), get_kind("lm")
    init = Path(args.init) if args.init else default_model_dir()
    check_init(init)
    bigram, dependency = bigram_kind.load(init), dependency_kind.load(init / "dependency")
    source = lm_path(args.lm)
    lm = lm_kind.load(source) if source is not None and args.lm_weight > 0 else None
    config = CotrainingConfig(epochs=args.epochs, lm_weight=args.lm_weight if lm is not None else 0.0,
                                 step=args.step, tree=args.tree, dependency_weight=args.dep_weight,
                                 limit=args.limit, seed=args.seed)
    if args.config_name is not None and not args.config_name.replace("-", "_").isidentifier():
        raise InputError(f"invalid configuration name {args.config_name!r} (letters, digits, - and _)")
    result = cotrain(bigram, dependency, lm, args.train, args.dev, config, log=context.log,
                         progress_factory=context.progress_factory)
    out = Path(args.out)
    created = not os.path.lexists(out)
    try:
        with atomic_directory(out / "joint", manifest=False) as work:  # each model has its own manifest
            feature_lm = getattr(result.bigram.lm, "path", None)
            if feature_lm is not None:  # the bigram model's LM feature: its file goes with the model
                (work / "bigram").mkdir()
                copy_lm(Path(feature_lm), work / "bigram" / "lm.binary")
            bigram_kind.save(result.bigram, work / "bigram", lm_file="lm.binary" if feature_lm else None)
            dependency_kind.save(result.dependency, work / "dependency")
        components = [ComponentSpec("bigram", "joint/bigram"),
                      ComponentSpec("dependency", "joint/dependency")]
        if lm is not None:
            copy_lm(source, out / "lm.binary")
            components.append(ComponentSpec("lm", "lm.binary", config.lm_weight))
        name = "McDonald+Dep" + ("+LM" if lm is not None else "") + " (joint perceptron, DD)"
        joint = JointConfig(name, tuple(components), {"length_method": "auto", "max_iterations": 200},
                            fallback_max_tokens=80, fallback_components=(0,))
        written = save_config(joint, out, args.config_name)
    except BaseException:
        if created:  # nothing half-written: the folder this run made goes again
            shutil.rmtree(out, ignore_errors=True)
        raise
    context.log(f"joint model saved to {out / 'joint'} and {written} "
                f"(best epoch {result.meta['best_epoch']})")


def check_init(init: Path) -> None:
    """Refuse an ``--init`` folder without the two models co-training starts from, before training.

    Raises
    ------
    ModelError
        ``init`` is not a directory, has no ``model.json`` (a bigram model) or no ``dependency/``.
    """
    if not init.is_dir():
        raise ModelError(f"--init {init}: model directory not found")
    missing = [what for what, path in (("a bigram model (model.json)", init / "model.json"),
                                       ("a dependency model (dependency/model.json)",
                                        init / "dependency" / "model.json")) if not path.is_file()]
    if missing:
        raise ModelError(f"--init {init}: co-training starts from a bigram model and a dependency model "
                         f"in one folder; missing: {' and '.join(missing)}. Make them with `dualdecomp train "
                         f"--out {init}` and `dualdecomp train --kind dependency --out {init}/dependency` "
                         "(or omit --init: the embedded default model)")


TRAINER = Trainer(summary="bigram + dependency trained together, dual decomposition in the perceptron loop "
                          "(starts from --init)",
                  add_arguments=add_arguments, train=train_from_options)
