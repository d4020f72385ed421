"""W3.2 item 4 (word ordering): the word-order trainers are the registry's.

``dualdecomp train --kind word-order`` / ``word-order-lineariser`` / ``word-order-lm-beam`` are found by
the registry below ``models/ordering/<sub>/trainer.py`` (named by the path, :data:`TRAINER_SPELLINGS`);
``dualdecomp order train`` / ``train-lineariser`` / ``build-lm-beam`` are aliases: the same options and
the same code, hence the same model files from tiny real runs (two sentences of the ordering fixtures;
the LM beam from a few hundred lines of the shared Google and EWT files, skipped where they or lmplz are
missing). The Makefile's word-order targets call ``train --kind``.

Before this change (HEAD 7062108) each test fails: the registry names no word-order kind (``train --kind
word-order`` is refused by its choices) and the Makefile's targets call ``dualdecomp order ...``.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from dualdecomp.app.cli import main
from dualdecomp.data.locations import CHECKOUT_ROOT
from tests.ordering_oracles import FIXTURES

ALIASES = {"word-order": ["order", "train"], "word-order-lineariser": ["order", "train-lineariser"],
           "word-order-lm-beam": ["order", "build-lm-beam"]}
SHARED_DATA = CHECKOUT_ROOT.parent / "shared" / "data"
TIMINGS = {"seconds", "sentences_per_second", "train_seconds"}  # wall-clock: not the same in two runs


def _help(argv: list[str], capsys, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", "100")
    assert main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def _options(text: str) -> dict[str, str]:
    """Each option of a help text → its help block (lines joined, spaces normalised)."""
    blocks: dict[str, str] = {}
    current = None
    for line in text.split("\n\n", 1)[1].splitlines():  # after the usage
        found = re.match(r"^  (--[\w-]+)(.*)$", line)
        if found:
            current = found.group(1)
            blocks[current] = found.group(2)
        elif current is not None and line.startswith("      "):
            blocks[current] += " " + line
        else:
            current = None
    return {k: " ".join(v.split()) for k, v in blocks.items()}


@pytest.fixture()
def tiny_treebank(tmp_path: Path) -> Path:
    """The first two sentences of the ordering fixture (complete trees), as test_order_training uses."""
    train = tmp_path / "train.conllu"
    text = (FIXTURES / "tiny.conllu").read_text().split("\n\n")
    train.write_text("\n\n".join(text[:2]) + "\n\n")
    return train


def test_the_registry_finds_the_word_order_trainers_by_their_path():
    from dualdecomp.models.registry import TRAINER_SPELLINGS, Trainer, _spelled, get_trainer, trainer_names

    assert {"word-order", "word-order-lineariser", "word-order-lm-beam"} <= set(trainer_names())
    for name, folder in (("word-order", "paper"), ("word-order-lineariser", "lineariser"),
                         ("word-order-lm-beam", "bag_lm")):
        trainer = get_trainer(name)
        assert isinstance(trainer, Trainer)
        assert trainer.train.__module__ == f"dualdecomp.models.ordering.{folder}.trainer"
        assert _spelled(f"ordering/{folder}") == name
    assert get_trainer("word-order").parameter_mixing == "guided learning"
    assert get_trainer("word-order-lineariser").parameter_mixing is None
    assert _spelled("length_bias") == "length-bias"
    assert _spelled("ordering/new_thing") == "word-order-new-thing"
    assert set(TRAINER_SPELLINGS) == {"ordering", "ordering/paper", "ordering/bag_lm"}


@pytest.mark.parametrize("kind", sorted(ALIASES))
def test_train_kind_lists_the_options_of_the_order_subcommand(kind, capsys, monkeypatch):
    """The same options with the same help texts; ``train`` adds ``--kind`` (and ``--quiet``, which
    ``order train`` has too)."""
    via_train = _options(_help(["train", "--kind", kind], capsys, monkeypatch))
    via_order = _options(_help(ALIASES[kind], capsys, monkeypatch))
    assert "--dev" in via_order and set(via_train) - set(via_order) <= {"--kind", "--quiet"}
    assert set(via_order) - set(via_train) == set()
    for option in set(via_order) - {"--quiet"}:
        assert via_train[option] == via_order[option], option
    if kind == "word-order":
        assert {"--workers", "--scheduler", "--shards", "--mixing", "--quiet"} <= set(via_order)


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _npz_members(path: Path) -> dict[str, bytes]:
    """The arrays of an .npz as stored (its zip entries carry the time they were written: not compared)."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _run(argv: list[str], capsys) -> list[dict]:
    """The command's JSON lines, with the seconds of progress logs ("..., 5 s") masked: they vary with
    the machine's load, the rest must be the same."""
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return [{**r, "log": re.sub(r"\b\d+(\.\d+)? s$", "N s", r["log"])} if isinstance(r.get("log"), str) else r
            for r in rows]


