"""Reading the rewriting corpus: raw sources, each with named sets of human rewrites.

A line of ``rewriting/{train,dev}.jsonl`` (``../shared/data/README.md``) is
``{"id": "...", "text": "raw source", "references": {"asset": ["rewrite", ...], "turkcorpus": [...]}}``.
The text and the rewrites are raw (untokenised) strings; :mod:`dualdecomp.data.rewriting.parsed` tokenises
and parses them. Every line of a file must carry the same reference set names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import is_valid_unicode, read_jsonl_numbered

__all__ = ["RewritingExample", "read_rewriting"]


@dataclass(frozen=True)
class RewritingExample:
    """A source sentence and its human rewrites.

    Attributes
    ----------
    id : str
        Identifier (the ``id`` field).
    text : str
        The raw source sentence (non-blank).
    references : Mapping[str, tuple[str, ...]]
        Reference set name (``"asset"``, ``"turkcorpus"``) → its raw rewrites, in file order (read-only).
    """

    id: str
    text: str
    references: Mapping[str, tuple[str, ...]]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InputError(f"rewriting example id must be a non-empty str, got {self.id!r}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise InputError(f"example {self.id!r}: empty text")
        refs = {}
        for name, rewrites in dict(self.references).items():
            if not isinstance(name, str) or not name:
                raise InputError(f"example {self.id!r}: invalid reference set name {name!r}")
            rewrites = tuple(rewrites)
            for r in rewrites:
                if not isinstance(r, str) or not r.strip():
                    raise InputError(f"example {self.id!r}: reference set {name!r} has an empty or "
                                     f"non-string rewrite {r!r}")
            refs[name] = rewrites
        for part in (self.id, self.text, *(r for rs in refs.values() for r in rs)):
            if not is_valid_unicode(part):
                raise InputError(f"example {self.id!r}: text with an unpaired surrogate (not valid Unicode)")
        object.__setattr__(self, "references", MappingProxyType(refs))

    @property
    def reference_sets(self) -> tuple[str, ...]:
        """The reference set names, in file order."""
        return tuple(self.references)


def read_rewriting(path: str | os.PathLike[str]) -> list[RewritingExample]:
    """Read a rewriting corpus file.

    Parameters
    ----------
    path : str or path-like
        A JSONL file, one ``{"id", "text", "references"}`` object per non-blank line.

    Returns
    -------
    list of RewritingExample
        In file order.

    Raises
    ------
    InputError
        If the file cannot be read, a line is not a JSON object, a field is missing or has the wrong type,
        an id repeats, or a line's set of reference set names differs from the first line's; the message names
        ``path:line``.
    """
    name = os.fspath(path)
    out: list[RewritingExample] = []
    seen: dict[str, int] = {}
    sets: tuple[str, ...] | None = None
    for lineno, row in read_jsonl_numbered(path):
        where = f"{name}:{lineno}"
        missing = [k for k in ("id", "text", "references") if k not in row]
        if missing:
            raise InputError(f"{where}: missing field(s) {', '.join(missing)}")
        ident, text, refs = row["id"], row["text"], row["references"]
        if not isinstance(ident, str) or not ident:
            raise InputError(f"{where}: 'id' must be a non-empty string, got {ident!r}")
        if ident in seen:
            raise InputError(f"{where}: id {ident!r} already on line {seen[ident]}")
        if not isinstance(text, str):
            raise InputError(f"{where}: 'text' must be a string, got {type(text).__name__}")
        if not isinstance(refs, dict) or not refs:
            raise InputError(f"{where}: 'references' must be a non-empty object of reference sets")
        for set_name, rewrites in refs.items():
            if not isinstance(rewrites, list) or not rewrites:
                raise InputError(f"{where}: reference set {set_name!r} must be a non-empty list of strings")
        if sets is None:
            sets = tuple(refs)
        elif set(refs) != set(sets):
            raise InputError(f"{where}: reference sets {sorted(refs)} differ from the file's {list(sets)}")
        try:
            example = RewritingExample(ident, text, refs)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        seen[ident] = lineno
        out.append(example)
    return out
