"""The rewriting chart as a dual-decomposition component over the source tokens (W3.3 item 3, the T3+LM
joint decoding of Yao et al. 2014): solve(u) and best_given against a brute-force enumeration of
derivations, its ILP against the same enumeration, and the engine joined with a bigram path over the
source tokens against the ILP reference and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dualdecomp.ilp
from dualdecomp.core.component import capabilities_of
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.trees import Tree, preterminal
from dualdecomp.engine.decode import decode as dd_decode
from dualdecomp.models.rewriting.features import RewriteFeaturiser
from dualdecomp.models.rewriting.model import RewriteDecoder, RewriteModel
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.rewriting import (
    Budget,
    RewriteComponent,
    RewriteGrammar,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    derivation_score,
    restrict_hypergraph,
    rewriting_coverage_rules,
    text_chars,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag
from dualdecomp.solvers.unary import Unary
from tests.oracles.rewriting import enumerate_rewrites
from tests.test_rewriting_chart import random_instance

TOL = 1e-9


# --- instances --------------------------------------------------------------------------------------


def instance(seed: int, with_lm: bool):
    """A random tree and rules (those of the chart's tests), hyperedge scores by (rule, node), an optional
    random LM, and every derivation enumerated by the oracle."""
    rng, tree, rules = random_instance(seed)
    hg = build_rewrite_hypergraph(tree, rules, rewriting_coverage_rules)
    table: dict[tuple[str, int], float] = {}

    def score(rule: RewriteRule, node: int) -> float:
        if (rule.key, node) not in table:
            table[rule.key, node] = float(np.round(rng.normal(), 3))
        return table[rule.key, node]

    scores = np.array([score(hg.rule(e), int(hg.hyperedge_node[e])) for e in range(hg.num_hyperedges)])
    lm = None
    if with_lm:
        lm = np.round(rng.normal(size=(len(hg.vocab) + 2,) * 2), 3)
        if rng.random() < 0.3:
            lm[rng.random(lm.shape) < 0.15] = -np.inf
    derivs = enumerate_rewrites(tree, rules, score, rewriting_coverage_rules)
    return rng, hg, scores, lm, derivs


def lm_of(hg, lm, words) -> float:
    if lm is None:
        return 0.0
    ids = {w: i for i, w in enumerate(hg.vocab)}
    seq = [hg.bos, *(ids[w] for w in words), hg.eos]
    return float(sum(lm[a, b] for a, b in zip(seq, seq[1:], strict=False)))


def within(budget: Budget | None, hg, words) -> bool:
    if budget is None:
        return True
    limit = budget.limit(hg.source_chars)
    return len(words) == limit if budget.kind == "words" else text_chars(words) <= limit


def keep_of(hg, d) -> np.ndarray:
    return np.array([k not in d.deleted for k in range(hg.n)], dtype=bool)


def oracle_rows(hg, lm, derivs, budget):
    """(own score, keep) of every derivation within the budget with a finite score."""
    rows = []
    for d in derivs:
        if not within(budget, hg, d.words):
            continue
        own = d.score + lm_of(hg, lm, d.words)
        if own > -math.inf:
            rows.append((own, keep_of(hg, d)))
    return rows


def random_budget(rng, hg, words_only: bool = False) -> Budget | None:
    r = rng.random()
    if r < 0.4:
        return None
    if r < 0.7 or words_only:
        return Budget.words(int(rng.integers(0, hg.n + 3)))
    return Budget.chars(int(rng.integers(0, hg.source_chars + 6)))


def random_u(rng, n: int) -> np.ndarray:
    u = np.round(rng.normal(scale=2.0, size=n), 3)
    if rng.random() < 0.3:
        u[rng.random(n) < 0.3] = -np.inf
    return u


def objective(own: float, keep: np.ndarray, u: np.ndarray) -> float:
    if (u[keep] == -np.inf).any():
        return -math.inf
    return own + float(u[keep].sum())


# --- solve and best_given against brute force --------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_solve_matches_brute_force(seed: int, with_lm: bool) -> None:
    rng, hg, scores, lm, derivs = instance(seed, with_lm)
    budget = random_budget(rng, hg)
    comp = RewriteComponent(hg, scores, lm, budget)
    for _ in range(3):
        u = random_u(rng, hg.n)
        values = [objective(own, keep, u) for own, keep in oracle_rows(hg, lm, derivs, budget)]
        best = max(values, default=-math.inf)
        if best == -math.inf:
            with pytest.raises(SolverError):
                comp.solve(u)
            continue
        sol = comp.solve(u)
        assert math.isclose(sol.score, best, rel_tol=0, abs_tol=TOL)
        d = comp.derivation
        assert d is not None and d.certified
        own, words = derivation_score(hg, scores, lm, d.hyperedges)
        assert words == d.words and within(budget, hg, words)
        assert math.isclose(own, d.score, rel_tol=0, abs_tol=TOL)
        assert np.array_equal(sol.keep, comp.keep_of(d.hyperedges))
        assert math.isclose(objective(own, sol.keep, u), sol.score, rel_tol=0, abs_tol=TOL)
        # among derivations with one keep vector u·keep is constant: the argmax is the best given its keep
        assert math.isclose(comp.best_given(sol.keep), own, rel_tol=0, abs_tol=TOL)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_best_given_matches_brute_force(seed: int, with_lm: bool) -> None:
    rng, hg, scores, lm, derivs = instance(seed, with_lm)
    budget = random_budget(rng, hg)
    comp = RewriteComponent(hg, scores, lm, budget)
    best: dict[bytes, float] = {}
    for own, keep in oracle_rows(hg, lm, derivs, budget):
        best[keep.tobytes()] = max(best.get(keep.tobytes(), -math.inf), own)
    keeps = [keep_of(hg, d) for d in derivs] + [rng.random(hg.n) < 0.5 for _ in range(4)]
    for keep in keeps:
        expected = best.get(keep.tobytes(), -math.inf)
        got = comp.best_given(keep)
        if expected == -math.inf:
            assert got == -math.inf
        else:
            assert math.isclose(got, expected, rel_tol=0, abs_tol=TOL)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_restricted_hypergraph_has_exactly_the_allowed_derivations(seed: int) -> None:
    rng, hg, scores, _, _ = instance(seed, False)
    allowed = rng.random(hg.num_hyperedges) < 0.7
    restricted = restrict_hypergraph(hg, allowed)
    # brute force over the original hypergraph: the best derivation using only allowed hyperedges
    comp = RewriteComponent(hg, scores)
    best = -math.inf
    for e_set in _derivations(hg):
        if all(allowed[e] for e in e_set):
            best = max(best, float(scores[list(e_set)].sum()))
    if restricted is None:
        assert best == -math.inf
        return
    sub, old = restricted
    assert allowed[old].all()
    d = decode(sub, scores[old])
    assert math.isclose(d.score, best, rel_tol=0, abs_tol=TOL)
    total, words = derivation_score(hg, scores, None, [int(old[e]) for e in d.hyperedges])
    assert words == d.words and math.isclose(total, best, rel_tol=0, abs_tol=TOL)
    assert comp.n == hg.n


def _derivations(hg):
    """Every derivation of ``hg`` as a tuple of hyperedge ids (its own enumeration, for small graphs)."""
    by_head: dict[int, list[int]] = {}
    for e in range(hg.num_hyperedges):
        by_head.setdefault(int(hg.hyperedge_head[e]), []).append(e)

    def expand(v):
        for e in by_head.get(v, []):
            combos = [()]
            for t in hg.tails(e).tolist():
                combos = [c + sub for c in combos for sub in expand(t)]
            for c in combos:
                yield (e, *c)

    return list(expand(hg.root))


# --- the ILP against brute force ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ilp_matches_brute_force(seed: int) -> None:
    rng, hg, scores, _, derivs = instance(seed, False)
    budget = random_budget(rng, hg, words_only=True)
    comp = RewriteComponent(hg, scores, None, budget)
    assert capabilities_of(comp).ilp
    w = np.round(rng.normal(size=hg.n), 3)
    values = [own + float(w[keep].sum()) for own, keep in oracle_rows(hg, None, derivs, budget)]
    if not values:
        with pytest.raises(SolverError):
            dualdecomp.ilp.decode([comp, Unary(w)])
        return
    res = dualdecomp.ilp.decode([comp, Unary(w)])
    assert res.certified
    assert math.isclose(res.primal, max(values), rel_tol=0, abs_tol=1e-6)


def test_no_ilp_with_an_lm_or_a_character_budget() -> None:
    hg = build_rewrite_hypergraph(sentence(), [], rewriting_coverage_rules)
    scores = np.zeros(hg.num_hyperedges)
    lm = np.zeros((len(hg.vocab) + 2,) * 2)
    assert capabilities_of(RewriteComponent(hg, scores)).ilp
    assert capabilities_of(RewriteComponent(hg, scores, budget=Budget.words(3))).ilp
    for comp in (RewriteComponent(hg, scores, lm), RewriteComponent(hg, scores, budget=Budget.chars(10)),
                 RewriteComponent(hg, scores, budget=Budget.ratio(0.5))):
        caps = capabilities_of(comp)
        assert not caps.ilp and not caps.exact_length and caps.best_given
        with pytest.raises(InputError, match="no linear formulation"):
            dualdecomp.ilp.decode([comp])


# --- the engine: joined with a bigram path over the source tokens ------------------------------------


def joint_brute_force(hg, lm, derivs, budget, other, length=None) -> float:
    best = -math.inf
    for own, keep in oracle_rows(hg, lm, derivs, budget):
        if length is not None and int(keep.sum()) != length:
            continue
        best = max(best, own + other.best_given(keep))
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_engine_with_a_bigram_path_against_the_ilp(seed: int) -> None:
    rng, hg, scores, _, derivs = instance(seed, False)
    comp = RewriteComponent(hg, scores)
    bigram = Bigram(np.round(rng.normal(size=(hg.n + 2, hg.n + 2)), 3))
    length = int(rng.integers(0, hg.n + 1)) if rng.random() < 0.4 else None
    expected = joint_brute_force(hg, None, derivs, None, bigram, length)
    if expected == -math.inf:
        with pytest.raises(SolverError):
            dualdecomp.ilp.decode([comp, bigram], length=length)
        return
    ref = dualdecomp.ilp.decode([comp, bigram], length=length)
    assert ref.certified and math.isclose(ref.primal, expected, rel_tol=0, abs_tol=1e-6)
    res = dd_decode([comp, bigram], length=length, max_iterations=300)
    assert res.dual >= ref.primal - 1e-6  # the dual is an upper bound
    assert res.primal <= ref.primal + 1e-6
    value = comp.best_given(res.keep) + bigram.best_given(res.keep)
    assert math.isclose(value, res.primal, rel_tol=0, abs_tol=1e-9)
    if length is not None:
        assert int(res.keep.sum()) == length
    if res.certified:
        assert math.isclose(res.primal, ref.primal, rel_tol=0, abs_tol=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_engine_with_the_lm_inside_the_chart_against_brute_force(seed: int) -> None:
    rng, hg, scores, lm, derivs = instance(seed, True)
    budget = random_budget(rng, hg) if rng.random() < 0.3 else None
    comp = RewriteComponent(hg, scores, lm, budget)
    alone = joint_brute_force(hg, lm, derivs, budget, Unary(np.zeros(hg.n)))
    if alone == -math.inf:
        with pytest.raises(SolverError):
            dd_decode([comp])
        return
    res = dd_decode([comp])  # the chart alone: exact, certified at once
    assert res.certified and math.isclose(res.primal, alone, rel_tol=0, abs_tol=TOL)
    bigram = Bigram(np.round(rng.normal(size=(hg.n + 2, hg.n + 2)), 3))
    expected = joint_brute_force(hg, lm, derivs, budget, bigram)
    res = dd_decode([comp, bigram], max_iterations=300)
    assert res.dual >= expected - 1e-6 and res.primal <= expected + 1e-6
    if res.certified:
        assert math.isclose(res.primal, expected, rel_tol=0, abs_tol=1e-6)


def test_engine_certifies_agreeing_components() -> None:
    """A bigram path that prefers what the chart prefers: DD agrees at once and certifies."""
    hg = build_rewrite_hypergraph(sentence(), [substitution(), pp_deletion()], rewriting_coverage_rules)
    scores = hand_scores(hg, (substitution(), pp_deletion()))
    comp = RewriteComponent(hg, scores)
    sol = comp.solve()
    assert comp.derivation is not None and comp.derivation.words == ("the", "feline", "sat", ".")
    assert sol.keep.tolist() == [True, True, True, False, False, False, True]
    B = np.full((hg.n + 2, hg.n + 2), -1.0)
    path = [0, *(np.flatnonzero(sol.keep) + 1).tolist(), hg.n + 1]
    for a, b in zip(path, path[1:], strict=False):
        B[a, b] = 0.5
    res = dd_decode([comp, Bigram(B)])
    assert res.certified and np.array_equal(res.keep, sol.keep)
    assert math.isclose(res.primal, sol.score + 0.5 * (len(path) - 1), abs_tol=TOL)


# --- hand cases and checks ---------------------------------------------------------------------------


def sentence() -> Tree:
    """(TOP (S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"""
    np_ = Tree("NP", (preterminal("DT", "the", 0), preterminal("NN", "cat", 1)))
    pp = Tree("PP", (preterminal("IN", "on", 3),
                     Tree("NP", (preterminal("DT", "the", 4), preterminal("NN", "mat", 5)))))
    vp = Tree("VP", (preterminal("VBD", "sat", 2), pp))
    return Tree("TOP", (Tree("S", (np_, vp, preterminal(".", ".", 6))),))


def hand_scores(hg, bonus: tuple[RewriteRule, ...]) -> np.ndarray:
    """1 for the given rules, 0.01 for copy rules, -0.01 for the other coverage rules."""
    return np.array([1.0 if hg.rule(e) in bonus else 0.01 if "copy" in hg.rule(e).origins else -0.01
                     for e in range(hg.num_hyperedges)])


def substitution() -> RewriteRule:
    return RewriteRule(Frag(NODE, "NN", (Frag(WORD, "cat"),)), Frag(NODE, "NN", (Frag(WORD, "feline"),)),
                       (), (0,))


def pp_deletion() -> RewriteRule:
    return RewriteRule(Frag(NODE, "VP", (Frag(VAR, "VBD"), Frag(VAR, "PP", (), False))),
                       Frag(NODE, "VP", (Frag(VAR, "VBD"),)), (0,), ())


def test_substituted_and_inserted_words_keep_their_source_tokens() -> None:
    insert = RewriteRule(Frag(NODE, "VP", (Frag(NODE, "VBD", (Frag(WORD, "sat"),)), Frag(VAR, "PP"))),
                         Frag(NODE, "VP", (Frag(WORD, "was"), Frag(WORD, "sitting"), Frag(VAR, "PP"))),
                         (0,), (None, 0))
    hg = build_rewrite_hypergraph(sentence(), [substitution(), insert], rewriting_coverage_rules)
    scores = hand_scores(hg, (substitution(), insert))
    comp = RewriteComponent(hg, scores)
    sol = comp.solve()
    assert comp.derivation.words == ("the", "feline", "was", "sitting", "on", "the", "mat", ".")
    own = 2.0 + 0.01 * sum("copy" in hg.rule(e).origins for e in comp.derivation.hyperedges)
    assert sol.keep.all() and math.isclose(sol.score, own)
    u = np.arange(1.0, 8.0)
    assert math.isclose(comp.solve(u).score, own + u.sum())
    forced = np.zeros(7)
    forced[[3, 4, 5]] = -np.inf  # "on the mat" fixed to deletion (by the coverage deletion rules)
    short = comp.solve(forced)
    assert short.keep.tolist() == [True, True, True, False, False, False, True]
    assert comp.derivation.words == ("the", "feline", "sat", ".")  # the insertion rule links the PP
    assert math.isclose(short.score, comp.best_given(short.keep))
    assert math.isclose(comp.best_given(np.ones(7, dtype=bool)), own)
    # "sat" is used by the insertion rule (substituted by "sitting"): deleting it rules that rule out
    no_sat = np.array([1, 1, 0, 1, 1, 1, 1], dtype=bool)
    assert comp.best_given(no_sat) <= own - 1.0 + TOL


def test_model_component_is_the_decoders_chart() -> None:
    feats = RewriteFeaturiser(10)
    w = np.zeros(1 << 10)
    idx, _ = feats(substitution())
    w[idx] = 1.0
    decoder = RewriteDecoder(RewriteModel(w, 10), RewriteGrammar([substitution()]), None, feats)
    comp = decoder.component(sentence())
    best = decoder.rewrite(sentence())
    sol = comp.solve()
    assert comp.derivation.words == best.words and "feline" in best.words
    assert math.isclose(sol.score, best.score, abs_tol=TOL)
    assert math.isclose(comp.best_given(sol.keep), best.score, abs_tol=TOL)
    limited = decoder.component(sentence(), Budget.words(4))
    limited.solve()
    assert len(limited.derivation.words) == 4
    assert dd_decode([comp]).certified


def test_bad_inputs() -> None:
    hg = build_rewrite_hypergraph(sentence(), [], rewriting_coverage_rules)
    scores = np.zeros(hg.num_hyperedges)
    with pytest.raises(InputError):
        RewriteComponent(hg, scores[:-1])
    with pytest.raises(InputError):
        RewriteComponent(hg, np.full(hg.num_hyperedges, np.nan))
    with pytest.raises(InputError):
        RewriteComponent(hg, scores, lm=np.zeros((3, 3)))
    with pytest.raises(InputError):
        RewriteComponent(hg, scores, budget=5)
    comp = RewriteComponent(hg, scores)
    with pytest.raises(InputError):
        comp.solve(np.zeros(3))
    with pytest.raises(InputError):
        comp.solve(np.full(7, np.nan))
    with pytest.raises(InputError):
        comp.best_given(np.ones(3, dtype=bool))
    with pytest.raises(SolverError, match="budget"):
        RewriteComponent(hg, scores, budget=Budget.words(20)).solve()
    too_long = RewriteComponent(hg, scores, budget=Budget.words(20))
    assert too_long.best_given(np.ones(7, dtype=bool)) == -math.inf
