"""`make word-order-lineariser` reproduces the shipped lineariser files byte for byte.

The recipe is read from the Makefile (so this test follows it when it changes) and run through the CLI on
the EWT treebank of the shared data folder (about a minute: twelve epochs over the 68 385 head domains of
EWT train, the epoch and the LM weight selected on 200 dev sentences). Skipped only where the treebank is
not there (it is not vendored: 13 MB, and only the retraining needs it).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from dualdecomp.app.cli import main
from tests.ordering_oracles import EWT

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "data" / "word_order_model"
LINEARISER_FILES = ("linearizer.json", "linearizer.npz")


def makefile_recipe(target: str) -> list[str]:
    """The arguments of the ``dualdecomp`` call in the recipe of a Makefile ``target``.

    Parameters
    ----------
    target : str
        A target whose recipe runs ``$(BIN)/dualdecomp ...`` (backslash continuations joined).

    Returns
    -------
    list of str
        The arguments after ``dualdecomp``, Make variables left as written (e.g. ``$(EWT)``).
    """
    lines = (REPO / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip().removesuffix("\\"))
    words = shlex.split(" ".join(recipe))
    return words[words.index("$(BIN)/dualdecomp") + 1:]


def test_the_recipe_is_read_from_the_makefile() -> None:
    args = makefile_recipe("word-order-lineariser")
    assert args[:3] == ["train", "--kind", "word-order-lineariser"]  # = order train-lineariser
    assert "--out" in args and args[args.index("--out") + 1] == "data/word_order_model"


@pytest.mark.skipif(not (EWT / "en_ewt-ud-train.conllu").exists(), reason=f"EWT not available: {EWT}")
def test_retraining_the_lineariser_writes_the_shipped_files(tmp_path: Path, capsys) -> None:
    args = [a.replace("$(EWT)", str(EWT)) for a in makefile_recipe("word-order-lineariser")]
    args[args.index("--out") + 1] = str(tmp_path)
    assert main(args) == 0
    capsys.readouterr()
    for name in LINEARISER_FILES:
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name
