"""Context-pruned trigram storage (issue W2.5): the same potentials and the same exact DP as the dense
(n+2)^3 tensor, in memory proportional to the sentence's distinct KenLM contexts."""

from __future__ import annotations

from pathlib import Path

import kenlm
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dualdecomp.models.lm.model import load_lm
from dualdecomp.solvers.ngram import Trigram, solve, solve_lengths
from dualdecomp.solvers.ngram.packed import PackedTrigram
from tests.oracles import bruteforce

LM_PATH = Path(__file__).resolve().parents[1] / "data" / "default_model" / "lm.binary"
VOCAB = ["the", "minister", "said", "on", "monday", "that", "new", "rules", "would", "apply", "to", "of",
         "zyzzyvaqq", "42", ",", "."]


@pytest.fixture(scope="module")
def lm():
    return load_lm(LM_PATH)


def dense_oracle(lm, tokens):
    """The pre-W2.5 dense construction: one KenLM lookup per entry (a < b < c, and (0, 0, c))."""
    words = lm.lm_words(tokens)
    n = len(words)
    m = n + 2
    model = lm._model
    T = np.full((m, m, m), -np.inf)
    targets = ["<s>", *words, "</s>"]
    scratch = kenlm.State()
    begin = lm._begin_state()
    for c in range(1, m):
        T[0, 0, c] = model.BaseScore(begin, targets[c], scratch)
    null = kenlm.State()
    model.NullContextWrite(null)
    heads = [begin]
    for w in words:  # each word read from a null context
        heads.append(kenlm.State())
        model.BaseScore(null, w, heads[-1])
    for a in range(n + 1):
        for b in range(a + 1, n + 1):
            pair = kenlm.State()
            model.BaseScore(heads[a], targets[b], pair)
            for c in range(b + 1, m):
                T[a, b, c] = model.BaseScore(pair, targets[c], scratch)
    return T


@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=9))
def test_rows_equal_the_dense_tensor(lm, tokens):
    packed = lm.trigram_rows(tokens)
    T = dense_oracle(lm, tokens)
    assert np.array_equal(packed.dense(), T)  # -inf in the same places
    assert packed.rows.shape[0] <= (len(tokens) + 2) ** 2
    fin = np.isfinite(T)
    assert np.allclose(lm.trigram_tensor(tokens)[fin], T[fin], rtol=0, atol=1e-9)


@given(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=8), st.data())
def test_dp_on_packed_equals_dense_and_brute_force(lm, tokens, data):
    n = len(tokens)
    u = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n)))
    packed = lm.trigram_rows(tokens).scaled(0.5)
    T = 0.5 * dense_oracle(lm, tokens)
    for length in [None, *range(n + 1)]:
        a, b = solve(packed, u, length), solve(T, u, length)
        assert np.array_equal(a.keep, b.keep) and abs(a.score - b.score) <= 1e-9
        assert abs(a.score - bruteforce.trigram(T, u, length).score) <= 1e-9
    la, lb = solve_lengths(packed, u), solve_lengths(T, u)
    assert np.array_equal(la.keeps, lb.keeps) and np.allclose(la.scores, lb.scores, atol=1e-9, rtol=0)
    comp = Trigram(packed)
    keep = a.keep
    assert abs(comp.best_given(keep) - Trigram(T).best_given(keep)) <= 1e-9
    assert np.array_equal(comp.T, T)


def test_fewer_rows_than_pairs_on_a_long_sentence(lm):
    tokens = ("the minister said on monday that the new rules would apply to every company in the "
              "country from next year , and that the rules of the new year would apply to the minister ."
              ).split()
    tokens = (tokens * 4)[:120]
    packed = lm.trigram_rows(tokens)
    m = len(tokens) + 2
    assert packed.nbytes < 0.25 * m ** 3 * 8  # the dense tensor's bytes
    free = solve(packed)
    assert free.keep.shape == (len(tokens),)


def test_from_dense_is_a_view_and_validates():
    T = np.random.default_rng(0).normal(size=(5, 5, 5))
    P = PackedTrigram.from_dense(T)
    assert np.shares_memory(P.rows, T) or P.rows.base is not None
    with pytest.raises(Exception, match="NaN"):
        PackedTrigram(np.full((1, 5), np.nan), np.zeros((5, 5), dtype=np.int64))
    with pytest.raises(Exception, match="row indices"):
        PackedTrigram(np.zeros((1, 5)), np.ones((5, 5), dtype=np.int64))
