"""Length requests and detokenisation."""

from __future__ import annotations

import numpy as np
import pytest

from dualdecomp.app.length_request import parse_length
from dualdecomp.core.errors import InputError
from dualdecomp.data.detokenise import detokenise
from dualdecomp.data.sentence import Sentence


def test_length_modes(tmp_path) -> None:
    assert parse_length().for_sentence(5, 0) == [None]
    assert parse_length(3).for_sentence(5, 0) == [3]
    assert parse_length("3").for_sentence(5, 0) == [3]
    assert parse_length(ratio=0.5).for_sentence(5, 0) == [3]
    assert parse_length("ratio:0.1").for_sentence(5, 0) == [1]
    assert parse_length("gold").for_sentence(5, 0, [2, 4]) == [2, 4]
    f = tmp_path / "l.txt"
    f.write_text("2\n4\n")
    spec = parse_length(length_file=f)
    assert spec.for_sentence(5, 1) == [4]
    with pytest.raises(InputError):
        spec.for_sentence(5, 2)
    with pytest.raises(InputError, match="exceeds"):
        parse_length(6).for_sentence(5, 0)


@pytest.mark.parametrize("kwargs", [
    {"length": -1}, {"length": "x"}, {"length": "ratio:0"}, {"length": "ratio:1.5"}, {"ratio": "nan"},
    {"length": 3, "ratio": 0.5}, {"length_file": "/nonexistent"}, {"length": 2.5},
])
def test_bad_lengths(kwargs) -> None:
    with pytest.raises(InputError):
        parse_length(**kwargs)


def test_bad_length_file(tmp_path) -> None:
    f = tmp_path / "l.txt"
    f.write_text("3\nabc\n")
    with pytest.raises(InputError, match="l.txt:2"):
        parse_length(length_file=f)


def _sent(tokens, spaces):
    n = len(tokens)
    return Sentence(tuple(tokens), ("X",) * n, ("X",) * n, (0,) * n, ("dep",) * n, tuple(spaces))


def test_detokenise_spacing() -> None:
    s = _sent(["Hello", ",", "world", "!"], [False, True, False, False])
    assert detokenise(s, np.array([1, 1, 1, 1], bool)) == "Hello, world!"
    assert detokenise(s, np.array([1, 0, 1, 1], bool)) == "Hello world!"
    assert detokenise(s, np.array([1, 0, 0, 1], bool)) == "Hello!"
    assert detokenise(s, np.array([0, 0, 0, 0], bool)) == ""
