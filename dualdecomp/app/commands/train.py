"""``dualdecomp train``: train the bigram (McDonald) model, the dependency model, or both jointly.

``--kind joint`` starts from the bigram and dependency models of ``--init`` (a model directory holding
``model.json`` and ``dependency/``) and trains them together with dual decomposition in the perceptron
loop (:mod:`dualdecomp.models.joint.training`). It writes ``OUT/joint/bigram``, ``OUT/joint/dependency`` and
the configuration ``OUT/config.json`` (or ``OUT/configs/NAME.json`` with ``--config-name NAME``) combining
them with the LM (copied to ``OUT/lm.binary`` unless it is already there).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from dualdecomp.app.commands.mixing_options import add_mixing_arguments, mixing_requested
from dualdecomp.core.errors import InputError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``train`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "train", help="train the McDonald (2006) bigram model (averaged perceptron)",
        description="Train the bigram compression model on JSONL corpora; the best epoch on the dev files "
                    "(bigram F1 at gold length) is kept. Writes model.json, weights.npz and the LM.")
    p.add_argument("--kind", choices=("bigram", "dependency", "joint"), default="bigram",
                   help="bigram: McDonald's (2006) model; dependency: the skip-bigram parser's arc model; "
                        "joint: both together, dual decomposition in the loop (starts from --init)")
    p.add_argument("--init", default=None, metavar="DIR",
                   help="joint: directory with the bigram model and dependency/ to start from (default: the "
                        "embedded default model)")
    p.add_argument("--lm-weight", type=float, default=2.0, help="joint: fixed weight of the LM component")
    p.add_argument("--step", type=float, default=0.1, help="joint: size of each perceptron update")
    p.add_argument("--dep-weight", type=float, default=1.0,
                   help="joint: multiply the starting dependency weights by this")
    p.add_argument("--tree", choices=("parse", "latent"), default="parse",
                   help="joint: gold tree = the reference's parse, or latent (best tree over the gold words)")
    p.add_argument("--config-name", default=None, metavar="NAME",
                   help="joint: write configs/NAME.json instead of config.json")
    p.add_argument("--second-order", action="store_true", help="dependency: add sibling features")
    p.add_argument("--train", nargs="+", required=True, metavar="JSONL", help="training corpora")
    p.add_argument("--dev", nargs="*", default=[], metavar="JSONL", help="dev corpora for epoch selection")
    p.add_argument("--out", required=True, metavar="DIR", help="output model directory")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lm", default="default", metavar="PATH",
                   help="KenLM model for the LM feature: a path, 'default' (the embedded LM) or 'none'")
    p.add_argument("--length-mode", choices=("free", "gold"), default="free",
                   help="decode at free length or at the gold length inside the perceptron loop")
    p.add_argument("--trainer", choices=("perceptron", "mira"), default="perceptron",
                   help="averaged structured perceptron, or averaged k-best MIRA")
    p.add_argument("--k", type=int, default=5, help="k of k-best MIRA")
    p.add_argument("--C", type=float, default=1.0, help="MIRA's clip of each multiplier")
    p.add_argument("--hash-bits", type=int, default=22)
    p.add_argument("--no-lexical", action="store_true", help="no word-identity features")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="use the first N sentences of each train file")
    add_mixing_arguments(p, "bigram perceptron")
    p.add_argument("--quiet", action="store_true", help="no progress messages")
    p.set_defaults(func=run)
    return p


def _lm_path(option: str) -> Path | None:
    """The KenLM file of ``--lm``: 'default' (the embedded LM), 'none' (None) or a path."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.data.locations import default_model_dir

    if option == "default":
        return default_model_dir() / "lm.binary"
    return None if option == "none" else Path(option)


def _copy_lm(source: Path, target: Path) -> None:
    """Put the LM into the output model directory (unless it is already that file)."""
    if source.resolve() != target.resolve():
        shutil.copyfile(source, target)


def _train_dependency(args: argparse.Namespace, log) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.progress import progress_factory
    from dualdecomp.models.dependency.store import save_dependency_model
    from dualdecomp.models.dependency.training import DependencyTrainingConfig, train_dependency

    if args.trainer != "perceptron":
        raise InputError("the dependency model is trained by the perceptron only")
    config = DependencyTrainingConfig(epochs=args.epochs, hash_bits=args.hash_bits,
                                      lexical=not args.no_lexical, second_order=args.second_order,
                                      length_mode=args.length_mode, limit=args.limit, seed=args.seed)
    model, _ = train_dependency(args.train, args.dev, config, log=log,
                                progress_factory=progress_factory(args.quiet))
    save_dependency_model(model, Path(args.out))
    log(f"dependency model saved to {args.out}")
    return 0


