"""Griffe extension: the API reference shows Sphinx roles in docstrings as links (or code), not as text.

Configured in mkdocs.yml under the python handler's ``extensions``. When the first package of the reference
loads, it also loads the other top-level folders of the namespace (``packages``), so that a role in
``dualdecomp`` can point into ``solvers``, then rewrites every docstring of every loaded module with
:func:`sphinx_roles.convert`. A target is looked up, in order, as a full path (after ``namespaces``
maps ``dualdecomp.solvers.x`` to the folder ``solvers.x`` that the reference reads), in the scope of the
docstring's object (its members, its parents', its module's imports), and in a package's lazy-attribute
table (``dualdecomp._LAZY``); it links to the object's canonical path, where the reference renders it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

from griffe import Extension, GriffeLoader, Module, Object

_spec = importlib.util.spec_from_file_location("sphinx_roles", Path(__file__).with_name("sphinx_roles.py"))
sphinx_roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sphinx_roles)

_DONE = "sphinx_roles_converted"


class SphinxRoles(Extension):
    """Rewrite Sphinx roles in every docstring as optional autorefs references.

    Parameters
    ----------
    packages : list of str
        The top-level packages to load together, so that references between them resolve.
    namespaces : dict of str to str
        Import-path prefixes mapped to the package paths the reference reads
        (``{"dualdecomp.solvers": "solvers"}``).
    lazy_table : str
        The name of a package-level dict ``{name: module}`` of lazily loaded public names.
    """

    def __init__(self, packages: list[str] | None = None, namespaces: dict[str, str] | None = None,
                 lazy_table: str = "_LAZY") -> None:
        super().__init__()
        self.packages = list(packages or [])
        self.namespaces = dict(namespaces or {})
        self.lazy_table = lazy_table
        self._busy = False

    def on_package(self, *, pkg: Module, loader: GriffeLoader, **kwargs: Any) -> None:
        """Load the sibling packages, then convert every docstring loaded so far."""
        if self._busy:
            return
        self._busy = True
        try:
            for name in self.packages:
                if name not in loader.modules_collection:
                    loader.load(name, try_relative_path=False)
            for module in list(loader.modules_collection.members.values()):
                self._convert_tree(module, loader)
        finally:
            self._busy = False

    # ------------------------------------------------------------------------------------------------------
    def _convert_tree(self, obj: Object, loader: GriffeLoader) -> None:
        if obj.extra.get("sphinx_roles", {}).get(_DONE):
            return
        obj.extra.setdefault("sphinx_roles", {})[_DONE] = True
        if obj.docstring is not None:
            obj.docstring.value = sphinx_roles.convert(obj.docstring.value,
                                                       lambda target: self._resolve(obj, target, loader))
        for member in list(obj.members.values()):
            if not member.is_alias:
                self._convert_tree(member, loader)

    def _lookup(self, path: str, loader: GriffeLoader) -> str | None:
        for prefix, replacement in self.namespaces.items():
            if path == prefix or path.startswith(prefix + "."):
                path = replacement + path[len(prefix):]
                break
        try:
            found = loader.modules_collection[path]
            if found.is_alias:
                found = found.final_target
            return found.canonical_path
        except Exception:  # noqa: BLE001 - KeyError, alias resolution errors: not a known object
            pass
        top, _, rest = path.partition(".")
        head, _, tail = rest.partition(".")
        lazy = self._lazy(top, loader)
        if head in lazy and lazy[head] != top:
            return self._lookup(".".join(filter(None, [lazy[head], head, tail])), loader)
        return None

    def _lazy(self, package: str, loader: GriffeLoader) -> dict[str, str]:
        try:
            table = loader.modules_collection[package].members[self.lazy_table]
            value = ast.literal_eval(str(table.value))
        except Exception:  # noqa: BLE001 - no table, or not a literal
            return {}
        return value if isinstance(value, dict) else {}

    def _resolve(self, obj: Object, target: str, loader: GriffeLoader) -> str | None:
        found = self._lookup(target, loader)
        if found:
            return found
        head, _, tail = target.partition(".")
        try:
            scoped = obj.resolve(head)
        except Exception:  # noqa: BLE001 - NameResolutionError and friends
            scoped = None
        if scoped:
            found = self._lookup(f"{scoped}.{tail}" if tail else scoped, loader)
            if found:
                return found
        package = obj.path.split(".", 1)[0]
        if head in (lazy := self._lazy(package, loader)):
            return self._lookup(".".join(filter(None, [lazy[head], head, tail])), loader)
        return None
