"""``dualdecomp order`` compiles its decoders' numba kernels before any input's deadline starts
(``OrderingDecoder.warm_up``): on a cold numba cache the compilation took longer than the default 5 s
limit, and the first input came back timed out, ordered at random."""

from __future__ import annotations

import json

import pytest

from dualdecomp.app.cli import main
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import WARM_UP_INPUTS, OrderingDecoder
from dualdecomp.models.ordering.paper.search import SearchConfig
from tests.test_ordering_decoder_registry import bundle


def _spy(monkeypatch) -> list[tuple[str, float | None, float | None]]:
    """Record every ``OrderingDecoder.decode`` call: the input's id, its deadline's limit and the search's
    time limit (None: none)."""
    calls: list[tuple[str, float | None, float | None]] = []
    original = OrderingDecoder.decode

    def decode(self, inp, search=None, exact=None, deadline=None):
        calls.append((inp.ident, None if deadline is None else deadline.seconds,
                      None if search is None else search.timeout))
        return original(self, inp, search, exact, deadline)

    monkeypatch.setattr(OrderingDecoder, "decode", decode)
    return calls


def test_the_cli_warms_up_without_a_limit_before_the_first_input(monkeypatch, capsys) -> None:
    calls = _spy(monkeypatch)
    assert main(["order", "--words", "dog the barked .", "--timeout", "2"]) == 0
    assert calls == [("warm-up bag", None, None), ("warm-up tree", None, None), ("argv", 2.0, 2.0)]
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["id"] == "argv" and "timed_out" not in row


@pytest.mark.parametrize("exact", [None, ExactConfig(max_states=1000), ExactConfig(beam=8, lineariser=True)])
def test_warm_up_decodes_both_inputs_with_every_setting(monkeypatch, exact) -> None:
    calls = _spy(monkeypatch)
    bundle().warm_up(SearchConfig(timeout=0.001, max_expansions=2000), exact)
    assert calls == [(inp.ident, None, None) for inp in WARM_UP_INPUTS]
    assert [all(h is None for h in inp.heads) for inp in WARM_UP_INPUTS] == [True, False]
    assert all(h is not None for h in WARM_UP_INPUTS[1].heads)
