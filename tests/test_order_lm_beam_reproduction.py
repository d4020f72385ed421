"""`make word-order-lm-beam` reproduces the shipped LM beam files byte for byte.

The recipe is read from the Makefile and run through the CLI into a copy of the shipped model, with the
shared data folder's Google sentence-compression files and EWT treebank (about a minute: two lmplz runs
for the order-4 LM, one for the cased LM, the beam's selection on 200 dev sentences). Skipped only where
those files are not there (they are not vendored).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dualdecomp.app.cli import main
from dualdecomp.models.lm.default import SOURCES
from tests.ordering_oracles import EWT, SHARED_DATA
from tests.test_order_lineariser_reproduction import SHIPPED, makefile_recipe

LM_BEAM_FILES = ("lm_beam.binary", "lm_beam_cased.binary", "lm_beam.json")
NEEDED = [SHARED_DATA / s for s in SOURCES] + [EWT / "en_ewt-ud-train.conllu", EWT / "en_ewt-ud-dev.conllu"]


def test_the_recipe_is_read_from_the_makefile() -> None:
    args = makefile_recipe("word-order-lm-beam")
    assert args[:3] == ["train", "--kind", "word-order-lm-beam"]  # = order build-lm-beam
    assert args[args.index("--model") + 1] == "data/word_order_model" and "--default" in args


@pytest.mark.skipif(not all(p.exists() for p in NEEDED), reason=f"shared data not available: {SHARED_DATA}")
def test_rebuilding_the_lm_beam_writes_the_shipped_files(tmp_path: Path, capsys) -> None:
    model = tmp_path / "model"
    shutil.copytree(SHIPPED, model)
    for name in LM_BEAM_FILES:
        (model / name).unlink()
    stored = json.loads((SHIPPED / "model.json").read_text(encoding="utf-8"))
    args = [a.replace("$(EWT)", str(EWT)).replace("$(SHARED)", str(SHARED_DATA))
            for a in makefile_recipe("word-order-lm-beam")]
    args[args.index("--model") + 1] = str(model)
    assert main(args) == 0
    capsys.readouterr()
    for name in LM_BEAM_FILES:
        assert (model / name).read_bytes() == (SHIPPED / name).read_bytes(), name
    rebuilt = json.loads((model / "model.json").read_text(encoding="utf-8"))
    assert rebuilt["meta"]["decode"]["lm_beam"] == stored["meta"]["decode"]["lm_beam"]
