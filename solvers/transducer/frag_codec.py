"""Elementary trees as integer arrays, for the binary grammar files (interned strings, preorder nodes).

A :class:`~dualdecomp.solvers.transducer.grammar.Frag` is stored once per file however many rules share
it (:meth:`FragEncoder.add` returns its id), as its nodes in preorder: ``node_labels`` (``int32``, the id
of the label in the string table) and ``node_shapes`` (``uint16``: ``kind | (not kept) << 2 | children <<
3``); ``frag_bounds`` gives each tree's node range. Strings (labels and words) are interned once per
file: a UTF-8 blob and the byte offsets of each string (``len + 1`` entries). Rule keys are indexed by a
64-bit BLAKE2b hash (:func:`key_hash`), so a loaded grammar finds a rule by key without decoding the
others.

The compact form (:meth:`FragEncoder.compact_arrays`, read back by :func:`expand_frag_arrays`) stores the
tree sizes and string lengths instead of their offsets, each array in the narrowest unsigned dtype that
holds it (:func:`narrow`): what a zlib-compressed file packs best.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.solvers.transducer.frag import NODE, VAR, WORD, Frag

__all__ = ["FragEncoder", "decode_frag", "decode_strings", "expand_frag_arrays", "key_hash", "narrow",
           "production_index"]


def key_hash(key: str) -> int:
    """A stable 64-bit hash of a rule key (BLAKE2b), as a Python int in ``[0, 2**63)``."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little") >> 1


