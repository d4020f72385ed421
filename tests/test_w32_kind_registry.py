"""W3.2 item 4 (compression): the registry knows each kind end to end.

- Capabilities, not isinstance chains: the length bias and the character budget go to the component that
  declares the capability, in the order of the old isinstance chain (Bigram, then Dependency, then
  Unary; the first Bigram for the budget), with the same floats: checked on real sentences against the
  old rule computed here from the arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

from dualdecomp.core.component import capabilities_of, char_budget_taker, length_bias_taker
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.joint.config import JointModel, with_length_bias
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.bigram.char_budget import CharBudgetBigram
from dualdecomp.solvers.dependency import Dependency
from dualdecomp.solvers.ngram import Trigram
from dualdecomp.solvers.unary import Unary


def _old_with_length_bias(components: list, bias: float) -> list:
    """The isinstance chain of models/joint/config.py before W3.2, verbatim."""
    out = list(components)
    for k, c in enumerate(out):
        if isinstance(c, Bigram):
            out[k] = Bigram(c.B + np.where(np.isfinite(c.B), bias, 0.0))
            return out
    for k, c in enumerate(out):
        if isinstance(c, Dependency):
            out[k] = Dependency(c.A + np.where(np.isfinite(c.A), bias, 0.0), B=c.B, S=c.S)
            return out
    for k, c in enumerate(out):
        if isinstance(c, Unary):
            out[k] = Unary(c.w + np.where(np.isfinite(c.w), bias, 0.0), required=c.required, name=c.name)
            return out
    return out


def _arrays(component) -> list:
    """Every array (and the name) that defines a component's scores."""
    if isinstance(component, Bigram):
        return [component.B, component.name]
    if isinstance(component, Dependency):
        S = component.S
        return [component.A, component.B, None if S is None else S.dense()]
    if isinstance(component, Unary):
        return [component.w, component.required, component.name]
    if isinstance(component, CharBudgetBigram):
        return [component.B, component.widths, component.budget, component.name]
    if isinstance(component, Trigram):
        return [component.potentials.dense()]
    return [component]  # unchanged components are the same object


def _same(a: list, b: list) -> None:
    assert [type(c) for c in a] == [type(c) for c in b]
    for x, y in zip(a, b, strict=True):
        for u, v in zip(_arrays(x), _arrays(y), strict=True):
            if isinstance(u, np.ndarray):
                assert u.dtype == v.dtype and np.array_equal(u, v, equal_nan=True)  # same floats
            else:
                assert u is v or u == v


# neural (Unary) first, dependency second: the old chain gave the bias to the dependency component,
# not to the first component of the list; neural + bigram: to the bigram
@pytest.mark.parametrize("config", ["mcdonald-dependency-lm", "neural-dependency-lm",
                                    "neural-mcdonald-dependency-lm", "neural-mcdonald", "neural",
                                    "dependency-lm", "t3-lm"])
def test_length_bias_goes_where_the_isinstance_chain_put_it(parsed_dev, config):
    joint = JointModel(default_model_dir(), config)
    for sentence in parsed_dev[1][:3]:
        comps, _ = joint.components(sentence, length_bias=0.0)
        for bias in (0.75, -1.3):
            _same(with_length_bias(comps, bias), _old_with_length_bias(comps, bias))


def test_length_bias_order_between_kinds():
    """The preference is the old chain's, whatever the list order; the first of equals takes it."""
    rng = np.random.default_rng(0)
    n = 5
    B = rng.normal(size=(n + 2, n + 2))
    B[3, 4] = -np.inf
    A = rng.normal(size=(n + 1, n + 1))
    w = rng.normal(size=n)
    lists = [[Unary(w), Dependency(A), Bigram(B)], [Dependency(A), Unary(w)], [Unary(w), Unary(w * 2)],
             [Dependency(A), Dependency(A * 2), Bigram(B), Bigram(B * 2)], [Unary(w, name="neural")]]
    for comps in lists:
        _same(with_length_bias(comps, 0.5), _old_with_length_bias(comps, 0.5))
    assert length_bias_taker([Unary(w), Dependency(A), Bigram(B)]) == 2
    assert length_bias_taker([]) is None
    assert capabilities_of(Bigram(B)).char_budget and not capabilities_of(Dependency(A)).char_budget


@pytest.mark.parametrize("config", ["neural-chain-mcdonald", "mcdonald-dependency-lm", "neural-mcdonald"])
def test_char_budget_goes_to_the_first_bigram_with_the_same_floats(parsed_dev, config):
    from dualdecomp.app.compressor import Compressor
    from dualdecomp.app.limits import char_budget_cap

    comp = Compressor(default_model_dir(), config)
    for sentence in parsed_dev[1][:3]:
        plain, _ = comp.components(sentence)
        chars = 40
        budgeted, _ = comp.components(sentence, chars=chars)
        first = next(k for k, c in enumerate(plain) if isinstance(c, Bigram))  # the old rule
        assert char_budget_taker(plain) == first
        widths = np.array([len(t) for t in sentence.tokens], dtype=np.int64)
        expected = list(plain)
        expected[first] = CharBudgetBigram(plain[first].B, widths,
                                           min(chars, char_budget_cap([len(t) for t in sentence.tokens])))
        _same(budgeted, expected)


