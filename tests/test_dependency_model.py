"""The dependency model: features vs potentials, model files, gold trees, exact-length decoding, training."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.data.sentence import Sentence
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.bigram.store import save_model
from dualdecomp.models.dependency.features import (
    ARC_TEMPLATES,
    KEEP_TEMPLATES,
    SIBLING_TEMPLATES,
    ancestry,
    dependency_features,
    keep_bias_index,
    sibling_triples,
)
from dualdecomp.models.dependency.model import DependencyModel
from dualdecomp.models.dependency.store import load_dependency_model, save_dependency_model
from dualdecomp.models.dependency.training import (
    DependencyTrainingConfig,
    best_tree,
    decode_at_length,
    gold_structure,
    induced_heads,
    prepare_items,
    projectivise,
    score_at_gold_length,
    search_multiplier,
    train_dependency,
)
from dualdecomp.solvers.dependency.solver import Dependency, solve
from tests.oracles import dependency as brute

SETTINGS = dict(max_examples=25, deadline=None, derandomize=True)


def _weights(bits: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).normal(size=1 << bits)
    w[0] = 0.0
    return w


def _random_structure(n: int, rng: np.random.Generator, second: bool) -> np.ndarray:
    """Heads of a random structure: the parser's argmax under random potentials (any kept set, tree)."""
    A = rng.normal(size=(n + 1, n + 1))
    S = rng.normal(size=(n + 1, n + 1, n + 1)) if second else None
    return solve(A, S=S, u=rng.normal(scale=2.0, size=n)).heads


# --------------------------------------------------------------------------------------------------
# features and potentials


@pytest.mark.parametrize("second", [False, True])
def test_potentials_match_feature_vectors(parsed_dev, second) -> None:
    """score(keep, heads) under (A, S) from the contract's definition == w · φ(keep, heads)."""
    _, sentences = parsed_dev
    rng = np.random.default_rng(1)
    w = _weights(16, 2)
    for s in sentences[:8]:
        f = dependency_features(s, hash_bits=16, second_order=second)
        A, S = f.potentials(w)
        assert A.shape == (s.n + 1, s.n + 1) and (S is None) == (not second)
        for _ in range(15):
            heads = _random_structure(s.n, rng, second)
            idx, val = f.vector(heads)
            expected = brute.score(A, None, S, None, 0.0, heads >= 0, heads)
            assert abs(expected - float(w[idx] @ val)) < 1e-8 * max(1.0, abs(expected))
        best = solve(A, S=S)  # the parser's own score of its argmax agrees as well
        idx, val = f.vector(best.heads)
        assert abs(best.score - float(w[idx] @ val)) < 1e-8 * max(1.0, abs(best.score))


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9))
def test_potentials_match_on_random_sentences(seed, n) -> None:
    """The same on random (valid, possibly non-projective) source trees, with and without word features."""
    rng = np.random.default_rng(seed)
    heads = []
    for k in range(1, n + 1):  # a random tree: attach k to a node in a random order
        heads.append(0 if k == 1 else int(rng.integers(0, k)))
    perm = rng.permutation(n) + 1  # relabel positions so arcs go both ways
    src = [0] * n
    for k, h in enumerate(heads, start=1):
        src[perm[k - 1] - 1] = 0 if h == 0 else int(perm[h - 1])
    pos = ["NOUN", "VERB", "ADP", "PUNCT", "DET", "CCONJ"]
    s = Sentence(tokens=tuple(f"w{rng.integers(0, 4)}" for _ in range(n)),
                 pos=tuple(pos[i] for i in rng.integers(0, len(pos), n)),
                 tags=tuple(f"T{i}" for i in rng.integers(0, 4, n)), heads=tuple(src),
                 labels=tuple(f"l{i}" for i in rng.integers(0, 3, n)))
    w = _weights(12, seed % 1000)
    for second, lexical in ((False, True), (True, False)):
        f = dependency_features(s, hash_bits=12, lexical=lexical, second_order=second)
        A, S = f.potentials(w)
        for _ in range(5):
            h = _random_structure(n, rng, second)
            idx, val = f.vector(h)
            assert np.isclose(brute.score(A, None, S, None, 0.0, h >= 0, h), float(w[idx] @ val))


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 10))
def test_sibling_triples_match_bruteforce(seed, n) -> None:
    rng = np.random.default_rng(seed)
    heads = _random_structure(n, rng, second=False) if n else np.zeros(0, dtype=np.int64)
    h, s, m = sibling_triples(heads)
    nodes = [0, *(np.flatnonzero(heads >= 0) + 1)]
    local = {p: t for t, p in enumerate(nodes)}
    lh = np.array([-1, *(local[int(heads[p - 1])] for p in nodes[1:])], dtype=np.int64)
    sib = brute.siblings(lh)
    expected = {(nodes[lh[t]], nodes[sib[t]], nodes[t]) for t in range(1, len(nodes))}
    assert set(zip(h.tolist(), s.tolist(), m.tolist(), strict=True)) == expected
    assert len(m) == len(nodes) - 1


