"""The registry of component kinds: ``kind`` name → how to build, train, save, load, score and weight it.

Each kind lives in its own folder ``models/<kind>/`` (model, features, training, storage) with its exact
solver in ``solvers/``; the folder's ``kind.py`` declares a :class:`ComponentKind` named ``KIND``. The
registry finds kinds by those files, so adding a component kind touches one new file: its ``kind.py``.
A training recipe that is no single kind's declares its :class:`Trainer` as ``TRAINER`` in
``models/<folder>/trainer.py``, named by its folder (``_`` written ``-``): ``cotraining`` (the bigram and
dependency models trained together with dual decomposition in the loop; its old name ``joint`` is a
hidden alias, :data:`OLD_TRAINER_NAMES`) and ``length-bias`` (a configuration's ``length_bias``
calibrated on dev corpora). A task's trainers may sit one folder deeper, ``models/<task>/<sub>/trainer.py``,
named by that path with the spellings of :data:`TRAINER_SPELLINGS` (the word-ordering task's:
``word-order`` for the paper's model, ``word-order-lineariser``, ``word-order-lm-beam``).
``dualdecomp train --kind NAME`` runs the trainer of any of them (:func:`trainer_names`). The names are
read from the folders; modules are imported on first use only (loading a kind imports its model code).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

import dualdecomp.models as models
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.sentence import Sentence

__all__ = ["OLD_TRAINER_NAMES", "TRAINER_SPELLINGS", "ComponentKind", "Trainer", "TrainingContext",
           "get_kind", "get_trainer", "kind_names", "trainer_name", "trainer_names"]

OLD_TRAINER_NAMES: dict[str, str] = {"joint": "cotraining"}
"""Old names of ``train --kind`` still accepted (not listed): old name → name. ``joint`` named the
co-training before W3.2 (it also named the configurations and the decomposition problem)."""

TRAINER_SPELLINGS: dict[str, str] = {"ordering": "word-order", "ordering/paper": "word-order",
                                     "ordering/bag_lm": "word-order-lm-beam"}
"""How a folder below ``models/`` is spelled in the name of the trainers it holds: the longest of these
paths that a ``trainer.py``'s folder starts with is replaced by its spelling, the rest of the path follows
(``ordering/lineariser`` → ``word-order-lineariser``), ``/`` and ``_`` written ``-``. The ordering task is
``word-order`` on the command line (the Makefile's targets, ``dualdecomp order``); its paper model is the
task's own model; ``bag_lm`` trains the LM beam decoder's LMs and beam."""


def _print_record(entry: dict) -> None:
    """Print ``entry`` as one JSON line on stdout (the default :attr:`TrainingContext.record`)."""
    print(json.dumps(entry), flush=True)


@dataclass(frozen=True)
class TrainingContext:
    """What the application gives a trainer (the models layer imports nothing of it).

    Attributes
    ----------
    log : callable
        ``log(message)``: a progress message (stderr; silent with ``--quiet``).
    progress_factory : callable or None
        Progress bars (:func:`dualdecomp.core.progress.progress_factory`), None for none.
    cluster : callable or None
        ``cluster()``: a context manager giving a Dask client, when parameter mixing was asked for
        (``--workers N > 1`` or ``--scheduler``, for a trainer with :attr:`Trainer.parameter_mixing`);
        None to train in this process.
    record : callable
        ``record(entry)``: a result along the way as one JSON line on stdout, also with ``--quiet`` (the
        word-order trainers' epochs and dev grids: data, not progress messages).
    """

    log: Callable[[str], None]
    progress_factory: Callable[..., Any] | None = None
    cluster: Callable[[], AbstractContextManager[Any]] | None = None
    record: Callable[[dict], None] = _print_record


@dataclass(frozen=True)
class Trainer:
    """How ``dualdecomp train --kind NAME`` trains a kind.

    Attributes
    ----------
    summary : str
        One line for ``dualdecomp train --help``.
    add_arguments : callable
        ``add_arguments(parser)``: the kind's command-line options (``--train``, ``--dev``, ``--out`` and
        its own), added to the ``train`` parser only when that kind is asked for.
    train : callable
        ``train(args, context) -> dict or None``: train from the parsed options and write the model; the
        dict, if any, is a report the command prints as one JSON line (``lm``: the build's sizes and
        counts). Errors are :class:`~dualdecomp.core.errors.DualDecompError` subclasses.
    parameter_mixing : str or None
        What trains by iterative parameter mixing on Dask (e.g. ``"bigram perceptron"``, for the help of
        ``--workers``/``--scheduler``/``--shards``/``--mixing``, which the command adds); None when the
        kind trains in one process only.
    extra : str or None
        The optional dependency extra the trainer needs (``pip install 'dualdecomp[EXTRA]'``), None when
        the default install trains it.
    """

    summary: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    train: Callable[[argparse.Namespace, TrainingContext], dict | None]
    parameter_mixing: str | None = None
    extra: str | None = None


@dataclass(frozen=True)
class ComponentKind:
    """A kind of component: how a joint configuration uses it, and how it is trained.

    Attributes
    ----------
    name : str
        The ``kind`` of ``config.json`` (also the folder name under ``models/``).
    load : callable
        ``load(path) -> model``: the trained model at a path of the model directory.
    potentials : callable
        ``potentials(model, sentence) -> potentials``: the model's potentials (or component) for one
        sentence at weight 1 (timed kinds take the deadline as a third argument, see :attr:`timed`).
    weighted : callable
        ``weighted(potentials, weight) -> component``: the decoding component scoring ``weight`` × the
        model.
    components : tuple of type
        The component classes ``weighted`` may return; their declared
        :class:`~dualdecomp.core.component.Capabilities` say what the kind's components can do
        (:meth:`takes_length_bias`, :meth:`takes_char_budget`).
    save : callable or None
        ``save(model, path)``: write a model where ``load`` reads it; None when its trainer writes the
        files itself (``lm``: lmplz writes the binary; ``neural``: the fine-tuning exports it).
    trainer : Trainer or None
        How ``dualdecomp train --kind NAME`` trains it; None for a kind that is not trained here.
    timed : bool
        Whether ``potentials`` takes a third argument, the sentence's
        :class:`~dualdecomp.core.deadline.Deadline` (or None), and checks it inside its own loops (for
        kinds whose potentials can take long: the LM's KenLM lookups, the dependency features).
    """

    name: str
    load: Callable[[Path], Any]
    potentials: Callable[..., Any]
    weighted: Callable[[Any, float], Any]
    components: tuple[type, ...] = ()
    save: Callable[[Any, Path], Any] | None = None
    trainer: Trainer | None = None
    timed: bool = False

    def potentials_of(self, model: Any, sentence: Sentence, deadline: Deadline | None = None) -> Any:
        """``potentials(model, sentence)``, passing ``deadline`` to a :attr:`timed` kind."""
        if self.timed:
            return self.potentials(model, sentence, deadline)
        return self.potentials(model, sentence)

    def takes_length_bias(self) -> bool:
        """Whether a component of this kind can take a configuration's ``length_bias``."""
        return any(_capabilities(cls).length_bias is not None for cls in self.components)

    def takes_char_budget(self) -> bool:
        """Whether a component of this kind can enforce a character budget (for some models)."""
        return any(_capabilities(cls).char_budget for cls in self.components)


def _capabilities(cls: type) -> Any:
    """The declared :class:`~dualdecomp.core.component.Capabilities` of a component class."""
    # lazy: the CLI reads the registry's kind names at start-up, without numpy (core.component loads it)
    from dualdecomp.core.component import capabilities_of

    return capabilities_of(cls)


def _packages_with(module: str) -> tuple[str, ...]:
    """The packages ``models/<name>/`` that hold ``<module>.py``, sorted (read from the folders: nothing is
    imported, so the CLI lists the kinds at start-up for free)."""
    return tuple(sorted({path.parent.name for folder in models.__path__
                         for path in Path(folder).glob(f"*/{module}.py")
                         if (path.parent / "__init__.py").is_file()}))


def _spelled(folder: str) -> str:
    """The trainer name of a folder below ``models/`` (``"ordering/lineariser"``), by
    :data:`TRAINER_SPELLINGS`."""
    prefix = max((p for p in TRAINER_SPELLINGS if folder == p or folder.startswith(p + "/")), key=len,
                 default="")
    rest = folder[len(prefix):].strip("/")
    parts = [TRAINER_SPELLINGS[prefix]] if prefix else []
    parts += [rest] if rest else []
    return "-".join(parts).replace("/", "-").replace("_", "-")


@cache
def _trainer_modules() -> dict[str, str]:
    """Trainer name → module, for every ``models/<folder>/trainer.py`` and ``models/<task>/<sub>/trainer.py``
    in a package (every folder on the way with its ``__init__.py``); read from the folders, nothing is
    imported.

    Raises
    ------
    ModelError
        Two folders give one name.
    """
    found: dict[str, str] = {}
    for root in map(Path, models.__path__):
        for path in [*root.glob("*/trainer.py"), *root.glob("*/*/trainer.py")]:
            parts = path.parent.relative_to(root).parts
            if not all((root.joinpath(*parts[:i + 1]) / "__init__.py").is_file() for i in range(len(parts))):
                continue
            name, module = _spelled("/".join(parts)), "dualdecomp.models." + ".".join((*parts, "trainer"))
            if found.setdefault(name, module) != module:
                raise ModelError(f"two trainers are named {name!r}: {found[name]} and {module}")
    return found


@cache
def kind_names() -> tuple[str, ...]:
    """The registered component kinds: every ``models/<kind>/kind.py``, sorted."""
    return _packages_with("kind")


@cache
def trainer_names() -> tuple[str, ...]:
    """What ``dualdecomp train --kind`` trains: every component kind and every ``models/<folder>/trainer.py``
    or ``models/<task>/<sub>/trainer.py`` (named by its folder, ``_`` written ``-``, with the spellings of
    :data:`TRAINER_SPELLINGS`; sorted; a kind without a trainer is named, and refused when asked for). The
    old names of :data:`OLD_TRAINER_NAMES` are not listed."""
    return tuple(sorted({*kind_names(), *_trainer_modules()}))


def trainer_name(name: str) -> str:
    """``name``, or the name an old name of :data:`OLD_TRAINER_NAMES` now has (``joint`` → ``cotraining``)."""
    return OLD_TRAINER_NAMES.get(name, name)


@cache
def get_kind(name: str) -> ComponentKind:
    """The :class:`ComponentKind` registered as ``name`` (ModelError if there is none)."""
    if name not in kind_names():
        raise ModelError(f"unknown component kind {name!r} (one of {', '.join(kind_names())})")
    kind = import_module(f"dualdecomp.models.{name}.kind").KIND
    if not isinstance(kind, ComponentKind) or kind.name != name:
        raise ModelError(f"dualdecomp.models.{name}.kind.KIND must be a ComponentKind named {name!r}")
    return kind


@cache
def get_trainer(name: str) -> Trainer:
    """The :class:`Trainer` of ``name`` (or of its old name, :func:`trainer_name`): a component kind's, or
    a ``models/<folder>/trainer.py``'s (``models/<task>/<sub>/trainer.py``'s).

    Raises
    ------
    InputError
        ``name`` is not in :func:`trainer_names`, or that kind has no trainer.
    """
    name = trainer_name(name)
    if name not in trainer_names():
        raise InputError(f"unknown kind {name!r} to train (one of {', '.join(trainer_names())})")
    if name in kind_names():
        trainer = get_kind(name).trainer
        if trainer is None:
            raise InputError(f"the {name} kind has no trainer (trainable: {', '.join(trainer_names())})")
        return trainer
    module = _trainer_modules()[name]
    trainer = import_module(module).TRAINER
    if not isinstance(trainer, Trainer):
        raise ModelError(f"{module}.TRAINER must be a Trainer")
    return trainer
