"""W3.1 item 9: one deadline per input bounds every word-ordering decoder (``order --timeout``).

Each decoder checks the input's ``Deadline`` and, once it has passed, returns what it has — the beam DPs,
the lineariser and the LM beam finished greedily, the exact DPs with no output — labelled in
``OrderingResult.stopped`` (``"timed_out": true`` and a ``"note"`` in the row) and never certified. No
wall-clock threshold: the deadlines here have already passed, or pass after a set number of checks (a
fake clock, ``dualdecomp.core.deadline.monotonic`` patched), and a deadline that never passes must not
change a result.

Run against the code before the fix (/tmp/baseline): every test here failed there (the decoders took
no deadline, and the CLI rows had no label: a 500-word bag took 52 s with ``--timeout 2``).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dualdecomp.app.cli import main
from dualdecomp.core.deadline import Deadline
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput
from dualdecomp.models.ordering.bag_lm.search import LMTerm, input_items, lm_beam_decode, lm_beam_order
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.decoding.relinearise import relinearise
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.exact import exact_linearisation
from dualdecomp.models.ordering.paper.refine import completed_tree, refine
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first, goal_result
from dualdecomp.solvers.ordering.domain_order import beam_domain_order, greedy_domain_order, order_score
from tests.ordering_oracles import random_model
from tests.test_order_lineariser import projective_orders, random_lineariser
from tests.test_order_search import _check_constraints, constrained_bags
from tests.test_order_units import _keeps_units, unit_inputs

EXPIRED = Deadline(1.0, -math.inf)  # already passed
NEVER = Deadline.start(None)  # never passes, whatever the clock says
NO_CLOCK = SearchConfig(chart_size=32, timeout=None)
WORDS = ("the", "dog", "barked", "at", "a", "cat", "loudly", "yesterday")
TREE = (1, 2, ROOT, 5, 5, 2, 2, 2)  # "the dog barked at a cat loudly yesterday", 0-based heads


class FakeClock:
    """``monotonic`` for ``dualdecomp.core.deadline``: 0 for the deadline's start and its first ``checks``
    checks, then far later (the deadline has passed)."""

    def __init__(self) -> None:
        self.ticks = iter(())

    def __call__(self) -> float:
        return next(self.ticks, 1e9)

    def passing_after(self, checks: int) -> Deadline:
        self.ticks = itertools.chain([0.0] * (checks + 1))
        return Deadline.start(1.0)


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr("dualdecomp.core.deadline.monotonic", fake)
    return fake


def full_tree(pos: bool = True) -> OrderingInput:
    tags = ("DT", "NN", "VBD", "IN", "DT", "NN", "RB", "NN")
    return OrderingInput(WORDS, tags if pos else (None,) * 8, TREE, "tree")


def bag() -> OrderingInput:
    return OrderingInput(WORDS, (None,) * 8, (None,) * 8, "bag")


def _row(result) -> dict:
    row = result.as_json()
    row.pop("seconds")
    return row


def _labelled(result, stage: str) -> None:
    """Timed out, not certified, and the note names ``stage``."""
    row = result.as_json()
    assert result.timed_out and row["timed_out"] is True and not result.certified
    assert stage in row["note"], row["note"]


# --- best-first search ------------------------------------------------------------------------------

def test_best_first_stops_at_the_deadline_and_labels_its_joined_output(clock):
    model = random_model(1)
    result = best_first(model, bag(), NO_CLOCK, deadline=clock.passing_after(3))  # one check per pop
    assert result.expansions == 3 and not result.complete
    _labelled(result, "best-first search (stopped after 3 pops")
    assert "timed_out" not in best_first(model, bag(), NO_CLOCK).as_json()


# --- the linearisation DPs (tree beam DP, exact DP) -------------------------------------------------

@pytest.mark.parametrize("checks", [0, 1, 7, 40, 150])  # of the 188 checks of an uncut run
def test_the_tree_beam_dp_finishes_greedily_with_a_complete_projective_tree(clock, checks):
    model, inp = random_model(2), full_tree(pos=False)
    found = exact_linearisation(model, inp, beam=4, deadline=clock.passing_after(checks))
    assert found.timed_out and not found.certified and found.best is not None
    result = goal_result(model.context(inp), found.best, found.states, 0.0)
    _check_constraints(inp, result)  # every word, the given heads, one projective tree
    assert len(result.order) == len(inp)


def test_the_exact_dp_gives_up_at_the_deadline(clock):
    found = exact_linearisation(random_model(2), full_tree(), 1_000_000, deadline=clock.passing_after(5))
    assert found.timed_out and found.best is None and not found.certified


def test_a_deadline_that_never_passes_changes_no_dp_result():
    model = random_model(3)
    for inp, kwargs in ((full_tree(pos=False), {"beam": 3}), (full_tree(), {"max_states": 100_000})):
        free = exact_linearisation(model, inp, **kwargs)
        timed = exact_linearisation(model, inp, **kwargs, deadline=NEVER)
        assert (timed.best.words, timed.score, timed.certified, timed.states, timed.timed_out) == (
            free.best.words, free.score, free.certified, free.states, False)


# --- one head domain: the beam search and the greedy order at the deadline --------------------------

def _unit_tables(rng, n: int, chain: tuple[int, ...]):
    """Random domain tables in which ``chain`` must come out contiguous and in order (as
    ``lineariser.features.constrained_tables`` makes them)."""
    side, pair, start, end = rng.normal(size=(n, 2)), rng.normal(size=(n, n)), rng.normal(size=n), \
        rng.normal(size=n)
    for a, b in itertools.pairwise(chain):
        keep = pair[a, b]
        pair[a, :], pair[:, b] = -np.inf, -np.inf
        pair[a, b] = keep
        start[b], end[a] = -np.inf, -np.inf
    return side, pair, start, end


@pytest.mark.parametrize("seed", range(20))
def test_the_greedy_domain_order_keeps_a_unit_and_scores_its_order(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    chain = tuple(int(k) for k in rng.permutation(n)[: int(rng.integers(2, n + 1))])
    side, pair, start, end = _unit_tables(rng, n, chain)
    head = int(rng.integers(n))
    found = greedy_domain_order(side, pair, start, end, head)
    order = found.order.tolist()
    assert sorted(order) == list(range(n)) and found.timed_out and not found.exact
    at = order.index(chain[0])
    assert tuple(order[at:at + len(chain)]) == chain
    assert math.isfinite(found.score)
    assert found.score == order_score(order, side, pair, start, end, head)


@pytest.mark.parametrize("checks", [0, 1, 3])
def test_the_domain_beam_search_completes_its_best_prefix_greedily(clock, checks):
    rng = np.random.default_rng(checks)
    side, pair, start, end = _unit_tables(rng, 9, (4, 1, 7))

    def bonus(prefix):
        return 0.1 * len(prefix)

    found = beam_domain_order(side, pair, start, end, 2, 4, bonus, deadline=clock.passing_after(checks))
    order = found.order.tolist()
    assert found.timed_out and sorted(order) == list(range(9))
    assert found.score == pytest.approx(order_score(order, side, pair, start, end, 2) + 0.9)
    assert beam_domain_order(side, pair, start, end, 2, 4, bonus, deadline=NEVER) \
        .order.tolist() == beam_domain_order(side, pair, start, end, 2, 4, bonus).order.tolist()


# --- the head-domain lineariser ---------------------------------------------------------------------

def test_the_lineariser_orders_the_domains_left_greedily(clock):
    lin, inp = random_lineariser(5), full_tree(pos=False)
    found = lin.linearise(inp.words, inp.pos, inp.heads, exact_limit=2, deadline=clock.passing_after(1))
    assert found.order in set(projective_orders(inp.heads)) and not found.certified
    assert "head domains ordered greedily at the deadline" in found.stopped
    free = lin.linearise(inp.words, inp.pos, inp.heads, exact_limit=2, deadline=NEVER)
    assert free == lin.linearise(inp.words, inp.pos, inp.heads, exact_limit=2) and not free.stopped


def test_the_lineariser_with_its_lm_gives_up_its_exact_dp_and_its_beam(clock, default_lm):
    inp = full_tree()
    lin = replace(random_lineariser(6), lm_states=1_000_000).with_lm(OrderingLM(default_lm, 1.0))
    found = lin.linearise(inp.words, inp.pos, inp.heads, deadline=clock.passing_after(10))
    assert found.order in set(projective_orders(inp.heads)) and not found.certified
    assert "exact DP with its LM term (gave up" in found.stopped and "greedily" in found.stopped
    free = lin.linearise(inp.words, inp.pos, inp.heads, deadline=NEVER)
    assert free == lin.linearise(inp.words, inp.pos, inp.heads)


# --- the LM beam --------------------------------------------------------------------------------------

def test_the_lm_beam_goes_on_greedily_from_its_best_state(clock, default_lm):
    terms, inp = (LMTerm(default_lm),), bag()
    found = lm_beam_order(terms, inp, 16, deadline=clock.passing_after(1))  # step 0 has one state
    assert found.greedy_from == 1 and found.pruned and sorted(found.order) == list(range(len(inp)))
    free = lm_beam_order(terms, inp, 16, deadline=NEVER)
    assert free == lm_beam_order(terms, inp, 16) and free.greedy_from is None
    assert lm_beam_order(terms, inp, 1, deadline=EXPIRED) == lm_beam_order(terms, inp, 1)  # greedy anyway
    result = lm_beam_decode(terms, inp, 16, deadline=EXPIRED)
    _labelled(result, f"the LM beam search (after 0 of {len(input_items(inp))} items")
    assert result.complete and sorted(result.order) == list(range(len(inp)))


# --- the second stage ---------------------------------------------------------------------------------

def test_the_second_stage_attaches_loose_parts_to_the_root_and_finishes_greedily(clock):
    model, inp = random_model(7), bag()
    first = best_first(model, inp, NO_CLOCK, deadline=EXPIRED)  # nothing popped: an empty output
    assert first.order == () and first.timed_out
    tree, note = completed_tree(model, inp, first, EXPIRED)
    assert all(h is not None for h in tree.heads) and "loose parts attached to the root" in note[0]
    result = refine(model, inp, first, 4, deadline=EXPIRED)
    _check_constraints(inp, result)
    assert result.complete and len(result.order) == len(inp)
    _labelled(result, "best-first search (stopped after 0 pops")
    assert "the tree beam DP (finished greedily" in result.as_json()["note"]
    relinearised = relinearise(model, random_lineariser(8), inp, first, EXPIRED)
    _labelled(relinearised, "head domains ordered greedily")
    assert relinearised.complete and sorted(relinearised.order) == list(range(len(inp)))


# --- every path of the decoder, cut at any point --------------------------------------------------------

@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(inp=st.one_of(constrained_bags(max_n=6), unit_inputs(max_n=6), unit_inputs(max_n=6, full_tree=True)),
       seed=st.integers(0, 10_000), checks=st.integers(0, 300),
       config=st.sampled_from([
           ExactConfig(max_states=None, beam=4),
           ExactConfig(max_states=50, beam=4),
           ExactConfig(max_states=None, beam=4, lineariser=True, second_stage="lineariser"),
           ExactConfig(max_states=100_000, beam=4, lineariser=True),
       ]))
def test_the_decoder_cut_anywhere_keeps_every_constraint_and_labels_what_it_cut(clock, inp, seed, checks,
                                                                                config):
    decoder = OrderingDecoder(random_model(seed), lineariser=random_lineariser(seed + 1))
    result = decoder.decode(inp, NO_CLOCK, config, deadline=clock.passing_after(checks))
    _check_constraints(inp, result)
    assert result.complete and len(result.order) == len(inp)
    assert _keeps_units(inp, result.order, result.heads)
    assert not (result.timed_out and result.certified)
    assert _row(decoder.decode(inp, NO_CLOCK, config, deadline=NEVER)) == \
        _row(decoder.decode(inp, NO_CLOCK, config))


# --- the CLI: a large bag and a tiny --timeout ----------------------------------------------------------

@pytest.fixture(scope="module")
def large_inputs(tmp_path_factory, corpora):
    """A bag of 60 words of written.dev, and a full tree over them (a chain of heads)."""
    words = []
    for line in (corpora / "written.dev.jsonl").read_text().splitlines():
        words += json.loads(line)["text"]
    picked = random.Random(0).sample([w for w in words if w.strip()], 60)
    path = tmp_path_factory.mktemp("large") / "large.jsonl"
    rows = [{"id": "bag", "words": picked},
            {"id": "tree", "words": picked, "heads": [0, *([1] * 30), *range(31, 60)]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("options, stages", [
    ([], ["the LM beam search", "head domains ordered greedily"]),
    (["--lm-beam", "0"], ["best-first search", "completing the tree", "the tree beam DP"]),
    (["--lm-beam", "0", "--second-stage", "lineariser"], ["best-first search", "head domains"]),
    (["--lm-beam", "0", "--no-lineariser", "--exact"], ["best-first search", "the exact DP (gave up",
                                                         "the tree beam DP"]),
])
def test_a_tiny_timeout_gives_labelled_complete_rows(large_inputs, capsys, options, stages):
    assert main(["order", "--input", str(large_inputs), "--timeout", "1e-9", *options]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == ["bag", "tree"]
    for row in rows:
        assert row["timed_out"] is True and row["certified"] is False
        assert row["complete"] and row["recovered"] == 1.0 and len(row["order"]) == 60
    notes = rows[0]["note"] + " " + rows[1]["note"]
    for stage in stages:
        assert stage in notes, notes


def test_timeout_must_be_positive(capsys):
    for value in ("0", "-1", "nan"):
        assert main(["order", "--words", "a b", "--timeout", value]) == 2
    assert "--timeout" in capsys.readouterr().err