def test_feature_layout_and_keep_bias(parsed_dev) -> None:
    _, sentences = parsed_dev
    s = sentences[0]
    f = dependency_features(s, hash_bits=18, second_order=True)
    assert f.arc_idx.shape == (s.n + 1, s.n, len(ARC_TEMPLATES))
    assert f.keep_idx.shape == (s.n, len(KEEP_TEMPLATES))
    assert len(f.siblings) == len(SIBLING_TEMPLATES)
    assert f.arc_idx.min() >= 1 and f.arc_idx.max() < 1 << 18
    # the keep bias fires once per kept token: adding c to it adds c·|K| to every structure
    w = _weights(18, 3)
    A, S = f.potentials(w)
    w2 = w.copy()
    w2[keep_bias_index(18)] += 0.75
    A2, S2 = f.potentials(w2)
    assert np.allclose(A2[:, 1:][np.isfinite(A[:, 1:])] - A[:, 1:][np.isfinite(A[:, 1:])], 0.75)
    assert np.array_equal(S.dense(), S2.dense())
    # features are deterministic (stable hashing) and the model computes the same potentials
    model = DependencyModel(w, hash_bits=18, second_order=True)
    A3, S3 = model.potentials(s)
    assert np.array_equal(A, A3) and np.array_equal(S.dense(), S3.dense())


def test_ancestry() -> None:
    heads = np.array([-1, 2, 0, 2, 3])  # 0 → 2 → {1, 3}, 3 → 4
    depth, up = ancestry(heads)
    assert depth.tolist() == [0, 2, 1, 2, 3]
    assert up[2, 4] == 2 and up[3, 4] == 1 and up[0, 4] == 3 and up[1, 4] == 0 and up[4, 3] == 0


# --------------------------------------------------------------------------------------------------
# model files


def _model(bits: int = 12, second: bool = False) -> DependencyModel:
    w = _weights(bits, 0)
    w[::3] = 0.0
    return DependencyModel(w, hash_bits=bits, second_order=second, lexical=False, meta={"note": "test"})


@pytest.mark.parametrize("second", [False, True])
def test_round_trip(tmp_path, parsed_dev, second) -> None:
    m = _model(14, second)
    save_dependency_model(m, tmp_path)
    back = load_dependency_model(tmp_path)
    assert np.array_equal(back.weights, m.weights)
    assert (back.hash_bits, back.second_order, back.lexical) == (14, second, False)
    assert back.meta == {"note": "test"}
    assert not list(tmp_path.glob("*.tmp"))
    _, sentences = parsed_dev
    for s in sentences[:2]:
        (A, S), (A2, S2) = m.potentials(s), back.potentials(s)
        assert np.array_equal(A, A2) and (S is None or np.array_equal(S.dense(), S2.dense()))


@pytest.mark.parametrize("edit, message", [
    (lambda spec: spec.update(format="other"), "not a dualdecomp model"),
    (lambda spec: spec.update(version=99), "version"),
    (lambda spec: spec.update(kind="bigram"), "not a dependency model"),
    (lambda spec: spec.update(hash_bits=40), "hash_bits"),
    (lambda spec: spec.update(hash_bits=True), "hash_bits"),
    (lambda spec: spec.update(second_order="yes"), "second_order"),
    (lambda spec: spec.update(second_order=True), "templates"),
    (lambda spec: spec.update(lexical=None), "lexical"),
    (lambda spec: spec["templates"]["arc"].pop(), "templates"),
    (lambda spec: spec.update(meta=[1, 2]), "meta"),
])
def test_invalid_spec(tmp_path, edit, message) -> None:
    save_dependency_model(_model(), tmp_path)
    spec = json.loads((tmp_path / "model.json").read_text())
    edit(spec)
    (tmp_path / "model.json").write_text(json.dumps(spec))
    write_manifest(tmp_path)  # a deliberate edit: the content's own check speaks, not the checksum
    with pytest.raises(ModelError, match=message):
        load_dependency_model(tmp_path)