class FragEncoder:
    """Accumulates elementary trees into the node and string arrays."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._strings: list[str] = []
        self._labels: list[int] = []
        self._shapes: list[int] = []
        self._frags: dict[Frag, int] = {}
        self._bounds: list[int] = [0]

    def string(self, text: str) -> int:
        """The id of a string (interned)."""
        i = self._ids.get(text)
        if i is None:
            i = self._ids[text] = len(self._strings)
            self._strings.append(text)
        return i

    def add(self, frag: Frag) -> int:
        """The id of an elementary tree (its nodes appended, in preorder, the first time)."""
        fid = self._frags.get(frag)
        if fid is not None:
            return fid
        stack = [frag]
        while stack:
            f = stack.pop()
            if len(f.children) >= 1 << 13:
                raise ValueError(f"a node with {len(f.children)} children cannot be stored")
            self._labels.append(self.string(f.label))
            self._shapes.append(f.kind | (0 if f.kept else 4) | len(f.children) << 3)
            stack.extend(reversed(f.children))
        fid = self._frags[frag] = len(self._bounds) - 1
        self._bounds.append(len(self._labels))
        return fid

    def arrays(self) -> dict[str, np.ndarray]:
        """``node_labels``, ``node_shapes``, ``frag_bounds``, ``strings`` (UTF-8 blob), ``string_offsets``."""
        data = [s.encode("utf-8") for s in self._strings]
        offsets = np.zeros(len(data) + 1, dtype=np.int64)
        if data:
            offsets[1:] = np.cumsum([len(d) for d in data])
        return {"node_labels": np.array(self._labels, dtype=np.int32),
                "node_shapes": np.array(self._shapes, dtype=np.uint16),
                "frag_bounds": np.array(self._bounds, dtype=np.int64),
                "strings": np.frombuffer(b"".join(data), dtype=np.uint8), "string_offsets": offsets}


    def compact_arrays(self) -> dict[str, np.ndarray]:
        """:meth:`arrays` in the compact form (module docstring): ``node_labels``, ``node_shapes``,
        ``frag_sizes``, ``strings``, ``string_lengths``, each of the narrowest unsigned dtype."""
        a = self.arrays()
        return {"node_labels": narrow(a["node_labels"]), "node_shapes": narrow(a["node_shapes"]),
                "frag_sizes": narrow(np.diff(a["frag_bounds"])), "strings": a["strings"],
                "string_lengths": narrow(np.diff(a["string_offsets"]))}


def narrow(values: np.ndarray | list[int]) -> np.ndarray:
    """Non-negative integers in the narrowest unsigned dtype holding them (``uint8`` .. ``uint64``)."""
    a = np.asarray(values, dtype=np.int64)
    if a.size and int(a.min()) < 0:
        raise ValueError("narrow: negative values")
    top = int(a.max()) if a.size else 0
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return a.astype(dtype)
    return a.astype(np.uint64)


def expand_frag_arrays(a: dict[str, np.ndarray], where: str) -> tuple[np.ndarray, list[str]]:
    """Check the compact tree and string arrays of a loaded file; the tree bounds and the strings.

    Returns
    -------
    frag_bounds : numpy.ndarray
        int64, ``len(frag_sizes) + 1`` entries (the ``bounds`` of :func:`decode_frag`).
    strings : list of str

    Raises
    ------
    ModelError
        An array missing or not of unsigned integers, an empty tree, sizes that do not add up to the node
        count, a bad string table (``where`` names the file).
    """
    names = ("node_labels", "node_shapes", "frag_sizes", "strings", "string_lengths")
    for k in names:
        if k not in a or a[k].ndim != 1 or not np.issubdtype(a[k].dtype, np.unsignedinteger):
            raise ModelError(f"{where}: array {k!r} missing or not a vector of unsigned integers")
    sizes = a["frag_sizes"].astype(np.int64)
    bounds = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=bounds[1:])
    if len(a["node_shapes"]) != len(a["node_labels"]) or bounds[-1] != len(a["node_labels"]) \
            or bool(np.any(sizes == 0)):
        raise ModelError(f"{where}: malformed elementary-tree arrays")
    offsets = np.zeros(len(a["string_lengths"]) + 1, dtype=np.int64)
    np.cumsum(a["string_lengths"], out=offsets[1:])
    strings = decode_strings(a["strings"], offsets, where)
    if bool(np.any(a["node_labels"] >= len(strings))):
        raise ModelError(f"{where}: a node label out of the string table")
    return bounds, strings


def production_index(production: np.ndarray, strings: list[str]) -> dict[str, list[int]]:
    """Rule ids by production: ``production[i]`` is the string id of rule ``i``'s production; the ids of
    each production in increasing order (as a grammar built rule by rule indexes them)."""
    if not len(production):
        return {}
    order = np.argsort(production, kind="stable")
    uniq, starts = np.unique(production[order], return_index=True)
    ends = np.append(starts[1:], len(production))
    ids = order.tolist()
    spans = zip(uniq.tolist(), starts.tolist(), ends.tolist(), strict=True)
    return {strings[u]: ids[s:e] for u, s, e in spans}


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


def decode_frag(labels: np.ndarray, shapes: np.ndarray, bounds: np.ndarray, fid: int, strings: Sequence[str],
                where: str) -> Frag:
    """Elementary tree ``fid`` (nodes ``bounds[fid]:bounds[fid + 1]``).

    Raises
    ------
    ModelError
        An id out of range, a malformed node (bad kind, label id, child count) or a tree that does not
        fill its range.
    """
    if not 0 <= fid < len(bounds) - 1:
        raise ModelError(f"{where}: elementary tree id {fid} out of range")
    start, end = int(bounds[fid]), int(bounds[fid + 1])
    labs, shps = labels[start:end].tolist(), shapes[start:end].tolist()
    pos = 0

    def bad(why: str) -> ModelError:
        return ModelError(f"{where}: malformed elementary tree {fid} ({why})")

    def walk(depth: int) -> Frag:
        nonlocal pos
        if pos >= len(labs):
            raise bad("truncated")
        if depth > 200:
            raise bad("too deep")
        shape, label = shps[pos], labs[pos]
        pos += 1
        kind, kept, nkids = shape & 3, not (shape & 4), shape >> 3
        if kind not in (NODE, VAR, WORD) or not 0 <= label < len(strings):
            raise bad("bad node")
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
    if pos != len(labs):
        raise bad("trailing nodes")
    return frag
