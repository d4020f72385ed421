"""Transducer (T3) decoding against brute-force enumeration of derivations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.ptb import read_tree
from dualdecomp.data.trees import Tree
from dualdecomp.models.transducer.extraction import extract_grammar
from dualdecomp.solvers.transducer.coverage import coverage_rules
from dualdecomp.solvers.transducer.grammar import Grammar, GrammarConfig
from dualdecomp.solvers.transducer.solver import Transducer
from tests.oracles.transducer import best_by_yield, enumerate_derivations

LABELS = ("A", "B", "C")
WORDS = ("x", "y", "z")


def random_tree(rng: np.random.Generator, n: int) -> Tree:
    """A random TOP-rooted tree over n leaves (random bracketing, random unary nodes)."""
    items = [Tree(str(rng.choice(["P", "Q"])), (Tree(str(rng.choice(WORDS)), (), i),)) for i in range(n)]
    while len(items) > 1:
        i = int(rng.integers(0, len(items)))
        j = min(len(items), i + int(rng.integers(1, 4)))
        node = Tree(str(rng.choice(LABELS)), tuple(items[i:j]))
        if rng.random() < 0.25:
            node = Tree(str(rng.choice(LABELS)), (node,))
        items[i:j] = [node]
    return Tree("TOP", (items[0],))


def random_target(rng: np.random.Generator, tree: Tree) -> Tree | None:
    """Delete random leaves (keep >= 1), prune empty nodes, randomly collapse unary chains."""
    n = len(tree.leaves())
    keep = rng.random(n) < 0.6
    if not keep.any():
        keep[int(rng.integers(0, n))] = True

    def prune(node: Tree) -> Tree | None:
        if node.is_leaf:
            return node if keep[node.index] else None
        kids = tuple(c for c in (prune(c) for c in node.children) if c is not None)
        if not kids:
            return None
        out = Tree(node.label, kids)
        if len(kids) == 1 and not kids[0].is_leaf and node.label != "TOP" and rng.random() < 0.4:
            return kids[0]
        return out

    return prune(tree)


def all_rules(tree: Tree, grammar: Grammar):
    rules = {r.key: r for r in grammar.rules}
    for node in tree.preorder():
        for r in coverage_rules(node):
            rules.setdefault(r.key, r)
    return list(rules.values())


def instance(seed: int, max_n: int = 5):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, max_n + 1))
    src = random_tree(rng, n)
    pairs = []
    for _ in range(1):
        other = random_tree(rng, int(rng.integers(1, max_n + 1)))
        pairs.append((other, random_target(rng, other)))
    pairs.append((src, random_target(rng, src)))
    grammar, _ = extract_grammar(pairs, GrammarConfig(depth=int(rng.integers(0, 3))))
    weights = {r.key: float(rng.normal()) for r in all_rules(src, grammar)}
    slope = float(rng.normal())

    def score(rule, dropped):
        return weights[rule.key] + slope * dropped

    u = rng.normal(size=n) * 1.5
    return rng, src, grammar, score, u


def brute(src, grammar, score):
    """(score, yield, None) per achievable yield, its best derivation score."""
    return [(s, ks, None) for ks, s in best_by_yield(src, all_rules(src, grammar), score).items()]


def test_best_by_yield_agrees_with_full_enumeration():
    for seed in range(15):
        _, src, grammar, score, _ = instance(seed, max_n=3)
        full = enumerate_derivations(src, all_rules(src, grammar), score)
        best: dict = {}
        for s, ks, _ in full:
            best[ks] = max(best.get(ks, -math.inf), s)
        got = best_by_yield(src, all_rules(src, grammar), score)
        assert set(got) == set(best)
        for ks, s in best.items():
            assert got[ks] == pytest.approx(s, abs=1e-12)


def keep_set(keep) -> frozenset[int]:
    return frozenset(int(k) for k in np.flatnonzero(keep))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_solve_equals_bruteforce(seed):
    _, src, grammar, score, u = instance(seed)
    transducer = Transducer(src, grammar, score)
    derivs = brute(src, grammar, score)
    best = max(s + sum(u[k] for k in ks) for s, ks, _ in derivs)
    sol = transducer.solve(u)
    assert sol.score == pytest.approx(best, abs=1e-9)
    ks = keep_set(sol.keep)
    assert any(s + sum(u[k] for k in kk) == pytest.approx(best, abs=1e-9) and kk == ks for s, kk, _ in derivs)
    d = transducer.solve_tree(u)
    assert d.tree.indices() == sorted(ks)
    assert d.tree.label == "TOP"


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_best_given_equals_bruteforce(seed):
    rng, src, grammar, score, _ = instance(seed)
    transducer = Transducer(src, grammar, score)
    derivs = brute(src, grammar, score)
    n = transducer.n
    best: dict[frozenset[int], float] = {}
    for s, ks, _ in derivs:
        best[ks] = max(best.get(ks, -math.inf), s)
    keeps = list(best)[:8] + [frozenset(np.flatnonzero(rng.random(n) < 0.5).tolist()) for _ in range(4)]
    for ks in keeps:
        keep = np.zeros(n, dtype=bool)
        keep[list(ks)] = True
        expected = best.get(ks, -math.inf)
        got = transducer.best_given(keep)
        if expected == -math.inf:
            assert got == -math.inf
        else:
            assert got == pytest.approx(expected, abs=1e-9)


@settings(max_examples=50, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_exact_length_equals_bruteforce(seed):
    _, src, grammar, score, u = instance(seed)
    transducer = Transducer(src, grammar, score)
    derivs = brute(src, grammar, score)
    table = transducer.solve_lengths(u)
    for m in range(transducer.n + 1):
        vals = [s + sum(u[k] for k in ks) for s, ks, _ in derivs if len(ks) == m]
        if not vals:
            assert table[m] == -math.inf
            with pytest.raises(SolverError):
                transducer.solve(u, length=m)
            continue
        assert table[m] == pytest.approx(max(vals), abs=1e-9)
        sol = transducer.solve(u, length=m)
        assert sol.length == m
        assert sol.score == pytest.approx(max(vals), abs=1e-9)
        assert transducer.best_given(sol.keep) + float(u @ sol.keep) == pytest.approx(max(vals), abs=1e-9)


@settings(max_examples=12, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_to_ilp_equals_bruteforce(seed):
    import pulp

    _, src, grammar, score, u = instance(seed, max_n=4)
    transducer = Transducer(src, grammar, score)
    derivs = brute(src, grammar, score)
    best = max(s + sum(u[k] for k in ks) for s, ks, _ in derivs)
    prob = pulp.LpProblem("t3", pulp.LpMaximize)
    keep_vars = [pulp.LpVariable(f"keep_{k}", cat=pulp.LpBinary) for k in range(1, transducer.n + 1)]
    obj = transducer.to_ilp(prob, keep_vars)
    prob += obj + pulp.lpSum(float(u[k]) * keep_vars[k] for k in range(transducer.n))
    prob.solve(pulp.PULP_CBC_CMD(msg=False))
    assert pulp.LpStatus[prob.status] == "Optimal"
    assert pulp.value(prob.objective) == pytest.approx(best, abs=1e-6)
    keep = np.array([round(v.value()) for v in keep_vars], dtype=bool)
    assert transducer.best_given(keep) + float(u @ keep) == pytest.approx(best, abs=1e-6)
    # a second component in the same problem gets fresh names
    transducer.to_ilp(prob, keep_vars)


def test_fallback_flag_and_all_copy():
    tree = read_tree("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")
    transducer = Transducer(tree, Grammar())
    assert transducer.fallback
    # the all-copy derivation exists
    assert transducer.best_given(np.ones(3, dtype=bool)) == 0.0
    src_pairs = [(tree, None)]
    grammar, _ = extract_grammar(src_pairs)
    assert not Transducer(tree, grammar).fallback
    with pytest.raises(SolverError):
        Transducer(tree, Grammar(), coverage=False)


def test_bad_inputs():
    tree = read_tree("(S (NP (NN cats)) (VP (VBP sleep)))")
    transducer = Transducer(tree, Grammar())
    with pytest.raises(InputError):
        transducer.solve(np.zeros(3))
    with pytest.raises(InputError):
        transducer.solve([np.nan, 0.0])
    with pytest.raises(InputError):
        transducer.solve(None, length=5)
    with pytest.raises(InputError):
        transducer.best_given([1, 0, 1])


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 10**6))
def test_loss_augmented_equals_bruteforce(seed):
    from dualdecomp.models.transducer.losses import token_augmented

    rng, src, grammar, score, _ = instance(seed)
    transducer = Transducer(src, grammar, score)
    n = transducer.n
    fp = (rng.random(n) < 0.4).astype(float)
    ref_len = int(rng.integers(0, n + 1))
    scale = float(rng.choice([0.5, 1.0, 2.0]))
    derivs = brute(src, grammar, score)

    def token_hamming(keep):  # equation (12) over tokens: FP + max(l - |keep|, 0)
        return float(fp @ keep + max(ref_len - int(keep.sum()), 0))

    def loss(ks):
        keep = np.zeros(n, dtype=bool)
        keep[list(ks)] = True
        return token_hamming(keep)

    best = max(s + scale * loss(ks) for s, ks, _ in derivs)
    d, _, value = token_augmented(transducer, fp, ref_len, scale)
    assert value == pytest.approx(best, abs=1e-9)
    own = transducer.best_given(d.keep)
    assert own + scale * token_hamming(d.keep) == pytest.approx(best, abs=1e-9)


def test_beam_search_is_labelled_and_consistent():
    from dualdecomp.solvers.transducer.lm_beam import beam_search

    rng = np.random.default_rng(3)
    for seed in range(10):
        _, src, grammar, score, _ = instance(seed)
        transducer = Transducer(src, grammar, score)
        n = transducer.n
        T = np.log10(rng.random((n + 2, n + 2, n + 2)))
        res = beam_search(transducer, T, lm_weight=0.0, beam=100)
        assert res.approximate
        # without the LM and with a wide beam the result must be a valid derivation's yield
        assert transducer.best_given(res.keep) > -math.inf
        assert res.score <= transducer.solve().score + 1e-9


def test_t3_command_end_to_end(tmp_path, capsys, corpora):
    from dualdecomp.app.commands.t3 import main

    out = tmp_path / "t3"
    assert main(["train", "--train", str(corpora / "written.train.jsonl"), "--dev",
                 str(corpora / "written.dev.jsonl"), "--out", str(out), "--limit", "12", "--epochs", "1",
                 "--lm", "none", "--hash-bits", "14", "--depth", "0"]) == 0
    assert main(["evaluate", "--model", str(out), "--dev", str(corpora / "written.dev.jsonl"),
                 "--lm", "none", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    assert [x["system"] for x in lines] == ["T3 free (exact)", "T3 gold length (exact)"]
    assert lines[1]["mode"] == "gold-length" or lines[1]["failed"] > 0
