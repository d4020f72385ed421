"""Joint configurations: weighted components decoded by the engine, the ILP decoder, the fallback."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dualdecomp import ilp
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.deadline import Deadline, TimeLimitError
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.configuration import ComponentSpec, JointConfig, save_config


@pytest.fixture(scope="module")
def joint_dir(tiny_model, tmp_path_factory):
    d = tmp_path_factory.mktemp("joint")
    shutil.copytree(tiny_model, d / "bigram")
    shutil.copyfile(default_model_dir() / "lm.binary", d / "lm.binary")
    comps = (ComponentSpec("bigram", "bigram", 1.0), ComponentSpec("lm", "lm.binary", 3.0))
    cfg = JointConfig("bigram+lm", comps, {"length_method": "exact"}, fallback_max_tokens=12,
                      fallback_components=(0,))
    save_config(cfg, d)
    (d / "configs").mkdir()
    ilp = JointConfig("ilp", cfg.components, {"decoder": "ilp"})
    (d / "configs" / "ilp.json").write_text(json.dumps(ilp.to_json()))
    return d


def test_joint_decode_is_certified_and_exact(joint_dir, parsed_dev) -> None:
    _, sentences = parsed_dev
    short = [s for s in sentences if 4 <= s.n <= 12][:4]
    assert short
    dd = Compressor(joint_dir)
    ilp = Compressor(joint_dir, "ilp")
    for s in short:
        for length in (None, max(1, s.n // 2)):
            a = dd.compress(s, length)
            b = ilp.compress(s, length)
            assert b.result.certified
            if a.result.certified:
                assert abs(a.result.primal - b.result.primal) <= 1e-6 * max(1.0, abs(b.result.primal))
            assert a.result.dual >= b.result.primal - 1e-6
            if length is not None:
                assert int(a.keep.sum()) == length
            comps, _ = dd.components(s)
            assert abs(sum(c.best_given(a.keep) for c in comps) - a.result.primal) <= 1e-9 * max(
                1.0, abs(a.result.primal))


def test_long_sentence_fallback_is_announced(joint_dir, parsed_dev) -> None:
    _, sentences = parsed_dev
    long = next(s for s in sentences if s.n > 12)
    out = Compressor(joint_dir).compress(long)
    assert out.note and "bigram only" in out.note
    assert out.to_json()["note"] == out.note


def test_char_budget_with_joint_model(joint_dir, parsed_dev) -> None:
    _, sentences = parsed_dev
    s = next(x for x in sentences if 6 <= x.n <= 12)
    out = Compressor(joint_dir).compress(s, chars=25)
    assert len(out.compression) <= 25


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.update(format="x"), "not a dualdecomp joint configuration"),
    (lambda c: c.update(components=[]), "non-empty"),
    (lambda c: c["components"][0].update(kind="mystery"), "kind"),
    (lambda c: c["components"][1].update(weight=-1), "weight"),
    (lambda c: c["components"][1].update(path="../../etc/passwd"), "inside the model directory"),
    (lambda c: c.update(fallback={"max_tokens": 5, "components": [7]}), "fallback"),
])
def test_bad_configs(joint_dir, tmp_path, edit, message) -> None:
    d = tmp_path / "j"
    shutil.copytree(joint_dir, d)
    spec = json.loads((d / "config.json").read_text())
    edit(spec)
    (d / "config.json").write_text(json.dumps(spec))
    write_manifest(d)  # its new checksum: the manifest (checked first) is not what refuses it
    with pytest.raises(ModelError, match=message):
        Compressor(d)


def test_unknown_configuration_name(joint_dir) -> None:
    # bad input (exit 2), not a damaged model (W3.1 item 10; was ModelError)
    with pytest.raises(InputError, match="configurations here: ilp"):
        Compressor(joint_dir, "nope")
    with pytest.raises(InputError, match="invalid configuration name"):
        Compressor(joint_dir, "../x")
    assert np.isfinite(Compressor(joint_dir, "ilp").compress_tokens("a b c".split()).result.primal)


def test_shipped_configurations_load_and_decode(parsed_dev) -> None:
    _, sentences = parsed_dev
    s = next(x for x in sentences if 8 <= x.n <= 20)
    names = sorted(p.stem for p in (default_model_dir() / "configs").glob("*.json"))
    assert {"lm-only", "mcdonald", "mcdonald-dependency-lm"} <= set(names)
    for name in names:
        out = Compressor(None, name).compress(s, length=5)
        assert int(out.keep.sum()) == 5
        assert out.result.dual >= out.result.primal - 1e-9


def test_time_limit_returns_the_best_primal_with_its_gap(joint_dir, parsed_dev) -> None:
    _, sentences = parsed_dev
    s = max(sentences[:20], key=lambda x: x.n if x.n <= 12 else 0)
    # the limit covers the potentials too (issue W2.5): 1 ns runs out between the two components
    with pytest.raises(TimeLimitError, match="before the lm component"):
        Compressor(joint_dir).compress(s, length=max(1, s.n // 2), time_limit=1e-9)

    class AfterPotentials(Deadline):  # runs out only once the potentials are done
        def check(self, stage: str) -> None:
            pass

    out = Compressor(joint_dir).compress(s, length=max(1, s.n // 2), deadline=AfterPotentials(1e-9, 0.0))
    r = out.result
    assert int(out.keep.sum()) == max(1, s.n // 2)
    assert r.dual >= r.primal - 1e-9 and r.gap == pytest.approx(max(0.0, r.dual - r.primal))
    assert np.isfinite(r.primal)


def test_default_certificates_equal_the_ilp_on_dev_sentences(parsed_dev) -> None:
    """The shipped default (McDonald + the neural scorer + the chain scorer; McDonald's and the chain
    scorer's bigram scores summed into one component, the token scorer's absorbed into it): every
    certified decode of real dev sentences, free length, fixed length and a character budget, has the
    optimal value of the ILP of the three components apart."""
    from dualdecomp.models.configuration import weighted_component
    from dualdecomp.models.registry import get_kind
    from dualdecomp.solvers.bigram import Bigram

    _, sentences = parsed_dev
    short = [s for s in sentences if 6 <= s.n <= 25][:5]
    assert len(short) == 5
    comp = Compressor()
    assert [c.kind for c in comp.joint.config.components] == ["bigram", "neural", "neural"]
    for s in short:
        comps, _ = comp.components(s)
        assert len(comps) == 1 and isinstance(comps[0], Bigram)  # one bigram path: no DD left to do
        apart = [weighted_component(spec.kind, get_kind(spec.kind).potentials_of(model, s, None), spec.weight)
                 for spec, model in zip(comp.joint.config.components, comp.joint.models, strict=True)]
        assert [type(c).__name__ for c in apart] == ["Bigram", "Unary", "Bigram"]
        for length in (None, s.n // 2):
            out = comp.compress(s, length)
            exact = ilp.decode(apart, length=length, solver="highs")
            assert out.result.certified
            assert abs(out.result.primal - exact.primal) <= 1e-6 * max(1.0, abs(exact.primal))
        budget = len(" ".join(s.tokens)) // 2
        out = comp.compress(s, chars=budget)
        exact = ilp.decode(comp.components(s, chars=budget)[0], solver="highs")
        assert out.result.certified and len(out.text) <= budget
        assert abs(out.result.primal - exact.primal) <= 1e-6 * max(1.0, abs(exact.primal))


def test_bigram_components_are_summed_into_one_exactly() -> None:
    from dualdecomp.core.component import merged_sums
    from dualdecomp.engine.decode import decode
    from dualdecomp.solvers.bigram import Bigram
    from dualdecomp.solvers.unary import Unary

    rng = np.random.default_rng(7)
    n = 7
    b1, b2 = Bigram(rng.normal(size=(n + 2, n + 2))), Bigram(rng.normal(size=(n + 2, n + 2)))
    # a unary component with a required token is no sum of per-token scores: never absorbed
    unary = Unary(rng.normal(size=n), required=np.eye(n, dtype=bool)[2])
    merged = merged_sums([unary, b1, b2])
    assert len(merged) == 2 and merged[0] is unary and isinstance(merged[1], Bigram)
    assert np.array_equal(merged[1].B, b1.B + b2.B) and merged[1].name == b1.name
    for length in (None, 3):
        apart = decode([b1, b2, unary], length=length, max_iterations=2000)
        together = decode(merged, length=length)
        best = ilp.decode([b1, b2, unary], length=length)
        assert together.certified and abs(together.primal - best.primal) <= 1e-6
        assert apart.keep.tolist() == together.keep.tolist() or abs(apart.primal - together.primal) <= 1e-6
    assert merged_sums([b1, unary]) == [b1, unary]
    # summed by the declared capability (Capabilities.summable), per class: a second unary is not summed
    unary2 = Unary(rng.normal(size=n), required=np.eye(n, dtype=bool)[4])
    mixed = merged_sums([b2, unary, b1, unary2])
    assert len(mixed) == 3 and mixed[1:] == [unary, unary2] and np.array_equal(mixed[0].B, b2.B + b1.B)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(0, 2**31 - 1), st.booleans())
def test_a_bigram_path_absorbs_per_token_scores_exactly(n, seed, blocked) -> None:
    """An unconstrained unary component (scores finite or -inf) is folded into the bigram component
    (Capabilities.absorbs): one component whose best compression and score, at free and at every fixed
    length, are the ILP's of the two apart; the same for every keep vector (brute force)."""
    from dualdecomp.core.component import merged_sums
    from dualdecomp.engine.decode import decode
    from dualdecomp.solvers.bigram import Bigram
    from dualdecomp.solvers.unary import Unary

    rng = np.random.default_rng(seed)
    w = rng.normal(size=n)
    if blocked:
        w[rng.integers(0, n)] = -np.inf
    b, u1, u2 = Bigram(rng.normal(size=(n + 2, n + 2))), Unary(w), Unary(rng.normal(size=n))
    merged = merged_sums([u1, b, u2])
    assert len(merged) == 1 and isinstance(merged[0], Bigram) and merged[0].name == b.name
    for mask in range(2 ** n):
        keep = np.array([mask >> k & 1 for k in range(n)], dtype=bool)
        expected = b.best_given(keep) + u1.best_given(keep) + u2.best_given(keep)
        got = merged[0].best_given(keep)
        assert (got == expected == -np.inf) or abs(got - expected) <= 1e-9 * max(1.0, abs(expected))
    keepable = n - int(blocked)
    for length in (None, *range(keepable + 1)):
        best = ilp.decode([b, u1, u2], length=length)
        alone = decode(merged, length=length)
        assert alone.certified and abs(alone.primal - best.primal) <= 1e-6 * max(1.0, abs(best.primal))


