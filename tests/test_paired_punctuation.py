"""Paired punctuation (``dualdecomp rewrite --paired-punctuation``): the pairs found in a token sequence,
the ``PairedTokens`` component against brute force and its ILP, and the rewriting chart joined with it by
the engine against a brute-force enumeration of derivations."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.punctuation import punctuation_pairs
from dualdecomp.engine.decode import decode as dd_decode
from dualdecomp.solvers.paired import PairedTokens
from dualdecomp.solvers.rewriting import RewriteComponent, copied_tokens, keep_means_copied, used_tokens
from dualdecomp.solvers.transducer import WORD, match_frag
from tests.test_rewrite_cli import rewrite_model  # noqa: F401 - the session fixture (tiny model)
from tests.test_rewriting_component import instance, joint_brute_force, lm_of, random_budget
from tests.test_rewriting_model import _enumerate

TOL = 1e-9


@pytest.mark.parametrize(("text", "pairs"), [
    ("Spinosi ( born May 9 , 1950 , Rome ) is", [(1, 9)]),
    ('the novella " Sibling Love " ( or " Love " )', [(2, 5), (6, 11), (8, 10)]),
    ("a ) b ( c", []),  # a closer before any opener, an opener never closed
    ("( a [ b ) c ]", [(0, 4)]),  # "[" opened inside "( )" and never closed there is dropped
    ("`` a '' -LRB- b -RRB- “ c ”", [(0, 2), (3, 5), (6, 8)]),
    ('" a " b "', [(0, 2)]),  # the third straight quote opens a pair never closed
    ("no marks here", []),
])
def test_pairs_by_hand(text, pairs):
    assert list(punctuation_pairs(text.split())) == pairs


def brute(comp: PairedTokens, u: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """max u·keep over the keep vectors that agree on every pair, and those that reach it."""
    rows = []
    for bits in itertools.product([False, True], repeat=comp.n):
        keep = np.array(bits)
        if comp.best_given(keep) == 0.0:
            rows.append((float(u[keep].sum()), keep))
    best = max(score for score, _ in rows)
    return best, [keep for score, keep in rows if score == best]


@st.composite
def paired_instances(draw):
    n = draw(st.integers(1, 8))
    position = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(position, position).filter(lambda p: p[0] != p[1]), max_size=4)) \
        if n > 1 else []
    u = np.array(draw(st.lists(st.integers(-6, 6), min_size=n, max_size=n)), dtype=float) / 2
    return PairedTokens(n, pairs), u


@settings(max_examples=200, deadline=None)
@given(paired_instances())
def test_solve_is_the_brute_force_optimum(case):
    comp, u = case
    best, argmaxes = brute(comp, u)
    sol = comp.solve(u)
    assert comp.best_given(sol.keep) == 0.0  # every pair agrees
    assert sol.score == pytest.approx(best, abs=TOL) and sol.score == pytest.approx(float(u[sol.keep].sum()))
    assert any(np.array_equal(sol.keep, k) for k in argmaxes)


@settings(max_examples=25, deadline=None)
@given(paired_instances())
def test_ilp_is_the_brute_force_optimum(case):
    import pulp

    comp, u = case
    prob = pulp.LpProblem("paired", pulp.LpMaximize)
    keep_vars = [pulp.LpVariable(f"keep_{k}", cat=pulp.LpBinary) for k in range(comp.n)]
    prob += comp.to_ilp(prob, keep_vars) + pulp.lpSum(float(u[k]) * keep_vars[k] for k in range(comp.n))
    prob.solve(pulp.PULP_CBC_CMD(msg=False))
    assert (pulp.value(prob.objective) or 0.0) == pytest.approx(brute(comp, u)[0], abs=1e-6)
    keep = np.array([round(v.value() or 0.0) == 1 for v in keep_vars])  # a variable of coefficient 0: None
    assert comp.best_given(keep) == 0.0


def test_bad_pairs_are_input_errors():
    with pytest.raises(InputError, match="positive integer"):
        PairedTokens(0, [])
    with pytest.raises(InputError, match="two positions"):
        PairedTokens(3, [(0, 3)])
    with pytest.raises(InputError, match="two positions"):
        PairedTokens(3, [(1, 1)])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_chart_with_paired_tokens_against_brute_force(seed, with_lm):
    """The engine over the rewriting chart and random pairs of its source tokens: its dual bounds the
    best derivation whose keep vector agrees on every pair (brute force), its primal is one, and a
    certified result is that optimum."""
    rng, hg, scores, lm, derivs = instance(seed, with_lm)
    if hg.n < 2:
        return
    budget = random_budget(rng, hg) if rng.random() < 0.3 else None
    k = int(rng.integers(1, 3))
    pairs = [tuple(int(x) for x in rng.choice(hg.n, size=2, replace=False)) for _ in range(k)]
    paired = PairedTokens(hg.n, pairs)
    expected = joint_brute_force(hg, lm, derivs, budget, paired)
    comp = RewriteComponent(hg, scores, lm, budget)
    if expected == -math.inf:
        with pytest.raises(SolverError):
            res = dd_decode([comp, paired], max_iterations=300)
            if not math.isfinite(res.primal):
                raise SolverError("no agreeing keep vector found")
        return
    res = dd_decode([comp, paired], max_iterations=300)
    assert res.dual >= expected - 1e-6
    if math.isfinite(res.primal):
        assert res.primal <= expected + 1e-6 and paired.best_given(res.keep) == 0.0
        assert comp.derivation_given(res.keep) is not None
    if res.certified:
        assert math.isclose(res.primal, expected, rel_tol=0, abs_tol=1e-6)


def copied_by_matching(hg, e: int) -> set[int]:
    """The tokens hyperedge ``e`` copies, read by matching its rule at its node again (the frontier's
    word leaves give the token of each source word) and its word alignment."""
    rule = hg.rule(e)
    frontier: list[int] = []
    assert match_frag(rule.source, hg.tree, int(hg.hyperedge_node[e]), frontier)
    items = [(f, j) for f, j in zip(rule.source.frontier(), frontier, strict=True) if f.kind == WORD]
    target = [f.label for f in rule.target.frontier() if f.kind == WORD]
    return {hg.tree.nodes[items[j][1]].index for w, j in zip(target, rule.word_links, strict=True)
            if j is not None and items[j][0].label == w}


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_copied_tokens_and_the_marked_hypergraph(seed):
    """``copied_tokens`` equals the rule matched again; ``keep_means_copied`` moves exactly the marked
    tokens a hyperedge substitutes from its used tokens to its deleted ones, every token still covered
    once."""
    rng, hg, *_ = instance(seed, False)
    marked = {int(k) for k in rng.choice(hg.n, size=int(rng.integers(0, hg.n + 1)), replace=False)}
    out = keep_means_copied(hg, marked)
    use_ptr, use_idx = used_tokens(hg)
    new_ptr, new_idx = used_tokens(out)
    for e in range(hg.num_hyperedges):
        used = set(use_idx[use_ptr[e]:use_ptr[e + 1]].tolist())
        copied = set(copied_tokens(hg, e))
        assert copied == copied_by_matching(hg, e) and copied <= used
        moved = (used - copied) & marked
        assert set(new_idx[new_ptr[e]:new_ptr[e + 1]].tolist()) == used - moved
        assert set(out.dropped(e).tolist()) == set(hg.dropped(e).tolist()) | moved
    assert np.array_equal(out.item_code, hg.item_code) and np.array_equal(out.tail_idx, hg.tail_idx)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_pairs_of_copied_tokens_against_brute_force(seed, with_lm):
    """The engine over the marked chart and pairs of marked tokens against every derivation enumerated:
    a derivation agrees when, for each pair, both tokens are written as themselves or neither is."""
    rng, hg, scores, lm, _ = instance(seed, with_lm)
    if hg.n < 2:
        return
    count = int(rng.integers(1, 3))
    pairs = [tuple(int(x) for x in rng.choice(hg.n, size=2, replace=False)) for _ in range(count)]
    marked = sorted({k for p in pairs for k in p})
    best = -math.inf
    for edges, words in _enumerate(hg):
        copied = set().union(*(copied_by_matching(hg, e) for e in edges))
        if all((i in copied) == (j in copied) for i, j in pairs):
            best = max(best, float(sum(scores[e] for e in edges)) + lm_of(hg, lm, words))
    comp = RewriteComponent(keep_means_copied(hg, marked), scores, lm)
    paired = PairedTokens(hg.n, pairs)
    if best == -math.inf:
        return
    res = dd_decode([comp, paired], max_iterations=300)
    assert res.dual >= best - 1e-6
    if math.isfinite(res.primal):
        assert res.primal <= best + 1e-6
    if res.certified:
        assert math.isclose(res.primal, best, rel_tol=0, abs_tol=1e-6)


TEXT = 'Fontane\'s first work, the novella Geschwisterliebe (or "Sibling Love"), appeared in Berlin in 1839.'


def _balanced(words: list[str]) -> bool:
    """Brackets and straight quotes of a rewrite's words balanced, in order."""
    depth = 0
    for w in words:
        depth += (w == "(") - (w == ")")
        if depth < 0:
            return False
    return depth == 0 and words.count('"') % 2 == 0


