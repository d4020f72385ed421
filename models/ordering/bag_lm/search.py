"""An n-gram LM beam search over a bag's items: the order of a bag without syntax (APPROXIMATE).

Beyond the paper: Schmaltz, Rush & Shieber (2016, *Word Ordering Without Syntax*) order a bag of words by
an n-gram LM alone, searched left to right with a beam and a future cost, and report higher BLEU than the
syntax-based system of Zhang & Clark (2015) on the same task. Here the bag's *items* — each ordered unit
of the input (``OrderingInput.units``, e.g. a base NP) one item, every other word one — are appended to a
prefix one at a time; the score of a prefix is its KenLM log10 probability after ``<s>``. Two prefixes
with the same items placed and the same KenLM state(s) have the same completions, so only the better is
kept (exact recombination); of the rest the ``beam`` best by their score plus a future cost — each
unplaced item's log10 probability read from a null context — go on. The last step adds ``</s>``. The
score may sum several LMs, each with a weight (:class:`LMTerm`; states then carry one KenLM state each):
the shipped model adds a small LM estimated on cased text to its large lowercased one, which cannot see
that a capitalised word starts the sentence.

Nothing is lost by recombination, so when no step had more states than the beam the output is the
LMs' best order of the items (``pruned`` is False: certified for the LMs alone, not for any syntax
model). Tests compare that with brute force over every order of the items.

The output's dependency tree is not part of this search: :func:`lm_beam_decode` parses the ordered
words with the spaCy pipeline of ``dualdecomp.data.parsing`` and keeps the input's constraints (its
given tags, the heads given inside units; only a unit's head takes dependents from outside the unit).
Inputs that give any other head are not for this decoder (:func:`lm_beam_applies`).

With the input's ``Deadline`` the search checks it before expanding each state; once it has passed, the
step is redone from the best state so far with a beam of 1 and the search goes on greedily to the end
(at most n²/2 further KenLM queries per LM for n items), labelled in the result (``stopped``). spaCy's
parse of the output is not stopped (linear in its length).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import kenlm

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import path_inside
from dualdecomp.data.ordering.inputs import ROOT, OrderingInput, unit_head
from dualdecomp.data.ordering.result import OrderingResult
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.models.lm import LanguageModel, load_lm

METHOD = "LM beam (approximate)"
CERTIFIED_METHOD = "LM beam (LM optimum: nothing pruned)"
LM_FILE = "lm_beam.binary"
"""The LM beam's KenLM file in a model directory."""
CASED_LM_FILE = "lm_beam_cased.binary"
"""The LM beam's cased KenLM file in a model directory, when it has one."""


@dataclass(frozen=True)
class LMTerm:
    """One n-gram LM of the search's score, with its weight: the score adds ``weight`` × its log10
    probability of the prefix (after ``<s>``; ``</s>`` at the end)."""

    lm: LanguageModel
    weight: float = 1.0


@dataclass(frozen=True)
class LMBeam:
    """The LM beam decoder a model carries (``meta["decode"]["lm_beam"]`` and :data:`LM_FILE`).

    Attributes
    ----------
    terms : tuple of LMTerm
        The lowercased LM (weight 1) and, when the model has one, the cased LM with its weight.
    beam : int
        States kept after each step (chosen on dev; docs/word-ordering.md, "Word ordering").
    default : bool
        Whether the default decoder orders the inputs that give no tag and no head outside their units
        with it (decided on dev by stated rules; ``ExactConfig.lm_beam == "untagged"``).
    """

    terms: tuple[LMTerm, ...]
    beam: int
    default: bool = False

    def decode(self, inp: OrderingInput, deadline: Deadline | None = None) -> OrderingResult:
        """:func:`lm_beam_decode` with this decoder's LMs and beam."""
        return lm_beam_decode(self.terms, inp, self.beam, deadline)


