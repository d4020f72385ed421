"""The command-line options of training by iterative parameter mixing on Dask (`train`, `order train`)."""

from __future__ import annotations

import argparse

from dualdecomp.core.errors import InputError


def add_mixing_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--workers``, ``--scheduler``, ``--shards`` and ``--mixing``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    what : str
        What is trained that way, for the help text (e.g. ``"bigram perceptron"``).
    """
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help=f"{what}: train by iterative parameter mixing on a local Dask cluster of N "
                             "worker processes (N > 1)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="the same on an existing Dask cluster")
    parser.add_argument("--shards", type=int, default=None, metavar="K",
                        help="parameter mixing: shards trained in parallel (default: one per worker thread)")
    parser.add_argument("--mixing", choices=("uniform", "mistakes"), default="uniform",
                        help="parameter mixing: average the shards' weights uniformly or weighted by "
                             "each shard's mistakes (updates)")


def mixing_requested(args: argparse.Namespace) -> bool:
    """Whether the options ask for parameter mixing (``--workers N > 1`` or ``--scheduler``).

    Raises
    ------
    InputError
        ``--workers`` or ``--shards`` below 1, or ``--shards`` without a cluster.
    """
    if args.workers < 1 or (args.shards is not None and args.shards < 1):
        raise InputError("--workers and --shards must be >= 1")
    parallel = args.workers > 1 or args.scheduler is not None
    if args.shards is not None and not parallel:
        raise InputError("--shards needs --workers N > 1 or --scheduler")
    return parallel
