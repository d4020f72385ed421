"""Character budgets: the output never exceeds the budget and is the exact optimum under it."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor


@settings(max_examples=200, deadline=None, derandomize=True)
@given(data=st.data())
def test_chars_never_exceed_the_budget(data, parsed_dev, tiny_model) -> None:
    _, sentences = parsed_dev
    s = data.draw(st.sampled_from(sentences))
    budget = data.draw(st.integers(0, len(" ".join(s.tokens)) + 5))
    comp = _compressor(tiny_model).compress(s, chars=budget)
    assert len(comp.compression) <= budget
    assert len(comp.text) <= len(comp.compression)
    assert comp.result.certified


_CACHE: dict = {}


def _compressor(path):
    if path not in _CACHE:
        _CACHE[path] = Compressor(path)
    return _CACHE[path]


def test_chars_optimum_against_enumeration(parsed_dev, tiny_model) -> None:
    from dualdecomp.solvers.bigram.char_budget import compression_chars
    from tests.oracles.bruteforce import bigram_score, kept_subsets

    c = _compressor(tiny_model)
    short = [s for s in parsed_dev[1] if s.n <= 12][:3]
    assert short
    for s in short:
        B = c.model.potentials(s)
        widths = np.array([len(t) for t in s.tokens])
        for budget in (5, 20, 40):
            best = max(bigram_score(B, k) for k in kept_subsets(s.n)
                       if compression_chars(widths, k) <= budget)
            got = c.compress(s, chars=budget).result.primal
            assert abs(got - best) <= 1e-9 * max(1.0, abs(best))


def test_chars_cli(tiny_model, capsys) -> None:
    assert main(["compress", "--model", str(tiny_model), "--chars", "30", "--json",
                 "The quick brown fox, it seems, jumped over the lazy dog near the river bank."]) == 0
    row = json.loads(capsys.readouterr().out)
    assert len(row["compression"]) <= 30 and len(row["output"]) <= 30
    assert main(["compress", "--chars", "-3", "a b c"]) == 2
    assert main(["compress", "--chars", "10", "--length", "2", "a b c"]) == 2
