"""Exact decoding of a weighted STSG over one source tree: the T3 component (docs/architecture.md §2,
contract 4).

The rules matching the source tree define a hypergraph: a vertex is a pair (source node v, target
category Y); a hyperedge is one rule applied at v rewriting into Y. Its tails are the vertices
(c, Y_c) of the rule's linked variables, it keeps the source tokens of the rule's kept words and drops
the tokens of its deleted words and of everything below its ε-aligned variables. A derivation is a
hypertree from the root vertex (root, root label); its yield is the set of kept tokens.

Decoding is Algorithm 4 of Cohn & Lapata (2009) without n-gram features, i.e. an exact Viterbi pass over
the hypergraph in O(S·R) (S source nodes, R matching rules per node): the score of a hyperedge is its rule
score plus ``u_k`` for every token k it keeps, so ``solve(u)`` maximises ``score(d) + u·keep(d)``.
``solve(u, length=L)`` adds a length dimension to the chart (vertex × number of kept tokens, max-plus
convolution over the tails): exact, O(S·R·n²) at worst.

Coverage: every source node also gets the copy rule and the deletion rules of its production (as in the
paper, §3.2), so every tree has at least the all-copy derivation. ``fallback`` records whether those
added rules were *needed*: True iff the grammar's own rules cannot derive the tree.

Ties: the first hyperedge (in construction order: nodes bottom-up, then grammar rules in grammar order,
then added coverage rules) reaching a vertex's maximum wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

from dualdecomp.core.checks import as_keep, as_length
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var, unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.data.indexed_tree import IndexedTree
from dualdecomp.data.trees import Tree, leaf
from dualdecomp.solvers.transducer.coverage import coverage_rules
from dualdecomp.solvers.transducer.grammar import NODE, VAR, WORD, Frag, Grammar, Rule

__all__ = ["Derivation", "Hypergraph", "Transducer", "build_hypergraph", "match_frag"]

RuleScore = Callable[[Rule, int], float]
"""A rule score: ``score(rule, dropped)`` where ``dropped`` is the number of source tokens the
application deletes (the rule's deleted words and everything under its ε-aligned variables)."""


def match_frag(frag: Frag, tree: IndexedTree, i: int, out: list[int],
               word_ok: Callable[[object, int], bool] | None = None) -> bool:
    """Match an elementary tree at node ``i``; append the frontier node ids to ``out``.

    Parameters
    ----------
    word_ok : callable, optional
        An extra test of a matched word leaf: ``word_ok(node, k)`` with ``k`` its frontier position
        (e.g. that a target word is aligned to the right source token).

    Returns
    -------
    bool
        Whether ``frag`` matches the subtree at ``i`` (``out`` is then its frontier, left to right).
    """
    node = tree.nodes[i]
    if frag.kind == WORD:
        if node.is_leaf and node.label == frag.label and (word_ok is None or word_ok(node, len(out))):
            out.append(i)
            return True
        return False
    if node.is_leaf or node.label != frag.label:
        return False
    if frag.kind == VAR:
        out.append(i)
        return True
    kids = tree.children[i]
    if len(kids) != len(frag.children):
        return False
    return all(match_frag(f, tree, c, out, word_ok) for f, c in zip(frag.children, kids, strict=True))


@dataclass(frozen=True)
class Hypergraph:
    """The derivation forest of one source tree (arrays in bottom-up hyperedge order).

    Attributes
    ----------
    tree : IndexedTree
        The source tree.
    rules : list of Rule
        Rules used by the hyperedges (local ids).
    vertex_node, vertex_label : list
        Source node id and target category of each vertex.
    root : int
        Root vertex id.
    hyperedge_node, hyperedge_rule, hyperedge_head : numpy.ndarray of int64
    tail_ptr, tail_idx : numpy.ndarray of int64
        CSR tails of each hyperedge (vertex ids).
    kept_ptr, kept_idx : numpy.ndarray of int64
        CSR kept token positions (0-based) of each hyperedge.
    drop_ptr, drop_idx : numpy.ndarray of int64
        CSR dropped token positions of each hyperedge.
    frontier : list of tuple of int
        Frontier node ids of each hyperedge (aligned with the rule's source frontier).
    vertex_span : numpy.ndarray of int64
        Number of leaves under each vertex's node.
    fallback : bool
        The grammar's own rules could not derive the tree; coverage rules were needed.
    """

    tree: IndexedTree
    rules: list[Rule]
    vertex_node: list[int]
    vertex_label: list[str]
    root: int
    hyperedge_node: np.ndarray
    hyperedge_rule: np.ndarray
    hyperedge_head: np.ndarray
    tail_ptr: np.ndarray
    tail_idx: np.ndarray
    kept_ptr: np.ndarray
    kept_idx: np.ndarray
    drop_ptr: np.ndarray
    drop_idx: np.ndarray
    frontier: list[tuple[int, ...]]
    vertex_span: np.ndarray
    fallback: bool
    n: int

    @property
    def num_hyperedges(self) -> int:
        """Number of hyperedges."""
        return int(self.hyperedge_head.shape[0])

    def tails(self, e: int) -> np.ndarray:
        """Tail vertex ids of hyperedge ``e``."""
        return self.tail_idx[self.tail_ptr[e]:self.tail_ptr[e + 1]]

    def kept(self, e: int) -> np.ndarray:
        """Token positions (0-based) hyperedge ``e`` keeps directly."""
        return self.kept_idx[self.kept_ptr[e]:self.kept_ptr[e + 1]]

    def dropped(self, e: int) -> np.ndarray:
        """Token positions (0-based) hyperedge ``e`` deletes."""
        return self.drop_idx[self.drop_ptr[e]:self.drop_ptr[e + 1]]


def build_hypergraph(tree: Tree, grammar: Grammar, coverage: bool = True) -> Hypergraph:
    """Match the grammar against a source tree.

    Parameters
    ----------
    tree : Tree
        The source tree; leaves must be indexed 0..n-1 in order.
    grammar : Grammar
    coverage : bool
        Add the copy/deletion rules of every production of the tree (see module docstring).

    Returns
    -------
    Hypergraph

    Raises
    ------
    InputError
        Bad leaf indices.
    SolverError
        No derivation exists (only possible with ``coverage=False``).
    """
    T = IndexedTree(tree)
    n = len(tree.leaves())
    if tree.indices() != list(range(n)):
        raise InputError("source tree leaves must be indexed 0..n-1 left to right")
    rules: list[Rule] = []
    local: dict[str, int] = {}

    def rule_id(r: Rule) -> int:
        key = r.key
        if key not in local:
            local[key] = len(rules)
            rules.append(r)
        return local[key]

    leaves_under = [T.leaf_indices(i) for i in range(len(T))]
    raw: list[tuple[int, int, str, list[tuple[int, str]], list[int], list[int], tuple[int, ...], bool]] = []
    for i in range(len(T) - 1, -1, -1):
        node = T.nodes[i]
        if node.is_leaf:
            continue
        prod = node.production()
        cands: list[tuple[Rule, bool]] = [(grammar.rules[r], False) for r in grammar.candidates(prod)]
        if coverage:
            cands += [(r, True) for r in coverage_rules(node) if grammar.find(r.key) is None]
        for rule, added in cands:
            fr: list[int] = []
            if not match_frag(rule.source, T, i, fr):
                continue
            tails: list[tuple[int, str]] = []
            kept: list[int] = []
            dropped: list[int] = []
            tfront = rule.target.frontier()
            t = 0
            for f, j in zip(rule.source.frontier(), fr, strict=True):
                if f.kind == WORD:
                    (kept if f.kept else dropped).append(T.nodes[j].index)
                elif f.kept:
                    tails.append((j, tfront[t].label))
                else:
                    dropped.extend(leaves_under[j])
                if f.kept:
                    t += 1
            raw.append((i, rule_id(rule), rule.target_root, tails, kept, dropped, tuple(fr), added))
    root_label = T.nodes[0].label
    fallback = False
    if coverage:
        fallback = not _derivable(raw, (0, root_label), grammar_only=True)
    keep_hyperedges = _useful(raw, (0, root_label))
    if not keep_hyperedges:
        raise SolverError("the grammar cannot derive this source tree (no coverage rules added)")
    vid: dict[tuple[int, str], int] = {}
    vertex_node: list[int] = []
    vertex_label: list[str] = []

    def vertex(key: tuple[int, str]) -> int:
        if key not in vid:
            vid[key] = len(vertex_node)
            vertex_node.append(key[0])
            vertex_label.append(key[1])
        return vid[key]

    root = vertex((0, root_label))
    e_node, e_rule, e_head = [], [], []
    t_ptr, t_idx, k_ptr, k_idx, d_ptr, d_idx = [0], [], [0], [], [0], []
    frontier = []
    for idx in keep_hyperedges:
        i, r, y, tails, kept, dropped, fr, _ = raw[idx]
        e_node.append(i)
        e_rule.append(r)
        e_head.append(vertex((i, y)))
        t_idx.extend(vertex(tl) for tl in tails)
        t_ptr.append(len(t_idx))
        k_idx.extend(kept)
        k_ptr.append(len(k_idx))
        d_idx.extend(dropped)
        d_ptr.append(len(d_idx))
        frontier.append(fr)
    arr = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
    span = arr([len(leaves_under[v]) for v in vertex_node])
    return Hypergraph(T, rules, vertex_node, vertex_label, root, arr(e_node), arr(e_rule), arr(e_head),
                      arr(t_ptr), arr(t_idx), arr(k_ptr), arr(k_idx), arr(d_ptr), arr(d_idx), frontier, span,
                      fallback, n)


def _derivable(raw, root, grammar_only: bool) -> bool:
    ok: set[tuple[int, str]] = set()
    for i, _, y, tails, _, _, _, added in raw:  # bottom-up order
        if grammar_only and added:
            continue
        if all(tl in ok for tl in tails):
            ok.add((i, y))
    return root in ok


def _useful(raw, root) -> list[int]:
    """Indices of hyperedges that are derivable bottom-up and reachable from the root."""
    ok: set[tuple[int, str]] = set()
    derivable = []
    for idx, (i, _, y, tails, _, _, _, _) in enumerate(raw):
        if all(tl in ok for tl in tails):
            ok.add((i, y))
            derivable.append(idx)
    if root not in ok:
        return []
    reach = {root}
    used = set()
    for idx in sorted(derivable, key=lambda k: raw[k][0]):  # top-down
        i, _, y, tails, *_ = raw[idx]
        if (i, y) in reach:
            used.add(idx)
            reach.update(tails)
    return [idx for idx in derivable if idx in used]


# ----------------------------------------------------------------------------------------------------
# numba kernels
# ----------------------------------------------------------------------------------------------------


@njit(cache=True)
def _viterbi(nv, head, tail_ptr, tail_idx, kept_ptr, kept_idx, score, ue, mask):  # pragma: no cover
    best = np.full(nv, -np.inf)
    back = np.full(nv, -1, dtype=np.int64)
    for e in range(head.shape[0]):
        if not mask[e]:
            continue
        val = score[e]
        for p in range(kept_ptr[e], kept_ptr[e + 1]):
            val += ue[kept_idx[p]]
        for p in range(tail_ptr[e], tail_ptr[e + 1]):
            val += best[tail_idx[p]]
        if val > best[head[e]]:
            best[head[e]] = val
            back[head[e]] = e
    return best, back


@njit(cache=True)
def _hyperedge_vector(e, n, table, span, tail_ptr, tail_idx, kept_ptr, kept_idx, score,  # pragma: no cover
                      ue):
    """Best score of hyperedge e for every total number of kept tokens (max-plus convolution of its tails)."""
    cur = np.full(n + 1, -np.inf)
    base = score[e]
    nk = kept_ptr[e + 1] - kept_ptr[e]
    for p in range(kept_ptr[e], kept_ptr[e + 1]):
        base += ue[kept_idx[p]]
    cur[nk] = base
    hi = nk
    for p in range(tail_ptr[e], tail_ptr[e + 1]):
        t = tail_idx[p]
        s = span[t]
        nxt = np.full(n + 1, -np.inf)
        for i in range(hi + 1):
            a = cur[i]
            if a == -np.inf:
                continue
            for j in range(1, s + 1):
                b = table[t, j]
                if b != -np.inf and a + b > nxt[i + j]:
                    nxt[i + j] = a + b
        cur = nxt
        hi += s
    return cur


@njit(cache=True)
def _length_chart(nv, n, span, head, tail_ptr, tail_idx, kept_ptr, kept_idx, score, ue):  # pragma: no cover
    table = np.full((nv, n + 1), -np.inf)
    back = np.full((nv, n + 1), -1, dtype=np.int64)
    for e in range(head.shape[0]):
        vec = _hyperedge_vector(e, n, table, span, tail_ptr, tail_idx, kept_ptr, kept_idx, score, ue)
        h = head[e]
        for m in range(n + 1):
            if vec[m] > table[h, m]:
                table[h, m] = vec[m]
                back[h, m] = e
    return table, back


# ----------------------------------------------------------------------------------------------------
# the component
# ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Derivation:
    """A derivation: its hyperedges (ids into the hypergraph), target tree, keep vector and scores.

    Attributes
    ----------
    hyperedges : tuple of int
        Hyperedge ids, top-down (preorder of the target derivation).
    tree : Tree
        The target tree (leaves carry source token positions).
    keep : numpy.ndarray
        bool (n,).
    score : float
        Objective including the ``u`` terms.
    """

    hyperedges: tuple[int, ...]
    tree: Tree
    keep: np.ndarray
    score: float

    def rules(self, hypergraph: Hypergraph) -> list[Rule]:
        """The rules of the derivation."""
        return [hypergraph.rules[int(hypergraph.hyperedge_rule[e])] for e in self.hyperedges]


class Transducer:
    """T3 component: exact STSG decoding over one source tree (contract 4).

    Parameters
    ----------
    tree : Tree
        Source tree (leaves indexed 0..n-1).
    grammar : Grammar
        Rules.
    score : callable or None
        ``score(rule, dropped) -> float`` (see ``RuleScore``); None scores every rule 0.
    coverage : bool
        Add copy/deletion rules for the tree's productions (default True; see ``fallback``).
    name : str
        Base of the pulp names made by :meth:`to_ilp`.

    Attributes
    ----------
    n : int
        Number of tokens.
    hypergraph : Hypergraph
    hyperedge_score : numpy.ndarray
        Score of each hyperedge (read-only).
    fallback : bool
        True iff the grammar alone could not derive the tree and added coverage rules were needed.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(exact_length=True, derivation_forest=True)

    def __init__(self, tree: Tree, grammar: Grammar, score: RuleScore | None = None, coverage: bool = True,
                 name: str = "t3", hypergraph: Hypergraph | None = None,
                 hyperedge_score: np.ndarray | None = None) -> None:
        hg = hypergraph if hypergraph is not None else build_hypergraph(tree, grammar, coverage)
        self.hypergraph = hg
        self.n = hg.n
        self.name = name
        if hyperedge_score is None:
            hyperedge_score = np.zeros(hg.num_hyperedges)
            if score is not None:
                for e in range(hg.num_hyperedges):
                    hyperedge_score[e] = float(score(hg.rules[int(hg.hyperedge_rule[e])], len(hg.dropped(e))))
        hyperedge_score = np.array(hyperedge_score, dtype=np.float64)
        if hyperedge_score.shape != (hg.num_hyperedges,) or not np.isfinite(hyperedge_score).all():
            raise InputError("hyperedge scores must be finite, one per hyperedge")
        hyperedge_score.flags.writeable = False
        self.hyperedge_score = hyperedge_score
        self.fallback = hg.fallback

    @classmethod
    def from_hypergraph(cls, hypergraph: Hypergraph, hyperedge_score: np.ndarray,
                        name: str = "t3") -> Transducer:
        """A component over an existing hypergraph with new hyperedge scores (no rule matching)."""
        return cls(None, None, hypergraph=hypergraph, hyperedge_score=hyperedge_score, name=name)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        hyperedges = self.hypergraph.num_hyperedges
        return f"Transducer(n={self.n}, hyperedges={hyperedges}, fallback={self.fallback})"

    # --- decoding -----------------------------------------------------------------------------------

    def _u(self, u: Any) -> np.ndarray:
        if u is None:
            return np.zeros(self.n)
        arr = np.asarray(u, dtype=np.float64)
        if arr.shape != (self.n,):
            raise InputError(f"u must have shape ({self.n},), got {arr.shape}")
        if np.isnan(arr).any() or (arr == np.inf).any():
            raise InputError("u contains NaN or +inf")
        return np.ascontiguousarray(arr)

    def _viterbi(self, ue: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hg = self.hypergraph
        return _viterbi(len(hg.vertex_node), hg.hyperedge_head, hg.tail_ptr, hg.tail_idx, hg.kept_ptr,
                        hg.kept_idx,
                        self.hyperedge_score, ue, mask)

    def solve_tree(self, u: Any = None, length: int | None = None) -> Derivation:
        """Best derivation of score + u·keep (optionally with exactly ``length`` kept tokens).

        Returns
        -------
        Derivation
            With the target tree.

        Raises
        ------
        InputError
            Bad ``u`` or ``length``.
        SolverError
            No derivation with that many kept tokens.
        """
        hg = self.hypergraph
        ue = self._u(u)
        length = as_length(length, self.n)
        if length is None:
            best, back = self._viterbi(ue, np.ones(hg.num_hyperedges, dtype=np.bool_))
            score = best[hg.root]
            if score == -np.inf:
                raise SolverError("no derivation")
            hyperedges = self._backtrack(back)
        else:
            table, back = _length_chart(len(hg.vertex_node), self.n, hg.vertex_span, hg.hyperedge_head,
                                        hg.tail_ptr, hg.tail_idx, hg.kept_ptr, hg.kept_idx,
                                        self.hyperedge_score, ue)
            score = table[hg.root, length]
            if score == -np.inf:
                raise SolverError(f"no derivation keeps exactly {length} tokens")
            hyperedges = self._backtrack_length(table, back, ue, length)
        keep = np.zeros(self.n, dtype=bool)
        for e in hyperedges:
            keep[hg.kept(e)] = True
        return Derivation(tuple(hyperedges), self.target_tree(hyperedges), keep, float(score))

    def solve(self, u: Any = None, length: int | None = None) -> Solution:
        """Argmax of the transducer score + u·keep (contract 4); ``length``: exact number kept."""
        d = self.solve_tree(u, length)
        return Solution(keep=d.keep, score=d.score)

    def solve_lengths(self, u: Any = None) -> np.ndarray:
        """Best score + u·keep for every exact length 0..n (-inf where impossible)."""
        hg = self.hypergraph
        table, _ = _length_chart(len(hg.vertex_node), self.n, hg.vertex_span, hg.hyperedge_head, hg.tail_ptr,
                                 hg.tail_idx, hg.kept_ptr, hg.kept_idx, self.hyperedge_score, self._u(u))
        return table[hg.root].copy()

    def _backtrack(self, back: np.ndarray) -> list[int]:
        hg = self.hypergraph
        out = []
        stack = [hg.root]
        while stack:
            v = stack.pop()
            e = int(back[v])
            out.append(e)
            stack.extend(reversed(hg.tails(e).tolist()))
        return out

    def _backtrack_length(self, table: np.ndarray, back: np.ndarray, ue: np.ndarray, length: int
                          ) -> list[int]:
        hg = self.hypergraph
        out = []
        stack = [(hg.root, length)]
        while stack:
            v, m = stack.pop()
            e = int(back[v, m])
            out.append(e)
            tails = hg.tails(e).tolist()
            nk = len(hg.kept(e))
            # recover the split: prefix vectors, then walk backwards through the tails
            prefixes = [np.full(self.n + 1, -np.inf)]
            base = self.hyperedge_score[e]
            for k in hg.kept(e):
                base += ue[k]
            prefixes[0][nk] = base
            for t in tails:
                cur = prefixes[-1]
                nxt = np.full(self.n + 1, -np.inf)
                for i in range(self.n + 1):
                    if cur[i] == -np.inf:
                        continue
                    for j in range(1, int(hg.vertex_span[t]) + 1):
                        b = table[t, j]
                        if b != -np.inf and i + j <= self.n and cur[i] + b > nxt[i + j]:
                            nxt[i + j] = cur[i] + b
                prefixes.append(nxt)
            split = []
            rem = m
            for pos in range(len(tails) - 1, -1, -1):
                t = tails[pos]
                target = prefixes[pos + 1][rem]
                prev = prefixes[pos]
                found = -1
                for j in range(1, int(hg.vertex_span[t]) + 1):
                    if rem - j >= 0 and prev[rem - j] != -np.inf and table[t, j] != -np.inf \
                            and prev[rem - j] + table[t, j] == target:
                        found = j
                        break
                if found < 0:  # pragma: no cover - arithmetic is replayed exactly
                    raise SolverError("length backtracking failed")
                split.append((t, found))
                rem -= found
            split.reverse()
            stack.extend(reversed(split))
        return out

    # --- target trees -------------------------------------------------------------------------------

    def target_tree(self, hyperedges: Sequence[int]) -> Tree:
        """The target tree of a derivation given by its hyperedges (any order)."""
        hg = self.hypergraph
        at: dict[int, int] = {int(hg.hyperedge_head[e]): int(e) for e in hyperedges}
        vid = {(hg.vertex_node[v], hg.vertex_label[v]): v for v in at}

        def build(e: int) -> Tree:
            rule = hg.rules[int(hg.hyperedge_rule[e])]
            kept_nodes = [j for f, j in zip(rule.source.frontier(), hg.frontier[e], strict=True) if f.kept]
            it = iter(kept_nodes)

            def inst(f: Frag) -> Tree:
                if f.kind == NODE:
                    return Tree(f.label, tuple(inst(c) for c in f.children))
                j = next(it)
                if f.kind == WORD:
                    return leaf(f.label, hg.tree.nodes[j].index)
                return build(at[vid[(j, f.label)]])

            return inst(rule.target)

        return build(at[hg.root])

    # --- contract 4 ---------------------------------------------------------------------------------

    def best_given(self, keep: Any) -> float:
        """Best own score (no u) over derivations whose yield is exactly ``keep``; -inf if none."""
        kv = as_keep(keep, self.n)
        hg = self.hypergraph
        mask = np.ones(hg.num_hyperedges, dtype=np.bool_)
        for e in range(hg.num_hyperedges):
            if not kv[hg.kept(e)].all() or kv[hg.dropped(e)].any():
                mask[e] = False
        best, _ = self._viterbi(np.zeros(self.n), mask)
        return float(best[hg.root])

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add the hypergraph formulation to a pulp problem; return its objective (without u).

        One binary variable per hyperedge; exactly one hyperedge at the root vertex; for every other vertex,
        hyperedges into it = hyperedges using it as a tail; at most one hyperedge per source node; and for
        every token k, ``keep_k`` = Σ of the hyperedges that keep k. Integer solutions are exactly the
        derivations.

        Parameters
        ----------
        problem : pulp.LpProblem
        keep_vars : list of pulp.LpVariable
            n binary variables, ``keep_vars[k-1]`` for token k.
        prefix : str, optional
            Name prefix (default: a fresh ``f"{name}{k}_"``).

        Returns
        -------
        pulp.LpAffineExpression
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

        hg = self.hypergraph
        if len(keep_vars) != self.n:
            raise InputError(f"keep_vars must have {self.n} variables, got {len(keep_vars)}")
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        x = [binary_var(problem, f"{pre}e_{e}") for e in range(hg.num_hyperedges)]
        nv = len(hg.vertex_node)
        into: list[list[Any]] = [[] for _ in range(nv)]
        used: list[list[Any]] = [[] for _ in range(nv)]
        at_node: dict[int, list[Any]] = {}
        keeps: list[list[Any]] = [[] for _ in range(self.n)]
        for e in range(hg.num_hyperedges):
            into[int(hg.hyperedge_head[e])].append(x[e])
            at_node.setdefault(int(hg.hyperedge_node[e]), []).append(x[e])
            for t in hg.tails(e):
                used[int(t)].append(x[e])
            for k in hg.kept(e):
                keeps[int(k)].append(x[e])
        problem += pulp.lpSum(into[hg.root]) == 1, f"{pre}root"
        for v in range(nv):
            if v != hg.root:
                problem += pulp.lpSum(into[v]) - pulp.lpSum(used[v]) == 0, f"{pre}flow_{v}"
        for node, vars_ in at_node.items():
            problem += pulp.lpSum(vars_) <= 1, f"{pre}node_{node}"
        for k in range(self.n):
            problem += pulp.lpSum(keeps[k]) - keep_vars[k] == 0, f"{pre}keep_{k + 1}"
        return pulp.lpSum(float(self.hyperedge_score[e]) * x[e] for e in range(hg.num_hyperedges))
