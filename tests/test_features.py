"""The bigram model's features: potentials B agree with explicit feature vectors on every structure."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.models.bigram.features import bigram_features
from dualdecomp.models.bigram.span_stats import all_pairs, span_stats
from tests.oracles.bruteforce import kept_sequence


def _objective(B, keep):
    seq = kept_sequence(keep)
    return sum(B[a, b] for a, b in zip(seq[:-1], seq[1:], strict=False))


def test_potentials_match_feature_vectors(parsed_dev) -> None:
    _, sentences = parsed_dev
    rng = np.random.default_rng(0)
    for s in sentences[:10]:
        n = s.n
        lm = rng.normal(size=(n + 2, n + 2))
        f = bigram_features(s, lm, hash_bits=16)
        w = rng.normal(size=1 << 16)
        w[0] = 0.0
        B = f.potentials(w)
        for _ in range(20):
            keep = rng.random(n) < 0.5
            idx, val = f.vector(keep)
            assert abs(_objective(B, keep) - float(np.dot(w[idx], val))) < 1e-8


def test_pair_rows_layout() -> None:
    for n in range(0, 7):
        pi, pj = all_pairs(n)
        from dualdecomp.models.bigram.features import BigramFeatures

        f = BigramFeatures(n, pi, pj, np.zeros((len(pi), 1), dtype=np.int64), np.zeros(0, dtype=np.int64),
                           np.zeros((len(pi), 0)), np.zeros((n, 1), dtype=np.int64))
        rows = f._pair_rows(pi, pj)
        assert rows.tolist() == list(range(len(pi)))


def _random_tree(draw, n):
    heads = [0] * (n + 2)
    order = draw(st.permutations(list(range(1, n + 1))))
    placed = [0]
    for k in order:
        heads[k] = draw(st.sampled_from(placed))
        placed.append(k)
    return heads


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_span_stats_against_definition(data) -> None:
    n = data.draw(st.integers(0, 7))
    heads = np.array(_random_tree(data.draw, n), dtype=np.int64)
    kids = [[] for _ in range(n + 2)]
    for k in range(1, n + 1):
        kids[heads[k]].append(k)

    def subtree(k):
        out = {k}
        for c in kids[k]:
            out |= subtree(c)
        return out

    spans = np.zeros((n + 2, 2), dtype=np.int64)
    subs = {}
    for k in range(1, n + 1):
        subs[k] = subtree(k)
        spans[k] = (min(subs[k]), max(subs[k]))
    is_verb = np.array(data.draw(st.lists(st.booleans(), min_size=n + 2, max_size=n + 2)))
    is_punct = np.array(data.draw(st.lists(st.booleans(), min_size=n + 2, max_size=n + 2)))
    complete, nroots, single, has_verb, has_root, has_punct = span_stats(heads, spans, is_verb, is_punct)
    for p, (i, j) in enumerate(zip(*all_pairs(n), strict=True)):
        span = set(range(i + 1, j))
        if span:
            assert complete[p] == all(subs[k] <= span for k in span)
            assert nroots[p] == sum(heads[k] not in span for k in span)
            exact = [k for k in span if subs[k] == span]
            assert single[p] == (exact[0] if exact else -1)
        assert has_verb[p] == any(is_verb[k] for k in span)
        assert has_root[p] == any(heads[k] == 0 for k in span)
        assert has_punct[p] == any(is_punct[k] for k in span)
