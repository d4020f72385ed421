"""One spelling, British -ise (W3.2 item 3; docs/glossary.md), and the old -ize names users may have used
still work.

``test_the_project_spells_ise`` reads the project's own files (.py, .md, .toml, the Makefile, and the
notebooks' sources and text outputs; their paths too), outside hidden and build folders, and fails on a
word ending in -ize, -izes, -ized, -izer(s), -izing or -ization(s) (or -yze...) unless it is
- a third-party name (``THIRD_PARTY``, each with its owner), or
- a published name kept on purpose (``PUBLISHED``: file formats, values of output rows, old spellings of
  options kept as hidden aliases), or
- on a line that says ``old spelling kept`` (a deprecated Python alias, explained on that line), or
- in a file of ``PENDING`` (files another W3.2 change was editing when the rest was renamed).
``docs/CHANGELOG.md`` is history (it names things as they were) and this file lists the names: neither is
read. Run on the code before the rename (e147aff; also 28b2c46) it fails, on 43 files; so do the tests of
the old spellings except the benchmark's (the new names did not exist; the old ones were the names then).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from dualdecomp.app.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".toml", ".ipynb"}
NOT_READ = {"docs/CHANGELOG.md", "tests/test_spelling.py"}

IZE = re.compile(r"[a-z]+[iy]z(?:e|es|ed|er|ers|ing|ation|ations)")
NOT_IZE = re.compile(  # "size" and its compounds (maxsize, figsize, RLIMIT_FSIZE; not emphasize), prize, ...
    r"(?:|.*[^aeiou]|re)siz(?:e|es|ed|ing)|priz(?:e|es|ed)|seiz(?:e|es|ed|ing)|maize")
THIRD_PARTY = {
    "tokenizer", "tokenizers",  # spaCy's nlp.tokenizer, the tokenizers library, tokenizer.json, sacrebleu's
    "normalizer", "normalizers",  # the tokenizers library's normalizers
    "lemmatizer",  # a spaCy pipe
    "vectorize",  # numba.vectorize
    "parametrize",  # pytest.mark.parametrize
    "derandomize",  # hypothesis' settings
    "capitalize",  # str.capitalize
    "initializer", "initializers",  # ONNX graph initializers (onnxruntime's add_external_initializers)
}
PUBLISHED = re.compile("|".join([
    # third-party compound names
    r"DynamicQuantizeMatMul", r"LayerNormalization", r"GraphOptimizationLevel", r"graph_optimization_level",
    r"SerializeToString", r"LpMaximize", r"is_pretokenized", r"complementizer/", r"data/vectorized/",
    # file formats: the lineariser's files and format tag, the neural scorer's model.json key
    r"linearizer\.(?:json|npz)\b", r"head-domain-linearizer/1", r'"quantized"',
    # values of output rows: dualdecomp order's method and note, the word-order benchmark's fields
    r"head-domain linearizer \((?:exact|approximate|\d+ of \d+ head domains)",
    r"\blinearizer_(?:lm_weight|states|exact_vs_beam)\b",
    # old spellings still accepted (hidden aliases), as the docs name them
    r'"linearizer(?:-exact)?"', r"--no-linearizer\b", r"--linearizer-states\b", r"\btrain-linearizer\b",
    r"--second-stage linearizer\b", r"\bword-order-linearizer\b",
    # corpus text quoted as written: a training sentence of ../shared/data/rewriting (valid-0740), and the
    # embedded rewriter's output of it
    r"[Aa]utomotive customizer", r"\bcar customizer\b",
    # a dev sentence of ../shared/data/rewriting quoted as written ("... is an Anglicization of the Manx
    # name"): the rewriter's article agreement (docs/rewriting.md) shows it
    r"\ban? Anglicization\b",
    # titles of published papers, cited as written
    r"Optimizing statistical machine translation",
]))
MARKER = "old spelling kept"
PENDING: dict[str, set[str]] = {}  # -ize words left in a file another change owned: none now


def project_files() -> list[Path]:
    """The project's own text files (hidden, cache and build folders left out)."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "build", "dist")
                   and not d.endswith(".egg-info")]
        for name in files:
            path = Path(folder) / name
            if path.suffix in SUFFIXES or name == "Makefile":
                found.append(path)
    return sorted(found)


