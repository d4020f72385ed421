"""The ``Sentence``: a tokenised, tagged and dependency-parsed sentence."""

from __future__ import annotations

from dataclasses import dataclass, field

from dualdecomp.core.errors import InputError


@dataclass(frozen=True)
class Sentence:
    """A parsed sentence.

    Token positions inside dualdecomp are 1..n (docs/architecture.md §2); the Python lists here are 0-based,
    so token k is ``tokens[k - 1]``.

    Attributes
    ----------
    tokens : tuple of str
        The tokens, exactly as given (pre-tokenised input is never re-tokenised).
    pos : tuple of str
        Universal (coarse) POS tags.
    tags : tuple of str
        Fine-grained (PTB) tags.
    heads : tuple of int
        Head of each token as a 1-based position; 0 is the root.
    labels : tuple of str
        Dependency label of each token's arc.
    spaces : tuple of bool
        Whether each token was followed by whitespace in the original text (used to detokenise).
    id : str
        Identifier (from the JSONL ``id`` field, or generated).
    """

    tokens: tuple[str, ...]
    pos: tuple[str, ...]
    tags: tuple[str, ...]
    heads: tuple[int, ...]
    labels: tuple[str, ...]
    spaces: tuple[bool, ...] = field(default=())
    id: str = ""

    def __post_init__(self) -> None:
        n = len(self.tokens)
        for name in ("pos", "tags", "heads", "labels"):
            if len(getattr(self, name)) != n:
                raise InputError(f"sentence {self.id!r}: {name} has {len(getattr(self, name))} entries, "
                                 f"tokens has {n}")
        if not self.spaces:
            object.__setattr__(self, "spaces", (True,) * n)
        elif len(self.spaces) != n:
            raise InputError(f"sentence {self.id!r}: spaces has {len(self.spaces)} entries, tokens has {n}")
        for k, h in enumerate(self.heads, start=1):
            if not 0 <= h <= n or h == k:
                raise InputError(f"sentence {self.id!r}: token {k} has invalid head {h}")

    @property
    def n(self) -> int:
        """Number of tokens."""
        return len(self.tokens)

    def children(self) -> list[list[int]]:
        """Children of each position 0..n (1-based positions, in order)."""
        kids: list[list[int]] = [[] for _ in range(self.n + 1)]
        for k, h in enumerate(self.heads, start=1):
            kids[h].append(k)
        return kids

    def subtree_spans(self) -> list[tuple[int, int]]:
        """For each token k (index k-1), the (leftmost, rightmost) 1-based positions of its subtree."""
        kids = self.children()
        lo = list(range(self.n + 1))
        hi = list(range(self.n + 1))
        order: list[int] = []
        stack = list(kids[0])
        while stack:
            k = stack.pop()
            order.append(k)
            stack.extend(kids[k])
        for k in reversed(order):
            for c in kids[k]:
                lo[k] = min(lo[k], lo[c])
                hi[k] = max(hi[k], hi[c])
        return [(lo[k], hi[k]) for k in range(1, self.n + 1)]
