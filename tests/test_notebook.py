"""notebooks/quickstart.ipynb runs top to bottom (its cells assert what they show)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_executes() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOK.parent)}}
    NotebookClient(nb, timeout=600, kernel_name="python3", resources=resources).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "certified=True" in text
