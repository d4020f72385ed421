"""Model files are read as regular files with a size cap (issue W3.1 items 6 and 10a).

Every file the tool reads from a model directory is opened by ``dualdecomp.core.model_files``: a symlink in
its place, a device, a FIFO or a file over the cap of its kind is ModelError (exit 3) naming that file; a
path a configuration names outside the model directory names that configuration file; a model directory
without ``MANIFEST.json`` loads with one line on stderr; an unknown ``--config`` name is bad input (exit 2).

Damaged copies of the shipped models are loaded in child processes under an address-space limit (the old
code read ``/dev/zero`` until the memory ran out) and with a timeout (the old code blocked on a FIFO for
ever). Run against the code before this change (/tmp/baseline): see the commit message for which failed.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.data.locations import default_model_dir, word_order_model_dir

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 2_500_000_000  # bytes: /dev/zero read without a cap fails here instead of filling the machine
CHILD_TIMEOUT = 240  # seconds: only reached by a loader that blocks on a FIFO or misses the damage (old code)
BIG = {"json": 32 * 1024 * 1024 + 1, "npz": 256 * 1024 * 1024 + 1}  # one byte over the caps (sparse files)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "DUALDECOMP_ENCODER": "numpy", "OMP_NUM_THREADS": "1"}
    return subprocess.run(args, capture_output=True, text=True, timeout=CHILD_TIMEOUT, env=env,
                           preexec_fn=_limit_memory, cwd=ROOT, **kwargs)


# The child: for each case, put the damage in place of one file, load, put the file back; one JSON line each.
CHILD = r"""
import json, os, shutil, sys
from pathlib import Path

from dualdecomp.core.errors import ModelError

damage, base, cases = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
outside = base.parent / "outside"
outside.mkdir(exist_ok=True)


def load(loader, d):
    if loader.startswith("joint:"):
        from dualdecomp.models.configuration import JointModel
        return JointModel(d, loader[6:] or None)
    if loader == "bigram":
        from dualdecomp.models.bigram.store import load_model
        return load_model(d)
    if loader == "dependency":
        from dualdecomp.models.dependency.store import load_dependency_model
        return load_dependency_model(d)
    if loader == "neural":
        from dualdecomp.models.neural.store import load_neural_model
        return load_neural_model(d, "numpy")
    if loader == "t3":
        from dualdecomp.models.transducer.model import load_t3
        return load_t3(d)
    if loader == "order":  # the decoder: the model with the lineariser and the LM beam beside it
        from dualdecomp.models.ordering.decoding.load import load_decoder
        return load_decoder(d)
    raise AssertionError(loader)


for rel, loader, directory, size in cases:
    target = base / rel
    aside = outside / rel.replace("/", "_")
    os.replace(target, aside)
    try:
        if damage == "zero":
            target.symlink_to("/dev/zero")
        elif damage == "fifo":
            os.mkfifo(target)
        elif damage == "link":  # a symlink to an intact copy outside the model directory
            target.symlink_to(aside)
        elif damage == "big":  # sparse: one byte over the cap, costs no disk
            with open(target, "wb") as fh:
                fh.truncate(size)
        try:
            load(loader, base / directory)
            print(json.dumps({"rel": rel, "error": None, "message": ""}), flush=True)
        except ModelError as exc:
            print(json.dumps({"rel": rel, "error": "ModelError", "message": str(exc)}), flush=True)
        except BaseException as exc:
            row = {"rel": rel, "error": type(exc).__name__, "message": str(exc)[:300]}
            print(json.dumps(row), flush=True)
    finally:
        target.unlink()
        os.replace(aside, target)
