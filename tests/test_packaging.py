"""What `pip install` puts into site-packages: one namespace, every package, every shipped data file."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

from tests.test_layers import MODULES, ROOT

SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_pyproject_lists_every_package_under_one_namespace():
    """pip installs exactly the packages named in pyproject.toml: each folder with modules is one."""
    listed = set(SETUPTOOLS["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert packages == listed
    assert {k.split(".")[0] for k in listed} == {"dualdecomp"}
    assert SETUPTOOLS["package-dir"] == {"dualdecomp.solvers": "solvers", "dualdecomp.models": "models",
                                         "dualdecomp.data": "data"}


def glob_matches(path: str, pattern: str) -> bool:
    """setuptools' package-data glob: ``*`` and ``?`` never cross a ``/``."""
    regex = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path) is not None


def test_glob_semantics():
    assert glob_matches("default_model/lm.binary", "default_model/*.*")
    assert not glob_matches("default_model/t3/model.json", "default_model/*.*")


def test_every_shipped_data_file_is_package_data():
    """Every tracked non-Python file under data/ (corpora, default model, examples) is installed."""
    globs = SETUPTOOLS["package-data"]["dualdecomp.data"]
    tracked = subprocess.run(["git", "ls-files", "data"], cwd=ROOT, capture_output=True, text=True,
                             check=False).stdout.split()
    if not tracked:  # not a git checkout (e.g. an sdist): list the folder
        tracked = [str(p.relative_to(ROOT)) for p in (ROOT / "data").rglob("*") if p.is_file()]
    files = [Path(f).relative_to("data").as_posix() for f in tracked if not f.endswith((".py", ".pyc"))]
    missed = [f for f in files if "__pycache__" not in f and not any(glob_matches(f, g) for g in globs)]
    assert not missed, f"data files not installed by pip (add them to package-data): {missed}"
