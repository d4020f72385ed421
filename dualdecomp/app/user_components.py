"""Your own components beside a configuration's: factories ``f(sentence) -> component(s)``.

A component scores the keep vector of one sentence (contract 4, :class:`~dualdecomp.core.component.
Component`), so it needs that sentence's tokens: what a user gives the high-level API, the CLI and the
spaCy component is a **factory**, a callable that takes the parsed
:class:`~dualdecomp.data.sentence.Sentence` and returns one component or a list of them, over that
sentence's ``n`` tokens. The :class:`~dualdecomp.app.compressor.Compressor` adds what the factories return
to the configuration's components for every sentence, so dual decomposition decodes them jointly and
certifies the whole (and the ILP decoder, when the configuration names it, gets them too: they need
``to_ilp``).

Three ways to name factories:

- Python: the callables themselves (``Compressor(extra_components=f)`` or ``[f, g]``);
- the CLI and the spaCy config: ``"MODULE:FUNCTION"``, a factory importable by the user
  (:func:`load_factory`; importing it runs the user's code);
- spaCy's own registry: ``{"@misc": "NAME"}`` in the component's config, a function registered with
  ``@spacy.registry.misc("NAME")`` that returns a factory (spaCy resolves it before the component sees it).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from dualdecomp.core.component import capabilities_of
from dualdecomp.core.errors import InputError
from dualdecomp.data.sentence import Sentence

__all__ = ["ComponentFactory", "as_factories", "build_components", "factory_name", "load_factory"]

ComponentFactory = Callable[[Sentence], Any]
"""``f(sentence) -> component or list of components``, each over the sentence's ``n`` tokens."""


def factory_name(factory: object) -> str:
    """``module:qualname`` of a factory (its name in messages and in a batch's run fingerprint)."""
    module = getattr(factory, "__module__", None) or type(factory).__module__
    name = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return f"{module}:{name}"


def load_factory(spec: str) -> ComponentFactory:
    """Import the factory ``"MODULE:FUNCTION"`` (``FUNCTION`` may be dotted: ``module:Class.method``).

    The module is imported as ``python -m`` would: from the current directory, ``PYTHONPATH`` or the
    installed packages. **Importing it runs the user's code** (as importing any module does).

    Raises
    ------
    InputError
        Not ``MODULE:FUNCTION``, a module that cannot be imported, no such attribute, or not callable.
    """
    if not isinstance(spec, str):
        raise InputError(f"a component factory is a callable or 'MODULE:FUNCTION', not {spec!r}")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise InputError(f"component {spec!r}: give MODULE:FUNCTION (e.g. my_bonus:make_component)")
    here = os.getcwd()
    added = here not in sys.path and "" not in sys.path
    if added:  # as `python -m` would: a module in the current directory (removed again after the import)
        sys.path.insert(0, here)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"component {spec!r}: cannot import {module_name!r} ({exc}); is it in the "
                         "current directory or on PYTHONPATH?") from None
    except Exception as exc:  # the user's module failed while importing: say so, with its error
        raise InputError(f"component {spec!r}: importing {module_name!r} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    finally:
        if added:
            sys.path.remove(here)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"component {spec!r}: {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InputError(f"component {spec!r}: {attr!r} is not callable (a factory f(sentence) -> "
                         "component)")
    return obj


def as_factories(factories: object) -> tuple[ComponentFactory, ...]:
    """The factories given as None, one factory, a ``"MODULE:FUNCTION"`` string or a list of those.

    Raises
    ------
    InputError
        Something that is neither a callable nor a ``"MODULE:FUNCTION"`` string (e.g. a component itself:
        give a factory that builds it for each sentence).
    """
    if factories is None:
        return ()
    items = [factories] if callable(factories) or isinstance(factories, str) else factories
    if not isinstance(items, Sequence):
        raise InputError("extra components: give a factory f(sentence) -> component, or a list of them, "
                         f"not {type(factories).__name__}")
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(load_factory(item))
        elif callable(item) and not hasattr(item, "solve"):
            out.append(item)
        else:
            raise InputError(f"extra components: {type(item).__name__} is not a factory; give a callable "
                             "f(sentence) -> component (a component covers one sentence's tokens)")
    return tuple(out)


def build_components(factories: Sequence[ComponentFactory], sentence: Sentence,
                     decoder: str = "dd") -> list:
    """The components the factories make for ``sentence``, checked.

    Parameters
    ----------
    factories : sequence of callables
        As returned by :func:`as_factories`.
    sentence : Sentence
        The parsed sentence.
    decoder : str
        The configuration's decoder: ``"ilp"`` needs ``to_ilp`` (capability ``ilp``); the APPROXIMATE
        ``"beam"`` decoder takes exactly its transducer and LM, no other component.

    Raises
    ------
    InputError
        A factory that returned something without ``solve``, over another number of tokens, or a
        component that the configuration's decoder cannot use.
    """
    out = []
    for factory in factories:
        made = factory(sentence)
        comps = list(made) if isinstance(made, list | tuple) else [made]
        for comp in comps:
            name = factory_name(factory)
            if not callable(getattr(comp, "solve", None)):
                raise InputError(f"component factory {name} returned {type(comp).__name__}, not a component "
                                 "(an object with n and solve(u), contract 4)")
            if getattr(comp, "n", None) != sentence.n:
                raise InputError(f"component factory {name}: its component has n = {getattr(comp, 'n', None)}"
                                 f", the sentence has {sentence.n} tokens")
            if decoder == "ilp" and not capabilities_of(comp).ilp:
                raise InputError(f"component factory {name}: {type(comp).__name__} has no to_ilp, and this "
                                 "configuration decodes by the ILP")
            if decoder == "beam":
                raise InputError("this configuration's beam decoder (APPROXIMATE) takes only its transducer "
                                 "and LM: use a configuration decoded by dual decomposition for your own "
                                 "components")
            out.append(comp)
    return out