def load_lm_beam(directory: str | Path, meta: dict) -> LMBeam | None:
    """The LM beam decoder of a saved model, if its ``meta["decode"]["lm_beam"]`` names one (``lm``,
    ``beam``, ``default``, and optionally ``cased_lm`` with its ``cased_weight``).

    Parameters
    ----------
    directory : str or Path
        The model directory (holding the LM file).
    meta : dict
        The model's ``meta``.

    Returns
    -------
    LMBeam or None

    Raises
    ------
    ModelError
        Settings that are not a positive beam and a boolean default (with a positive weight for a cased
        LM), or a missing or invalid LM file.
    """
    settings = meta.get("decode", {}).get("lm_beam")
    if settings is None:
        return None
    beam = settings.get("beam") if isinstance(settings, dict) else None
    default = settings.get("default", False) if isinstance(settings, dict) else None
    if not isinstance(beam, int) or isinstance(beam, bool) or beam < 1 or not isinstance(default, bool):
        raise ModelError(f"{directory}: the LM beam's settings need a positive integer beam and a boolean "
                         f"default (got {settings!r})")
    weight = settings.get("cased_weight")
    positive = isinstance(weight, (int, float)) and not isinstance(weight, bool) and 0 < weight < float("inf")
    if settings.get("cased_lm") is not None and not positive:
        raise ModelError(f"{directory}: the LM beam's cased LM needs a positive cased_weight "
                         f"(got {weight!r})")
    terms = lm_terms(directory, settings.get("lm", LM_FILE), settings.get("cased_lm"), weight)
    return LMBeam(terms=terms, beam=beam, default=default)


def lm_terms(directory: str | Path, lm: str = LM_FILE, cased_lm: str | None = None,
             cased_weight: float | None = None) -> tuple[LMTerm, ...]:
    """The LM beam's LMs in a model directory: the lowercased LM at weight 1, then the cased one, if named.

    Parameters
    ----------
    directory : str or Path
    lm : str
        File of the lowercased LM.
    cased_lm : str, optional
        File of the cased LM (tokens as written).
    cased_weight : float, optional
        Its weight (positive; needed with ``cased_lm``).

    Returns
    -------
    tuple of LMTerm

    Raises
    ------
    ModelError
        A missing or invalid LM file.
    """
    d = Path(directory)
    where = d / "model.json"  # the LM beam's settings are in its meta
    terms = [LMTerm(load_lm(path_inside(d, lm, where)))]
    if cased_lm is not None:
        terms.append(LMTerm(load_lm(path_inside(d, cased_lm, where), cased=True), float(cased_weight)))
    return tuple(terms)


@dataclass(frozen=True)
class BeamOrder:
    """What the LM beam search found.

    Attributes
    ----------
    order : tuple of int
        Input word indices in output order (every word).
    logprob : float
        The weighted sum of the LMs' log10 probabilities of the output with ``<s>`` and ``</s>``.
    pruned : bool
        Whether some step had more states than the beam (False: ``order`` is the LM's optimum over the
        orders of the items).
    states : int
        States generated (after recombination), all steps together.
    greedy_from : int or None
        When the deadline stopped the beam: the number of items it had placed (the rest were placed
        greedily, with a beam of 1; ``pruned`` is then True).
    """

    order: tuple[int, ...]
    logprob: float
    pruned: bool
    states: int
    greedy_from: int | None = None


def input_items(inp: OrderingInput) -> list[tuple[int, ...]]:
    """The bag's items: each ordered unit (in its order), then every word outside the units alone.

    Parameters
    ----------
    inp : OrderingInput

    Returns
    -------
    list of tuple of int
        Word indices of each item, in the order they are placed within the item.
    """
    inside = {k for unit in inp.units for k in unit}
    return [tuple(unit) for unit in inp.units] + [(k,) for k in range(len(inp)) if k not in inside]


