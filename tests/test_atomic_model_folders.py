"""Trained model folders are written all at once (:func:`dualdecomp.core.model_files.atomic_directory`),
and ``train --kind cotraining --init DIR`` works on a model made by ``dualdecomp train``."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from dualdecomp.app.cli import main
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import MANIFEST, atomic_directory, verify_files
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.bigram.store import load_model, save_model
from dualdecomp.models.lm import load_lm


def _siblings(path):
    return sorted(p.name for p in path.parent.iterdir())


def test_new_folder_appears_whole_with_its_manifest(tmp_path) -> None:
    out = tmp_path / "model"
    with atomic_directory(out) as work:
        assert work.parent == tmp_path and work.name.startswith(".model.")
        (work / "a.json").write_text("{}")
        assert not out.exists()  # nothing visible before the block ends
    assert sorted(p.name for p in out.iterdir()) == ["MANIFEST.json", "a.json"]
    verify_files(out / "a.json")
    assert _siblings(out) == ["model"]


def test_a_failure_leaves_nothing(tmp_path) -> None:
    out = tmp_path / "model"
    with pytest.raises(RuntimeError), atomic_directory(out) as work:
        (work / "half.json").write_text("{")
        raise RuntimeError("the save failed")
    assert not out.exists() and _siblings(out) == []


def test_an_existing_folder_keeps_what_the_block_did_not_write(tmp_path) -> None:
    out = tmp_path / "model"
    (out / "dependency").mkdir(parents=True)
    (out / "dependency" / "model.json").write_text("dep")
    (out / "weights.npz").write_text("old")
    (out / "sub").mkdir()
    (out / "sub" / "stale").write_text("old")
    with pytest.raises(RuntimeError), atomic_directory(out) as work:
        (work / "weights.npz").write_text("new")
        raise RuntimeError
    assert (out / "weights.npz").read_text() == "old"  # a failure changes nothing
    with atomic_directory(out) as work:
        (work / "weights.npz").write_text("new")
        (work / "sub").mkdir()
        (work / "sub" / "fresh").write_text("new")
    assert (out / "weights.npz").read_text() == "new"
    assert (out / "dependency" / "model.json").read_text() == "dep"  # another model, kept
    assert sorted(p.name for p in (out / "sub").iterdir()) == ["fresh"]  # a folder is replaced whole
    manifest = json.loads((out / MANIFEST).read_text())["sha256"]
    assert set(manifest) == {"weights.npz", "sub/fresh", "dependency/model.json"}
    assert _siblings(out) == ["model"]


def test_a_file_in_the_way_is_refused(tmp_path) -> None:
    (tmp_path / "model").write_text("not a folder")
    with pytest.raises(ModelError, match="not a directory"), atomic_directory(tmp_path / "model"):
        pass


def _dev(corpora, tmp_path, k=6):
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join((corpora / "written.dev.jsonl").read_text().splitlines(keepends=True)[:k]))
    return dev


def test_bigram_trainer_leaves_no_half_model(corpora, tmp_path, monkeypatch) -> None:
    import dualdecomp.models.bigram.kind as kind

    def fail(model, directory, lm_file=None):
        (directory / "weights.npz").write_text("half")
        raise ModelError("disk full")

    monkeypatch.setattr(kind, "save_model", fail)
    out = tmp_path / "m"
    args = ["train", "--train", str(corpora / "written.train.jsonl"), "--dev", str(_dev(corpora, tmp_path)),
            "--limit", "3", "--epochs", "1", "--out", str(out), "--quiet"]
    assert main(args) == 3
    assert not out.exists() and _siblings(out) == ["dev.jsonl"]


@pytest.fixture
def init_with_lm_feature(tmp_path):
    """A folder as ``dualdecomp train`` (LM feature on, the default) + ``--kind dependency`` make it."""
    d = default_model_dir()
    init = tmp_path / "init"
    init.mkdir()
    shutil.copyfile(d / "lm.binary", init / "lm.binary")
    model = dataclasses.replace(load_model(d), lm=load_lm(init / "lm.binary"))
    save_model(model, init, lm_file="lm.binary")
    return init


def test_cotraining_init_without_dependency_fails_before_training(init_with_lm_feature, corpora, tmp_path,
                                                                  capsys) -> None:
    out = tmp_path / "joint"
    code = main(["train", "--kind", "joint", "--init", str(init_with_lm_feature), "--train",
                 str(corpora / "written.train.jsonl"), "--limit", "3", "--out", str(out), "--quiet"])
    assert code == 3
    err = capsys.readouterr().err
    assert "missing: a dependency model" in err and "--kind dependency --out" in err
    assert not out.exists()


def test_cotraining_from_a_trained_model_with_an_lm_feature(init_with_lm_feature, corpora, tmp_path) -> None:
    from dualdecomp.app.compressor import Compressor

    shutil.copytree(default_model_dir() / "dependency", init_with_lm_feature / "dependency")
    out = tmp_path / "joint"
    code = main(["train", "--kind", "cotraining", "--init", str(init_with_lm_feature), "--train",
                 str(corpora / "written.train.jsonl"), "--dev", str(_dev(corpora, tmp_path)), "--limit", "3",
                 "--epochs", "1", "--lm", "none", "--out", str(out), "--quiet"])
    assert code == 0
    spec = json.loads((out / "joint" / "bigram" / "model.json").read_text())
    assert spec["lm"] == "lm.binary" and (out / "joint" / "bigram" / "lm.binary").is_file()
    tokens = "The council met on Tuesday to discuss the budget .".split()
    assert len(Compressor(out).compress_tokens(tokens, length=5).tokens) == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.jsonl", "init", "joint"]
