"""Model directories are checked against their MANIFEST.json up front (issue W3.4): a corrupted, truncated
or deleted file gets one ModelError naming it with both checksums (exit 3), never a parser's error first."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dualdecomp.app.cli import main
from dualdecomp.core import model_files
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import MANIFEST, verify_directory, write_manifest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "data" / "default_model"
REWRITE = ROOT / "data" / "rewrite_model"


@pytest.fixture(scope="module")
def model_copy(tmp_path_factory) -> Path:
    """A pristine copy of the default model directory (copied once; each test damages its own copy)."""
    d = tmp_path_factory.mktemp("pristine") / "model"
    shutil.copytree(DEFAULT, d)
    return d


def _copy(src: Path, tmp_path: Path) -> Path:
    d = tmp_path / "model"
    shutil.copytree(src, d)
    return d


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _listed_sha(directory: Path, rel: str) -> str:
    return json.loads((directory / MANIFEST).read_text())["sha256"][rel]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _compress(model: Path, config: str | None, capsys) -> tuple[int, str]:
    argv = ["compress", "--model", str(model), *(["--config", config] if config else []), "a b c d"]
    code = main(argv)
    return code, capsys.readouterr().err


def test_flipped_byte_in_neural_weights_names_the_file_and_both_checksums(model_copy, tmp_path, capsys):
    d = _copy(model_copy, tmp_path)
    target = d / "neural" / "weights.npz"
    expected = _listed_sha(d / "neural", "weights.npz")
    _flip(target, 200)  # inside the first member's deflate data: numpy's zipfile says "Bad CRC-32"
    code, err = _compress(d, "neural", capsys)
    assert code == 3, err
    assert f"checksum mismatch: {target} (" in err
    assert f"says sha256 {expected}, file has {_sha(target)}" in err
    assert "CRC" not in err and "Traceback" not in err and "corrupted or not an .npz" not in err
    assert err.count("error:") == 1


def test_truncated_file_is_refused_even_when_the_configuration_does_not_read_it(model_copy, tmp_path, capsys):
    d = _copy(model_copy, tmp_path)
    target = d / "weights.npz"  # the bigram model's: the lm-only configuration never reads it
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    code, err = _compress(d, "lm-only", capsys)
    assert code == 3, err
    assert f"checksum mismatch: {target} (" in err and _listed_sha(d, "weights.npz") in err
    assert "Traceback" not in err


@pytest.mark.parametrize("rel", ["neural/tokenizer.json", "configs/t3.json"])
def test_deleted_file_is_refused(model_copy, tmp_path, capsys, rel):
    d = _copy(model_copy, tmp_path)
    (d / rel).unlink()
    code, err = _compress(d, "neural", capsys)
    assert code == 3, err
    assert f"checksum mismatch: {d / rel} is missing" in err and "Traceback" not in err


def test_rewrite_model_is_checked_up_front(tmp_path, capsys):
    d = _copy(REWRITE, tmp_path)
    target = d / "weights.npz"
    _flip(target, 200)
    code = main(["rewrite", "--model", str(d), "The cat sat on the mat ."])
    err = capsys.readouterr().err
    assert code == 3, err
    assert f"checksum mismatch: {target} (" in err and "CRC" not in err and "Traceback" not in err


def test_console_exits_3_with_one_clear_line(model_copy, tmp_path):
    d = _copy(model_copy, tmp_path)
    target = d / "neural_chain" / "weights.npz"
    _flip(target, 300)
    proc = subprocess.run([sys.executable, "-m", "dualdecomp.app.cli", "compress", "--model", str(d),
                           "The minister said the plan would go ahead ."],
                          capture_output=True, text=True, env={**os.environ, "DUALDECOMP_DEBUG": ""})
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and "CRC" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "checksum mismatch" in ln]
    assert len(lines) == 1 and str(target) in lines[0] and proc.stdout == ""


def _small_model(tmp_path: Path) -> Path:
    d = tmp_path / "m"
    (d / "sub").mkdir(parents=True)
    (d / "a.json").write_text('{"x": 1}\n')
    (d / "sub" / "b.bin").write_bytes(bytes(range(256)) * 64)
    write_manifest(d)
    return d


def test_second_check_hashes_nothing_and_a_later_change_is_still_seen(tmp_path, monkeypatch):
    d = _small_model(tmp_path)
    calls = []
    real = model_files._sha256_of
    monkeypatch.setattr(model_files, "_sha256_of", lambda fh: calls.append(1) or real(fh))
    verify_directory(d)
    assert len(calls) == 2  # a.json and sub/b.bin
    verify_directory(d)
    model_files.verify_file(d / "sub" / "b.bin")
    assert len(calls) == 2  # cached: nothing hashed again
    _flip(d / "sub" / "b.bin", 5)  # same size, rewritten in place
    with pytest.raises(ModelError, match="checksum mismatch: .*b.bin"):
        verify_directory(d)
    with pytest.raises(ModelError, match="checksum mismatch: .*b.bin"):
        model_files.verify_file(d / "sub" / "b.bin")


def test_listed_path_that_is_not_a_regular_file_or_leaves_the_directory(tmp_path):
    d = _small_model(tmp_path)
    (d / "a.json").unlink()
    (d / "a.json").mkdir()
    with pytest.raises(ModelError, match="a.json: is a directory"):
        verify_directory(d)
    doc = json.loads((d / MANIFEST).read_text())
    doc["sha256"] = {"../outside.json": "0" * 64}
    (d / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(ModelError, match="not a dualdecomp checksum manifest"):
        verify_directory(d)


def test_directory_without_manifest_is_noted_not_refused(tmp_path, capsys):
    d = _small_model(tmp_path)
    (d / MANIFEST).unlink()
    verify_directory(d, note=False)
    assert capsys.readouterr().err == ""
    verify_directory(d)
    assert "has no MANIFEST.json" in capsys.readouterr().err
    verify_directory(tmp_path / "absent")  # not a directory: the loader reports it
