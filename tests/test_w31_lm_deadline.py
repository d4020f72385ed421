"""W3.1 item 9 (part): the KenLM potentials loop checks the sentence's deadline inside a row, not only once
per first context word, so a long sentence cannot overshoot its ``--time-limit`` by a whole row of O(n²)
lookups. Regression test (a counting fake clock, no wall-clock threshold): on the code before the fix the
first row of a 150-token sentence made about 11,000 lookups between two checks and the test failed there
(run against /tmp/baseline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dualdecomp.core.deadline import Deadline, TimeLimitError
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.lm.model import load_lm

WORDS = "the minister said on monday that the new rules would apply to every company".split()
PER_CHECK = 4096  # models.lm.model.LOOKUPS_PER_CHECK (written out: the old code has no such name)


def _real_tokens(n: int) -> list[str]:
    """The first n tokens of written.dev, its sentences concatenated (real text: few shared LM states)."""
    out: list[str] = []
    for item in read_corpus(Path(__file__).resolve().parents[1] / "data" / "corpora" / "written.dev.jsonl"):
        out.extend(item.text)
        if len(out) >= n:
            return out[:n]
    raise AssertionError("written.dev is too short")


class CountingModel:
    """A KenLM model that counts its ``BaseScore`` lookups (everything else is the real model's)."""

    def __init__(self, model) -> None:
        self._model, self.lookups = model, 0

    def BaseScore(self, *args):  # noqa: N802 (KenLM's name)
        self.lookups += 1
        return self._model.BaseScore(*args)

    def __contains__(self, word: str) -> bool:
        return word in self._model

    def __getattr__(self, name):
        return getattr(self._model, name)


class RecordingDeadline:
    """Never expires; records the lookup count at each check (``expire_at``: passes at that check)."""

    def __init__(self, counter: CountingModel, expire_at: int | None = None) -> None:
        self.counter, self.expire_at, self.at = counter, expire_at, []

    def check(self, stage: str) -> None:
        self.at.append(self.counter.lookups)
        if self.expire_at is not None and len(self.at) >= self.expire_at:
            Deadline(1.0, 0.0).check(stage)  # an expired deadline: the real error


@pytest.fixture(scope="module")
def lm():
    return load_lm(default_model_dir() / "lm.binary")


def test_deadline_is_checked_within_a_row_of_lookups(lm) -> None:
    from dualdecomp.models.lm import model as lm_module

    assert getattr(lm_module, "LOOKUPS_PER_CHECK", PER_CHECK) == PER_CHECK
    tokens = _real_tokens(150)
    expected = lm.trigram_rows(tokens)
    real = lm._model
    counter = CountingModel(real)
    lm._model = counter
    try:
        deadline = RecordingDeadline(counter)
        got = lm.trigram_rows(tokens, deadline)
    finally:
        lm._model = real
    assert (got.rows == expected.rows).all() and (got.ctx == expected.ctx).all()  # same potentials
    marks = [*deadline.at, counter.lookups]
    gaps = [b - a for a, b in zip(marks, marks[1:], strict=False)]
    # at most LOOKUPS_PER_CHECK, plus the pair lookup and one row's fill (n + 2) that crossed it
    assert max(gaps) <= PER_CHECK + len(tokens) + 3
    assert counter.lookups > 10 * PER_CHECK  # the test is not vacuous (row 0 alone: about n²/2)


def test_deadline_passing_inside_a_row_stops_there(lm) -> None:
    tokens = _real_tokens(150)
    real = lm._model
    counter = CountingModel(real)
    lm._model = counter
    try:
        deadline = RecordingDeadline(counter, expire_at=2)  # the first check inside row a = 0
        with pytest.raises(TimeLimitError, match=r"computing the lm potentials \(KenLM lookups, "
                                                 r"context word 0 of 150\)"):
            lm.trigram_rows(tokens, deadline)
    finally:
        lm._model = real


def test_an_expired_deadline_stops_before_any_row(lm) -> None:
    with pytest.raises(TimeLimitError, match="context word 0 of"):
        lm.trigram_rows(WORDS, Deadline(1.0, 0.0))