def test_word_order_training_is_the_same_by_both_commands(tiny_treebank, tmp_path, capsys):
    options = ["--train", str(tiny_treebank), "--dev", str(tiny_treebank), "--epochs", "1", "--hash-bits",
               "12", "--dev-expansions", "200", "--quiet"]
    rows = {}
    for name, argv in (("a", ["order", "train"]), ("b", ["train", "--kind", "word-order"])):
        rows[name] = _run([*argv, *options, "--out", str(tmp_path / name)], capsys)
    a, b = tmp_path / "a", tmp_path / "b"
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir()) == ["model.json",
                                                                                        "weights.npz"]
    assert _npz_members(a / "weights.npz") == _npz_members(b / "weights.npz")
    doc_a, doc_b = (json.loads((d / "model.json").read_text(encoding="utf-8")) for d in (a, b))
    assert doc_a != {} and _without_timings(doc_a) == _without_timings(doc_b)
    # one JSON line per epoch, then the report, by both
    assert [sorted(r) for r in rows["a"]] == [sorted(r) for r in rows["b"]]
    assert rows["a"][-1]["saved"] == str(a) and rows["b"][-1]["saved"] == str(b)
    assert {k: v for k, v in rows["a"][-1].items() if k != "saved"} == \
        {k: v for k, v in rows["b"][-1].items() if k != "saved"}
    assert _without_timings(rows["a"][0]) == _without_timings(rows["b"][0]) and rows["a"][0]["epoch"] == 1


def test_lineariser_training_is_the_same_by_both_commands(tiny_treebank, tmp_path, capsys):
    options = ["--train", str(tiny_treebank), "--dev", str(tiny_treebank), "--epochs", "2", "--hash-bits",
               "12", "--start", "0", "--sentences", "2", "--lm-weights", "0", "1"]
    rows = {}
    for name, argv in (("a", ["order", "train-linearizer"]),  # the old spelling: the same alias
                       ("b", ["train", "--kind", "word-order-lineariser"])):
        rows[name] = _run([*argv, *options, "--out", str(tmp_path / name)], capsys)
    for file in ("linearizer.json", "linearizer.npz"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes(), file
    assert rows["a"][:-1] == rows["b"][:-1]
    assert [r.get("lm_weight") for r in rows["a"][-3:-1]] == [0.0, 1.0]
    assert rows["b"][-1] == {**rows["a"][-1], "written": str(tmp_path / "b")}


LM_BEAM_SOURCES = ("google/train180k.tsv.gz", "google/train20k-b.tsv.gz", "google/eval.train.jsonl",
                   "ud-english-ewt/en_ewt-ud-train.conllu")


def _small_shared_data(target: Path) -> Path:
    """The first lines of the shared files the LM beam is estimated from (the real files, cut short)."""
    for name in LM_BEAM_SOURCES:
        source, out = SHARED_DATA / name, target / name
        out.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".gz"):
            with gzip.open(source, "rt", encoding="utf-8") as f:
                lines = [next(f) for _ in range(300)]
            with gzip.GzipFile(out, "wb", mtime=0) as g:
                g.write("".join(lines).encode("utf-8"))
        elif name.endswith(".conllu"):
            blocks = source.read_text(encoding="utf-8").split("\n\n")[:200]
            out.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
        else:
            with source.open(encoding="utf-8") as f:
                out.write_text("".join(next(f) for _ in range(100)), encoding="utf-8")
    return target


def test_lm_beam_building_is_the_same_by_both_commands(tiny_treebank, tmp_path, capsys):
    if not all((SHARED_DATA / name).is_file() for name in LM_BEAM_SOURCES):
        pytest.skip(f"shared data not available: {SHARED_DATA}")
    from dualdecomp.models.lm.build import find_programs

    try:
        find_programs()
    except Exception as exc:  # noqa: BLE001 - any reason lmplz cannot be found
        pytest.skip(f"KenLM's lmplz is not available (make lmplz; DUALDECOMP_LMPLZ_DIR): {exc}")
    data = _small_shared_data(tmp_path / "data")
    assert main(["order", "train", "--train", str(tiny_treebank), "--dev", str(tiny_treebank), "--out",
                 str(tmp_path / "model"), "--epochs", "1", "--hash-bits", "12", "--dev-expansions", "200",
                 "--quiet"]) == 0
    for name in ("a", "b"):
        shutil.copytree(tmp_path / "model", tmp_path / name)
    capsys.readouterr()
    options = ["--dev", str(tiny_treebank), "--data-dir", str(data), "--order", "3", "--cased-order", "2",
               "--beams", "4", "8", "--start", "0", "--sentences", "2"]
    rows = {}
    for name, argv in (("a", ["order", "build-lm-beam"]), ("b", ["train", "--kind", "word-order-lm-beam"])):
        rows[name] = _run([*argv, *options, "--model", str(tmp_path / name)], capsys)
    files = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert {"lm_beam.binary", "lm_beam_cased.binary", "lm_beam.json", "model.json"} <= set(files)
    assert files == sorted(p.name for p in (tmp_path / "b").iterdir())
    for file in files:
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes(), file
    assert rows["a"] == rows["b"] and "lm_beam" in rows["a"][-1]
    stored = json.loads((tmp_path / "b" / "model.json").read_text(encoding="utf-8"))["meta"]["decode"]
    assert stored["lm_beam"]["beam"] == rows["b"][-1]["lm_beam"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("target", "kind"), [("word-order-model", "word-order"),
                                              ("word-order-lineariser", "word-order-lineariser"),
                                              ("word-order-lm-beam", "word-order-lm-beam")])
def test_the_makefile_targets_train_through_train_kind(target, kind):
    out = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=CHECKOUT_ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert f"dualdecomp train --kind {kind} " in out
    assert "dualdecomp order train" not in out and "dualdecomp order build-lm-beam" not in out
