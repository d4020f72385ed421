"""The rewriting model: features, loss, the SSVM trainer, oracle derivations, save/load (W3.3 item 2)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import ModelError
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import Tree, from_dependency, leaf, preterminal
from dualdecomp.models.rewriting.application import (
    APPLICATION,
    HEAD_COLUMNS,
    RELATION_COLUMNS,
    RELATIONS,
    application_values,
    pos_class,
)
from dualdecomp.models.rewriting.features import (
    FEATURE_GROUPS,
    RewriteFeaturiser,
    RuleStatistics,
    featuriser_for,
    rule_feature_strings,
)
from dualdecomp.models.rewriting.lm_matrix import scaled_lm
from dualdecomp.models.rewriting.loss import bounded_bigrams, reference_shares
from dualdecomp.models.rewriting.model import (
    RewriteDecoder,
    RewriteModel,
    hyperedge_scores,
    lm_index,
    load_rewrite_decoder,
    save_rewrite_model,
)
from dualdecomp.models.rewriting.training import (
    hope_derivation,
    hyperedge_losses,
    make_example,
    train_rewriter,
)
from dualdecomp.models.ssvm import SsvmConfig, SsvmStats, Violation, train_ssvm
from dualdecomp.solvers.rewriting import (
    RewriteGrammar,
    RewriteRule,
    build_rewrite_hypergraph,
    decode,
    rewriting_coverage_rules,
    save_rewrite_grammar,
)
from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag


def _tree() -> Tree:
    """(TOP (S (NP (NNP Kim)) (VP (VBD purchased) (NP (DT a) (NN car))) (. .)))"""
    np_kim = Tree("NP", (preterminal("NNP", "Kim", 0),))
    obj = Tree("NP", (preterminal("DT", "a", 2), preterminal("NN", "car", 3)))
    vp = Tree("VP", (preterminal("VBD", "purchased", 1), obj))
    s = Tree("S", (np_kim, vp, preterminal(".", ".", 4)))
    return Tree("TOP", (s,))


def _substitution() -> RewriteRule:
    """⟨VBD, VBD⟩ → ⟨purchased, bought⟩."""
    return RewriteRule(Frag(NODE, "VBD", (Frag(WORD, "purchased"),)),
                       Frag(NODE, "VBD", (Frag(WORD, "bought"),)), (), (0,), frozenset({"lexical"}), 3)


def _grammar() -> RewriteGrammar:
    return RewriteGrammar([_substitution()])


def _enumerate(hg):
    """Every derivation of the root vertex: (hyperedges, words)."""
    by_head: dict[int, list[int]] = {}
    for e in range(hg.num_hyperedges):
        by_head.setdefault(int(hg.hyperedge_head[e]), []).append(e)

    def expand(v):
        for e in by_head.get(v, []):
            tails = [int(t) for t in hg.tail_idx[hg.tail_ptr[e]:hg.tail_ptr[e + 1]]]
            for combo in itertools.product(*(list(expand(t)) for t in tails)):
                sub = dict(zip(tails, combo, strict=True))
                words: list[str] = []
                edges = [e]
                for code in hg.items(e).tolist():
                    if code >= 0:
                        words.append(hg.vocab[code])
                    else:
                        edges_t, words_t = sub[-code - 1]
                        edges += edges_t
                        words += words_t
                yield edges, words

    yield from expand(hg.root)


def test_features_name_the_operations_and_origins():
    feats = dict(((t, v), w) for t, v, w in rule_feature_strings(_substitution()))
    assert feats[("origin", "lexical")] == 1.0
    assert feats[("term.substituted", "purchased→bought")] == 1.0
    assert feats[("pt.other_word", "")] == 1.0
    assert feats[("op.substituted", "")] == 1.0
    assert ("deletion_only", "") not in feats


def test_relative_frequencies_by_origin():
    a = _substitution()
    b = RewriteRule(a.source, Frag(NODE, "VBD", (Frag(WORD, "got"),)), (), (0,), frozenset({"lexical"}), 1)
    stats = RuleStatistics.from_rules([a, b])
    logp = {t: v for t, _, v in stats.log_probabilities(a)}
    assert logp["logp.t_given_s"] == pytest.approx(np.log(3 / 4))
    assert logp["logp.joint"] == pytest.approx(np.log(3 / 4))
    assert logp["logp.s_given_t"] == pytest.approx(0.0)


def test_reference_shares_and_loss():
    shares = reference_shares([["Kim", "bought", "a", "car"], ["Kim", "got", "a", "car"]])
    assert shares.share("kim") == 1.0 and shares.share("bought") == 0.5 and shares.share("purchased") == 0.0
    source = ["Kim", "purchased", "a", "car", "."]
    # writes Kim bought car; deletes "a" (kept by both: 1.0) and "." (kept by none: 0)
    assert shares.loss(source, ["Kim", "bought", "car"], [2, 4]) == pytest.approx(0 + 0.5 + 0 + 1.0 + 0)
    assert shares.bigrams[("<s>", "kim")] == 1.0 and shares.bigrams[("kim", "bought")] == 0.5
    # bigrams written: <s> kim (r 1, a source bigram: earns back beta = 1), kim bought (0.5), bought car
    # (0), car </s> (1)
    assert shares.loss(source, ["Kim", "bought", "car"], [2, 4], bigram_weight=2.0) == pytest.approx(
        1.5 + 2.0 * (-1.0 + 0.5 + 1 + 0))
    costs = shares.bigram_costs(["Kim", "car", "got"])
    assert costs.shape == (5, 5) and costs[3, 0] == 0.0 and costs[1, 4] == 0.0 and costs[0, 2] == 0.5
    assert costs[0, 1] == 1.0 and costs[:, 3].sum() == 0.0 and costs[4].sum() == 0.0
    # the deletion side: a source bigram earns back beta x its share when written
    with_source = shares.bigram_costs(["Kim", "car", "got"], source, delete_weight=0.5)
    assert with_source[3, 0] == pytest.approx(-0.5) and with_source[0, 2] == 0.5  # <s> Kim; Kim got
    # unigrams: nothing written is missing, nothing deleted is kept (0); bigrams: <s> kim (source, r 1),
    # kim a (r 0), a car (source, r 1), car </s> (r 1; the source ends "car .")
    assert shares.loss(source, ["Kim", "a", "car"], [1, 4], bigram_weight=2.0, delete_weight=0.5) == (
        pytest.approx(0.0 + 2.0 * (-0.5 + 1.0 - 0.5 + 0.0)))
    assert shares.loss(source, ["Kim", "a", "car", "."], [1], bigram_weight=2.0, delete_weight=0.5) == (
        pytest.approx(1.0 + 2.0 * (-0.5 + 1.0 - 0.5 + 1.0 + 1.0)))  # "." (r 0); car . and . </s> (r 0)


def test_weighted_reference_shares():
    refs = [["Kim", "bought", "a", "car"], ["Kim", "got", "a", "car"], ["Kim", "got", "cars"]]
    # weights 1 : 1 : 2 -> 0.25, 0.25, 0.5
    shares = reference_shares(refs, [1.0, 1.0, 2.0])
    assert shares.share("kim") == 1.0 and shares.share("bought") == 0.25
    assert shares.share("got") == pytest.approx(0.75) and shares.share("cars") == 0.5
    assert shares.bigrams[("a", "car")] == 0.5 and shares.bigrams[("got", "cars")] == 0.5
    # a reference of weight 0 counts nowhere
    zero = reference_shares(refs, [1.0, 1.0, 0.0])
    assert "cars" not in zero.shares and ("got", "cars") not in zero.bigrams and zero.share("a") == 1.0
    # equal weights are the unweighted shares, exactly
    assert reference_shares(refs, [3.0, 3.0, 3.0]) == reference_shares(refs)
    for bad in ([1.0, 1.0], [1.0, -1.0, 1.0], [0.0, 0.0, 0.0]):
        with pytest.raises(ValueError, match="one weight"):
            reference_shares(refs, bad)


def test_add_reward_lowers_only_the_cost_of_words_the_source_lacks():
    shares = reference_shares([["Kim", "bought", "a", "car"], ["Kim", "got", "a", "car"],
                               ["Kim", "bought", "cars"], ["Kim", "has", "a", "car"]])
    source = ["Kim", "purchased", "a", "car", "."]
    # bought (r 0.5, not in the source): 1 - 0.5 - 2 x 0.5; car (r 0.75, in it): 1 - 0.75; Car is car
    assert shares.write_costs(["bought", "car", "Car"], source, 2.0).tolist() == pytest.approx(
        [-0.5, 0.25, 0.25])
    assert shares.write_costs(["bought", "car"], source).tolist() == pytest.approx([0.5, 0.25])  # λ 0
    # writes Kim bought car (bought: 1 - 0.5 - 3 x 0.5 = -1), deletes "a" (r 0.75) and "." (r 0), β 0.5
    assert shares.loss(source, ["Kim", "bought", "car"], [2, 4], delete_weight=0.5, add_weight=3.0) == (
        pytest.approx(0.0 - 1.0 + 0.25 + 0.5 * 0.75))
    # the bigram term's reward μ: <s> kim (r 1) is a source bigram (β); kim bought (r 0.5), bought car (r 0)
    # and car </s> (r 0.75; the source ends "car .") are not (μ)
    assert shares.bigram_cost("kim", "bought", bounded_bigrams(source), 0.5, 2.0) == pytest.approx(
        1 - 0.5 - 2.0 * 0.5)
    assert shares.bigram_cost("<s>", "kim", bounded_bigrams(source), 0.5, 2.0) == pytest.approx(1 - 1 - 0.5)
    assert shares.loss(source, ["Kim", "bought", "car"], [2, 4], bigram_weight=2.0, delete_weight=0.5,
                       bigram_add_weight=2.0) == pytest.approx(
        0.5 + 0.25 + 0.5 * 0.75 + 2.0 * ((1 - 1 - 0.5) + (1 - 0.5 - 1.0) + (1 - 0 - 0) + (1 - 0.75 - 1.5)))
    costs = shares.bigram_costs(["Kim", "bought", "car"], source, delete_weight=0.5, add_weight=2.0)
    assert costs[0, 1] == pytest.approx(-0.5) and costs[3, 0] == pytest.approx(-0.5)  # kim bought; <s> kim


def test_hyperedge_losses_add_up_to_the_derivation_loss():
    hg = build_rewrite_hypergraph(_tree(), list(_grammar()), coverage=rewriting_coverage_rules)
    shares = reference_shares([["Kim", "bought", "a", "car", "."], ["Kim", "bought", "it", "."]])
    for beta, add in ((1.0, 0.0), (0.25, 0.0), (0.35, 2.0)):
        losses = hyperedge_losses(hg, shares, beta, add)
        for edges, words in _enumerate(hg):
            deleted = [int(k) for e in edges for k in hg.drop_idx[hg.drop_ptr[e]:hg.drop_ptr[e + 1]]]
            expected = (shares.write_costs(words, hg.words, add).sum()
                        + beta * shares.delete_costs(hg.words)[deleted].sum())
            assert losses[edges].sum() == pytest.approx(expected, abs=1e-9)
            assert expected == pytest.approx(shares.loss(hg.words, words, deleted, delete_weight=beta,
                                                         add_weight=add), abs=1e-9)


def test_oracle_is_the_loss_minimal_derivation():
    grammar = _grammar()
    shares = reference_shares([["Kim", "bought", "a", "car", "."]])
    ex = make_example(_tree(), grammar, shares, None)
    hg = ex.hypergraph
    best = min(float(ex.losses[edges].sum()) for edges, _ in _enumerate(hg))
    assert ex.oracle_loss == pytest.approx(best, abs=1e-9)
    words = decode(hg, -ex.losses).words
    assert words == ("Kim", "bought", "a", "car", ".")


def test_scaled_lm_keeps_forbidden_entries_forbidden():
    m = np.array([[-1.0, -np.inf], [-2.0, -3.0]])
    for w in (2.0, -1.0):
        out = scaled_lm(m, w)
        assert out[0, 1] == -np.inf and out[1, 0] == pytest.approx(-2.0 * w)
    assert scaled_lm(m, 0.0) is None


def test_ssvm_separable_toy_problem_is_learnt():
    """Two examples whose oracle beats the alternative once feature 1 outweighs feature 0."""
    gold = (np.array([1]), np.array([1.0]))
    other = (np.array([0]), np.array([1.0]))

    def violation(i: int, w: np.ndarray) -> Violation:
        aug_other = w[0] + 1.0  # loss 1
        return Violation(aug_other > w[1] + 1e-9, gold, other)

    stats = SsvmStats()
    w, _ = train_ssvm(2, 2, violation, SsvmConfig(epochs=5, lam=0.0), stats=stats)
    assert w[1] - w[0] >= 1.0 - 1e-9
    assert stats.augmented == 10 and stats.updates >= 1


@pytest.mark.parametrize("bigram_weight", [0.0, 1.0])
def test_training_moves_towards_the_oracle(bigram_weight):
    grammar = _grammar()
    shares = reference_shares([["Kim", "bought", "a", "car", "."]])
    ex = make_example(_tree(), grammar, shares, None, bigram_weight=bigram_weight)
    feats = RewriteFeaturiser(12, RuleStatistics.from_rules(grammar.rules))
    w, _ = train_rewriter([ex], feats, SsvmConfig(epochs=40, lam=0.0))
    best = decode(ex.hypergraph, hyperedge_scores(ex.hypergraph, w, feats))
    assert best.words == ("Kim", "bought", "a", "car", ".")


@pytest.mark.parametrize("bigram_weight", [0.0, 0.5])
@given(seed=st.integers(0, 2**32 - 1), lm_weight=st.floats(-2.0, 2.0))
def test_hope_derivation_is_the_best_score_minus_loss(bigram_weight, seed, lm_weight):
    """The hope derivation against every derivation enumerated: argmax w·φ + λ_lm·LM − Δ (1e-9)."""
    grammar = RewriteGrammar([*_grammar(), *_headless_rules()])
    shares = reference_shares([["Kim", "bought", "a", "car", "."], ["Kim", "bought", "it", "."]])
    ex0 = make_example(_headed_tree(), grammar, shares, None, delete_weight=0.5, bigram_weight=bigram_weight,
                       add_weight=2.0)
    hg = ex0.hypergraph
    rng = np.random.default_rng(seed)
    lm = rng.normal(size=(len(hg.vocab) + 2, len(hg.vocab) + 2))
    ex = dataclasses.replace(ex0, lm=lm)
    scores = rng.normal(size=hg.num_hyperedges)
    ids = {w: i for i, w in enumerate(hg.vocab)}

    def lm_of(words):
        seq = [hg.bos, *(ids[w] for w in words), hg.eos]
        return sum(lm[a, b] for a, b in zip(seq, seq[1:], strict=False))

    def loss_of(edges, words):
        deleted = [int(k) for e in edges for k in hg.dropped(e)]
        return shares.loss(hg.words, list(words), deleted, bigram_weight, delete_weight=0.5, add_weight=2.0)

    every = [(sorted(edges), words, scores[edges].sum() + lm_weight * lm_of(words) - loss_of(edges, words))
             for edges, words in _enumerate(hg)]
    edges, hope_lm, hope_loss, certified = hope_derivation(ex, scores, lm_weight)
    best = max(v for _, _, v in every)
    assert certified
    assert scores[list(edges)].sum() + lm_weight * hope_lm - hope_loss == pytest.approx(best, abs=1e-9)
    words = next(w for e, w, _ in every if e == sorted(edges))
    assert hope_loss == pytest.approx(loss_of(list(edges), words), abs=1e-9)
    assert hope_lm == pytest.approx(lm_of(words), abs=1e-9)


def test_hope_epochs_keep_what_the_oracle_epochs_learnt_and_need_them():
    """Hope epochs after oracle epochs keep the reachable rewrite; from zero weights the first step makes
    the wrong copy the hope and the fear at once (the trap the module docstring describes)."""
    grammar = _grammar()
    shares = reference_shares([["Kim", "bought", "a", "car", "."]])
    ex = make_example(_tree(), grammar, shares, None)
    feats = RewriteFeaturiser(12, RuleStatistics.from_rules(grammar.rules))
    epochs: list[int] = []
    stats = SsvmStats()
    w, scores = train_rewriter([ex], feats, SsvmConfig(epochs=40, lam=0.0), stats=stats, hope_epochs=5,
                               on_epoch=lambda epoch, _w: epochs.append(epoch) or float(epoch))
    assert epochs == list(range(45)) and stats.augmented == 45 and stats.uncertified == 0
    hg = ex.hypergraph
    assert decode(hg, hyperedge_scores(hg, w, feats)).words == ("Kim", "bought", "a", "car", ".")
    w0, _ = train_rewriter([ex], feats, SsvmConfig(epochs=0, lam=0.0), hope_epochs=40)
    wrong = decode(hg, hyperedge_scores(hg, w0, feats))
    assert wrong.words == ("Kim", "purchased", "a", "car", ".")
    edges, _, loss, _ = hope_derivation(ex, hyperedge_scores(hg, w0, feats), 0.0)
    assert tuple(edges) == wrong.hyperedges and loss == pytest.approx(1.0)
    with pytest.raises(ValueError, match="hope_epochs must be >= 0"):
        train_rewriter([ex], feats, SsvmConfig(epochs=1), hope_epochs=-1)


def _headed_tree() -> Tree:
    """:func:`_tree` with the heads ``from_dependency`` gives it (purchased: S and VP; car: the object)."""
    np_kim = Tree("NP", (preterminal("NNP", "Kim", 0),), head=0)
    obj = Tree("NP", (preterminal("DT", "a", 2), preterminal("NN", "car", 3)), head=3)
    vp = Tree("VP", (preterminal("VBD", "purchased", 1), obj), head=1)
    s = Tree("S", (np_kim, vp, preterminal(".", ".", 4)), head=1)
    return Tree("TOP", (s,), head=1)


def _application_by_hand(hg, e: int, sentence: Sentence | None = None) -> dict[str, float]:
    """The per-application features of hyperedge ``e``, recomputed from their definitions (the
    ``dropped_rel`` ones from ``sentence``'s own arcs, when given)."""
    tags = {leaf_.index: pt.label for pt in hg.tree.nodes if pt.is_preterminal for leaf_ in pt.children}
    dropped = [int(k) for k in hg.dropped(e)]
    written = sum(1 for code in hg.items(e).tolist() if code >= 0)
    out: dict[str, float] = {"dropped": float(len(dropped)), "words": float(written)}
    for k in dropped:
        name = f"dropped.{pos_class(tags[k])}"
        out[name] = out.get(name, 0.0) + 1.0
    node = hg.tree.nodes[int(hg.hyperedge_node[e])]
    if node.head in dropped and len(dropped) < len(node.indices()):
        out[f"dropped_head.{pos_class(tags[node.head])}"] = 1.0
    if sentence is not None:
        for k in dropped:  # climb to the fragment's root: the first token whose governor stays
            root = k
            while sentence.heads[root] - 1 in dropped:
                root = sentence.heads[root] - 1
            label = sentence.labels[root] if sentence.labels[root] in RELATIONS else "dep"
            out[f"dropped_rel_tokens.{label}"] = out.get(f"dropped_rel_tokens.{label}", 0.0) + 1.0
            if root == k:
                out[f"dropped_rel.{label}"] = out.get(f"dropped_rel.{label}", 0.0) + 1.0
    return out


@st.composite
def _projective_sentences(draw, max_n: int = 7) -> Sentence:
    """A random projective dependency parse: a root splits its span, each side gets a root below it."""
    n = draw(st.integers(1, max_n))
    heads = [0] * n

    def attach(lo: int, hi: int, head: int) -> None:
        if lo >= hi:
            return
        k = draw(st.integers(lo, hi - 1))
        heads[k] = head
        attach(lo, k, k + 1)
        attach(k + 1, hi, k + 1)

    attach(0, n, 0)
    pos = draw(st.lists(st.sampled_from(["NOUN", "VERB", "ADJ", "ADP", "DET", "PUNCT"]), min_size=n,
                        max_size=n))
    fine = {"NOUN": "NN", "VERB": "VBD", "ADJ": "JJ", "ADP": "IN", "DET": "DT", "PUNCT": ","}
    tags = [fine[p] for p in pos]
    labels = draw(st.lists(st.sampled_from(["nsubj", "dobj", "appos", "relcl", "prep", "punct", "made-up"]),
                           min_size=n, max_size=n))
    labels = ["ROOT" if h == 0 else lab for h, lab in zip(heads, labels, strict=True)]
    return Sentence(tuple(f"w{i}" for i in range(n)), tuple(pos), tuple(tags), tuple(heads), tuple(labels))


@settings(max_examples=60, deadline=None)
@given(_projective_sentences())
def test_relation_features_match_the_parse(sentence):
    """``dropped_rel`` / ``dropped_rel_tokens`` of every hyperedge (coverage rules: every deletion of
    every node's children) equal the fragments counted on the parse's own arcs."""
    hg = build_rewrite_hypergraph(from_dependency(sentence), [], coverage=rewriting_coverage_rules)
    values = application_values(hg)
    assert np.array_equal(application_values(hg, relations=False)[:, list(RELATION_COLUMNS)], 0 * values[
        :, list(RELATION_COLUMNS)])
    assert np.array_equal(application_values(hg, pos=False)[:, list(RELATION_COLUMNS)],
                          values[:, list(RELATION_COLUMNS)])
    for e in range(hg.num_hyperedges):
        got = {name: float(v) for name, v in zip(APPLICATION, values[e], strict=True) if v}
        assert got == {name: v for name, v in _application_by_hand(hg, e, sentence).items() if v}


def test_relation_features_of_a_deleted_appositive():
    """"Kim, a singer, sang": deleting ", a singer ," is one ``appos`` fragment of 2 tokens (its
    determiner rides along, not a ``det`` fragment) and two ``punct`` fragments."""
    sentence = Sentence(("Kim", ",", "a", "singer", ",", "sang"), ("PROPN", "PUNCT", "DET", "NOUN", "PUNCT",
                        "VERB"), ("NNP", ",", "DT", "NN", ",", "VBD"), (6, 1, 4, 1, 1, 0),
                        ("nsubj", "punct", "det", "appos", "punct", "ROOT"))
    hg = build_rewrite_hypergraph(from_dependency(sentence), [], coverage=rewriting_coverage_rules)
    values = application_values(hg)
    col = {name: i for i, name in enumerate(APPLICATION)}
    every = [e for e in range(hg.num_hyperedges) if sorted(hg.dropped(e).tolist()) == [1, 2, 3, 4]]
    want = {"dropped": 4, "dropped_rel.appos": 1, "dropped_rel_tokens.appos": 2, "dropped_rel.punct": 2,
            "dropped_rel_tokens.punct": 2, "dropped_rel.det": 0}
    assert every and all(values[e, col[name]] == v for e in every for name, v in want.items())


def _headless_rules() -> list[RewriteRule]:
    """Rules that delete a head and keep the rest: the verb of the VP, the VP of the clause, the object's
    noun; and one that deletes the whole object (no head of its node deleted)."""
    v, d = (lambda label: Frag(VAR, label)), (lambda label: Frag(VAR, label, (), False))
    return [RewriteRule(Frag(NODE, "VP", (d("VBD"), v("NP"))), Frag(NODE, "VP", (v("NP"),)), (0,), ()),
            RewriteRule(Frag(NODE, "S", (v("NP"), d("VP"), v("."))), Frag(NODE, "S", (v("NP"), v("."))),
                        (0, 1), ()),
            RewriteRule(Frag(NODE, "NP", (v("DT"), d("NN"))), Frag(NODE, "NP", (v("DT"),)), (0,), ())]


@pytest.mark.parametrize("tree", [_tree(), _headed_tree()], ids=["no heads", "heads"])
def test_application_values_match_their_definitions(tree):
    hg = build_rewrite_hypergraph(tree, [*_grammar(), *_headless_rules()], coverage=rewriting_coverage_rules)
    values = application_values(hg)
    assert np.array_equal(application_values(hg, pos=False, relations=False), values[:, :2])  # dropped, words
    fired = set()
    for e in range(hg.num_hyperedges):
        got = {name: float(v) for name, v in zip(APPLICATION, values[e], strict=True) if v}
        want = {name: v for name, v in _application_by_hand(hg, e).items() if v}
        assert got == want
        fired |= {name for name in got if name.startswith("dropped_head.")}
    # with heads: the verb deleted from its VP and from its clause, the noun from its NP
    assert fired == (set() if tree.head < 0 else {"dropped_head.verb", "dropped_head.noun"})
    assert values[:, APPLICATION.index("dropped_head.verb")].sum() == (0 if tree.head < 0 else 2)


@given(st.lists(st.floats(-3, 3), min_size=len(APPLICATION) + 1, max_size=len(APPLICATION) + 1))
def test_hyperedge_scores_are_the_features_dot_the_weights(values):
    hg = build_rewrite_hypergraph(_headed_tree(), [*_grammar(), *_headless_rules()],
                                  coverage=rewriting_coverage_rules)
    feats = RewriteFeaturiser(16, deletion_pos=True, deletion_dep=True)
    w = np.zeros(1 << 16)
    assert len(set(feats.application_index.tolist())) == len(APPLICATION)  # no hash collision here
    w[feats.application_index] = values[:-1]
    idx, val = feats(hg.rules[0])
    w[idx[0]] += values[-1]
    scores = hyperedge_scores(hg, w, feats)
    for e in range(hg.num_hyperedges):
        i, v = feats(hg.rules[int(hg.hyperedge_rule[e])])
        by_hand = _application_by_hand(hg, e)
        expected = float(w[i] @ v) + sum(w[feats.application_index[APPLICATION.index(name)]] * x
                                         for name, x in by_hand.items())
        assert scores[e] == pytest.approx(expected, abs=1e-9)


def test_model_round_trip(tmp_path):
    grammar = _grammar()
    w = np.zeros(1 << 12)
    feats = RewriteFeaturiser(12)
    idx, _ = feats(_substitution())
    w[idx] = 1.0
    w[lm_index(12)] = 0.0
    save_rewrite_model(RewriteModel(w, 12, {"note": "test"}), tmp_path, lm_file=None)
    save_rewrite_grammar(grammar, tmp_path / "grammar.bin")
    decoder = load_rewrite_decoder(tmp_path)
    assert np.array_equal(decoder.model.weights, w) and decoder.model.meta == {"note": "test"}
    direct = RewriteDecoder(RewriteModel(w, 12), grammar, None,
                            RewriteFeaturiser(12, decoder.featuriser.stats))
    a, b = decoder.rewrite(_tree()), direct.rewrite(_tree())
    assert a.words == b.words and a.score == pytest.approx(b.score) and a.certified
    assert "bought" in a.words


def test_damaged_model_json_is_a_model_error(tmp_path):
    (tmp_path / "model.json").write_text('{"format": "something else"}')
    with pytest.raises(ModelError, match="not a dualdecomp rewrite model"):
        load_rewrite_decoder(tmp_path)


def test_leaf_helper_is_consistent():
    assert _tree().indices() == [0, 1, 2, 3, 4]
    assert leaf("x", 0).is_leaf


def test_oracle_head_price_keeps_heads():
    # no reference has the verb: the loss-minimal oracle deletes it and keeps its object (a headless VP)
    shares = reference_shares([["Kim", "a", "car", "."], ["Kim", "the", "car", "."]])
    grammar = RewriteGrammar([*_grammar(), *_headless_rules()])
    heads = list(HEAD_COLUMNS)
    free = make_example(_headed_tree(), grammar, shares, None, delete_weight=0.5)
    assert free.application[list(free.oracle)][:, heads].sum() > 0
    priced = make_example(_headed_tree(), grammar, shares, None, delete_weight=0.5, head_price=2.0)
    assert priced.application[list(priced.oracle)][:, heads].sum() == 0
    # the oracle's loss is the loss alone, never the price, and the price costs the oracle some loss
    assert priced.oracle_loss == pytest.approx(float(priced.losses[list(priced.oracle)].sum()), abs=1e-12)
    assert priced.oracle_loss > free.oracle_loss


def test_simplicity_features_price_substitutions_by_frequency_and_length():
    logp = {"purchased": -5.0, "bought": -3.5, "Kim": -6.0, "really": -2.0}
    insertion = RewriteRule(Frag(NODE, "VBD", (Frag(WORD, "purchased"),)),
                            Frag(NODE, "VBD", (Frag(WORD, "really"), Frag(WORD, "bought"))), (), (None, 0))
    by_name = {t: v for t, _, v in rule_feature_strings(insertion, unigram=logp.__getitem__)}
    assert by_name["simp.logfreq_gain"] == pytest.approx(1.5)  # log10 p(bought) − log10 p(purchased)
    assert by_name["simp.chars_saved"] == 3.0  # 9 − 6 characters
    assert by_name["simp.inserted_logfreq"] == -2.0
    plain = {t for t, _, _ in rule_feature_strings(insertion)}
    assert not any(t.startswith("simp.") for t in plain)  # no unigram LM, no simplicity features
    kim = Frag(NODE, "NNP", (Frag(WORD, "Kim"),))
    copy = RewriteRule(kim, kim, (), (0,))
    assert not any(t.startswith("simp.") for t, _, _ in rule_feature_strings(copy, unigram=logp.__getitem__))


@pytest.mark.parametrize(("bigram_weight", "add_weight", "bigram_add"),
                         [(0.5, 0.0, 0.0), (2.0, 0.0, 0.0), (0.5, 3.0, 0.0), (0.0, 4.0, 0.0), (0.5, 4.0, 4.0),
                          (1.0, 0.0, 2.0)])
def test_oracle_with_the_bigram_loss_is_the_loss_minimal_derivation(bigram_weight, add_weight, bigram_add):
    grammar = RewriteGrammar([*_grammar(), *_headless_rules()])
    shares = reference_shares([["Kim", "bought", "a", "car", "."], ["Kim", "bought", "it", "."],
                               ["A", "car", "was", "purchased", "."]])
    ex = make_example(_headed_tree(), grammar, shares, None, delete_weight=0.5, bigram_weight=bigram_weight,
                      add_weight=add_weight, bigram_add_weight=bigram_add)
    hg = ex.hypergraph

    def loss(edges, words):
        deleted = [int(k) for e in edges for k in hg.dropped(e)]
        return shares.loss(hg.words, list(words), deleted, bigram_weight, delete_weight=0.5,
                           add_weight=add_weight, bigram_add_weight=bigram_add)

    every = [(sorted(edges), words, loss(edges, words)) for edges, words in _enumerate(hg)]
    assert ex.oracle_loss == pytest.approx(min(v for _, _, v in every), abs=1e-9)
    own = [v for edges, _, v in every if edges == sorted(ex.oracle)]
    assert own == [pytest.approx(ex.oracle_loss, abs=1e-9)]  # the oracle's loss is its own derivation's


def test_feature_groups_switch_features_on_and_off():
    logp = {"purchased": -5.0, "bought": -3.5}.__getitem__
    stats = RuleStatistics.from_rules([_substitution()])
    plain = featuriser_for(20, stats, logp, ())
    both = featuriser_for(20, stats, logp, ("deletion-pos", "simplicity"))
    assert plain.unigram is None and len(plain.application_columns) == 2
    assert both.unigram is not None
    assert len(both.application_columns) == len(APPLICATION) - len(RELATION_COLUMNS)
    every = featuriser_for(20, stats, logp, FEATURE_GROUPS)
    assert every.application_columns.tolist() == list(range(len(APPLICATION)))
    dep = featuriser_for(20, stats, logp, ("deletion-dep",))
    assert dep.application_columns.tolist() == [0, 1, *RELATION_COLUMNS] and dep.unigram is None
    assert len(plain(_substitution())[0]) < len(both(_substitution())[0])  # the simplicity features
    hg = build_rewrite_hypergraph(_headed_tree(), [*_grammar(), *_headless_rules()],
                                  coverage=rewriting_coverage_rules)
    w = np.zeros(1 << 20)
    w[both.application_index[2:]] = 7.0  # weights of the POS and head features: unused by `plain`
    base = hyperedge_scores(hg, np.zeros(1 << 20), plain)
    assert np.array_equal(hyperedge_scores(hg, w, plain), base)
    assert not np.array_equal(hyperedge_scores(hg, w, both), base)
    with pytest.raises(ValueError, match="unknown feature group"):
        featuriser_for(20, stats, logp, ("syntax",))
    with pytest.raises(ValueError, match="need the target LM"):
        featuriser_for(20, stats, None, ("simplicity",))
