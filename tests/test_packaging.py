"""What `pip install` puts into site-packages: one namespace, every package, every shipped data file."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

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


# --- W3.4: metadata and a build without warnings ----------------------------------------------------------

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]


def test_metadata_is_filled_in():
    """Licence (an SPDX expression, the code's: MIT), its files, authors and classifiers (before: none)."""
    assert PROJECT["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert set(PROJECT["license-files"]) >= {"LICENSE", "NOTICE.md"}
    assert all((ROOT / f).is_file() for f in PROJECT["license-files"])
    assert PROJECT["authors"] == [{"name": "dualdecomp developers"}]
    classifiers = PROJECT["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    # a licence classifier beside an SPDX expression is refused by setuptools >= 77 (PEP 639)
    assert not any(c.startswith("License ::") for c in classifiers)
    # the SPDX form needs setuptools >= 77 to build
    requires = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert requires and re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", requires[0])
    assert int(re.match(r"setuptools>=(\d+)", requires[0]).group(1)) >= 77


def test_project_urls_are_absolute():
    """No invented or relative URL (a path such as docs/ is no Project-URL: PyPI refuses it)."""
    for name, url in PROJECT.get("urls", {}).items():
        assert re.match(r"https://[\w.-]+\.\w+/", url), (name, url)


def test_data_folders_are_not_packages():
    """The data folders (data/corpora, data/default_model/...) ship through package-data alone:
    ``include-package-data`` on made setuptools warn once for each (eight warnings on ``pip install``)."""
    assert SETUPTOOLS["include-package-data"] is False


@pytest.mark.slow
def test_the_wheel_builds_without_warnings_and_carries_the_licences(tmp_path):
    """``pip wheel`` (an isolated build with the build-system's setuptools): no warning (before: eight
    "Package 'dualdecomp.data.corpora' is absent from the `packages` configuration"), the licence metadata
    and both licence files in the wheel."""
    import sys
    import zipfile

    run = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp_path)],
                         capture_output=True, text=True, check=False, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "warn" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
    wheel, = tmp_path.glob("dualdecomp-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in meta and "Author: dualdecomp developers" in meta
    assert {"License-File: LICENSE", "License-File: NOTICE.md"} <= set(meta.splitlines())
    licences = {n.rsplit("/", 1)[-1] for n in names if ".dist-info/licenses/" in n}
    assert licences == {"LICENSE", "NOTICE.md"}
