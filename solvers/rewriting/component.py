"""The rewriting chart as a dual-decomposition component over the source tokens (contract 4).

Joint decoding of a tree transducer with an n-gram model of the *source* tokens' keep indicators is the
T3+LM dual decomposition of Yao, Wan & Xiao (2014, §4): the components agree on which source tokens are
kept. A rewriting derivation covers every source token exactly once: either one hyperedge *deletes* it
(a deleted word of its rule, or a leaf under a deleted variable: ``RewriteHypergraph.dropped``) or one
hyperedge *uses* it (a source word some target word is aligned to: copied or substituted). So its keep
vector, token k kept iff no hyperedge of the derivation deletes it, is

    keep_k = 1 − Σ_{e ∈ d} [k ∈ dropped(e)],

linear in the derivation's hyperedges, and ``chart(d) + Σ_k u_k keep_k`` is the chart's own objective
with ``−Σ_{k ∈ dropped(e)} u_k`` added to every hyperedge e, plus the constant ``Σ_k u_k``. ``solve(u)``
decodes that with the exact chart (:func:`~dualdecomp.solvers.rewriting.chart.decode`: the target bigram
LM and the budget stay inside it), so it is exact. A token with ``u_k = −inf`` (fixed to deletion by the
engine's branch and bound) is handled by dropping the hyperedges that use it.

``best_given(keep)`` restricts the hypergraph to the hyperedges that delete no kept token and use no
deleted one; every derivation of what is left has exactly that keep vector (each token is covered once),
and every derivation with that keep vector is left, so the chart's optimum there is the best own score
given ``keep`` (−inf when the restriction derives nothing, or nothing within the budget).

``to_ilp``: without an LM, one binary variable per hyperedge, exactly one hyperedge into the root vertex,
into every other vertex as many as use it as a tail, at most one per source node, ``keep_k + Σ_{e deletes
k} x_e = 1``, and for a words budget ``Σ_e words(e) x_e = N``; integer solutions are exactly the
derivations (within the budget). The target bigram LM (its score depends on which words meet across
hyperedges) and a character budget (the first word's space is not counted) have no such linear form
here: such a component declares ``ilp=False`` and ``to_ilp`` raises.

The component has no exact-length DP over the *source* tokens (the chart's words budget counts target
words, which substitution and insertion make different from the kept source tokens), so a length over
the kept source tokens is enforced by the engine's multiplier. Its capabilities depend on the instance
(``ilp``), so ``capabilities`` is set per instance; :func:`~dualdecomp.core.component.capabilities_of`
reads it as any other.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dualdecomp.core.checks import as_keep, as_u
from dualdecomp.core.component import Capabilities
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.ilp_vars import binary_var, unused_prefix
from dualdecomp.core.solution import Solution
from dualdecomp.solvers.rewriting.chart import Budget, RewriteDerivation, decode
from dualdecomp.solvers.rewriting.hypergraph import RewriteHypergraph, _csr, _domains
from dualdecomp.solvers.transducer import WORD

__all__ = ["RewriteComponent", "copied_token_lists", "copied_tokens", "keep_means_copied",
           "restrict_hypergraph", "target_word_links", "used_tokens"]


def _uses(hg: RewriteHypergraph, e: int) -> list[int]:
    """The source tokens hyperedge ``e`` uses, ascending (:func:`used_tokens`)."""
    T = hg.tree
    covered = set(T.leaf_indices(int(hg.hyperedge_node[e])))
    for t in hg.tails(e).tolist():
        covered.difference_update(T.leaf_indices(hg.vertex_node[t]))
    covered.difference_update(hg.dropped(e).tolist())
    return sorted(covered)


def used_tokens(hg: RewriteHypergraph) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, idx) of the source tokens each hyperedge *uses* (copies or substitutes).

    A hyperedge at node v covers the leaves under v that are not under one of its tails' nodes; of
    those, the ones it does not delete are used.
    """
    ptr = [0]
    idx: list[int] = []
    for e in range(hg.num_hyperedges):
        idx.extend(_uses(hg, e))
        ptr.append(len(idx))
    return np.asarray(ptr, dtype=np.int64), np.asarray(idx, dtype=np.int64)


