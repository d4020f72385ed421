"""Choosing the weight of the ordering LM on dev, and storing it in the model.

Rule (deterministic, no wall clock): decode the dev sentences ``[start, start + sentences)`` under the
"words" and "all" input conditions with the default decoder — best-first search with an expansion
limit, then the tree beam DP (``tree_beam``; full trees by the tree beam DP alone) — for every
candidate weight; keep the weight with the highest mean sacrebleu BLEU of the two conditions (ties:
the smaller weight). The dev table of docs/word-ordering.md uses the first dev sentences, so the
default slice (from sentence 1000) is disjoint from it.

The weight for inputs with ordered units (``OrderingDecoder.units_lm``) is chosen by the same rule on
the ``bnp`` condition alone (:data:`UNITS_SELECTION_CONDITIONS`: the bag with its base NPs as units),
with positive candidates only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import OrderingExample
from dualdecomp.models.evaluation import evaluate
from dualdecomp.models.ordering.decoding.config import ExactConfig
from dualdecomp.models.ordering.decoding.decoder import OrderingDecoder
from dualdecomp.models.ordering.decoding.load import with_decoding_lm
from dualdecomp.models.ordering.paper.search import SearchConfig

SELECTION_CONDITIONS = ("words", "all")
UNITS_SELECTION_CONDITIONS = ("bnp",)


@dataclass(frozen=True)
class WeightScore:
    """Dev BLEU of one candidate LM weight."""

    weight: float
    bleu: dict[str, float]

    @property
    def mean(self) -> float:
        """Mean BLEU over the selection conditions."""
        return sum(self.bleu.values()) / len(self.bleu)


def select_lm_weight(decoder: OrderingDecoder, dev: Sequence[OrderingExample], weights: Sequence[float],
                     lm_path: str | Path | None = None, max_expansions: int = 2000, chart_size: int = 32,
                     seed: int = 0, log: Callable[[WeightScore], None] = lambda s: None,
                     tree_beam: int | None = 32, conditions: Sequence[str] = SELECTION_CONDITIONS
                     ) -> tuple[float, list[WeightScore]]:
    """The LM weight of the rule in the module docstring.

    Parameters
    ----------
    decoder : OrderingDecoder
        The decoder of the trained syntax model (``load_decoder``, without an LM term).
    dev : sequence of OrderingExample
        The selection sentences.
    weights : sequence of float
        Candidates (0 = no LM).
    lm_path : path, optional
        The LM (default: the embedded compression trigram).
    max_expansions, chart_size : int
        Best-first search settings.
    seed : int
        Seed of the conditions' shuffles.
    log : callable
        Receives each candidate's scores.
    tree_beam : int or None
        Beam of the tree DP (None: best-first search alone, the paper's method).
    conditions : sequence of str
        The input conditions whose mean BLEU decides (:data:`SELECTION_CONDITIONS`, or
        :data:`UNITS_SELECTION_CONDITIONS` for the weight of inputs with units).

    Returns
    -------
    (float, list of WeightScore)
    """
    if not weights:
        raise InputError("give at least one candidate LM weight")
    if not dev:
        raise InputError("no dev sentences to select the LM weight on")
    if not conditions:
        raise InputError("give at least one input condition to select the LM weight on")
    search = SearchConfig(chart_size=chart_size, timeout=None, max_expansions=max_expansions)
    exact = ExactConfig(max_states=None, beam=tree_beam)
    scores = []
    for weight in sorted(weights):
        decoding = with_decoding_lm(decoder, lm_path, weight)
        bleu = {c: evaluate(list(dev), lambda inp, d=decoding: d.decode(inp, search, exact), c, seed)[0].bleu
                for c in conditions}
        scores.append(WeightScore(weight, bleu))
        log(scores[-1])
    best = max(scores, key=lambda s: (s.mean, -s.weight))
    return best.weight, scores