"""

# (file, loader, the directory given to the loader, cap kind); the loaders that read each file
COMPRESSION_CASES = [
    ("config.json", "joint:", ".", "json"),
    ("configs/lm-only.json", "joint:lm-only", ".", "json"),
    ("configs/neural-mcdonald.json", "joint:neural-mcdonald-news", ".", "json"),  # a base
    ("MANIFEST.json", "joint:lm-only", ".", "json"),
    ("model.json", "bigram", ".", "json"),
    ("weights.npz", "bigram", ".", "npz"),
    ("dependency/model.json", "dependency", "dependency", "json"),
    ("dependency/weights.npz", "dependency", "dependency", "npz"),
    ("dependency/MANIFEST.json", "dependency", "dependency", "json"),
    ("neural/model.json", "neural", "neural", "json"),
    ("neural/tokenizer.json", "neural", "neural", "json"),
    ("neural/weights.npz", "neural", "neural", "npz"),
    ("t3/model.json", "t3", "t3", "json"),
    ("t3/weights.npz", "t3", "t3", "npz"),
    ("t3/grammar.bin", "t3", "t3", "npz"),
]
ORDER_CASES = [
    ("model.json", "order", ".", "json"),
    ("weights.npz", "order", ".", "npz"),
    ("linearizer.json", "order", ".", "json"),
    ("linearizer.npz", "order", ".", "npz"),
    ("lm_beam.binary", "order", ".", None),
]
EXPECTED = {"zero": ": is a symbolic link", "link": ": is a symbolic link", "fifo": ": is a FIFO",
            "big": ": {size} bytes, over the"}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Copies of the default model and of the word-order model (the children damage and restore them)."""
    root = tmp_path_factory.mktemp("w31")
    compression, order = root / "compression" / "model", root / "order" / "model"
    shutil.copytree(default_model_dir(), compression)
    shutil.copytree(word_order_model_dir(), order)
    return {"compression": compression, "order": order}


def _damaged_loads(damage: str, model: Path, cases: list) -> list[dict]:
    chosen = [(rel, loader, d, BIG.get(kind, 0)) for rel, loader, d, kind in cases
              if damage != "big" or kind in BIG]
    try:
        proc = _run([sys.executable, "-c", CHILD, damage, str(model), json.dumps(chosen)])
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading a model with a {damage} in place of a file did not finish in {CHILD_TIMEOUT} s "
                    "(blocked on a FIFO, or the damage went unnoticed and the whole model was loaded)")
    finally:  # a child killed by the timeout left its damage in place: undo it for the next test
        for rel, *_ in chosen:
            aside = model.parent / "outside" / rel.replace("/", "_")
            if aside.exists():
                (model / rel).unlink(missing_ok=True)
                os.replace(aside, model / rel)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(chosen), proc.stderr[-2000:]
    return rows


@pytest.mark.parametrize("damage", ["zero", "fifo", "link", "big"])
@pytest.mark.parametrize("which", ["compression", "order"])
def test_every_model_file_is_a_regular_file_within_its_cap(models, damage, which) -> None:
    model = models[which]
    cases = COMPRESSION_CASES if which == "compression" else ORDER_CASES
    for row in _damaged_loads(damage, model, cases):
        assert row["error"] == "ModelError", row
        size = next(BIG.get(kind, 0) for rel, _, _, kind in cases if rel == row["rel"])
        expected = EXPECTED[damage].format(size=size)
        assert f"{model / row['rel']}{expected}" in row["message"], row
        assert "\n" not in row["message"]


def test_config_linked_to_dev_zero_exits_3_naming_it(models, tmp_path) -> None:
    """The issue's reproduction: a configuration symlinked to /dev/zero (exit 4, out of memory, before)."""
    model = tmp_path / "model"
    model.mkdir()
    for name in ("config.json", "model.json", "weights.npz", "lm.binary"):
        shutil.copyfile(models["compression"] / name, model / name)
    (model / "configs").mkdir()
    (model / "configs" / "x.json").symlink_to("/dev/zero")
    source = tmp_path / "in.txt"
    source.write_text("The cat sat on the mat .\n", encoding="utf-8")
    proc = _run([sys.executable, "-m", "dualdecomp.app.cli", "compress", "--model", str(model), "--config",
                 "x", "--input", str(source), "--output", str(tmp_path / "out.jsonl")])
    assert proc.returncode == 3, proc.stderr
    assert f"{model / 'configs' / 'x.json'}: is a symbolic link" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_lm_over_its_cap_is_refused(monkeypatch) -> None:
    from dualdecomp.core import model_files
    from dualdecomp.models.lm import model as lm_model

    small = model_files.FileLimit("KenLM file", 1000)
    monkeypatch.setattr(lm_model, "LM_FILE", small)
    path = default_model_dir() / "lm.binary"
    with pytest.raises(ModelError, match=f"{path}: .* over the 1000 bytes limit of a KenLM file"):
        lm_model.load_lm(path)


