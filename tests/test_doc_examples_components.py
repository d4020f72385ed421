"""The examples of docs/components/*.md print what the page shows (tests/test_doc_examples.py's runner).

tests/test_doc_examples.py reads README.md and docs/*.md; the pages one folder down (one per component
kind, and "Bring your own component") run here with the same runner, each page in one temporary directory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.doc_examples import read_blocks
from tests.test_doc_examples import TIMEOUT, _env, _run_console, _run_python, _runnable, _workdir

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs" / "components").glob("*.md"))


def test_the_component_pages_have_examples_to_run() -> None:
    assert (ROOT / "docs" / "components" / "your-own.md") in [p for p in PAGES if _runnable(p)]


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=lambda p: p.name)
def test_component_page_examples(page: Path, tmp_path: Path) -> None:
    cwd = _workdir(tmp_path)
    failures: list[str] = []
    for block in read_blocks(page):
        if block.skip is not None or block.lang not in ("console", "python"):
            continue
        if block.setup:
            done = subprocess.run(["bash", "-c", block.setup], cwd=cwd, env=_env(), capture_output=True,
                                  text=True, timeout=TIMEOUT)
            assert done.returncode == 0, f"{block.where}: setup failed\n{done.stderr}"
        failures += _run_console(block, cwd) if block.lang == "console" else _run_python(block, cwd)
    assert not failures, "\n\n".join(failures)
