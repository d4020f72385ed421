"""The architecture's layers point down only, and nothing imports in a circle (W2.1, W3.2).

Layers, lowest first: core → data → solvers → engine → models → app (docs/architecture.md). Every
``import`` / ``from … import`` of a ``dualdecomp`` module, at module level or inside a function, is read
with ``ast``. Failures: an import of a higher layer; a circle of imports between modules, imports inside
functions included (only those under ``if TYPE_CHECKING:``, never executed, are left out); a circle
between folders; a component folder (``models/<x>/``, ``solvers/<x>/``) importing one of another
component's modules instead of its package (its ``__init__`` is its public API). The test run's summary
prints the biggest folder and the number of imports that cross layers (:func:`architecture_report`).
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


# --------------------------------------------------------------------------------------------------
# W3.2: imports inside functions count, circles between folders, components through their __init__
# --------------------------------------------------------------------------------------------------


def type_checking_lines(tree: ast.Module) -> set[int]:
    """Line numbers of the imports under ``if TYPE_CHECKING:`` (annotations only: never executed)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Import | ast.ImportFrom):
                        out.add(sub.lineno)
    return out


def executed_imports(module: str) -> list[tuple[str, int]]:
    """(imported module, line) of every import of ``module`` that runs: at module level or inside a
    function (a lazy import is an import all the same), except those under ``if TYPE_CHECKING:``."""
    path = MODULES[module]
    skipped = type_checking_lines(ast.parse(path.read_text(encoding="utf-8")))
    return [(target(name), line) for name, line, _ in imports(path, module) if line not in skipped]


def folder(module: str) -> str:
    """The package (folder) a module belongs to: itself for a package's ``__init__``."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


COMPONENT_LAYERS = ("dualdecomp.models", "dualdecomp.solvers")


def component(module: str) -> str | None:
    """The component folder of a module (``dualdecomp.models.bigram``, ``dualdecomp.solvers.ngram``, ...:
    a package directly under models/ or solvers/), or None."""
    for layer_name in COMPONENT_LAYERS:
        if module.startswith(layer_name + "."):
            top = ".".join(module.split(".")[:3])
            if top in MODULES and MODULES[top].name == "__init__.py":
                return top
    return None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of a directed graph (its nodes, the first repeated at the end), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def module_graph() -> dict[str, set[str]]:
    """Every executed import between two modules (a package's own ``__init__`` left out: importing a
    submodule runs its parents first, which is no circle of concern)."""
    graph: dict[str, set[str]] = {}
    for m in MODULES:
        graph[m] = {n for n, _ in executed_imports(m) if n != m and not m.startswith(n + ".")}
    return graph


def test_no_import_cycle_lazy_imports_included():
    cycle = find_cycle(module_graph())
    assert cycle is None, "import cycle (imports inside functions count): " + " -> ".join(cycle)


def folder_graph() -> dict[str, set[str]]:
    """Folder → the folders its modules import (a folder and its own parents excluded)."""
    graph: dict[str, set[str]] = {}
    for m, targets in module_graph().items():
        a = folder(m)
        for n in targets:
            b = folder(n)
            if a != b and not a.startswith(b + ".") and not b.startswith(a + "."):
                graph.setdefault(a, set()).add(b)
    return graph


def test_no_cycle_between_folders():
    cycle = find_cycle(folder_graph())
    assert cycle is None, "folders import each other: " + " -> ".join(cycle)


def imported_modules_as_written(module: str) -> list[tuple[str, int]]:
    """(module named by the statement, line) of every executed ``dualdecomp`` import of ``module``: the
    ``from X import ...`` statement's X (whatever the names are), or ``import X``'s X."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = type_checking_lines(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
    return [(target(n), line) for n, line in out if n.startswith("dualdecomp.")]


def test_components_use_each_other_through_their_public_init():
    """A component folder (``models/<x>/``, ``solvers/<x>/``) imports another component's package only,
    never one of its modules: the package's ``__init__`` is its public API."""
    reached_in = set()
    for m in MODULES:
        mine = component(m)
        if mine is None:
            continue
        for n, line in imported_modules_as_written(m):
            theirs = component(n)
            if theirs is not None and theirs != mine and n != theirs:
                reached_in.add(f"{MODULES[m].relative_to(ROOT)}:{line} imports {n} (use {theirs})")
    assert not reached_in, "imports of another component's internals:\n" + "\n".join(sorted(reached_in))


def architecture_report() -> str:
    """The biggest folder (lines of Python) and the number of imports that cross layers, for the test
    run's summary (so a reviewer sees them move)."""
    lines: dict[str, int] = {}
    for m, path in MODULES.items():
        lines[folder(m)] = lines.get(folder(m), 0) + len(path.read_text(encoding="utf-8").splitlines())
    biggest = max(lines, key=lines.get)
    total = sum(lines.values())
    crossing = 0
    for m in MODULES:
        mine = layer(m)
        crossing += sum(1 for n, _ in executed_imports(m)
                        if mine is not None and layer(n) not in (None, mine))
    return (f"architecture: biggest folder {biggest} ({lines[biggest]} of {total} lines, "
            f"{100 * lines[biggest] / total:.0f} %); {crossing} imports cross layers (all downward)")
