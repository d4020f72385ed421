"""k-best bigram compressions equal the k best of exhaustive enumeration."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.solvers.bigram.kbest import kbest
from dualdecomp.solvers.bigram.solver import solve
from tests.oracles.bruteforce import bigram_score, kept_subsets


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.data())
def test_kbest_matches_enumeration(data) -> None:
    n = data.draw(st.integers(0, 7))
    ints = data.draw(st.booleans())
    vals = st.integers(-3, 3).map(float) if ints else st.floats(-5, 5, allow_nan=False)
    B = np.array(data.draw(st.lists(vals | st.just(-np.inf), min_size=(n + 2) ** 2, max_size=(n + 2) ** 2)))
    B = B.reshape(n + 2, n + 2)
    u = np.array(data.draw(st.lists(vals, min_size=n, max_size=n)))
    k = data.draw(st.integers(1, 6))
    length = data.draw(st.none() | st.integers(0, n))
    every = sorted((bigram_score(B, keep, u) for keep in kept_subsets(n, length)), reverse=True)
    every = [s for s in every if s > -np.inf]
    got = kbest(B, k, u, length)
    assert len(got) == min(k, len(every))
    for sol, want in zip(got, every, strict=False):
        assert abs(sol.score - want) <= 1e-9 * max(1.0, abs(want))
        assert abs(bigram_score(B, sol.keep, u) - sol.score) <= 1e-9 * max(1.0, abs(want))
        if length is not None:
            assert int(sol.keep.sum()) == length
    assert len({sol.keep.tobytes() for sol in got}) == len(got)
    if got:
        assert abs(got[0].score - solve(B, u, length).score) <= 1e-9 * max(1.0, abs(got[0].score))
