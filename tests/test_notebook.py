"""The notebooks run top to bottom (their cells assert what they show) and print what they promise."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

# notebook -> text its outputs must contain
EXPECTED = {
    "quickstart.ipynb": ["certified=True"],
    "custom_components.ipynb": ["certified=True", "ILP=", "shipped + my unary + a verb"],
    "subtitles.ipynb": ["chars, certified=True"],
    "evaluation_curve.ipynb": ["at ratio 0.8: CR", "certified: True"],
    "rewriting.ipynb": ["certified=True", "chars, certified=True", "rules rewrite something"],
    "word_ordering.ipynb": ["given heads and tags respected", "certified=True",
                            "certificate checked by brute force",
                            "certificate checked by brute force over 288 linearisations"],
}


def test_every_notebook_is_tested() -> None:
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_executes(name: str) -> None:
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # run from a clean state: the stored outputs must not count
        if cell.cell_type == "code":
            cell.outputs = []
    resources = {"metadata": {"path": str(NOTEBOOKS)}}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    for expected in EXPECTED[name]:
        assert expected in text, (name, expected)
    if name == "evaluation_curve.ipynb":  # the two plots are shown as PNG images
        assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
