"""Model files: save/load round trip and validation of everything that can be wrong."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.bigram.store import load_model, save_model


def _model(bits: int = 12) -> BigramModel:
    w = np.random.default_rng(0).normal(size=1 << bits)
    w[0] = 0.0
    w[::3] = 0.0
    return BigramModel(w, hash_bits=bits, lexical=False, meta={"note": "test"})


def test_round_trip(tmp_path) -> None:
    m = _model()
    save_model(m, tmp_path)
    back = load_model(tmp_path)
    assert np.array_equal(back.weights, m.weights)
    assert back.hash_bits == m.hash_bits and back.lexical is False and back.meta == {"note": "test"}
    assert back.lm is None
    assert not list(tmp_path.glob("*.tmp"))


def test_same_potentials_after_reload(tmp_path, parsed_dev) -> None:
    _, sentences = parsed_dev
    m = _model(16)
    save_model(m, tmp_path)
    back = load_model(tmp_path)
    for s in sentences[:3]:
        assert np.array_equal(back.potentials(s), m.potentials(s))


@pytest.mark.parametrize("edit, message", [
    (lambda spec: spec.update(format="other"), "not a dualdecomp model"),
    (lambda spec: spec.update(version=99), "version"),
    (lambda spec: spec.update(kind="mystery"), "kind"),
    (lambda spec: spec.update(hash_bits=40), "hash_bits"),
    (lambda spec: spec.update(hash_bits="22"), "hash_bits"),
    (lambda spec: spec["templates"]["pair"].pop(), "templates"),
    (lambda spec: spec.update(lm="../../etc/passwd"), "inside the model directory"),
    (lambda spec: spec.update(lm="missing.binary"), "language model not found"),
])
def test_invalid_spec(tmp_path, edit, message) -> None:
    save_model(_model(), tmp_path)
    spec = json.loads((tmp_path / "model.json").read_text())
    edit(spec)
    (tmp_path / "model.json").write_text(json.dumps(spec))
    write_manifest(tmp_path)  # a deliberate edit: the content's own check speaks, not the checksum
    with pytest.raises(ModelError, match=message):
        load_model(tmp_path)


def test_corrupted_weights(tmp_path) -> None:
    save_model(_model(), tmp_path)
    good = tmp_path / "weights.npz"
    saved = good.read_bytes()
    good.write_bytes(saved[: len(saved) // 2])
    with pytest.raises(ModelError, match="checksum mismatch"):  # the manifest speaks first
        load_model(tmp_path)
    np.savez(good, indices=np.array([1 << 20]), values=np.array([1.0]))
    write_manifest(tmp_path)  # weights written on purpose from here: their own checks speak
    with pytest.raises(ModelError, match="out of range"):
        load_model(tmp_path)
    np.savez(good, indices=np.array([1]), values=np.array([np.nan]))
    write_manifest(tmp_path)
    with pytest.raises(ModelError, match="NaN"):
        load_model(tmp_path)
    good.unlink()
    with pytest.raises(ModelError, match="missing"):
        load_model(tmp_path)


def test_missing_directory_and_json(tmp_path) -> None:
    with pytest.raises(ModelError, match="not found"):
        load_model(tmp_path / "nope")
    with pytest.raises(ModelError, match="missing"):
        load_model(tmp_path)
    (tmp_path / "model.json").write_text("{not json")
    with pytest.raises(ModelError, match="JSON"):
        load_model(tmp_path)


def test_default_model_loads_and_is_small() -> None:
    from dualdecomp.data.locations import default_model_dir

    d = default_model_dir()
    m = load_model(d)
    assert m.hash_bits == 22 and m.meta["length_mode"] == "gold"
    total = sum(f.stat().st_size for f in d.iterdir() if f.is_file())
    assert total <= 50_000_000


def test_model_with_lm_needs_its_file_name(tmp_path) -> None:
    m = _model()
    fake = BigramModel(m.weights, m.hash_bits, m.lexical, lm=object())
    with pytest.raises(ModelError):
        save_model(fake, tmp_path)
    shutil.rmtree(tmp_path)
