"""Decode-time settings of the rewriting model (LM scale, per-word, per-substitution and per-insertion
biases): the chart stays exact with them (brute force over derivations), they are stored in ``model.json``
→ ``meta.decode`` and overridable."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.models.rewriting.decode_settings import DecodeSettings
from dualdecomp.models.rewriting.features import RewriteFeaturiser
from dualdecomp.models.rewriting.lm_matrix import scaled_lm
from dualdecomp.models.rewriting.model import (
    RewriteDecoder,
    RewriteModel,
    bias_counts,
    hyperedge_counts,
    hyperedge_scores,
    lm_index,
    load_rewrite_decoder,
    save_rewrite_model,
)
from dualdecomp.solvers.rewriting import EXACT, OPERATIONS, decode, derivation_score, save_rewrite_grammar
from tests.oracles.rewriting import best_rewrite
from tests.test_rewriting_chart import _setup, allowed, random_budget
from tests.test_rewriting_model import _grammar, _substitution, _tree

_INS = OPERATIONS.index("inserted")


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.25, 0.5, 1.0, 1.5, 3.0]),
       st.floats(-2.0, 2.0, allow_nan=False), st.sampled_from([0.0, -1.5, 0.7, 3.0]),
       st.sampled_from([0.0, -0.8, 1.2, 2.5]))
def test_chart_with_biases_and_lm_scale_matches_brute_force(seed: int, scale: float, bias: float,
                                                            sub_bias: float, ins_bias: float) -> None:
    """The chart's best under scores + the biases × each hyperedge's counts (words written, substituted,
    inserted) and scale × LM equals the best of every derivation enumerated, each scored Σ rule scores +
    bias × |yield| + sub_bias × its substitutions that change more than case + ins_bias × its insertions
    (the oracle's own counts) + scale × LM(yield)."""
    rng, tree, hg, scores, lm, lm_of, derivs = _setup(seed)
    budget = random_budget(rng, hg)
    biased = scores + bias_counts(hg) @ np.array([bias, sub_bias, ins_bias])
    lm_scaled = scaled_lm(lm, scale)
    shifted = [replace(d, score=d.score + bias * len(d.words) + sub_bias * d.lexical
                       + ins_bias * d.operations[_INS]) for d in derivs]
    best = best_rewrite(shifted, lambda words: scale * lm_of(words), allowed(budget, hg.source_chars))
    if best is None:
        with pytest.raises(InputError):
            decode(hg, biased, lm_scaled, budget)
        return
    d = decode(hg, biased, lm_scaled, budget)
    assert d.certified and d.method == EXACT
    assert math.isclose(d.score, best[0], rel_tol=0, abs_tol=1e-9)
    total, words = derivation_score(hg, biased, lm_scaled, d.hyperedges)
    assert words == d.words and math.isclose(total, d.score, rel_tol=0, abs_tol=1e-9)
    # the biased score is the unbiased one plus the biases × the derivation's counts
    plain, _ = derivation_score(hg, scores, lm_scaled, d.hyperedges)
    lexical = sum(bias_counts(hg)[e, 1] for e in d.hyperedges)
    assert math.isclose(total, plain + bias * len(d.words) + sub_bias * lexical
                        + ins_bias * d.operations.inserted, rel_tol=0, abs_tol=1e-9)


def test_decode_settings_validate() -> None:
    assert DecodeSettings() == DecodeSettings(1, 0) and DecodeSettings().as_dict() == {"lm_scale": 1.0,
                                                                                       "word_bias": 0.0}
    for bad in ({"lm_scale": -0.5}, {"lm_scale": math.nan}, {"word_bias": math.inf}, {"word_bias": "1"},
                {"lm_scale": True}):
        with pytest.raises(InputError):
            DecodeSettings(**bad)
    assert DecodeSettings(2, 3).replace(word_bias=-1) == DecodeSettings(2, -1)
    assert DecodeSettings(2, 3).replace() == DecodeSettings(2, 3)
    full = DecodeSettings(1, 0, 480, 120)
    assert full.as_dict() == {"lm_scale": 1.0, "word_bias": 0.0, "substitution_bias": 480.0,
                              "insertion_bias": 120.0}
    assert full.replace(insertion_bias=0).as_dict() == {"lm_scale": 1.0, "word_bias": 0.0,
                                                        "substitution_bias": 480.0}
    assert full.biased and DecodeSettings(0.5, 0).biased is False and DecodeSettings(1, 0, 0, -1).biased
    for bad in ({"substitution_bias": math.nan}, {"insertion_bias": "2"}, {"substitution_bias": False},
                {"keep_weight": -1.0}, {"keep_weight": math.inf}):
        with pytest.raises(InputError):
            DecodeSettings(**bad)
    keep = DecodeSettings(keep_weight=480)
    assert keep.as_dict() == {"lm_scale": 1.0, "word_bias": 0.0, "keep_weight": 480.0} and not keep.biased
    assert keep.replace(keep_weight=0) == DecodeSettings()
    assert DecodeSettings.from_meta({"decode": keep.as_dict()}) == keep


def test_decode_settings_from_meta() -> None:
    assert DecodeSettings.from_meta({}) == DecodeSettings()
    assert DecodeSettings.from_meta({"decode": {"lm_scale": 0.5, "word_bias": 15}}) == DecodeSettings(0.5, 15)
    assert DecodeSettings.from_meta({"decode": {"word_bias": -2}}) == DecodeSettings(1, -2)
    assert DecodeSettings.from_meta({"decode": {"substitution_bias": 480, "insertion_bias": -3}}) \
        == DecodeSettings(1, 0, 480, -3)
    for bad in ([1, 2], {"lm_scale": -1}, {"lm_scale": "x"}, {"bias": 1}, {"substitution_bias": "x"},
                {"keep_weight": -2}):
        with pytest.raises(ModelError, match="meta.decode"):
            DecodeSettings.from_meta({"decode": bad})


def _model_dir(tmp_path, meta: dict):
    w = np.zeros(1 << 12)
    feats = RewriteFeaturiser(12)
    idx, _ = feats(_substitution())
    w[idx] = 1.0
    w[feats.words_index] = 0.5
    w[feats.dropped_index] = -0.25
    w[lm_index(12)] = 0.0
    save_rewrite_model(RewriteModel(w, 12, meta), tmp_path, lm_file=None)
    save_rewrite_grammar(_grammar(), tmp_path / "grammar.bin")
    return tmp_path


def test_model_settings_are_read_and_overridden(tmp_path) -> None:
    d = _model_dir(tmp_path, {"decode": {"lm_scale": 0.5, "word_bias": 2.0}})
    dec = load_rewrite_decoder(d)
    assert dec.settings == DecodeSettings(0.5, 2.0)
    assert load_rewrite_decoder(d, word_bias=-1.0).settings == DecodeSettings(0.5, -1.0)
    assert load_rewrite_decoder(d, lm_scale=2.0).settings == DecodeSettings(2.0, 2.0)
    with pytest.raises(InputError):
        load_rewrite_decoder(d, lm_scale=-1.0)
    hg = dec.hypergraph(_tree())
    base = hyperedge_scores(hg, dec.model.weights, dec.featuriser)
    assert np.array_equal(dec.hyperedge_scores(hg), base + 2.0 * hyperedge_counts(hg)[1])
    default = RewriteDecoder(dec.model, dec.grammar, None, dec.featuriser)
    assert default.settings == DecodeSettings() and np.array_equal(default.hyperedge_scores(hg), base)


def test_word_bias_moves_the_length(tmp_path) -> None:
    """A large bias keeps every word (the copy or the substitution); a large negative one writes fewer."""
    d = _model_dir(tmp_path, {})
    long = load_rewrite_decoder(d, word_bias=100.0).rewrite(_tree())
    short = load_rewrite_decoder(d, word_bias=-100.0).rewrite(_tree())
    plain = load_rewrite_decoder(d).rewrite(_tree())
    assert len(long.words) == 5 and long.certified and short.certified
    assert len(short.words) < len(plain.words) <= len(long.words)
    assert load_rewrite_decoder(d, word_bias=0.0).rewrite(_tree()).words == plain.words


def test_substitution_and_insertion_biases_are_read_overridden_and_applied(tmp_path) -> None:
    d = _model_dir(tmp_path, {"decode": {"lm_scale": 1.0, "word_bias": 0.0, "substitution_bias": 3.0}})
    dec = load_rewrite_decoder(d)
    assert dec.settings == DecodeSettings(1, 0, 3, 0)
    assert load_rewrite_decoder(d, substitution_bias=0.0, insertion_bias=-2.0).settings \
        == DecodeSettings(1, 0, 0, -2)
    hg = dec.hypergraph(_tree())
    base = hyperedge_scores(hg, dec.model.weights, dec.featuriser)
    substituted = hg.operations[:, OPERATIONS.index("substituted")]
    assert substituted.max() >= 1  # the grammar's substitution rule matched (a real substitution)
    assert np.array_equal(bias_counts(hg)[:, 1], substituted)
    assert np.array_equal(dec.hyperedge_scores(hg), base + 3.0 * substituted)
    assert np.array_equal(bias_counts(hg)[:, 0], hyperedge_counts(hg)[1])


def test_substitution_bias_moves_the_substitutions(tmp_path) -> None:
    """A large substitution bias makes the rewrite substitute; a large negative one forbids it."""
    d = _model_dir(tmp_path, {})
    more = load_rewrite_decoder(d, substitution_bias=100.0).rewrite(_tree())
    none = load_rewrite_decoder(d, substitution_bias=-100.0).rewrite(_tree())
    assert more.certified and none.certified
    assert more.operations.substituted >= 1 and none.operations.substituted == 0


def test_a_change_of_case_is_not_a_substitution_for_the_bias() -> None:
    """``the`` → ``The`` counts as substituted in the operations but not in the substitution bias's count;
    ``purchased`` → ``bought`` counts in both."""
    from dualdecomp.models.rewriting.application import lexical_substitutions
    from dualdecomp.solvers.rewriting import RewriteRule
    from dualdecomp.solvers.transducer import NODE, WORD, Frag

    def rule(src: str, tgt: str) -> RewriteRule:
        return RewriteRule(Frag(NODE, "DT", (Frag(WORD, src),)), Frag(NODE, "DT", (Frag(WORD, tgt),)), (),
                           (0,))

    case, real = rule("the", "The"), rule("purchased", "bought")
    assert case.operations().substituted == 1 and lexical_substitutions(case) == 0
    assert real.operations().substituted == 1 and lexical_substitutions(real) == 1
    # content words only: the tag above the source word decides (DT is not a content tag, VBD is)
    assert lexical_substitutions(rule("an", "a"), content_only=True) == 0
    assert lexical_substitutions(rule("an", "a")) == 1
    verb = RewriteRule(Frag(NODE, "VP", (Frag(NODE, "VBD", (Frag(WORD, "purchased"),)),
                                         Frag(NODE, "DT", (Frag(WORD, "the"),)))),
                       Frag(NODE, "VP", (Frag(NODE, "VBD", (Frag(WORD, "bought"),)),
                                         Frag(NODE, "DT", (Frag(WORD, "a"),)))), (), (0, 1))
    assert lexical_substitutions(verb) == 2 and lexical_substitutions(verb, content_only=True) == 1


def test_content_insertions_count_the_open_class_words_a_rule_writes_from_nothing() -> None:
    """The thirty-fifth rule's count: inserted words (aligned to no source word) that are not stop words
    and have a letter or digit; substituted words, stop words and punctuation do not count."""
    from dualdecomp.models.rewriting.application import content_insertions
    from dualdecomp.solvers.rewriting import RewriteRule
    from dualdecomp.solvers.transducer import NODE, VAR, WORD, Frag

    def pre(tag: str, word: str) -> Frag:
        return Frag(NODE, tag, (Frag(WORD, word),))

    # (NP @DT ~NN) => (NP @DT (JJ "safe") (NN "place")): the noun deleted whatever it was
    source = Frag(NODE, "NP", (Frag(VAR, "DT"), Frag(VAR, "NN", kept=False)))
    target = Frag(NODE, "NP", (Frag(VAR, "DT"), pre("JJ", "safe"), pre("NN", "place")))
    safe_place = RewriteRule(source, target, (0,), (None, None))
    assert safe_place.operations().inserted == 2 and content_insertions(safe_place) == 2
    # stop words and punctuation inserted: none; a number: one
    function = RewriteRule(source, Frag(NODE, "NP", (pre(",", ","), Frag(VAR, "DT"), pre("RB", "very"),
                                                     pre("CD", "1827"))), (0,), (None, None, None))
    assert function.operations().inserted == 3 and content_insertions(function) == 1
    # a substitution writes a content word aligned to its source word: not an insertion
    bought = RewriteRule(pre("VBD", "purchased"), pre("VBD", "bought"), (), (0,))
    assert content_insertions(bought) == 0


def test_content_insertion_counts_are_per_hyperedge_rule_counts(tmp_path) -> None:
    from dualdecomp.models.rewriting.application import content_insertion_counts, content_insertions

    dec = load_rewrite_decoder(_model_dir(tmp_path, {}))
    hg = dec.hypergraph(_tree())
    counts = content_insertion_counts(hg)
    assert counts.shape == (hg.num_hyperedges,)
    assert np.array_equal(counts, [content_insertions(hg.rules[r]) for r in hg.hyperedge_rule])
    assert np.all(counts <= hg.operations[:, _INS])
