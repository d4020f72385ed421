"""The component contract (contract 4 of ``docs/architecture.md``) as a typing Protocol.

A component scores structures over n tokens whose yield is a keep vector. The engine
(:func:`dualdecomp.decode`) and the ILP reference (:func:`dualdecomp.ilp.decode`) use a component only
through this protocol and its declared :class:`Capabilities`; they never inspect signatures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.core.solution import Solution

__all__ = ["Capabilities", "Component", "LengthComponent", "capabilities_of", "char_budget_taker",
           "length_bias_taker", "merged_sums"]


@dataclass(frozen=True)
class Capabilities:
    """What a component can do beyond ``solve(u)``.

    Attributes
    ----------
    exact_length : bool
        ``solve(u, length=L)`` returns the argmax over structures keeping exactly L tokens (an exact-length
        DP), so the engine can enforce a length inside the component instead of by a multiplier.
    best_given : bool
        ``best_given(keep)`` returns the component's best score over structures with exactly that yield
        (primal recovery and certificates need it).
    ilp : bool
        ``to_ilp(problem, keep_vars)`` adds an exact formulation (the ILP reference needs it).
    length_bias : int or None
        None: the component takes no length bias. An int: ``with_length_bias(bias)`` returns a new
        component whose score of every compression is raised by ``bias`` per kept token (plus, for a
        path, a constant ``bias`` for the end transition), and the int is its preference: of several
        components that take one, the lowest preference takes the bias (the first in the list among
        equals; :func:`length_bias_taker`). Bigram paths take it before dependency trees before
        per-token scores (1, 2, 3): the order every shipped length calibration was made with.
    char_budget : bool
        ``with_char_budget(widths, chars)`` returns a new component whose structures are the
        compressions of at most ``chars`` characters, one space between kept tokens counted (``widths``:
        int (n,), the characters of each token); the first such component enforces a character budget.
    summable : bool
        ``summed(others)`` returns one component of this class whose score is this component's plus those
        of ``others`` (components of the same class over the same tokens), so a configuration decodes
        them as one: exact, and dual decomposition has no agreement to find between them
        (:func:`merged_sums`; bigram paths).
    absorbs : bool
        ``absorbed(other)`` returns one component of this class whose score is this component's plus
        ``other``'s when it can represent ``other``'s score exactly, else None (:func:`merged_sums`: a
        bigram path absorbs an unconstrained per-token score).
    derivation_forest : bool
        The component exposes its derivation forest, ``hypergraph``, with ``solve_lengths()``, so that a
        decoder may search it with its own (APPROXIMATE) beam (the transducer, for the ``beam`` decoder).
    trigram_potentials : bool
        The component exposes ``T``, its trigram potentials (contract 2, weight included), so that a
        decoder may rescore kept sequences with them (the LM's trigram path, for the ``beam`` decoder).
    """

    exact_length: bool = False
    best_given: bool = True
    ilp: bool = True
    length_bias: int | None = None
    char_budget: bool = False
    summable: bool = False
    absorbs: bool = False
    derivation_forest: bool = False
    trigram_potentials: bool = False


@runtime_checkable
class Component(Protocol):
    """A dual-decomposition component (contract 4).

    Attributes
    ----------
    n : int
        Number of tokens (positions 1..n).
    capabilities : Capabilities
        Declared capabilities (a class attribute); see :func:`capabilities_of` for the default.
    """

    n: int

    def solve(self, u: Any = None) -> Solution:
        """Argmax of the component's own score + ``u · keep``."""
        ...

    def best_given(self, keep: np.ndarray) -> float:
        """Best own score over structures with exactly this yield (``-inf`` if none)."""
        ...

    def to_ilp(self, problem: Any, keep_vars: list[Any]) -> Any:
        """Add an exact formulation linked to ``keep_vars``; return its objective expression."""
        ...


@runtime_checkable
class LengthComponent(Component, Protocol):
    """A component with an exact-length DP (``capabilities.exact_length`` is True)."""

    capabilities: ClassVar[Capabilities]

    def solve(self, u: Any = None, length: int | None = None) -> Solution:
        """Argmax with exactly ``length`` kept tokens (free length when None)."""
        ...


DEFAULT_CAPABILITIES = Capabilities()
"""Capabilities assumed for a component that declares none: contract 4's ``best_given`` and ``to_ilp``,
no exact-length DP."""


def capabilities_of(component: object) -> Capabilities:
    """The declared :class:`Capabilities` of ``component``; :data:`DEFAULT_CAPABILITIES` if it declares
    none."""
    caps = getattr(component, "capabilities", DEFAULT_CAPABILITIES)
    if not isinstance(caps, Capabilities):

        raise InputError(f"{type(component).__name__}.capabilities must be a Capabilities, got {caps!r}")
    return caps


def length_bias_taker(components: Sequence[object]) -> int | None:
    """The index of the component that takes a length bias (``Capabilities.length_bias``): the lowest
    preference, the first in the list among equals; None when no component takes one."""
    ranked = [(rank, k) for k, c in enumerate(components)
              if (rank := capabilities_of(c).length_bias) is not None]
    return min(ranked)[1] if ranked else None


def char_budget_taker(components: Sequence[object]) -> int | None:
    """The index of the first component that can enforce a character budget
    (``Capabilities.char_budget``); None when none can."""
    return next((k for k, c in enumerate(components) if capabilities_of(c).char_budget), None)


def merged_sums(components: Sequence[Any]) -> list[Any]:
    """The components with those of one class that declare ``Capabilities.summable`` summed into the
    first of them, in its place (``first.summed(others)``); then every other component that the first
    component declaring ``Capabilities.absorbs`` can absorb (``absorbed(other)`` is not None) folded into
    it; the other components unchanged, in order.

    Exact: a sum of components of one structure scores each structure by the sum of their scores, and an
    absorbed score is represented exactly in the absorbing structure.
    """
    groups: dict[type, list[int]] = {}
    for k, c in enumerate(components):
        if capabilities_of(c).summable:
            groups.setdefault(type(c), []).append(k)
    merged = {ks[0]: components[ks[0]].summed([components[k] for k in ks[1:]])
              for ks in groups.values() if len(ks) > 1}
    dropped = {k for ks in groups.values() for k in ks[1:]}
    out = [merged.get(k, c) for k, c in enumerate(components) if k not in dropped]
    host = next((k for k, c in enumerate(out) if capabilities_of(c).absorbs), None)
    if host is None:
        return out
    kept = []
    for k, c in enumerate(out):
        folded = out[host].absorbed(c) if k != host else None
        if folded is None:
            kept.append(k)
        else:
            out[host] = folded
    return [out[k] for k in kept]
