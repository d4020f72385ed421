"""Deletion alignment: LCS size, last-occurrence tie-breaking, agreement with brute force."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.data.alignment import align, keep_vector


def test_last_occurrence() -> None:
    assert align("a b a c a".split(), ["a"]) == [4]
    assert align("a b a c a".split(), ["a", "c"]) == [2, 3]
    assert align("the cat the dog".split(), ["the", "dog"]) == [2, 3]


def test_unalignable_tokens() -> None:
    assert align(["x", "y"], ["z", "x", "q", "y"]) == [None, 0, None, 1]
    assert align([], ["a"]) == [None]
    assert align(["a"], []) == []


def test_case_insensitive_fallback() -> None:
    assert keep_vector(["The", "cat"], ["the", "cat"]).tolist() == [True, True]
    assert keep_vector(["the", "The"], ["the"]).tolist() == [True, False]


def _brute(src, cmp):
    """Among maximum-size alignments, the pointwise-latest one (by enumeration)."""
    best = None
    for size in range(min(len(src), len(cmp)), -1, -1):
        cands = []
        for cs in itertools.combinations(range(len(cmp)), size):
            for ss in itertools.combinations(range(len(src)), size):
                if all(src[s] == cmp[c] for s, c in zip(ss, cs, strict=True)):
                    out = [None] * len(cmp)
                    for s, c in zip(ss, cs, strict=True):
                        out[c] = s
                    cands.append(out)
        if cands:
            best = cands
            break
    return best


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from("abc"), max_size=6), st.lists(st.sampled_from("abc"), max_size=4))
def test_alignment_is_maximum_and_latest(src, cmp) -> None:
    got = align(src, cmp)
    cands = _brute(src, cmp)
    size = sum(a is not None for a in cands[0])
    assert sum(a is not None for a in got) == size
    assert got in cands
    # latest: the sequence of aligned source positions is pointwise >= every other candidate's when the
    # same compression tokens are aligned
    same = [c for c in cands if [a is None for a in c] == [a is None for a in got]]
    for c in same:
        assert all(g >= o for g, o in zip(got, c, strict=True) if g is not None)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from("abcd"), max_size=8), st.data())
def test_subsequence_fully_aligned(src, data) -> None:
    mask = data.draw(st.lists(st.booleans(), min_size=len(src), max_size=len(src)))
    cmp = [t for t, m in zip(src, mask, strict=True) if m]
    keep = keep_vector(src, cmp)
    assert [t for t, k in zip(src, keep, strict=True) if k] == cmp
