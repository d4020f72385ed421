"""Damaged model files exit 3 with a clear message (never 1): W2.5 part A.

Deeply nested JSON in any model file, corrupted deflate data in an npz or a grammar, a ``.npy`` saved as
``weights.npz``, a truncated T3 ``weights.npz``, invalid decode options in ``config.json`` (checked once at
load, not per line).
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dualdecomp.app.cli import main

DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture()
def t3_model(tmp_path) -> Path:
    """A model directory with the shipped T3 model only (configuration ``t3``)."""
    from dualdecomp.data.locations import default_model_dir

    src = default_model_dir()
    d = tmp_path / "m"
    d.mkdir()
    shutil.copytree(src / "t3", d / "t3")
    (d / "configs").mkdir()
    shutil.copy(src / "configs" / "t3.json", d / "configs" / "t3.json")
    return d


def _corrupt_deflate(path: Path) -> None:
    """Flip bytes inside the first compressed member's data, keeping the zip structure readable."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for k in range(start + 2, start + min(info.compress_size, 200)):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))


def _run(model: Path, config: str | None, capsys) -> tuple[int, str]:
    argv = ["compress", "--model", str(model), *(["--config", config] if config else []), "some text here"]
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("damage", ["deep-model-json", "deep-config", "long-int-config", "deflate-weights",
                                    "deflate-grammar", "npy-as-npz", "truncated-weights", "deep-grammar"])
def test_damaged_t3_model_exits_3(t3_model, damage, capsys) -> None:
    t3 = t3_model / "t3"
    if damage == "deep-model-json":
        (t3 / "model.json").write_text('{"format": ' + DEEP + "}")
    elif damage == "deep-config":
        (t3_model / "configs" / "t3.json").write_text('{"components": ' + DEEP + "}")
    elif damage == "long-int-config":
        (t3_model / "configs" / "t3.json").write_text('{"version": ' + "1" * 5000 + "}")
    elif damage == "deflate-weights":
        _corrupt_deflate(t3 / "weights.npz")
    elif damage == "deflate-grammar":  # the binary grammar's header and compressed payload
        raw = bytearray((t3 / "grammar.bin").read_bytes())
        for k in range(40, 400):
            raw[k] ^= 0x5A
        (t3 / "grammar.bin").write_bytes(bytes(raw))
    elif damage == "npy-as-npz":
        buf = io.BytesIO()
        np.save(buf, np.arange(10.0))
        (t3 / "weights.npz").write_bytes(buf.getvalue())
    elif damage == "truncated-weights":
        data = (t3 / "weights.npz").read_bytes()
        (t3 / "weights.npz").write_bytes(data[: len(data) // 2])
    else:  # a directory with a JSON grammar (written before the binary format), deeply nested
        import gzip

        (t3 / "grammar.bin").unlink()
        (t3 / "grammar.json.gz").write_bytes(gzip.compress(('{"format": ' + DEEP + "}").encode()))
    code, err = _run(t3_model, "t3", capsys)
    assert code == 3, err
    assert "Traceback" not in err and "internal error" not in err and "error:" in err


def test_invalid_decode_options_are_a_model_error_at_load(t3_model, capsys) -> None:
    path = t3_model / "configs" / "t3.json"
    spec = json.loads(path.read_text())
    spec["decode"]["max_iterationz"] = 5
    path.write_text(json.dumps(spec))
    code, err = _run(t3_model, "t3", capsys)
    assert code == 3 and "decode options" in err and "max_iterationz" in err
    spec["decode"] = {"max_iterations": -4}
    path.write_text(json.dumps(spec))
    code, err = _run(t3_model, "t3", capsys)
    assert code == 3, err
