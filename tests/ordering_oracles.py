"""Brute-force oracles and a small random-weight model for the word-ordering tests."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np

from dualdecomp.data.ordering.inputs import ROOT, OrderingExample, OrderingInput
from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.ordering.lm_term import OrderingLM
from dualdecomp.models.ordering.paper.edge import Context, Edge, can_attach
from dualdecomp.models.ordering.paper.model import OrderingModel, new_model
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first

FIXTURES = Path(__file__).parent / "fixtures" / "ordering"
# The UD English EWT treebank of the shared data folder (not vendored; tests that need it skip without it).
SHARED_DATA = Path(os.environ.get("SHARED", Path(__file__).resolve().parents[2] / "shared" / "data"))
EWT = SHARED_DATA / "ud-english-ewt"


def random_model(seed: int, hash_bits: int = 12) -> OrderingModel:
    """The tag dictionary of the hand-written fixture and random weights (seeded)."""
    examples = read_conllu_examples(FIXTURES / "tiny.conllu", limit=2)
    model = new_model(examples, hash_bits=hash_bits)
    model.weights[:] = np.random.default_rng(seed).normal(size=model.weights.size)
    return model


def all_trees(n: int, given: tuple[int | None, ...]):
    """Every dependency tree (0-based heads, ROOT) over n words agreeing with the given heads."""
    choices = [[g] if g is not None else [ROOT, *[h for h in range(n) if h != m]]
               for m, g in enumerate(given)]
    for heads in itertools.product(*choices):
        if sum(h == ROOT for h in heads) != 1:
            continue
        ok = True
        for m in range(n):
            seen, k = set(), m
            while k != ROOT:
                if k in seen:
                    ok = False
                    break
                seen.add(k)
                k = heads[k]
            if not ok:
                break
        if ok:
            yield heads


def linearisations(model: OrderingModel, ctx: Context, heads, lm: OrderingLM | None = None) -> list[Edge]:
    """Every goal edge of every projective linearisation of a tree (canonical derivations), by brute force
    (scored with the LM term ``lm`` when given)."""
    n = len(heads)
    kids = [[m for m in range(n) if heads[m] == h] for h in range(n)]
    leaves = model.leaves(ctx, lm=lm)

    def complete(h: int) -> list[Edge]:
        options = [complete(c) for c in kids[h]]
        out = []
        for start in (e for e in leaves if e.head == h):
            k = len(kids[h])
            for sides in itertools.product((True, False), repeat=k):
                rights = [i for i in range(k) if sides[i]]
                lefts = [i for i in range(k) if not sides[i]]
                for rp in itertools.permutations(rights):
                    for lp in itertools.permutations(lefts):
                        seq = [(i, True) for i in rp] + [(i, False) for i in lp]
                        for picks in itertools.product(*(options[i] for i, _ in seq)):
                            edge: Edge | None = start
                            for (_, right), child in zip(seq, picks, strict=True):
                                if not can_attach(ctx, edge, child, right):
                                    edge = None
                                    break
                                edge = model.attach(ctx, edge, child, right, lm=lm)
                            if edge is not None:
                                out.append(edge)
        return out

    root = heads.index(ROOT)
    return complete(root)


def brute_force_best(model: OrderingModel, inp: OrderingInput, lm: OrderingLM | None = None
                     ) -> tuple[float, int]:
    """Max scaled score over every (tree, projective order, tags) the constraints allow, and their count
    (with the LM term ``lm`` when given)."""
    ctx = model.context(inp)
    best, count = float("-inf"), 0
    for heads in all_trees(len(inp), inp.heads):
        for edge in linearisations(model, ctx, heads, lm):
            count += 1
            best = max(best, edge.scaled)
    return best, count


def goal_key(edge: Edge) -> tuple:
    """What identifies an output: its order, tags and arcs."""
    return edge.words, edge.tags, tuple(sorted(edge.arcs().items()))


def exhaustive_goals(model: OrderingModel, inp: OrderingInput):
    """Exhaustive best-first search, and the key of every goal edge it built (in building order)."""
    built = []
    real_attach = model.attach

    class Spy:
        def __getattr__(self, name):
            return getattr(model, name)

        def attach(self, ctx, head, dep, right, gold=False, with_phi=True, lm=None):
            edge = real_attach(ctx, head, dep, right, gold, with_phi, lm)
            if edge.mask == ctx.full:
                built.append(goal_key(edge))
            return edge

    result = best_first(Spy(), inp, SearchConfig(chart_size=None, timeout=None, exhaustive=True))
    return result, built


def example(words: str, heads: list[int], tags: str) -> OrderingExample:
    """A gold example from 1-based heads (0 = root)."""
    return OrderingExample(tuple(words.split()), tuple(tags.split()), tuple(h - 1 for h in heads))
