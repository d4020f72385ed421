"""Tree pairs for T3 training from a corpus: spaCy parses of both sides, converted to phrase structure
(``dualdecomp.data.trees.from_dependency``), target leaves re-indexed to source positions by the deletion
alignment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dualdecomp.data.alignment import align
from dualdecomp.data.jsonl import CorpusItem
from dualdecomp.data.parsing import parse_unique
from dualdecomp.data.trees import Tree, from_dependency, reindex

__all__ = ["TreePair", "tree_pairs"]


@dataclass(frozen=True)
class TreePair:
    """A corpus item's source tree and the target tree of each usable reference (None if unusable)."""

    item: CorpusItem
    source: Tree
    targets: tuple[Tree | None, ...]


def tree_pairs(items: Sequence[CorpusItem], progress: bool = False) -> list[TreePair]:
    """Parse sources and references and build the aligned tree pairs.

    A reference is unusable (None) when it is empty or some of its tokens cannot be aligned to the source.
    """
    seqs = [it.text for it in items] + [c for it in items for c in it.compressions]
    parses = parse_unique(seqs, progress=progress)
    out = []
    for it in items:
        src = from_dependency(parses[it.text])
        tgts: list[Tree | None] = []
        for comp in it.compressions:
            links = align(it.text, comp)
            if not comp or any(a is None for a in links):
                tgts.append(None)
                continue
            tgts.append(reindex(from_dependency(parses[comp]), [int(a) for a in links]))  # type: ignore[arg-type]
        out.append(TreePair(it, src, tuple(tgts)))
    return out