def target_word_links(rule: Any) -> tuple[tuple[int | None, str | None, str], ...]:
    """Per target word of ``rule`` (frontier order): the rank of its aligned source word among the rule's
    *kept* source words (None for an inserted word), that source word's text (None likewise) and the
    target word's text.

    A hyperedge of the rule uses exactly its kept source words' tokens, in ascending order
    (:func:`used_tokens`), so the rank indexes them: ``used[rank]`` is the aligned token.
    """
    source = [f for f in rule.source.frontier() if f.kind == WORD]
    rank: dict[int, int] = {j: r for r, j in enumerate(j for j, f in enumerate(source) if f.kept)}
    target = [f.label for f in rule.target.frontier() if f.kind == WORD]
    return tuple((None, None, w) if j is None else (rank[j], source[j].label, w)
                 for w, j in zip(target, rule.word_links, strict=True))


def _copied_ranks(rule: Any) -> list[int]:
    """The ranks (:func:`target_word_links`) of the kept source words ``rule`` writes as themselves."""
    return sorted({r for r, s, w in target_word_links(rule) if r is not None and s == w})


def copied_tokens(hg: RewriteHypergraph, e: int) -> list[int]:
    """The source tokens hyperedge ``e`` *copies*: those it uses (:func:`used_tokens`) with a target word
    of the same text aligned to them (``RewriteRule.word_links``), ascending."""
    uses = _uses(hg, e)
    return [uses[r] for r in _copied_ranks(hg.rule(e))]


