"""The architecture's layers point down only, and the package's imports have no cycle (W2.1).

Layers, lowest first: core → data → solvers → engine → models → app (docs/architecture.md). Every
``import`` / ``from … import`` of a ``dualdecomp`` module, at module level or inside a function, is read
with ``ast``; an import of a higher layer fails the test, and so does a cycle among module-level imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "data", "solvers", "engine", "models", "app")
# the public-API façades sit above everything (they only re-export, lazily)
API = {"dualdecomp", "dualdecomp.ilp"}
FOLDERS = {"dualdecomp": ROOT / "dualdecomp", "dualdecomp.solvers": ROOT / "solvers",
           "dualdecomp.models": ROOT / "models", "dualdecomp.data": ROOT / "data"}


def package_modules() -> dict[str, Path]:
    """Every module of the installed namespace, by dotted name."""
    out = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((prefix, *parts))
            out[name.removesuffix(".__init__")] = path
    return out


MODULES = package_modules()


def layer(module: str) -> int | None:
    """The layer index of a dualdecomp module (None for the API façades)."""
    if module in API:
        return None
    assert not module.startswith("not-installed:"), f"{module[14:]}: import it as dualdecomp.{module[14:]}"
    part = module.split(".")[1]
    assert part in LAYERS, f"{module} is in no layer"
    return LAYERS.index(part)


def imports(path: Path, module: str) -> list[tuple[str, int, bool]]:
    """(imported dualdecomp module, line, at module level) for every import in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base])
            # `from pkg import mod` imports a module when pkg.mod is one
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for name in names:
            if name == "dualdecomp" or name.startswith("dualdecomp."):
                out.append((name, node.lineno, id(node) in top))
            elif name.split(".")[0] in ("solvers", "models", "data") and node.level == 0:
                out.append(("not-installed:" + name, node.lineno, id(node) in top))
    return out


def target(name: str) -> str:
    """The nearest module that exists for an imported dotted name."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def test_every_module_is_in_a_layer():
    for module in MODULES:
        layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    mine = layer(module)
    if mine is None:
        return
    upward = []
    for name, line, _ in imports(MODULES[module], module):
        theirs = layer(target(name))
        if theirs is None or theirs > mine:
            upward.append(f"{MODULES[module].relative_to(ROOT)}:{line} imports {name}")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_no_import_cycle():
    graph = {m: {target(n) for n, _, top in imports(p, m) if top} - {m} for m, p in MODULES.items()}
    # a package imports its own __init__ implicitly: edges into parents are not cycles of concern
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if n in m.split(".")[0:1] or m.startswith(n + "."):
                continue
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n):] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_import_dualdecomp_is_lazy():
    """`import dualdecomp` and the core layer load neither the engine, numba, spaCy nor PuLP."""
    import subprocess
    import sys

    code = ("import sys, dualdecomp, dualdecomp.core.errors; "
            "heavy = [m for m in ('dualdecomp.engine', 'numba', 'spacy', 'pulp', 'dualdecomp.app') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_imports_inside_functions_say_why():
    """An import inside a function is there for start-up time only, and its block says so ("# lazy: …")."""
    missing = []
    for path in MODULES.values():
        lines = path.read_text(encoding="utf-8").split("\n")
        tree = ast.parse("\n".join(lines))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in top:
                continue
            k = node.lineno - 1
            # walk up over the other imports of the same block to its comment
            while "# lazy" not in lines[k] and k > 0 and lines[k - 1].strip().startswith(
                    ("from ", "import ", "# lazy")):
                k -= 1
            if "# lazy" not in lines[k]:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not missing, "function-level imports without a '# lazy: reason' comment: " + ", ".join(missing)
