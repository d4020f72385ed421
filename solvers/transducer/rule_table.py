"""Rules by id, merged by key and indexed by source production, decoded lazily from a grammar file.

:class:`RuleTable` is the base of the deletion-only :class:`~dualdecomp.solvers.transducer.Grammar` and of
the rewriting grammar: built rule by rule (:meth:`RuleTable.add`), or attached to the arrays of a loaded
file (:meth:`RuleTable.attach`), where rule ``i`` is decoded (and validated) the first time it is used and
:meth:`RuleTable.find` looks a key up by its hash, so loading does not grow with the rules' size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar

import numpy as np

__all__ = ["RuleTable"]


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...

    def production(self) -> str: ...


R = TypeVar("R", bound=_Keyed)


class RuleTable(Generic[R]):
    """Rules by id: distinct ``key`` s, indexed by the CFG production at their source root.

    Subclasses say how two rules of the same key merge (:meth:`merge`).
    """

    def __init__(self) -> None:
        self._rules: list[R | None] = []
        self._ids: dict[str, int] = {}
        self._by_production: dict[str, list[int]] = {}
        self._decode: Callable[[int], R] | None = None
        self._hash: Callable[[str], int] | None = None
        self._hashes: np.ndarray | None = None  # sorted key hashes of the stored rules
        self._hash_ids: np.ndarray | None = None

    def merge(self, old: R, new: R) -> R:
        """The rule that replaces ``old`` when ``new`` has the same key."""
        raise NotImplementedError

    def attach(self, count: int, decode: Callable[[int], R], by_production: dict[str, list[int]],
               key_hashes: np.ndarray, key_hash: Callable[[str], int],
               hash_ids: np.ndarray | None = None) -> None:
        """Serve ``count`` stored rules (the table must be empty).

        Parameters
        ----------
        count : int
        decode : callable
            Rule ``i`` from the file (raises ModelError when invalid).
        by_production : dict of str to list of int
            The production index.
        key_hashes : numpy.ndarray
            ``key_hash(rule.key)`` of each stored rule: by id, or sorted when ``hash_ids`` is given.
        key_hash : callable
            The hash function of ``key_hashes``.
        hash_ids : numpy.ndarray, optional
            The rule id of each sorted hash.
        """
        assert not self._rules, "attach: the table is not empty"
        self._rules = [None] * count
        self._decode, self._by_production, self._hash = decode, by_production, key_hash
        if hash_ids is None:
            hash_ids = np.argsort(key_hashes, kind="stable")
            key_hashes = key_hashes[hash_ids]
        self._hashes, self._hash_ids = key_hashes, hash_ids

    def __len__(self) -> int:
        return len(self._rules)

    def rule(self, i: int) -> R:
        """Rule ``i`` (decoded from the file on first use)."""
        r = self._rules[i]
        if r is None:
            assert self._decode is not None
            r = self._rules[i] = self._decode(i)
        return r

    @property
    def rules(self) -> Sequence[R]:
        """All rules, by id (a read-only view)."""
        return _RuleView(self)

    def __iter__(self) -> Iterator[R]:
        return (self.rule(i) for i in range(len(self)))

    def find(self, key: str) -> int | None:
        """Id of the rule with that key, or None."""
        rid = self._ids.get(key)
        if rid is not None or self._hashes is None:
            return rid
        assert self._hash_ids is not None and self._hash is not None
        h = self._hash(key)
        lo = int(np.searchsorted(self._hashes, h, side="left"))
        hi = int(np.searchsorted(self._hashes, h, side="right"))
        for k in range(lo, hi):
            rid = int(self._hash_ids[k])
            if self.rule(rid).key == key:
                self._ids[key] = rid
                return rid
        return None

    def add(self, rule: R) -> int:
        """Add a rule, merged with an existing one of the same key (:meth:`merge`); returns its id."""
        key = rule.key
        rid = self.find(key)
        if rid is not None:
            self._rules[rid] = self.merge(self.rule(rid), rule)
            return rid
        rid = len(self._rules)
        self._rules.append(rule)
        self._ids[key] = rid
        self._by_production.setdefault(rule.production(), []).append(rid)
        return rid

    def candidates(self, production: str) -> list[int]:
        """Ids of the rules whose source root has this production (they may still fail deeper)."""
        return self._by_production.get(production, [])

    def productions(self) -> list[str]:
        """The indexed productions."""
        return list(self._by_production)

    def validate(self) -> None:
        """Decode and check every rule (a loaded grammar decodes lazily). Raises ModelError."""
        for i in range(len(self)):
            self.rule(i)


class _RuleView(Sequence[R]):
    def __init__(self, table: RuleTable[R]) -> None:
        self._t = table

    def __len__(self) -> int:
        return len(self._t)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self._t.rule(k) for k in range(*i.indices(len(self._t)))]
        if i < 0:
            i += len(self._t)
        if not 0 <= i < len(self._t):
            raise IndexError(i)
        return self._t.rule(i)

    def __iter__(self) -> Iterator[R]:
        return iter(self._t)