@pytest.mark.parametrize("bias", ["0", "-500", "-1000"])  # at -1000 the tiny model alone breaks a pair
def test_paired_punctuation_keeps_pairs_whole(rewrite_model, capsys, bias):  # noqa: F811
    rows = {}
    for flag in ("--paired-punctuation", "--no-paired-punctuation"):
        assert main(["rewrite", TEXT, "--model", str(rewrite_model), flag, f"--word-bias={bias}",
                     "--json"]) == 0
        rows[flag] = json.loads(capsys.readouterr().out)
    paired, plain = rows["--paired-punctuation"], rows["--no-paired-punctuation"]
    assert paired["method"] == "dual decomposition: rewrite chart + paired punctuation"
    assert plain["method"] == "exact chart" and plain["certified"] is True
    assert paired["certified"] is True and _balanced(paired["rewrite"].replace('"', ' " ').replace(
        "(", " ( ").replace(")", " ) ").split()), paired["rewrite"]
    assert paired["primal"] <= plain["primal"] + 1e-6  # a constraint can only cost
    if _balanced(plain["rewrite"].replace('"', ' " ').replace("(", " ( ").replace(")", " ) ").split()):
        assert math.isclose(paired["primal"], plain["primal"], rel_tol=0, abs_tol=1e-6)
    else:  # the constraint binds: the certified rewrite scores less than the chart's unconstrained best
        assert bias == "-1000" and paired["primal"] < plain["primal"] - 1e-6
    if bias == "-1000":
        assert paired["rewrite"] != plain["rewrite"]