def test_a_file_named_on_the_command_line_may_be_a_symlink_but_not_a_device(tmp_path) -> None:
    from dualdecomp.models.lm.model import load_lm

    link = tmp_path / "current.binary"
    link.symlink_to(default_model_dir() / "lm.binary")
    assert load_lm(link).order == 3  # --lm current.binary: a user's link is followed
    zero = tmp_path / "zero.binary"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ModelError, match=f"{zero}: is a character device, not a regular file"):
        load_lm(zero)


def test_a_model_directory_reached_through_a_symlink_loads(tmp_path) -> None:
    from dualdecomp.models.configuration import JointModel

    link = tmp_path / "current"
    link.symlink_to(default_model_dir())
    assert JointModel(link, "lm-only").config.components[0].kind == "lm"


def test_an_outside_component_path_names_the_configuration_that_gives_it(tmp_path) -> None:
    from dualdecomp.models.configuration import JointModel

    d = tmp_path / "m"
    shutil.copytree(default_model_dir(), d, ignore=shutil.ignore_patterns("neural*", "t3"))
    write_manifest(d)  # the files left out are no longer listed (all listed files are checked first)
    shutil.copyfile(d / "lm.binary", tmp_path / "elsewhere.binary")
    spec = json.loads((d / "configs" / "lm-only.json").read_text())
    spec["components"][0]["path"] = "../elsewhere.binary"
    (d / "configs" / "x.json").write_text(json.dumps(spec))
    with pytest.raises(ModelError) as info:
        JointModel(d, "x")
    assert str(info.value).startswith(f"{d / 'configs' / 'x.json'}: path '../elsewhere.binary' must lie "
                                      "inside")
    # a configuration that takes its components from its base: the base is the file to fix
    (d / "configs" / "y.json").write_text(json.dumps({"base": "x", "name": "y"}))
    with pytest.raises(ModelError) as info:
        JointModel(d, "y")
    assert str(info.value).startswith(f"{d / 'configs' / 'x.json'}: path '../elsewhere.binary'")
    # a component that is a symlink (even to a file inside) is refused too, naming the configuration
    (d / "link.binary").symlink_to(d / "lm.binary")
    spec["components"][0]["path"] = "link.binary"
    (d / "configs" / "x.json").write_text(json.dumps(spec))
    with pytest.raises(ModelError) as info:
        JointModel(d, "x")
    assert str(info.value).startswith(f"{d / 'link.binary'}: is a symbolic link (refused: a file or "
                                      f"directory that a model names, here {d / 'configs' / 'x.json'}")


def test_the_lm_beam_files_must_lie_inside_the_word_order_model(tmp_path) -> None:
    from dualdecomp.models.ordering.bag_lm.search import load_lm_beam

    d = tmp_path / "order"
    d.mkdir()
    shutil.copyfile(default_model_dir() / "lm.binary", tmp_path / "lm.binary")
    meta = {"decode": {"lm_beam": {"beam": 2, "default": False, "lm": "../lm.binary"}}}
    with pytest.raises(ModelError, match=f"{d / 'model.json'}: path '../lm.binary' must lie inside"):
        load_lm_beam(d, meta)