def _train_joint(args: argparse.Namespace, log) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.progress import progress_factory
    from dualdecomp.data.locations import default_model_dir
    from dualdecomp.models.bigram.store import load_model, save_model
    from dualdecomp.models.dependency.store import load_dependency_model, save_dependency_model
    from dualdecomp.models.joint.config import ComponentSpec, JointConfig, save_config
    from dualdecomp.models.joint.training import JointTrainingConfig, train_joint
    from dualdecomp.models.lm.model import load_lm

    init = Path(args.init) if args.init else default_model_dir()
    bigram, dependency = load_model(init), load_dependency_model(init / "dependency")
    lm_path = _lm_path(args.lm)
    lm = load_lm(lm_path) if lm_path is not None and args.lm_weight > 0 else None
    config = JointTrainingConfig(epochs=args.epochs, lm_weight=args.lm_weight if lm is not None else 0.0,
                                 step=args.step, tree=args.tree, dependency_weight=args.dep_weight,
                                 limit=args.limit, seed=args.seed)
    if args.config_name is not None and not args.config_name.replace("-", "_").isidentifier():
        raise InputError(f"invalid configuration name {args.config_name!r} (letters, digits, - and _)")
    result = train_joint(bigram, dependency, lm, args.train, args.dev, config, log=log,
                         progress_factory=progress_factory(args.quiet))
    out = Path(args.out)
    save_model(result.bigram, out / "joint" / "bigram")
    save_dependency_model(result.dependency, out / "joint" / "dependency")
    components = [ComponentSpec("bigram", "joint/bigram"), ComponentSpec("dependency", "joint/dependency")]
    if lm is not None:
        _copy_lm(lm_path, out / "lm.binary")
        components.append(ComponentSpec("lm", "lm.binary", config.lm_weight))
    name = "McDonald+Dep" + ("+LM" if lm is not None else "") + " (joint perceptron, DD)"
    joint = JointConfig(name, tuple(components), {"length_method": "auto", "max_iterations": 200},
                        fallback_max_tokens=80, fallback_components=(0,))
    written = save_config(joint, out, args.config_name)
    log(f"joint model saved to {out / 'joint'} and {written} (best epoch {result.meta['best_epoch']})")
    return 0


def run(args: argparse.Namespace) -> int:
    """Train and save the model; returns the exit code."""
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.core.progress import progress_factory
    from dualdecomp.models.bigram.store import save_model
    from dualdecomp.models.bigram.training import TrainingConfig, train
    from dualdecomp.models.lm.model import load_lm

    if args.epochs < 1:
        raise InputError("--epochs must be >= 1")
    if not 8 <= args.hash_bits <= 26:
        raise InputError("--hash-bits must be in [8, 26]")

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr)

    parallel = mixing_requested(args)
    if parallel and (args.kind != "bigram" or args.trainer != "perceptron"):
        raise InputError("--workers/--scheduler train the bigram model's perceptron only")
    if args.kind == "dependency":
        return _train_dependency(args, log)
    if args.kind == "joint":
        return _train_joint(args, log)
    lm_path = _lm_path(args.lm)
    lm = load_lm(lm_path) if lm_path is not None else None
    config = TrainingConfig(epochs=args.epochs, hash_bits=args.hash_bits, lexical=not args.no_lexical,
                            length_mode=args.length_mode, seed=args.seed, trainer=args.trainer, k=args.k,
                            C=args.C)
    if args.k < 1 or not args.C > 0:
        raise InputError("--k must be >= 1 and --C > 0")

    if parallel:
        # lazy: Dask is imported only for a distributed run
        from dualdecomp.app.cluster import cluster_client
        from dualdecomp.models.bigram.distributed_training import ParameterMixing

        with cluster_client(args.workers, args.scheduler) as client:
            mixing = ParameterMixing(client, args.shards or sum(client.nthreads().values()), args.mixing)
            model, _ = train(args.train, args.dev, config, lm=lm, limit=args.limit, log=log,
                             progress_factory=progress_factory(args.quiet), perceptron=mixing)
    else:
        model, _ = train(args.train, args.dev, config, lm=lm, limit=args.limit, log=log,
                         progress_factory=progress_factory(args.quiet))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lm_file = None
    if lm_path is not None:
        lm_file = "lm.binary"
        _copy_lm(lm_path, out / lm_file)
    save_model(model, out, lm_file=lm_file)
    log(f"model saved to {out}")
    return 0
