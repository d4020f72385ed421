"""``--time-limit`` inside one component's potentials (issue W2.5): the KenLM lookup loop of the LM and the
dependency feature scoring check the sentence's deadline, raising the same error as between components."""

from __future__ import annotations

import pytest

from dualdecomp.app.compressor import Compressor, default_model_dir
from dualdecomp.core.deadline import Deadline, TimeLimitError
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.models.dependency.store import load_dependency_model
from dualdecomp.models.lm.model import load_lm

WORDS = "the minister said on monday that the new rules would apply to every company".split()


class AfterChecks:
    """A deadline that passes at its ``k``-th check (counts them), to show checks happen inside a loop."""

    def __init__(self, k: int) -> None:
        self.k, self.calls, self.stages = k, 0, []

    def check(self, stage: str) -> None:
        self.calls += 1
        self.stages.append(stage)
        if self.calls >= self.k:
            Deadline(1e-3, 0.0).check(stage)  # an expired deadline: the real error and message


@pytest.fixture(scope="module")
def sentence():
    return parse_tokens([WORDS])[0]


def test_lm_lookups_check_the_deadline_inside_the_loop(sentence) -> None:
    lm = load_lm(default_model_dir() / "lm.binary")
    lm.trigram_rows(sentence.tokens, AfterChecks(10**9))  # never expires: same result as without
    d = AfterChecks(5)
    with pytest.raises(TimeLimitError, match=r"ran out while computing the lm potentials \(KenLM lookups"):
        lm.trigram_rows(sentence.tokens, d)
    assert d.calls == 5  # stopped in the middle of the loop (it has n + 1 = 15 rounds)
    full = AfterChecks(10**9)
    lm.trigram_rows(sentence.tokens, full)
    assert full.calls == sentence.n + 1


def test_dependency_features_check_the_deadline_between_templates(sentence) -> None:
    model = load_dependency_model(default_model_dir() / "dependency")
    A, S = model.potentials(sentence)
    never = AfterChecks(10**9)
    A2, S2 = model.potentials(sentence, never)
    assert (A == A2).all() and never.calls > 10
    d = AfterChecks(3)
    with pytest.raises(TimeLimitError, match=r"computing the dependency potentials \(arc feature"):
        model.potentials(sentence, d)
    assert d.calls == 3


@pytest.mark.parametrize("config", ["lm-only", "dependency"])
def test_a_single_component_configuration_stops_inside_its_potentials(sentence, config) -> None:
    """With one component there is no 'between components' check: the limit is now enforced inside."""
    comp = Compressor(config=config)
    comp.compress(sentence)  # loads and compiles outside the limit
    with pytest.raises(TimeLimitError, match="ran out while computing the (lm|dependency) potentials"):
        comp.compress(sentence, time_limit=1e-9)