def lm_beam_order(terms: Sequence[LMTerm], inp: OrderingInput, beam: int, deadline: Deadline | None = None
                  ) -> BeamOrder:
    """The best order of the bag's items under the weighted LMs that the beam search finds.

    Parameters
    ----------
    terms : sequence of LMTerm
        The LMs (any order; the search keys states by KenLM's own states) and their weights.
    inp : OrderingInput
    beam : int
        States kept after each step (at least 1).
    deadline : Deadline, optional
        Checked before each state is expanded; once it has passed the search goes on with a beam of 1
        from the best state (module docstring).

    Returns
    -------
    BeamOrder

    Raises
    ------
    InputError
        A beam below 1, no LM, or a weight that is not a positive finite number.
    """
    if beam < 1:
        raise InputError(f"the LM beam must be at least 1 (got {beam})")
    if not terms or not all(0 < t.weight < float("inf") for t in terms):
        raise InputError("the LM beam needs at least one LM, each with a positive weight")
    models = [t.lm.kenlm_model for t in terms]
    weights = [t.weight for t in terms]
    items = input_items(inp)
    words = [t.lm.lm_words(inp.words) for t in terms]
    future = [sum(t.weight * t.lm.phrase_logprob([lw[k] for k in item])
                  for t, lw in zip(terms, words, strict=True)) for item in items]
    starts = []
    for model in models:
        start = kenlm.State()
        model.BeginSentenceWrite(start)
        starts.append(start)
    # a state: (score, placed items as a bit mask, KenLM states, item sequence, future cost of the rest)
    states = [(0.0, 0, tuple(starts), (), sum(future))]
    pruned, generated, greedy_from = False, 0, None

    def extend(found: dict[tuple, tuple], score, placed, lm_states, sequence, rest) -> None:
        """Every state one item longer than this one, recombined into ``found``."""
        for j, item in enumerate(items):
            if placed >> j & 1:
                continue
            total, next_states = score, []
            for model, weight, lw, state in zip(models, weights, words, lm_states, strict=True):
                for k in item:
                    out = kenlm.State()
                    total += weight * model.BaseScore(state, lw[k], out)
                    state = out
                next_states.append(state)
            key = (placed | 1 << j, *next_states)
            best = found.get(key)
            if best is None or total > best[0]:
                found[key] = (total, key[0], tuple(next_states), (*sequence, j), rest - future[j])

    for step in range(len(items)):
        found: dict[tuple, tuple] = {}
        for state in states:
            if beam > 1 and deadline is not None and deadline.expired():  # this step again, greedily
                beam, pruned, greedy_from, found = 1, True, step, {}
                extend(found, *states[0])  # the best state (ranked first)
                break
            extend(found, *state)
        generated += len(found)
        ranked = sorted(found.values(), key=lambda s: -(s[0] + s[4]))
        pruned = pruned or len(ranked) > beam
        states = ranked[:beam]
    best_total, best_sequence = float("-inf"), ()
    for score, _, lm_states, sequence, _ in states:
        total = score + sum(w * m.BaseScore(state, "</s>", kenlm.State())
                            for m, w, state in zip(models, weights, lm_states, strict=True))
        if total > best_total:
            best_total, best_sequence = total, sequence
    order = tuple(k for j in best_sequence for k in items[j])
    return BeamOrder(order=order, logprob=best_total, pruned=pruned, states=generated,
                     greedy_from=greedy_from)


def lm_beam_applies(inp: OrderingInput) -> bool:
    """Whether the LM beam can decode an input: every given head is that of a word in the same unit.

    Parameters
    ----------
    inp : OrderingInput

    Returns
    -------
    bool
    """
    unit_of = {k: n for n, unit in enumerate(inp.units) for k in unit}
    return all(head is None or (k in unit_of and unit_of.get(head) == unit_of[k])
               for k, head in enumerate(inp.heads))