def lines_of(path: Path) -> list[str]:
    """The lines a reader sees: a notebook's cell sources and text outputs, any other file's text."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        return text.splitlines()
    out = []
    for cell in json.loads(text)["cells"]:
        out += "".join(cell.get("source", "")).splitlines()
        for output in cell.get("outputs", []):
            for text in (output.get("text", ""), output.get("data", {}).get("text/plain", "")):
                out += "".join(text).splitlines()  # nbformat: a string or a list of lines
    return out


def ize_words(line: str) -> list[str]:
    """The -ize words of a line (camelCase and snake_case split), published names left out."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", PUBLISHED.sub(" ", line))
    return [w for w in (w.lower() for w in words) if IZE.fullmatch(w) and not NOT_IZE.fullmatch(w)]


def test_the_word_rule_finds_ize_words_and_leaves_the_others():
    assert ize_words("class RuleFeaturizer; LINEARIZER_FILES; we optimize") == ["featurizer", "linearizer",
                                                                                "optimize"]
    assert ize_words("the linearizer.json file; its size; the linearisation; LpMaximize") == []
    assert ize_words("maxsize, figsize, RLIMIT_FSIZE, resized; to emphasize") == ["emphasize"]
    assert ize_words("spaCy's nlp.tokenizer") == ["tokenizer"] and "tokenizer" in THIRD_PARTY


def test_the_project_spells_ise():
    found = []
    for path in project_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in NOT_READ:
            continue
        allowed = THIRD_PARTY | PENDING.get(rel, set())
        for number, line in enumerate([rel, *lines_of(path)]):
            if MARKER in line:
                continue
            bad = [w for w in ize_words(line) if w not in allowed]
            if bad:
                found.append(f"{rel}:{number or 'path'}: {', '.join(bad)}: {line.strip()[:100]}")
    assert not found, f"{len(found)} lines with -ize words (we spell -ise):\n" + "\n".join(found[:40])


# --- the old spellings users may have used ---------------------------------------------------------------

def _parsed(argv: list[str]) -> dict:
    return vars(build_parser().parse_args(argv))


@pytest.mark.parametrize("old, new", [
    (["order", "--no-linearizer", "--linearizer-states", "7", "--second-stage", "linearizer"],
     ["order", "--no-lineariser", "--lineariser-states", "7", "--second-stage", "lineariser"]),
    (["order", "evaluate", "--data", "d.conllu", "--no-linearizer", "--linearizer-states", "3"],
     ["order", "evaluate", "--data", "d.conllu", "--no-lineariser", "--lineariser-states", "3"]),
    (["order", "train-linearizer", "--train", "t", "--dev", "d", "--out", "o"],
     ["order", "train-lineariser", "--train", "t", "--dev", "d", "--out", "o"]),
    (["lm", "build", "c.txt", "out.binary", "--no-quantize"],
     ["lm", "build", "c.txt", "out.binary", "--no-quantise"]),
])
def test_the_old_option_spellings_parse_as_the_new(old, new):
    assert _parsed(old) == _parsed(new)


def test_the_old_option_spellings_are_not_in_the_help(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["order", "--help"])
    shown = capsys.readouterr().out
    assert "--no-lineariser" in shown and "--no-linearizer" not in shown
    assert "--linearizer-states" not in shown and "{tree-beam,lineariser}" in shown


def test_the_python_names_the_docs_showed_still_work():
    from dualdecomp.data.locations import word_order_model_dir
    from dualdecomp.models.ordering.decoding.config import ExactConfig
    from dualdecomp.models.ordering.decoding.load import load_decoder

    with pytest.warns(DeprecationWarning):
        old = ExactConfig(max_states=None, beam=64, linearizer=True, second_stage="linearizer")
    assert old == ExactConfig(max_states=None, beam=64, lineariser=True, second_stage="lineariser")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names and dataclasses.replace warn nothing
        assert ExactConfig(lineariser=True).lineariser
    decoder = load_decoder(word_order_model_dir(), lm_beam=False)
    with pytest.warns(DeprecationWarning):
        assert decoder.linearizer is decoder.lineariser is not None


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_old_make_target_runs_the_new_one():
    def dry(target):
        return subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True,
                              timeout=60).stdout

    recipe = dry("word-order-lineariser")
    assert "train --kind word-order-lineariser" in recipe and dry("word-order-linearizer") == recipe


def test_the_benchmark_takes_the_old_spellings_and_keeps_its_row_names(tmp_path):
    from tests.test_benchmarks import word_order_command

    out = subprocess.run([*word_order_command(tmp_path), "--sentences", "2", "--conditions", "all",
                          "--what", "linearizer", "linearizer-exact", "--linearizer-states", "100000",
                          "--second-stage", "linearizer"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [(r["measure"], r.get("tree_beam")) for r in rows] == [("condition", "linearizer"),
                                                                  ("linearizer_exact_vs_beam", None)]
    assert all(r["linearizer_states"] == 100000 and "linearizer_lm_weight" in r for r in rows)
