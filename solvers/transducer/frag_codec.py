"""Elementary trees as integer arrays, for the binary grammar files (interned strings, preorder nodes).

A :class:`~dualdecomp.solvers.transducer.grammar.Frag` is stored as its nodes in preorder, one row of
three ``int32`` per node: ``kind | kept << 2``, the id of its label in the string table, its number of
children. Strings (labels and words) are interned once per file: a UTF-8 blob and the byte offsets of
each string (``len + 1`` entries). Rule keys are indexed by a 64-bit BLAKE2b hash (:func:`key_hash`), so
a loaded grammar finds a rule by key without decoding the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.solvers.transducer.grammar import NODE, VAR, WORD, Frag

__all__ = ["FragEncoder", "decode_frag", "decode_strings", "key_hash"]


def key_hash(key: str) -> int:
    """A stable 64-bit hash of a rule key (BLAKE2b), as a Python int in ``[0, 2**63)``."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little") >> 1


class FragEncoder:
    """Accumulates elementary trees into the node and string arrays."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._strings: list[str] = []
        self._rows: list[tuple[int, int, int]] = []

    def string(self, text: str) -> int:
        """The id of a string (interned)."""
        i = self._ids.get(text)
        if i is None:
            i = self._ids[text] = len(self._strings)
            self._strings.append(text)
        return i

    def add(self, frag: Frag) -> int:
        """Append an elementary tree's nodes (preorder); returns the node count so far."""
        stack = [frag]
        rows = self._rows
        while stack:
            f = stack.pop()
            rows.append((f.kind | (0 if f.kept else 4), self.string(f.label), len(f.children)))
            stack.extend(reversed(f.children))
        return len(rows)

    @property
    def size(self) -> int:
        """Nodes written so far."""
        return len(self._rows)

    def arrays(self) -> dict[str, np.ndarray]:
        """``nodes`` (int32, N×3), ``strings`` (uint8 blob) and ``string_offsets`` (int64)."""
        data = [s.encode("utf-8") for s in self._strings]
        offsets = np.zeros(len(data) + 1, dtype=np.int64)
        if data:
            offsets[1:] = np.cumsum([len(d) for d in data])
        nodes = np.array(self._rows, dtype=np.int32).reshape(-1, 3)
        return {"nodes": nodes, "strings": np.frombuffer(b"".join(data), dtype=np.uint8),
                "string_offsets": offsets}


def decode_strings(blob: np.ndarray, offsets: np.ndarray, where: str) -> list[str]:
    """The interned strings of a file.

    Raises
    ------
    ModelError
        Offsets out of order or out of range, or bytes that are not UTF-8 (``where`` names the file).
    """
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != blob.size \
            or np.any(np.diff(offsets) < 0):
        raise ModelError(f"{where}: bad string table")
    raw = blob.tobytes()
    offs = offsets.tolist()
    try:
        return [raw[a:b].decode("utf-8") for a, b in zip(offs, offs[1:], strict=False)]
    except UnicodeDecodeError as exc:
        raise ModelError(f"{where}: string table is not UTF-8 ({exc})") from None


def decode_frag(nodes: np.ndarray, start: int, end: int, strings: Sequence[str], where: str) -> Frag:
    """The elementary tree stored in ``nodes[start:end]`` (exactly one tree).

    Raises
    ------
    ModelError
        A malformed node row (bad kind, label id, child count) or a tree that does not fill the range.
    """
    rows = nodes[start:end].tolist()
    pos = 0

    def bad(why: str) -> ModelError:
        return ModelError(f"{where}: malformed elementary tree at nodes {start}..{end} ({why})")

    def walk(depth: int) -> Frag:
        nonlocal pos
        if pos >= len(rows):
            raise bad("truncated")
        if depth > 200:
            raise bad("too deep")
        code, label, nkids = rows[pos]
        pos += 1
        kind, kept = code & 3, not (code & 4)
        if code & ~7 or kind not in (NODE, VAR, WORD) or not 0 <= label < len(strings) or nkids < 0:
            raise bad("bad node row")
        if kind == NODE:
            if nkids == 0 or not kept:
                raise bad("a node without children or marked deleted")
            return Frag(NODE, strings[label], tuple(walk(depth + 1) for _ in range(nkids)))
        if nkids:
            raise bad("a frontier item with children")
        if not strings[label]:
            raise bad("an empty label")
        return Frag(kind, strings[label], (), kept)

    frag = walk(0)
    if pos != len(rows):
        raise bad("trailing nodes")
    return frag
