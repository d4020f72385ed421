"""Checksum manifests of model directories (issue W2.5): written by every save path, checked at load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import MANIFEST, verify_file, write_manifest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "data" / "default_model"


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_shipped_model_directories_have_a_manifest_matching_their_files():
    for d in (DEFAULT, DEFAULT / "dependency", DEFAULT / "t3"):
        listed = json.loads((d / MANIFEST).read_text())["sha256"]
        assert listed, d
        for rel in listed:
            verify_file(d / rel)  # raises on a mismatch
    top = json.loads((DEFAULT / MANIFEST).read_text())["sha256"]
    assert {"lm.binary", "weights.npz", "model.json", "config.json", "configs/lm-only.json"} <= set(top)
    assert not any(rel.startswith(("dependency/", "t3/")) for rel in top)  # they have their own


def test_flipped_byte_in_the_lm_is_refused(tmp_path):
    from dualdecomp.models.lm.model import load_lm

    d = tmp_path / "m"
    d.mkdir()
    shutil.copyfile(DEFAULT / "lm.binary", d / "lm.binary")
    write_manifest(d)
    load_lm(d / "lm.binary")
    # a byte inside the probability tables: KenLM itself loads this file silently
    _flip(d / "lm.binary", (d / "lm.binary").stat().st_size // 2)
    with pytest.raises(ModelError, match="checksum mismatch"):
        load_lm(d / "lm.binary")
    (d / MANIFEST).unlink()
    load_lm(d / "lm.binary")  # without the manifest the damage goes unnoticed (the finding)


def _alter_validly(path: Path) -> None:
    """Change a file's bytes but keep it well-formed (so only the checksum can tell)."""
    if path.suffix == ".json":
        path.write_bytes(path.read_bytes() + b" ")
    elif path.suffix == ".npz":
        with np.load(path) as npz:
            arrays = {k: npz[k].copy() for k in npz.files}
        key = "values" if "values" in arrays else "head.bias"  # a sparse weight file, or the neural scorer's
        arrays[key] = arrays[key] + np.ones_like(arrays[key])
        np.savez_compressed(path, **arrays)
    else:
        raise AssertionError(path)


def test_every_file_kind_is_checked(tmp_path):
    from dualdecomp.app.compressor import Compressor
    from dualdecomp.solvers.transducer.grammar import Grammar, GrammarConfig, save_grammar

    d = tmp_path / "model"
    shutil.copytree(DEFAULT, d)
    # the shipped grammar takes a minute to parse: an empty one (its own check is tested below)
    save_grammar(Grammar(config=GrammarConfig()), d / "t3" / "grammar.json.gz")
    write_manifest(d / "t3")
    Compressor(d, "t3")
    deps = "mcdonald-dependency-lm"
    for rel, config in [("config.json", None), ("configs/t3.json", "t3"), ("weights.npz", None),
                        ("model.json", None), ("dependency/weights.npz", deps),
                        ("dependency/model.json", deps), ("t3/weights.npz", "t3"), ("t3/model.json", "t3"),
                        ("neural/weights.npz", "neural"), ("neural/model.json", "neural"),
                        ("neural/tokenizer.json", "neural"), ("neural_mpnet/weights.npz", None),
                        ("neural_mpnet/model.json", None), ("neural_mpnet/tokenizer.json", None)]:
        target = d / rel
        original = target.read_bytes()
        _alter_validly(target)
        with pytest.raises(ModelError, match="checksum mismatch"):
            Compressor(d, config)
        target.write_bytes(original)


def test_grammar_is_checked(tmp_path):
    import gzip

    from dualdecomp.solvers.transducer.grammar import Grammar, GrammarConfig, load_grammar, save_grammar

    path = save_grammar(Grammar(config=GrammarConfig()), tmp_path / "grammar.json.gz")
    write_manifest(tmp_path)
    load_grammar(path)
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes()), mtime=1))  # same content
    with pytest.raises(ModelError, match="checksum mismatch"):
        load_grammar(path)


def test_cli_exits_3_on_a_flipped_lm_byte(tmp_path, capsys):
    from dualdecomp.app.cli import main

    d = tmp_path / "model"
    shutil.copytree(DEFAULT, d)
    _flip(d / "lm.binary", (d / "lm.binary").stat().st_size // 2)
    assert main(["compress", "--model", str(d), "--config", "lm-only", "a b c"]) == 3
    assert "checksum mismatch" in capsys.readouterr().err


def test_every_save_path_writes_a_manifest(tmp_path):
    from dualdecomp.models.bigram.model import BigramModel
    from dualdecomp.models.bigram.store import load_model, save_model
    from dualdecomp.models.configuration import ComponentSpec, JointConfig, save_config

    d = tmp_path / "bigram"
    save_model(BigramModel(weights=np.arange(256, dtype=float) / 7, hash_bits=8, lexical=True), d)
    assert set(json.loads((d / MANIFEST).read_text())["sha256"]) == {"model.json", "weights.npz"}
    load_model(d)
    save_config(JointConfig("x", (ComponentSpec("bigram", "."),)), d, "other")
    assert "configs/other.json" in json.loads((d / MANIFEST).read_text())["sha256"]
    _alter_validly(d / "weights.npz")
    with pytest.raises(ModelError, match="checksum mismatch"):
        load_model(d)


def test_unlisted_files_and_directories_without_manifest_still_load(tmp_path):
    from dualdecomp.models.bigram.model import BigramModel
    from dualdecomp.models.bigram.store import load_model, save_model

    d = save_model(BigramModel(weights=np.ones(256), hash_bits=8, lexical=False), tmp_path / "m")
    (d / MANIFEST).unlink()
    assert load_model(d).hash_bits == 8


def test_malformed_manifest_is_a_model_error(tmp_path):
    (tmp_path / "model.json").write_text("{}")
    (tmp_path / MANIFEST).write_text("[" * 100000)
    with pytest.raises(ModelError, match="MANIFEST.json"):
        verify_file(tmp_path / "model.json")