def test_invalid_files(tmp_path) -> None:
    with pytest.raises(ModelError, match="not found"):
        load_dependency_model(tmp_path / "nowhere")
    with pytest.raises(ModelError, match="missing"):
        load_dependency_model(tmp_path)
    (tmp_path / "model.json").write_text("{not json")
    with pytest.raises(ModelError, match="JSON"):
        load_dependency_model(tmp_path)
    save_dependency_model(_model(), tmp_path)
    (tmp_path / "weights.npz").write_bytes(b"garbage, not a zip file")
    with pytest.raises(ModelError, match="corrupted"):
        load_dependency_model(tmp_path)
    (tmp_path / "weights.npz").unlink()
    with pytest.raises(ModelError, match="missing"):
        load_dependency_model(tmp_path)
    for indices, values, message in (([1, 2], [0.5, np.nan], "NaN"), ([1, 1 << 12], [1.0, 2.0], "range"),
                                     ([1, 2], [1.0], "same length")):
        np.savez(tmp_path / "weights.npz", indices=np.array(indices), values=np.array(values))
        write_manifest(tmp_path)  # weights written on purpose: their own check speaks
        with pytest.raises(ModelError, match=message):
            load_dependency_model(tmp_path)


def test_bigram_model_directory_is_refused(tmp_path) -> None:
    save_model(BigramModel(np.zeros(1 << 10), hash_bits=10), tmp_path)
    with pytest.raises(ModelError, match="not a dependency model"):
        load_dependency_model(tmp_path)


# --------------------------------------------------------------------------------------------------
# gold structures


def _sentence(tokens: str, heads: list[int]) -> Sentence:
    toks = tuple(tokens.split())
    return Sentence(toks, ("X",) * len(toks), ("XX",) * len(toks), tuple(heads), ("dep",) * len(toks))


def test_gold_structure_maps_the_compression_parse() -> None:
    source = _sentence("Yesterday the old man slept soundly .", [5, 4, 4, 5, 0, 5, 5])
    comp = _sentence("the man slept .", [2, 3, 0, 3])  # the compression's own parse
    g = gold_structure(source, comp.tokens, comp)
    assert g.heads.tolist() == [-1, 4, -1, 5, 0, -1, 5]
    assert g.origin == "projective" and g.length == 4
    assert g.keep.tolist() == [False, True, False, True, True, False, True]
    # a repeated word aligns to its last occurrence (dualdecomp.data.alignment), and the tree follows it
    source = _sentence("the dog saw the cat", [2, 3, 0, 5, 3])
    comp = _sentence("the cat", [2, 0])
    assert gold_structure(source, comp.tokens, comp).heads.tolist() == [-1, -1, -1, 5, 0]


def test_gold_structure_lifts_a_non_projective_parse() -> None:
    source = _sentence("A x B C y D", [3, 1, 0, 6, 6, 3])
    comp = _sentence("A B C D", [3, 0, 2, 1])  # arcs C → A and A → D cross B
    g = gold_structure(source, comp.tokens, comp)
    assert g.origin == "lifted"
    assert g.heads.tolist() == [3, -1, 0, 3, -1, 3]
    # the source-induced tree instead: each kept token under its nearest kept source ancestor
    s = gold_structure(source, comp.tokens, tree="source")
    assert s.origin == "source" and s.heads.tolist() == [3, -1, 0, 6, -1, 3]
    with pytest.raises(InputError):
        gold_structure(source, comp.tokens, None)