def test_a_configuration_with_a_base_is_that_configuration_with_its_keys_replaced(tmp_path) -> None:
    from dualdecomp.models.configuration import JointModel

    d = tmp_path / "m"
    shutil.copytree(default_model_dir(), d)
    base = JointModel(d, "neural-mcdonald")
    derived = JointModel(d, "neural-mcdonald-news")
    assert derived.config.components == base.config.components
    assert derived.config.decode == base.config.decode
    assert derived.config.length_bias != 0 and base.config.length_bias == 0
    assert derived.config.name.endswith("news lengths")
    configs = d / "configs"
    (configs / "nested.json").write_text(json.dumps({"base": "neural-mcdonald-news", "length_bias": 1.0}))
    (configs / "missing.json").write_text(json.dumps({"base": "no-such-config"}))
    (configs / "itself.json").write_text(json.dumps({"base": "itself"}))
    (configs / "escape.json").write_text(json.dumps({"base": "../config"}))
    for name, message in (("nested", "without a base"), ("missing", "missing"), ("itself", "another"),
                          ("escape", "invalid configuration name")):
        with pytest.raises(ModelError, match=message):
            JointModel(d, name)
    # the base's checksum is checked too
    spec = json.loads((configs / "neural-mcdonald.json").read_text())
    spec["components"][0]["weight"] = 0.3
    (configs / "neural-mcdonald.json").write_text(json.dumps(spec))
    with pytest.raises(ModelError, match="checksum"):
        JointModel(d, "neural-mcdonald-news")
