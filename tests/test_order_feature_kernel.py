"""The compiled attachment features equal the Python templates: the same weight indices in the same
order (CPython's tuple hash re-implemented) and the same local score bit for bit (numpy's pairwise sum)."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.data.ordering.inputs import OrderingInput
from dualdecomp.models.ordering.paper.edge import can_attach
from dualdecomp.models.ordering.paper.feature_kernel import (
    _h2,
    _h3,
    _h4,
    _h5,
    _h6,
    attach_local_score,
    lanes,
    pairwise_sum,
)
from dualdecomp.models.ordering.paper.features import attach_features
from dualdecomp.models.ordering.paper.search import expand, expand_each
from tests.ordering_oracles import random_model

WORDS = ("the", "cat", "sat", "on", "mat", ".", "We", "do", "like", "rain", "zyzzyva", "Qwerty")
HASHES = {2: _h2, 3: _h3, 4: _h4, 5: _h5, 6: _h6}
U64 = (1 << 64) - 1


@settings(max_examples=300, deadline=None)
@given(template=st.integers(1, 80),
       atoms=st.lists(st.one_of(st.integers(0, 50), st.integers(0, U64)), min_size=1, max_size=5))
def test_tuple_hash_is_cpythons(template, atoms):
    values = (template, *atoms)
    compiled = int(HASHES[len(values)](template, *(np.uint64(x) for x in lanes(atoms))))
    assert compiled == hash(values) & U64


def test_pairwise_sum_is_numpys_sum_bit_for_bit():
    rng = np.random.default_rng(0)
    for n in [*range(0, 300), 511, 512, 1000, 1031, 4096, 9999]:
        values = rng.normal(size=n + 3) * 10.0 ** rng.uniform(-4, 4, size=n + 3)
        assert pairwise_sum(values, 3, n) == values[3:].sum()


def _random_derivations(seed: int, n: int):
    """Attachments of a random bottom-up derivation (random words, tags from the dictionary)."""
    rnd = random.Random(seed)
    model = random_model(seed)
    words = tuple(rnd.choice(WORDS) for _ in range(n))
    ctx = model.context(OrderingInput(words, (None,) * n, (None,) * n))
    pool = {}
    for leaf in model.leaves(ctx):
        pool.setdefault(leaf.head, []).append(leaf)
    edges = [rnd.choice(pool[k]) for k in range(n)]
    steps = []
    while len(edges) > 1:
        options = [(a, b, r) for a in range(len(edges)) for b in range(len(edges)) if a != b
                   for r in (True, False) if can_attach(ctx, edges[a], edges[b], r)]
        a, b, right = rnd.choice(options)
        head, dep = edges[a], edges[b]
        steps.append((head, dep, right))
        new = model.attach(ctx, head, dep, right)
        edges = [e for k, e in enumerate(edges) if k not in (a, b)] + [new]
    return model, ctx, steps


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 14))
def test_compiled_features_equal_the_python_templates(seed, n):
    model, ctx, steps = _random_derivations(seed, n)
    for head, dep, right in steps:
        expected = attach_features(ctx, head, dep, right, model.mask)
        assert model.attach_features(ctx, head, dep, right).tolist() == expected.tolist()
        goal = (head.mask | dep.mask) == ctx.full
        local = attach_local_score(head.packed, dep.packed, right, goal, ctx.word_lanes, ctx.tag_lanes,
                                   model.weights)
        assert local == float(model.weights[expected].sum())
        assert model.attach_score(ctx, head, dep, right) == head.score + dep.score + local
    if steps:
        assert (steps[-1][0].mask | steps[-1][1].mask) == ctx.full  # the goal templates were compared too


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 14))
def test_batched_expansion_equals_one_call_per_attachment(seed, n):
    # every edge of a random derivation popped against a chart of all the others (leaves included)
    model, ctx, steps = _random_derivations(seed, n)
    edges = list({id(e): e for step in steps for e in step[:2]}.values())
    for k, edge in enumerate(edges):
        chart = edges[:k] + edges[k + 1:]
        assert expand(model, ctx, edge, chart) == expand_each(model, ctx, edge, chart)  # edges: identity