def constrained_tree(inp: OrderingInput, order: tuple[int, ...], parsed_heads: tuple[int, ...]) -> list[int]:
    """A dependency tree over the output that keeps the input's given heads and unit rule.

    Parameters
    ----------
    inp : OrderingInput
    order : tuple of int
        Input word indices in output order (every word).
    parsed_heads : tuple of int
        A parser's heads of the output words (1-based output positions, 0 for the root).

    Returns
    -------
    list of int
        Heads of the output words, 0-based output positions, ``ROOT`` for the one root: the given head
        where the input gives one; an outside word the parser attached to a unit's non-head word goes to
        the unit's head; one root (the given root, else the parser's first root whose head is free, else
        the first word whose head is free); every other root and every cycle is broken by attaching a
        word whose head is free to that root.
    """
    n = len(order)
    position = {k: p for p, k in enumerate(order)}
    heads = [h - 1 if h > 0 else ROOT for h in parsed_heads]
    given = [inp.heads[k] for k in order]
    for p, head in enumerate(given):
        if head is not None:
            heads[p] = ROOT if head == ROOT else position[head]
    for unit in inp.units:
        top = position[unit_head(unit, inp.heads)]
        members = {position[k] for k in unit}
        for p in range(n):
            if p not in members and heads[p] in members and heads[p] != top:
                heads[p] = top
    free = [p for p in range(n) if given[p] is None]
    roots = [p for p in range(n) if given[p] == ROOT]
    if not roots:
        roots = [p for p in free if heads[p] == ROOT] or free[:1]
    root = roots[0]
    heads[root] = ROOT
    for p in free:
        if p != root and heads[p] == ROOT:
            heads[p] = root
    for p in range(n):
        cycle = _cycle_from(heads, p)
        while cycle:
            breaker = next(q for q in cycle if given[q] is None)
            heads[breaker] = root
            cycle = _cycle_from(heads, p)
    return heads


def _cycle_from(heads: list[int], start: int) -> list[int]:
    """The cycle reached by following heads from ``start`` (empty when the walk reaches the root)."""
    seen: dict[int, int] = {}
    p = start
    while p != ROOT and p not in seen:
        seen[p] = len(seen)
        p = heads[p]
    if p == ROOT:
        return []
    path = list(seen)
    return path[seen[p]:]


def lm_beam_decode(terms: Sequence[LMTerm], inp: OrderingInput, beam: int, deadline: Deadline | None = None
                   ) -> OrderingResult:
    """Order a bag by the LM beam search and give the output a tree (spaCy's parse, constrained).

    Parameters
    ----------
    terms : sequence of LMTerm
    inp : OrderingInput
        An input for which :func:`lm_beam_applies`.
    beam : int
    deadline : Deadline, optional
        The input's deadline (:func:`lm_beam_order`).

    Returns
    -------
    OrderingResult
        Complete; ``score`` is the output's weighted LM log10 probability; ``certified`` when nothing was
        pruned (the LMs' optimum, ``method`` says so); tags are the given ones, else spaCy's; ``stopped``
        says when the deadline made the search greedy.

    Raises
    ------
    InputError
        An input that gives heads outside its units, or a beam below 1.
    """
    if not lm_beam_applies(inp):
        raise InputError("the LM beam orders inputs without given heads outside their units")
    start = time.perf_counter()
    found = lm_beam_order(terms, inp, beam, deadline)
    words = tuple(inp.words[k] for k in found.order)
    parsed = parse_tokens([words])[0]
    heads = constrained_tree(inp, found.order, parsed.heads)
    pos = tuple(inp.pos[k] if inp.pos[k] is not None else tag for k, tag in zip(found.order, parsed.tags,
                                                                                   strict=True))
    return OrderingResult(order=found.order, words=words, pos=pos,
                          heads=tuple(0 if h == ROOT else h + 1 for h in heads), complete=True,
                          score=found.logprob, recovered=1.0, expansions=found.states,
                          seconds=time.perf_counter() - start,
                          method=METHOD if found.pruned else CERTIFIED_METHOD, certified=not found.pruned,
                          stopped=() if found.greedy_from is None else (
                              f"the LM beam search (after {found.greedy_from} of {len(input_items(inp))} "
                              "items; the rest placed greedily, with a beam of 1)",))
