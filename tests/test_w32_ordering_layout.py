"""Word ordering is a task of the shared shape (W3.2 item 1): no import circle through its modules or
between its folders, counting imports inside functions and under ``TYPE_CHECKING``; its input reading
imports no model; the shipped model directory loads as one decoder.

Run on the code of cc6e488 (before W3.2 item 1) all three fail: the six modules model, lineariser,
lineariser_exact (both spelt -ize then), lm_feature, lm_beam and search were one circle (model ->
lineariser -> lm_feature -> model through a ``TYPE_CHECKING`` import; model -> lm_beam -> search -> model
through a lazy one), the flat folder had no subfolders, and there was no decoder object
(``OrderingModel`` carried the lineariser and the LM beam).
"""

from __future__ import annotations

from tests.test_layers import MODULES, imports, target

TASK = ("dualdecomp.data.ordering", "dualdecomp.solvers.ordering", "dualdecomp.models.ordering",
        "dualdecomp.models.evaluation")


def in_task(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in TASK)


def graph() -> dict[str, set[str]]:
    """Every dualdecomp module's imports: module level, inside functions and under TYPE_CHECKING alike."""
    out = {}
    for module, path in MODULES.items():
        deps = {target(name) for name, _, _ in imports(path, module)}
        out[module] = {d for d in deps if d in MODULES and d != module and not module.startswith(d + ".")}
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def folder(module: str) -> str:
    """The folder of a task module: models.ordering's subpackages (paper, lineariser, ...) one each."""
    parts = module.split(".")
    if module.startswith("dualdecomp.models.ordering.") and len(parts) > 4:
        return ".".join(parts[:4])
    return module if module.startswith("dualdecomp.models.ordering") else ".".join(parts[:3])


def test_no_import_circle_through_the_ordering_modules():
    circles = [c for c in cycles(graph()) if any(in_task(m) for m in c)]
    assert not circles, f"import circles (lazy and TYPE_CHECKING imports counted): {circles}"


def test_the_ordering_folders_import_each_other_without_a_circle():
    edges: dict[str, set[str]] = {}
    for module, deps in graph().items():
        if in_task(module):
            edges.setdefault(folder(module), set()).update(
                folder(d) for d in deps if in_task(d) and folder(d) != folder(module))
    assert "dualdecomp.models.ordering.paper" in edges and "dualdecomp.models.ordering.decoding" in edges
    assert not cycles(edges), f"circles between the ordering folders: {cycles(edges)}"
    # the reading of inputs is data: it imports no model
    assert not edges.get("dualdecomp.data.ordering", set()) - {"dualdecomp.data.ordering"}
    assert not {d for m, deps in graph().items() if m.startswith("dualdecomp.data.ordering")
                for d in deps if d.startswith("dualdecomp.models")}


def test_the_shipped_model_loads_as_one_decoder():
    from dualdecomp.data.locations import word_order_model_dir
    from dualdecomp.models.ordering.decoding.load import load_decoder, with_decoding_lm

    decoder = with_decoding_lm(load_decoder(word_order_model_dir()))
    assert decoder.lineariser is not None and decoder.lm_beam is not None and decoder.lm is not None
    assert not hasattr(decoder.model, "lineariser") and not hasattr(decoder.model, "lm")