def test_projectivise_and_induced_heads() -> None:
    heads, lifts = projectivise(np.array([-1, 3, 0, 2, 1]))
    assert heads.tolist() == [-1, 2, 0, 2, 2] and lifts == 2
    assert brute.is_projective_tree(heads)
    same, lifts = projectivise(np.array([-1, 2, 0, 2]))
    assert same.tolist() == [-1, 2, 0, 2] and lifts == 0
    keep = np.array([True, False, False, True])
    assert induced_heads([2, 3, 0, 3], keep).tolist() == [0, -1, -1, 0]


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9))
def test_projectivise_random_trees(seed, n) -> None:
    rng = np.random.default_rng(seed)
    order = rng.permutation(n) + 1
    heads = np.full(n + 1, -1, dtype=np.int64)
    placed = [0]
    for v in order:
        heads[v] = placed[int(rng.integers(0, len(placed)))]
        placed.append(int(v))
    out, lifts = projectivise(heads)
    assert brute.is_projective_tree(out)
    assert (lifts == 0) == brute.is_projective_tree(heads)
    if lifts == 0:
        assert np.array_equal(out, heads)


# --------------------------------------------------------------------------------------------------
# decoding at a given length


def _brute_best_of_length(A, S, length):
    n = A.shape[0] - 1
    best = -np.inf
    for kept in itertools.combinations(range(n), length):
        keep = np.zeros(n, dtype=bool)
        keep[list(kept)] = True
        best = max(best, brute.best_given(A, None, S, keep))
    return best


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), second=st.booleans(), integral=st.booleans())
def test_decode_at_length_is_exact(seed, n, second, integral) -> None:
    """At every length: exactly that many tokens, and the best score of that length (brute force)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n + 1, n + 1))
    S = rng.normal(size=(n + 1, n + 1, n + 1)) if second else None
    if integral:  # perceptron weights inside the loop are integers: many ties and duality gaps
        A = np.round(3 * A)
        S = None if S is None else np.round(3 * S)
    for length in range(n + 1):
        d = decode_at_length(A, S, length)
        assert d.exact and d.keep.sum() == length and np.array_equal(d.heads >= 0, d.keep)
        got = brute.score(A, None, S, None, 0.0, d.keep, d.heads)
        assert np.isclose(got, _brute_best_of_length(A, S, length))
        sol, lam, seen = search_multiplier(A, S, length)
        if sol.length == length:  # an optimum at some lam is the best of its length
            assert np.isclose(sol.score + lam * length, got)
        assert 1 <= len(seen) <= 60


@settings(**SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), second=st.booleans())
def test_best_tree_is_best_given(seed, n, second) -> None:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n + 1, n + 1)) * 5
    S = rng.normal(size=(n + 1, n + 1, n + 1)) if second else None
    keep = rng.random(n) < 0.6
    heads = best_tree(A, S, keep)
    assert np.array_equal(heads >= 0, keep)
    assert np.isclose(brute.score(A, None, S, None, 0.0, keep, heads), Dependency(A, S=S).best_given(keep))


def test_decode_at_length_rejects_bad_lengths() -> None:
    with pytest.raises(InputError):
        decode_at_length(np.zeros((3, 3)), None, 3)


# --------------------------------------------------------------------------------------------------
# training


def test_tiny_training_improves_on_train(corpora, tmp_path) -> None:
    """60 sentences, 2 epochs: better than the zero weights (epoch 0) on the training sentences."""
    config = DependencyTrainingConfig(epochs=2, hash_bits=18, limit=60, dev_limit=20, seed=0)
    model, reports = train_dependency([str(corpora / "written.train.jsonl")],
                                      [str(corpora / "written.dev.jsonl")], config)
    assert [r.epoch for r in reports] == [1, 2]
    assert all(r.examples == 60 and r.dev_score is not None for r in reports)
    assert model.meta["best_epoch"] in (1, 2) and model.meta["examples"] == 60
    assert sum(model.meta["gold_tree_origins"].values()) == 60
    from dualdecomp.data.jsonl import read_corpus

    items = read_corpus(corpora / "written.train.jsonl")[:60]
    train, _ = prepare_items(items, model)
    before = score_at_gold_length(np.zeros(1 << 18), train)
    after = score_at_gold_length(model.weights, train)
    assert after.exact == 1.0
    assert after.bigram_f1 > before.bigram_f1 + 0.05
    save_dependency_model(model, tmp_path)
    assert np.array_equal(load_dependency_model(tmp_path).weights, model.weights)


def test_config_validation() -> None:
    for bad in (dict(length_mode="fixed"), dict(gold_tree="other"), dict(hash_bits=40), dict(epochs=0)):
        with pytest.raises(InputError):
            DependencyTrainingConfig(**bad)
