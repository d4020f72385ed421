"""Preorder numbering of a tree's nodes (parents, children, subtree intervals) for tree algorithms."""

from __future__ import annotations

from dualdecomp.data.trees import Tree

__all__ = ["IndexedTree"]


class IndexedTree:
    """Preorder numbering of a tree's nodes with parents, children and subtree intervals.

    Attributes
    ----------
    nodes : list of Tree
        Preorder; node ``i``'s subtree is ``nodes[i:end[i]]``.
    children : list of list of int
    parent : list of int
        -1 for the root.
    end : list of int
    """

    def __init__(self, tree: Tree) -> None:
        self.nodes: list[Tree] = []
        self.children: list[list[int]] = []
        self.parent: list[int] = []
        self.end: list[int] = []
        self._walk(tree, -1)

    def _walk(self, node: Tree, parent: int) -> int:
        i = len(self.nodes)
        self.nodes.append(node)
        self.children.append([])
        self.parent.append(parent)
        self.end.append(-1)
        stack = [(node, i, 0)]
        # iterative DFS to survive deep trees
        while stack:
            cur, ci, k = stack.pop()
            if k < len(cur.children):
                stack.append((cur, ci, k + 1))
                child = cur.children[k]
                j = len(self.nodes)
                self.nodes.append(child)
                self.children.append([])
                self.parent.append(ci)
                self.end.append(-1)
                self.children[ci].append(j)
                stack.append((child, j, 0))
            else:
                self.end[ci] = len(self.nodes)
        return i

    def __len__(self) -> int:
        return len(self.nodes)

    def leaf_indices(self, i: int) -> list[int]:
        """Token positions of the leaves under node ``i``."""
        return [self.nodes[j].index for j in range(i, self.end[i]) if self.nodes[j].is_leaf]

    def contains(self, ancestor: int, j: int) -> bool:
        """Whether node ``j`` is ``ancestor`` or below it."""
        return ancestor <= j < self.end[ancestor]