def test_paired_punctuation_setting_round_trips_and_changes_the_fingerprint(rewrite_model):  # noqa: F811
    from dualdecomp.app.rewriter import Rewriter
    from dualdecomp.core.errors import ModelError
    from dualdecomp.models.rewriting.decode_settings import PAIRED_PUNCTUATION, DecodeSettings

    flipped = DecodeSettings(paired_punctuation=not PAIRED_PUNCTUATION)
    assert "paired_punctuation" not in DecodeSettings().as_dict()  # the default is left out
    assert DecodeSettings.from_meta({"decode": flipped.as_dict()}) == flipped
    assert DecodeSettings().replace(paired_punctuation=not PAIRED_PUNCTUATION) == flipped
    with pytest.raises(InputError, match="paired_punctuation must be true or false"):
        DecodeSettings(paired_punctuation="yes")  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        DecodeSettings.from_meta({"decode": {"lm_scale": 1.0, "paired_punctuation": 1}})
    plain = Rewriter(rewrite_model)
    other = Rewriter(rewrite_model, paired_punctuation=not PAIRED_PUNCTUATION)
    assert plain.decoder.settings.paired_punctuation is PAIRED_PUNCTUATION
    assert plain.fingerprint() != other.fingerprint()
    assert other.worker_factory()().decoder.settings == other.decoder.settings
    no_pairs = "The park has become a traditional location for mass demonstrations."
    on = Rewriter(rewrite_model, paired_punctuation=True).rewrite_text(no_pairs)
    off = Rewriter(rewrite_model, paired_punctuation=False).rewrite_text(no_pairs)
    assert on == dataclasses.replace(off, seconds=on.seconds)  # no pair: the chart alone, as before
