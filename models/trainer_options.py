"""Command-line options that several kinds' trainers share (``dualdecomp train --kind K``): the corpora,
the perceptron's settings and the KenLM file of ``--lm``. Each kind's ``add_arguments`` calls these, so an
option means the same for every kind that takes it."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_write_bytes
from dualdecomp.data.locations import default_model_dir

__all__ = ["add_corpus_arguments", "add_perceptron_arguments", "add_seed_and_limit",
           "check_perceptron_arguments", "copy_lm", "lm_path"]


def add_corpus_arguments(parser: argparse.ArgumentParser, dev_required: bool = False,
                         out: str = "output model directory") -> None:
    """``--train JSONL...`` (required), ``--dev JSONL...`` and ``--out DIR`` (required)."""
    parser.add_argument("--train", nargs="+", required=True, metavar="JSONL", help="training corpora")
    if dev_required:
        parser.add_argument("--dev", nargs="+", required=True, metavar="JSONL",
                            help="dev corpora (JSONL), for model selection")
    else:
        parser.add_argument("--dev", nargs="*", default=[], metavar="JSONL",
                            help="dev corpora for epoch selection")
    parser.add_argument("--out", required=True, metavar="DIR", help=out)


def add_perceptron_arguments(parser: argparse.ArgumentParser, hash_bits: int = 22) -> None:
    """The options of a perceptron over hashed sparse features: ``--epochs``, ``--length-mode``,
    ``--hash-bits``, ``--no-lexical``, ``--seed``, ``--limit``."""
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--length-mode", choices=("free", "gold"), default="free",
                        help="decode at free length or at the gold length inside the perceptron loop")
    parser.add_argument("--hash-bits", type=int, default=hash_bits)
    parser.add_argument("--no-lexical", action="store_true", help="no word-identity features")
    add_seed_and_limit(parser)


def add_seed_and_limit(parser: argparse.ArgumentParser) -> None:
    """``--seed`` (default 0) and ``--limit N`` (the first N sentences of each train file)."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None,
                        help="use the first N sentences of each train file")


def check_perceptron_arguments(args: argparse.Namespace) -> None:
    """InputError for ``--epochs`` below 1 or ``--hash-bits`` outside [8, 26]."""
    if args.epochs < 1:
        raise InputError("--epochs must be >= 1")
    if not 8 <= args.hash_bits <= 26:
        raise InputError("--hash-bits must be in [8, 26]")


def lm_path(option: str | None) -> Path | None:
    """The KenLM file of ``--lm``: ``'default'`` (the embedded LM), ``'none'`` or empty (None), or a path."""
    if option == "default":
        return default_model_dir() / "lm.binary"
    return None if not option or option == "none" else Path(option)


def copy_lm(source: Path, target: Path) -> None:
    """Put the LM into an output model directory (unless it is already that file), atomically: a copy
    beside ``target`` renamed over it, so ``target`` is the old file or the whole new one."""
    if Path(source).resolve() != Path(target).resolve():
        atomic_write_bytes(Path(target), lambda fh: _copy_into(source, fh))


def _copy_into(source: Path, handle) -> None:
    with open(source, "rb") as src:
        shutil.copyfileobj(src, handle, 1 << 20)
