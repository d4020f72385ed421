"""The registry of component kinds: ``kind`` name → how to load, score and weight that component.

Each kind lives in its own folder ``models/<kind>/`` (model, features, training, storage) with its exact
solver in ``solvers/``; the folder's ``kind.py`` declares a :class:`ComponentKind` named ``KIND``. The
registry finds kinds by those files, so adding a component kind touches one new file: its ``kind.py``.
Modules are imported on first use only (loading a kind imports its model code).
"""

from __future__ import annotations

import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import dualdecomp.models as models
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import ModelError
from dualdecomp.data.sentence import Sentence

__all__ = ["ComponentKind", "get_kind", "kind_names"]


@dataclass(frozen=True)
class ComponentKind:
    """How a joint configuration uses one kind of component.

    Attributes
    ----------
    name : str
        The ``kind`` of ``config.json`` (also the folder name under ``models/``).
    load : callable
        ``load(path) -> model``: the trained model at a path of the model directory.
    unit : callable
        ``unit(model, sentence) -> unit``: the model's potentials (or component) for one sentence at
        weight 1.
    weighted : callable
        ``weighted(unit, weight) -> component``: the decoding component scoring ``weight`` × the model.
    timed : bool
        Whether ``unit`` takes a third argument, the sentence's
        :class:`~dualdecomp.core.deadline.Deadline` (or None), and checks it inside its own loops (for
        kinds whose potentials can take long: the LM's KenLM lookups, the dependency features).
    """

    name: str
    load: Callable[[Path], Any]
    unit: Callable[[Any, Sentence], Any]
    weighted: Callable[[Any, float], Any]
    timed: bool = False

    def potentials(self, model: Any, sentence: Sentence, deadline: Deadline | None = None) -> Any:
        """``unit(model, sentence)``, passing ``deadline`` to a :attr:`timed` kind."""
        if self.timed:
            return self.unit(model, sentence, deadline)
        return self.unit(model, sentence)


@cache
def kind_names() -> tuple[str, ...]:
    """The registered kinds: every ``models/<kind>/kind.py``, sorted."""

    return tuple(sorted(info.name for info in pkgutil.iter_modules(models.__path__)
                        if info.ispkg and find_spec(f"dualdecomp.models.{info.name}.kind") is not None))


@cache
def get_kind(name: str) -> ComponentKind:
    """The :class:`ComponentKind` registered as ``name`` (ModelError if there is none)."""
    if name not in kind_names():
        raise ModelError(f"unknown component kind {name!r} (one of {', '.join(kind_names())})")
    kind = import_module(f"dualdecomp.models.{name}.kind").KIND
    if not isinstance(kind, ComponentKind) or kind.name != name:
        raise ModelError(f"dualdecomp.models.{name}.kind.KIND must be a ComponentKind named {name!r}")
    return kind