def test_a_missing_manifest_is_said_once_in_one_line(tmp_path, capsys) -> None:
    from dualdecomp.app.compressor import Compressor

    d = tmp_path / "m"
    shutil.copytree(default_model_dir(), d, ignore=shutil.ignore_patterns("neural*", "t3"))
    (d / "MANIFEST.json").unlink()
    (d / "dependency" / "MANIFEST.json").unlink()
    Compressor(d, "mcdonald-dependency-lm")
    Compressor(d, "mcdonald-lm")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert f"{d} has no MANIFEST.json (no checksum manifest): the model is loaded unchecked" in err
    # a model directory of its own (here: a subdirectory loaded alone) is named once too
    from dualdecomp.models.dependency.store import load_dependency_model

    e = tmp_path / "dep"
    shutil.copytree(default_model_dir() / "dependency", e)
    (e / "MANIFEST.json").unlink()
    load_dependency_model(e)
    load_dependency_model(e)
    err = capsys.readouterr().err
    assert err == f"dualdecomp: note: {e} has no MANIFEST.json (no checksum manifest): the model is loaded " \
                  "unchecked\n"


def test_a_well_formed_model_still_loads_without_a_note(capsys) -> None:
    from dualdecomp.models.configuration import JointModel

    JointModel(default_model_dir(), "mcdonald-dependency-lm")
    assert capsys.readouterr().err == ""


def test_unknown_config_name_is_bad_input_listing_the_names(tmp_path) -> None:
    from dualdecomp.models.configuration import JointModel

    with pytest.raises(InputError, match=r"unknown configuration 'nosuch' .*configurations here: .*lm-only"):
        JointModel(default_model_dir(), "nosuch")
    with pytest.raises(InputError, match=r"invalid configuration name '\.\./config' \(configurations here"):
        JointModel(default_model_dir(), "../config")
    source = tmp_path / "in.txt"
    source.write_text("The cat sat on the mat .\n", encoding="utf-8")
    proc = _run([sys.executable, "-m", "dualdecomp.app.cli", "compress", "--config", "nosuch", "--input",
                 str(source), "--output", str(tmp_path / "out.jsonl")])
    assert proc.returncode == 2, proc.stderr
    assert "unknown configuration 'nosuch'" in proc.stderr and "mcdonald-dependency-lm" in proc.stderr


def test_a_damaged_existing_configuration_is_still_exit_3(tmp_path) -> None:
    from dualdecomp.models.configuration import JointModel

    d = tmp_path / "m"
    shutil.copytree(default_model_dir(), d, ignore=shutil.ignore_patterns("neural*", "t3", "dependency"))
    write_manifest(d)  # the files left out are no longer listed (all listed files are checked first)
    (d / "configs" / "bad.json").write_text("{not json")
    with pytest.raises(ModelError, match=f"{d / 'configs' / 'bad.json'}: unreadable or not valid JSON"):
        JointModel(d, "bad")
    (d / "configs" / "orphan.json").write_text(json.dumps({"base": "gone"}))
    with pytest.raises(ModelError, match="configs/orphan.json: its base: .*gone.json: missing"):
        JointModel(d, "orphan")


def test_open_model_file_checks_the_open_handle(tmp_path) -> None:
    from dualdecomp.core.model_files import JSON_FILE, FileLimit, open_model_file, read_model_bytes

    with pytest.raises(ModelError, match="/dev/zero: is a character device"):
        open_model_file("/dev/zero", JSON_FILE, follow_symlinks=True)
    with pytest.raises(ModelError, match=f"{tmp_path}: is a directory"):
        open_model_file(tmp_path, JSON_FILE)
    with pytest.raises(FileNotFoundError):
        open_model_file(tmp_path / "none.json", JSON_FILE)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "none.json")
    with pytest.raises(ModelError, match="is a symbolic link"):
        open_model_file(dangling, JSON_FILE)
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 100)
    assert read_model_bytes(f, FileLimit("test file", 100)) == b"x" * 100
    with pytest.raises(ModelError, match=f"{f}: 100 bytes, over the 99 bytes limit of a test file"):
        read_model_bytes(f, FileLimit("test file", 99))