def copied_token_lists(hg: RewriteHypergraph, used: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, idx) of the source tokens each hyperedge copies (:func:`copied_tokens` of every
    hyperedge; each rule's alignment is read once). ``used``: :func:`used_tokens` of ``hg`` when the
    caller has it already (else each copying hyperedge's used tokens are found here)."""
    ranks: dict[int, list[int]] = {}
    ptr = [0]
    idx: list[int] = []
    for e in range(hg.num_hyperedges):
        r = int(hg.hyperedge_rule[e])
        if r not in ranks:
            ranks[r] = _copied_ranks(hg.rules[r])
        if ranks[r]:
            uses = _uses(hg, e) if used is None else used[1][used[0][e]:used[0][e + 1]].tolist()
            idx.extend(uses[k] for k in ranks[r])
        ptr.append(len(idx))
    return np.asarray(ptr, dtype=np.int64), np.asarray(idx, dtype=np.int64)


def keep_means_copied(hg: RewriteHypergraph, tokens: Any) -> RewriteHypergraph:
    """A copy of ``hg`` in which a hyperedge that uses one of ``tokens`` (0-based) without copying it
    (:func:`copied_tokens`: it substitutes the token) lists the token among those it deletes.

    For those tokens the keep vector of a derivation, and so the component's ``keep`` (module
    docstring), then means *written as itself*: a substituted token counts as dropped. Each token is
    still covered once by every derivation (it moves from used to deleted within one hyperedge), the
    derivations, their words and scores are unchanged (the chart does not read the deletion lists), so
    the component stays exact. Compute hyperedge scores on ``hg`` itself: per-application features read
    its deletion lists.
    """
    marked = {int(k) for k in tokens}
    use_ptr, use_idx = used = used_tokens(hg)
    copy_ptr, copy_idx = copied_token_lists(hg, used)
    ptr, idx = [0], []
    for e in range(hg.num_hyperedges):
        drops = hg.dropped(e).tolist()
        hit = marked.intersection(use_idx[use_ptr[e]:use_ptr[e + 1]].tolist())
        if hit:
            drops = sorted(set(drops) | (hit - set(copy_idx[copy_ptr[e]:copy_ptr[e + 1]].tolist())))
        idx.extend(drops)
        ptr.append(len(idx))
    return dataclasses.replace(hg, drop_ptr=np.asarray(ptr, dtype=np.int64),
                               drop_idx=np.asarray(idx, dtype=np.int64))


def restrict_hypergraph(hg: RewriteHypergraph, allowed: np.ndarray
                        ) -> tuple[RewriteHypergraph, np.ndarray] | None:
    """The hypergraph of the derivations that use only ``allowed`` hyperedges.

    Parameters
    ----------
    hg : RewriteHypergraph
    allowed : numpy.ndarray
        bool (hyperedges,).

    Returns
    -------
    (RewriteHypergraph, numpy.ndarray) or None
        The restricted hypergraph (its hyperedges derivable and reachable from the root, vertices
        renumbered, the same vocabulary so an LM matrix still fits) and the original id of each of its
        hyperedges; None when no derivation is left.
    """
    head, ptr = hg.hyperedge_head, hg.tail_ptr
    ok = np.zeros(hg.num_vertices, dtype=bool)
    derivable = np.zeros(hg.num_hyperedges, dtype=bool)
    for e in range(hg.num_hyperedges):  # bottom-up
        if allowed[e] and ok[hg.tail_idx[ptr[e]:ptr[e + 1]]].all():
            derivable[e] = True
            ok[head[e]] = True
    if not ok[hg.root]:
        return None
    reach = np.zeros(hg.num_vertices, dtype=bool)
    reach[hg.root] = True
    keep = np.zeros(hg.num_hyperedges, dtype=bool)
    for e in range(hg.num_hyperedges - 1, -1, -1):  # top-down: tails lie strictly below the head's node
        if derivable[e] and reach[head[e]]:
            keep[e] = True
            reach[hg.tail_idx[ptr[e]:ptr[e + 1]]] = True
    old = np.flatnonzero(keep)
    vmap = np.full(hg.num_vertices, -1, dtype=np.int64)
    vmap[hg.root] = 0
    count = 1
    for e in old:  # renumber the vertices in order of first appearance (root first)
        for v in (int(head[e]), *hg.tail_idx[ptr[e]:ptr[e + 1]].tolist()):
            if vmap[v] < 0:
                vmap[v] = count
                count += 1
    vertices = np.argsort(np.where(vmap >= 0, vmap, hg.num_vertices), kind="stable")[:count]

    def csr(p: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lengths = p[old + 1] - p[old]
        rows = [values[p[e]:p[e + 1]] for e in old]
        return (np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64))

    t_ptr, t_idx = csr(hg.tail_ptr, hg.tail_idx)
    i_ptr, i_code = csr(hg.item_ptr, hg.item_code)
    i_code = np.where(i_code >= 0, i_code, -vmap[np.maximum(-i_code - 1, 0)] - 1)
    d_ptr, d_idx = csr(hg.drop_ptr, hg.drop_idx)
    new_head = vmap[head[old]]
    first, last, empty = _domains(count, new_head, i_ptr, i_code)
    f_ptr, f_idx = _csr(first)
    l_ptr, l_idx = _csr(last)
    sub = dataclasses.replace(
        hg, vertex_node=tuple(hg.vertex_node[v] for v in vertices),
        vertex_label=tuple(hg.vertex_label[v] for v in vertices), root=0,
        hyperedge_node=hg.hyperedge_node[old], hyperedge_rule=hg.hyperedge_rule[old],
        hyperedge_head=new_head, tail_ptr=t_ptr, tail_idx=vmap[t_idx], item_ptr=i_ptr, item_code=i_code,
        drop_ptr=d_ptr, drop_idx=d_idx,
        operations=hg.operations[old], first_ptr=f_ptr, first_idx=f_idx, last_ptr=l_ptr, last_idx=l_idx,
        can_be_empty=np.asarray(empty, dtype=bool))
    return sub, old


def _segment_sums(ptr: np.ndarray, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per CSR row e: the sum of ``values[idx[ptr[e]:ptr[e+1]]]``."""
    rows = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
    return np.bincount(rows, weights=values[idx], minlength=ptr.shape[0] - 1).astype(np.float64)


class RewriteComponent:
    """The rewriting chart as a component over the n source tokens (module docstring).

    Parameters
    ----------
    hg : RewriteHypergraph
        The target-derivation forest of the source tree.
    hyperedge_scores : array_like
        One finite score per hyperedge.
    lm : numpy.ndarray, optional
        The target bigram LM matrix of :func:`~dualdecomp.solvers.rewriting.chart.decode` ((V+2, V+2),
        ``-inf`` forbids a bigram).
    budget : Budget, optional
        A budget on the rewrite (target words or characters), enforced inside the chart.
    name : str
        Base of the pulp names made by :meth:`to_ilp`.

    Attributes
    ----------
    n : int
        Number of source tokens.
    capabilities : Capabilities
        No exact-length DP; ``best_given``; ``ilp`` only without an LM and without a character budget.
    derivation : RewriteDerivation or None
        The derivation of the last :meth:`solve` (hyperedge ids of ``hg``; ``score`` its own chart score,
        without ``u``); None before the first.

    Raises
    ------
    InputError
        Bad scores, LM matrix or budget.
    """

    def __init__(self, hg: RewriteHypergraph, hyperedge_scores: Any, lm: np.ndarray | None = None,
                 budget: Budget | None = None, name: str = "rewrite") -> None:
        scores = np.array(hyperedge_scores, dtype=np.float64)
        if scores.shape != (hg.num_hyperedges,) or not np.isfinite(scores).all():
            raise InputError(f"hyperedge scores must be {hg.num_hyperedges} finite numbers")
        if lm is not None:
            V = len(hg.vocab)
            lm = np.array(lm, dtype=np.float64)
            if lm.shape != (V + 2, V + 2):
                raise InputError(f"the LM matrix must be {V + 2}x{V + 2} (vocabulary + BOS + EOS), "
                                 f"got {lm.shape}")
            if np.isnan(lm).any() or (lm == np.inf).any():
                raise InputError("the LM matrix contains NaN or +inf")
            lm.flags.writeable = False
        if budget is not None and not isinstance(budget, Budget):
            raise InputError(f"budget must be a Budget, got {budget!r}")
        scores.flags.writeable = False
        self.hypergraph = hg
        self.hyperedge_scores = scores
        self.lm = lm
        self.budget = budget
        self.name = name
        self.n = hg.n
        linear = lm is None and (budget is None or budget.kind == "words")
        self.capabilities = Capabilities(exact_length=False, best_given=True, ilp=linear)
        self.use_ptr, self.use_idx = used_tokens(hg)
        self.derivation: RewriteDerivation | None = None

    def __repr__(self) -> str:
        return (f"RewriteComponent(n={self.n}, hyperedges={self.hypergraph.num_hyperedges}, "
                f"lm={self.lm is not None}, budget={self.budget})")

    # --- decoding -----------------------------------------------------------------------------------

    def _decode(self, allowed: np.ndarray | None, scores: np.ndarray
                ) -> tuple[RewriteDerivation, float] | None:
        """The chart's best derivation over the ``allowed`` hyperedges under ``scores`` (hyperedge ids
        mapped back to ``hg``) and its own score; None when none (within the budget)."""
        hg = self.hypergraph
        old = None
        if allowed is not None and not allowed.all():
            restricted = restrict_hypergraph(hg, allowed)
            if restricted is None:
                return None
            hg, old = restricted
            scores = scores[old]
        try:
            d = decode(hg, scores, self.lm, self.budget)
        except InputError:  # inputs are checked at construction: no derivation meets the budget
            return None
        hyperedges = d.hyperedges if old is None else tuple(int(old[e]) for e in d.hyperedges)
        own = float(sum(self.hyperedge_scores[e] for e in hyperedges)) + d.lm_score
        return dataclasses.replace(d, hyperedges=hyperedges, score=own), own

    def keep_of(self, hyperedges: Any) -> np.ndarray:
        """The keep vector (bool (n,)) of a derivation given by its hyperedge ids: the tokens none of them
        deletes."""
        keep = np.ones(self.n, dtype=bool)
        for e in hyperedges:
            keep[self.hypergraph.dropped(int(e))] = False
        return keep

    def solve(self, u: Any = None) -> Solution:
        """Argmax of the chart score + u·keep (contract 4; exact).

        Parameters
        ----------
        u : array_like, optional
            Shape (n,); ``-inf`` forces the token's deletion.

        Returns
        -------
        Solution
            The keep vector of the best derivation and its objective (own score + u·keep, recomputed from
            the derivation). The derivation is kept in :attr:`derivation`.

        Raises
        ------
        InputError
            Bad ``u``.
        SolverError
            No derivation deletes the tokens ``u`` forces out, or none meets the budget.
        """
        uv = as_u(u, self.n)
        forced = uv == -np.inf
        allowed = None
        if forced.any():
            allowed = _segment_sums(self.use_ptr, self.use_idx, forced.astype(np.float64)) == 0
        ufin = np.where(forced, 0.0, uv)
        hg = self.hypergraph
        folded = self.hyperedge_scores - _segment_sums(hg.drop_ptr, hg.drop_idx, ufin)
        found = self._decode(allowed, folded)
        if found is None:
            raise SolverError("no rewrite deletes the tokens fixed to deletion"
                              + ("" if self.budget is None else " within the budget"))
        d, own = found
        self.derivation = d
        keep = self.keep_of(d.hyperedges)
        return Solution(keep=keep, score=own + float(ufin[keep].sum()))

    def derivation_given(self, keep: Any) -> RewriteDerivation | None:
        """The best derivation (own score: chart score, LM included, no u) whose keep vector is exactly
        ``keep``; None if none (within the budget). Its ``score`` is :meth:`best_given` ``(keep)``; the
        joint decoder's rewrite is read from it at the engine's final keep (``derivation`` is the last
        :meth:`solve`'s, whose keep may differ from the one returned)."""
        kv = as_keep(keep, self.n)
        hg = self.hypergraph
        deletes_kept = _segment_sums(hg.drop_ptr, hg.drop_idx, kv.astype(np.float64)) > 0
        uses_deleted = _segment_sums(self.use_ptr, self.use_idx, (~kv).astype(np.float64)) > 0
        found = self._decode(~(deletes_kept | uses_deleted), self.hyperedge_scores)
        return None if found is None else found[0]

    def best_given(self, keep: Any) -> float:
        """Best own score (chart score, LM included, no u) over derivations whose keep vector is exactly
        ``keep``; -inf if none (within the budget)."""
        d = self.derivation_given(keep)
        return -np.inf if d is None else float(d.score)

    # --- contract 4: the ILP ------------------------------------------------------------------------

    def to_ilp(self, problem: Any, keep_vars: list[Any], prefix: str | None = None) -> Any:
        """Add the hypergraph formulation (module docstring) to a pulp problem; return its objective.

        Raises
        ------
        InputError
            The component has an LM or a character budget (``capabilities.ilp`` is False), or
            ``keep_vars`` has the wrong size.
        """
        import pulp  # lazy: PuLP (slow to import) is needed only by the ILP paths

        if not self.capabilities.ilp:
            raise InputError("the rewriting chart with a target LM or a character budget has no linear "
                             "formulation (capabilities.ilp is False)")
        hg = self.hypergraph
        if len(keep_vars) != self.n:
            raise InputError(f"keep_vars must have {self.n} variables, got {len(keep_vars)}")
        pre = prefix if prefix is not None else unused_prefix(problem, self.name)
        x = [binary_var(problem, f"{pre}e_{e}") for e in range(hg.num_hyperedges)]
        into: list[list[Any]] = [[] for _ in range(hg.num_vertices)]
        used: list[list[Any]] = [[] for _ in range(hg.num_vertices)]
        at_node: dict[int, list[Any]] = {}
        deletes: list[list[Any]] = [[] for _ in range(self.n)]
        for e in range(hg.num_hyperedges):
            into[int(hg.hyperedge_head[e])].append(x[e])
            at_node.setdefault(int(hg.hyperedge_node[e]), []).append(x[e])
            for t in hg.tails(e).tolist():
                used[t].append(x[e])
            for k in hg.dropped(e).tolist():
                deletes[k].append(x[e])
        problem += pulp.lpSum(into[hg.root]) == 1, f"{pre}root"
        for v in range(hg.num_vertices):
            if v != hg.root:
                problem += pulp.lpSum(into[v]) - pulp.lpSum(used[v]) == 0, f"{pre}flow_{v}"
        for node, vars_ in at_node.items():
            problem += pulp.lpSum(vars_) <= 1, f"{pre}node_{node}"
        for k in range(self.n):
            problem += keep_vars[k] + pulp.lpSum(deletes[k]) == 1, f"{pre}keep_{k + 1}"
        if self.budget is not None:  # a words budget (capabilities.ilp)
            written = [int((hg.items(e) >= 0).sum()) for e in range(hg.num_hyperedges)]
            problem += (pulp.lpSum(w * x[e] for e, w in enumerate(written) if w)
                        == int(self.budget.limit(hg.source_chars))), f"{pre}words"
        return pulp.lpSum(float(self.hyperedge_scores[e]) * x[e] for e in range(hg.num_hyperedges))