def test_transducer_losses_are_a_registry():
    """``make_loss`` looks the name up in ``LOSS_FACTORIES`` (was a 5-way if); same classes, same message."""
    from dualdecomp.core.errors import InputError
    from dualdecomp.data.ptb import read_tree
    from dualdecomp.models.transducer import losses

    assert losses.LOSSES == ("token", "ngram", "cfg", "edit", "f1") == tuple(losses.LOSS_FACTORIES)
    reference = read_tree("(S (NP (NN he)) (VP (VBD left)))")
    classes = {"token": losses.TokenHamming, "ngram": losses.NgramHamming, "cfg": losses.CfgHamming,
               "edit": losses.EditDistance, "f1": losses.F1Loss}
    for name, cls in classes.items():
        loss = losses.make_loss(name, ["he", "quickly", "left"], reference)
        assert type(loss) is cls
        assert loss.value(np.array([True, False, True]), reference) == 0.0
    with pytest.raises(InputError, match=r"unknown loss 'hinge' \(known: token, ngram, cfg, edit, f1\)"):
        losses.make_loss("hinge", ["he"], reference)


# (decode block, message after "W: ") as before W3.2, and for the ILP's options, checked at load since
_BLOCKS = [
    ({"decoder": "x"}, "decode.decoder must be one of ('dd', 'ilp', 'beam'), not 'x'"),
    ({"decoder": 3}, "decode.decoder must be one of ('dd', 'ilp', 'beam'), not 3"),
    ({"decoder": "ilp", "foo": 1, "bar": 2}, "unknown option(s) for the ilp decoder: bar, foo"),
    ({"decoder": "beam", "beam": 0}, "decode.beam must be a positive integer"),
    ({"decoder": "beam", "beam": True}, "decode.beam must be a positive integer"),
    ({"decoder": "beam", "beam": 5, "max_iterations": 3},
     "unknown option(s) for the beam decoder: max_iterations"),
    ({"max_iterationz": 5}, "invalid decode options: unknown decode option(s): max_iterationz (known: "
     "bisection_steps, lambda_iterations, length_method, max_iterations, node_iterations, polyak_patience, "
     "step, step_size, tighten, tighten_after, time_limit)"),
    ({"max_iterations": -4},
     "invalid decode options: option max_iterations must be a positive integer, got -4"),
    ({"step": "x"}, "invalid decode options: option step must be one of rush-collins, polyak, constant, 1/k; "
     "got 'x'"),
    ({"step_size": 0}, "invalid decode options: option step_size must be a positive finite number or None, "
     "got 0"),
    ({"tighten": 1}, "invalid decode options: option tighten must be a bool, got 1"),
    ({"length_method": "x"}, "invalid decode options: option length_method must be one of bisection, exact, "
     "auto; got 'x'"),
    ({"decoder": "ilp", "solver": "glpk"}, "decode.solver must be one of cbc, highs"),
    ({"decoder": "ilp", "time_limit": -1}, "decode.time_limit must be a positive finite number or None"),
]


@pytest.mark.parametrize(("block", "message"), _BLOCKS)
def test_decode_blocks_are_checked_by_the_engines_schemas(block, message):
    """The configuration asks the engine (``check_decode_block``); the messages are the old ones. The ILP's
    ``solver`` and ``time_limit`` were not checked at load before (failed on every line at decode time):
    the last two cases fail on the old code."""
    from dualdecomp.core.errors import ModelError
    from dualdecomp.models.joint.config import parse_config

    spec = {"format": "dualdecomp-config", "version": 1, "decode": block,
            "components": [{"kind": "transducer", "path": "t3"}, {"kind": "lm", "path": "lm"}]}
    with pytest.raises(ModelError) as info:
        parse_config(spec, "W")
    assert str(info.value) == f"W: {message}"
    assert info.value.exit_code == 3


def test_each_decoder_owns_its_option_schema():
    from dataclasses import fields

    from dualdecomp.core.errors import InputError
    from dualdecomp.engine.decoders import DECODERS, check_decode_block, get_decoder_spec
    from dualdecomp.engine.options import DD_OPTIONS, DecodeOptions

    assert {f.name: f.default for f in fields(DecodeOptions)} == {o.name: o.default for o in DD_OPTIONS}
    assert get_decoder_spec("dd").defaults() == {o.name: o.default for o in DD_OPTIONS}
    assert get_decoder_spec("ilp").defaults() == {"solver": "cbc", "time_limit": None}
    assert get_decoder_spec("beam").defaults() == {"beam": 100}
    assert tuple(DECODERS) == ("dd", "ilp", "beam")
    assert check_decode_block({}) == "dd"
    assert check_decode_block({"decoder": "ilp", "solver": "highs"}) == "ilp"
    with pytest.raises(InputError, match=r"unknown decoder 'x' \(one of dd, ilp, beam\)"):
        get_decoder_spec("x")
