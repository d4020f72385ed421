"""Checkpoints of a neural fine-tuning run, so that a run cut into pieces ends bit-identical to one run.

A checkpoint of ``--out DIR`` lives beside it, in the hidden folder ``.DIR.checkpoint`` (hidden, so that no
manifest of the folder around it covers it; never inside the model folder). Each checkpoint is a
sub-folder ``step-NNNNNNNNN`` written into a temporary folder and renamed into place when complete; only
then are the older ones removed, so at any moment at least one complete checkpoint is there. It holds

- ``tensors.npz``: every model tensor (``model/NAME``), the optimiser's state per parameter
  (``optim/INDEX/exp_avg``, ``exp_avg_sq``, ``step``) and PyTorch's CPU random state (``torch_rng``), as
  raw arrays (``numpy.savez``, read back with ``allow_pickle=False``: never pickle);
- ``progress.json``: the step, the position in the epoch (the epoch, the numpy generator's state at its
  start and the number of its batches done: the batch order is re-derived from that state), the training
  losses since the last curve point, the curve so far, the minutes spent, the number of pieces, the
  optimiser's parameter groups and the scheduler's state, the :func:`fingerprint` of the run and the
  sha256 of ``tensors.npz`` (checked before it is read).

This module does not import PyTorch; :mod:`~dualdecomp.models.neural.training` turns tensors into arrays.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dualdecomp.core.errors import InputError, ModelError, SolverError
from dualdecomp.core.model_files import file_sha256
from dualdecomp.models.neural.examples import Example
from dualdecomp.models.neural.training_settings import TrainingSettings, recorded_settings

__all__ = ["Checkpoint", "TrainingPaused", "checkpoint_root", "check_fingerprint", "fingerprint",
           "read_checkpoint", "remove_checkpoint", "write_checkpoint"]

FORMAT = "dualdecomp-neural-checkpoint"
VERSION = 1
UNHASHED = ("max_minutes",)
"""Settings that may change between the pieces of one run (the time budget is each piece's own)."""


class TrainingPaused(SolverError):
    """A piece of a training run stopped (time budget or ``--stop-after-steps``) with a checkpoint and no
    model: exit 4, and the same command again resumes."""


@dataclass(frozen=True)
class Checkpoint:
    """A training run's state after ``progress["step"]`` steps.

    Attributes
    ----------
    path : Path
        The ``step-NNNNNNNNN`` folder it was read from.
    tensors : dict of str to numpy.ndarray
        ``model/NAME``, ``optim/INDEX/NAME`` and ``torch_rng``.
    progress : dict
        The content of ``progress.json`` (see the module's docstring).
    """

    path: Path
    tensors: dict[str, np.ndarray]
    progress: dict[str, Any]


def checkpoint_root(out: Path) -> Path:
    """The checkpoint folder of the model folder ``out``: ``.NAME.checkpoint`` beside it."""
    out = Path(out)
    return out.parent / f".{out.name}.checkpoint"


def _hash_files(directory: Path) -> str:
    digest = hashlib.sha256()
    for p in sorted(directory.iterdir()):
        if p.is_file():
            digest.update(p.name.encode() + b"\0")
            with p.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _hash_examples(examples: Sequence[Example]) -> str:
    digest = hashlib.sha256()
    for ex in examples:
        digest.update("\x1f".join(ex.words).encode() + b"\x1e")
        digest.update(np.asarray(ex.target, dtype=np.float64).tobytes() + b"\x1d")
    return digest.hexdigest()


def fingerprint(settings: TrainingSettings, train: Sequence[Example], dev: Sequence[Example],
                base: Path) -> dict[str, Any]:
    """What must not change between the pieces of a run: the settings (but the time budget), the
    training and dev sentences (words and targets, in order) and the base encoder's files.

    Returns
    -------
    dict
        ``{"settings": {...}, "train": SHA256, "dev": SHA256, "base": SHA256}`` (JSON).
    """
    return {"settings": {k: v for k, v in recorded_settings(settings).items() if k not in UNHASHED},
            "train": _hash_examples(train), "dev": _hash_examples(dev), "base": _hash_files(Path(base))}


def check_fingerprint(found: Mapping[str, Any], expected: Mapping[str, Any], where: Path) -> None:
    """Raise InputError, naming what differs, when a checkpoint's fingerprint is not this run's.

    Raises
    ------
    InputError
        "... was written by a run with other settings or data (learning_rate: 0.001 there, 0.0005 now)
        ...; run with --no-resume to start over".
    """
    if dict(found) == dict(expected):
        return
    diffs = []
    old, new = found.get("settings", {}), expected["settings"]
    for k in sorted(set(old) | set(new)):
        if old.get(k) != new.get(k):
            diffs.append(f"{k}: {old.get(k)!r} there, {new.get(k)!r} now")
    for k, what in (("train", "the training sentences"), ("dev", "the dev sentences"),
                    ("base", "the base encoder's files")):
        if found.get(k) != expected[k]:
            diffs.append(f"{what} differ")
    raise InputError(f"{where} was written by a run with other settings or data ({'; '.join(diffs)}): "
                     "resuming it would not give the model these options ask for; run with --no-resume to "
                     "start over (or the options it was written with)")


def _steps(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("step-"))


def write_checkpoint(root: Path, tensors: Mapping[str, np.ndarray], progress: Mapping[str, Any]) -> Path:
    """Write a checkpoint into ``root`` atomically and remove the older ones.

    Parameters
    ----------
    root : Path
        The checkpoint folder (:func:`checkpoint_root`; created if needed).
    tensors : mapping of str to numpy.ndarray
    progress : mapping
        JSON-able; its ``"step"`` names the folder.

    Returns
    -------
    Path
        The new ``step-NNNNNNNNN`` folder.
    """
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{int(progress['step']):09d}"
    work = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
    try:
        with (work / "tensors.npz").open("wb") as fh:
            np.savez(fh, **tensors)
            fh.flush()
            os.fsync(fh.fileno())
        text = json.dumps({"format": FORMAT, "version": VERSION, **progress,
                           "tensors_sha256": file_sha256(work / "tensors.npz")})
        with (work / "progress.json").open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if final.exists():  # the same step written again (a resumed piece that stops at once)
            shutil.rmtree(final)
        os.rename(work, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    for old in _steps(root):
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    for stale in root.glob(".tmp-*"):  # left by a piece killed while it wrote
        shutil.rmtree(stale, ignore_errors=True)
    return final


def read_checkpoint(root: Path) -> Checkpoint | None:
    """The latest complete checkpoint in ``root`` (checksums verified), or None when there is none.

    Raises
    ------
    ModelError
        The checkpoint's files are unreadable, corrupted (checksum) or not a checkpoint of this format.
    """
    steps = _steps(root)
    if not steps:
        return None
    path = steps[-1]
    try:
        progress = json.loads((path / "progress.json").read_text(encoding="utf-8"))
        listed = progress.get("tensors_sha256") if isinstance(progress, dict) else None
        if listed != file_sha256(path / "tensors.npz"):
            raise ValueError("tensors.npz does not have the sha256 progress.json lists")
        with np.load(path / "tensors.npz", allow_pickle=False) as npz:
            tensors = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: unreadable checkpoint ({exc}); remove {root} or run with --no-resume") \
            from None
    if (progress.get("format"), progress.get("version")) != (FORMAT, VERSION):
        raise ModelError(f"{path}: not a {FORMAT} version {VERSION}; remove {root} or run with --no-resume")
    return Checkpoint(path, tensors, progress)


def remove_checkpoint(root: Path) -> None:
    """Remove the checkpoint folder (after the final model is written, or to start over)."""
    if root.is_symlink() or root.is_file():
        root.unlink()
    elif root.exists():
        shutil.rmtree(root)
