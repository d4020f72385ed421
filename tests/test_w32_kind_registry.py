"""W3.2 item 4 (compression): the registry knows each kind end to end.

- Capabilities, not isinstance chains: the length bias and the character budget go to the component that
  declares the capability, in the order of the old isinstance chain (Bigram, then Dependency, then
  Unary; the first Bigram for the budget), with the same floats: checked on real sentences against the
  old rule computed here from the arrays.
- The transducer's losses are a registry; each decoder owns its option schema and the configuration asks
  the engine to check its ``"decode"`` block (the old messages; the ILP's ``solver`` and ``time_limit``
  are new checks: those two cases fail on the old code, where they loaded).
- ``dualdecomp train --kind K`` reaches every kind's trainer (tiny real runs; the neural one faked, it
  needs PyTorch), ``t3 train`` and ``lm build`` are the same trainers, an unknown kind's message lists
  the registry's kinds, and the CLI imports no kind before a command needs one.

Run against the old code (/tmp/baseline): the module fails at import (``char_budget_taker`` and the
registry's trainers do not exist there).
"""
from __future__ import annotations

import numpy as np
import pytest

from dualdecomp.core.component import capabilities_of, char_budget_taker, length_bias_taker
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.configuration import JointModel, with_length_bias
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
    from dualdecomp.models.configuration import parse_config

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


# ---------------------------------------------------------------------------------------------------
# the registry: what each kind declares, and `dualdecomp train --kind K` for every trainable kind
# ---------------------------------------------------------------------------------------------------


def test_every_kind_declares_how_to_build_train_save_and_load_it():
    from dualdecomp.models.registry import ComponentKind, get_kind, get_trainer, kind_names, trainer_names

    assert kind_names() == ("bigram", "dependency", "lm", "neural", "transducer")
    assert trainer_names() == ("bigram", "cotraining", "dependency", "length-bias", "lm", "neural",
                               "rewriting", "transducer", "word-order", "word-order-lineariser",
                               "word-order-lm-beam")
    for name in kind_names():
        kind = get_kind(name)
        assert callable(kind.load) and callable(kind.potentials) and callable(kind.weighted)
        assert kind.components and kind.trainer is get_trainer(name)
        assert not hasattr(kind, "unit")  # renamed: the model's potentials at weight 1
    saved = {name for name in kind_names() if get_kind(name).save is not None}
    assert saved == {"bigram", "dependency", "transducer"}  # lm and neural: the trainer writes the files
    assert [n for n in kind_names() if get_kind(n).takes_length_bias()] == ["bigram", "dependency", "neural"]
    assert [n for n in kind_names() if get_kind(n).takes_char_budget()] == ["bigram", "neural"]
    assert get_trainer("neural").extra == "train" and get_trainer("bigram").parameter_mixing
    assert all(get_trainer(n).extra is None for n in trainer_names() if n != "neural")
    assert isinstance(get_kind("lm"), ComponentKind)


def test_unknown_kinds_are_named_with_the_registrys_kinds(capsys):
    from dualdecomp.app.cli import main
    from dualdecomp.core.errors import InputError, ModelError
    from dualdecomp.models.registry import get_kind, get_trainer

    assert main(["train", "--kind", "trigram", "--train", "x.jsonl", "--out", "o"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'trigram'" in err
    for name in ("bigram", "cotraining", "dependency", "length-bias", "lm", "neural", "transducer"):
        assert f"'{name}'" in err
    assert "'joint'" not in err  # the old name of cotraining: accepted, not listed
    with pytest.raises(InputError, match=r"unknown kind 'x' to train \(one of bigram, cotraining, "
                                         r"dependency, length-bias, lm, neural, rewriting, transducer, "
                                         r"word-order, word-order-lineariser, word-order-lm-beam\)"):
        get_trainer("x")
    for name in ("cotraining", "joint", "length-bias"):
        with pytest.raises(ModelError, match=rf"unknown component kind '{name}' \(one of bigram, dependency, "
                                             r"lm, neural, transducer\)"):
            get_kind(name)  # co-training and the length bias are trainers, not components of configurations


def test_train_kind_joint_is_the_hidden_old_name_of_cotraining(capsys):
    """``--kind joint`` (before W3.2) still trains the co-training, but ``--help`` names only cotraining."""
    from dualdecomp.app.cli import main
    from dualdecomp.models.registry import get_trainer, trainer_name

    assert trainer_name("joint") == "cotraining" and trainer_name("bigram") == "bigram"
    assert get_trainer("joint") is get_trainer("cotraining")
    helps = []
    for kind in ("joint", "cotraining"):
        assert main(["train", "--kind", kind, "--help"]) == 0
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1]  # the same options (--init, --tree, ...) under the new name
    assert "options of --kind cotraining" in helps[0] and "--init DIR" in helps[0]
    assert "joint" not in helps[0]


@pytest.fixture(scope="module")
def small_corpora(tmp_path_factory, corpora):
    """The first lines of the written and broadcast corpora (train 12, dev 6 sentences)."""
    d = tmp_path_factory.mktemp("corpora")
    for name, lines in (("written.train", 12), ("written.dev", 6), ("broadcast.train", 12),
                        ("broadcast.dev", 6)):
        text = (corpora / f"{name}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        (d / f"{name}.jsonl").write_text("".join(text[:lines]), encoding="utf-8")
    return d


def _train(args: list[str], capsys) -> tuple[int, str, str]:
    from dualdecomp.app.cli import main

    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", ["bigram", "dependency", "cotraining", "joint", "transducer"])
def test_train_kind_trains_and_writes_a_loadable_model(kind, small_corpora, tmp_path, capsys):
    """``dualdecomp train --kind K`` reaches K's trainer (a tiny real run) and writes what K loads."""
    from dualdecomp.models.configuration import JointModel
    from dualdecomp.models.registry import get_kind

    corpus = "broadcast" if kind == "transducer" else "written"
    args = ["train", "--kind", kind, "--train", str(small_corpora / f"{corpus}.train.jsonl"),
            "--dev", str(small_corpora / f"{corpus}.dev.jsonl"), "--epochs", "1",
            "--out", str(tmp_path / "m")]
    cotraining = kind in ("cotraining", "joint")  # joint: its old name, still accepted
    if not cotraining:
        args += ["--hash-bits", "12"]
    if kind in ("bigram", "cotraining", "joint", "transducer"):
        args += ["--lm", "none"]
    code, _, err = _train(args, capsys)
    assert code == 0, err
    if cotraining:
        assert [c.kind for c in JointModel(tmp_path / "m").config.components] == ["bigram", "dependency"]
    else:
        model = get_kind(kind).load(tmp_path / "m")
        assert type(model).__name__ in {"BigramModel", "DependencyModel", "TransducerModel"}
    assert "saved" in err
    assert _train([*args, "--quiet"], capsys)[2] == ""


def test_train_kind_lm_is_lm_build(small_corpora, tmp_path, capsys):
    """``train --kind lm`` and ``lm build`` run the same trainer: byte-identical ARPA files, one JSON line.
    Needs KenLM's lmplz (``make lmplz``), as tests/test_lm.py does."""
    import json

    corpus = str(small_corpora / "written.train.jsonl")
    code, out, err = _train(["train", "--kind", "lm", "--train", corpus, "--out", str(tmp_path / "a.arpa"),
                             "--order", "2", "--arpa", "--memory", "64M"], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["order"] == 2 and report["path"] == str(tmp_path / "a.arpa")
    code, out, err = _train(["lm", "build", corpus, str(tmp_path / "b.arpa"), "--order", "2", "--arpa",
                             "--memory", "64M"], capsys)
    assert code == 0, err
    assert json.loads(out)["counts"] == report["counts"]
    assert (tmp_path / "a.arpa").read_bytes() == (tmp_path / "b.arpa").read_bytes()


def test_t3_train_is_train_kind_transducer(monkeypatch, tmp_path):
    """``t3 train`` parses the transducer kind's options and calls its trainer, as ``train --kind
    transducer`` does (the same namespace but for the command's own keys)."""
    import dualdecomp.app.commands.t3 as t3_command
    import dualdecomp.app.commands.train as train_command
    from dualdecomp.app.cli import main
    from dualdecomp.models.registry import Trainer, get_trainer

    real = get_trainer("transducer")
    seen = []
    fake = Trainer(real.summary, real.add_arguments, lambda args, context: seen.append(vars(args)))
    monkeypatch.setattr(train_command, "get_trainer", lambda name: fake if name == "transducer" else None)
    monkeypatch.setattr(t3_command, "get_trainer", lambda name: fake if name == "transducer" else None)
    options = ["--train", "a.jsonl", "--dev", "b.jsonl", "--out", str(tmp_path), "--loss", "cfg", "--lam",
               "0.1", "0.01", "--quiet"]
    assert main(["train", "--kind", "transducer", *options]) == 0
    assert main(["t3", "train", *options]) == 0
    own = {"func", "command", "kind", "t3_command"}
    first, second = ({k: v for k, v in ns.items() if k not in own} for ns in seen)
    assert first == second and first["loss"] == "cfg" and first["lam"] == [0.1, 0.01]
    assert first["lm"] == "default" and first["epochs"] == 4 and first["hash_bits"] == 18


def test_train_kind_neural_reaches_the_fine_tuning(monkeypatch, tmp_path, capsys):
    """The neural trainer imports the fine-tuning (PyTorch) only when it runs: with it faked, the options
    arrive and its report is printed; without PyTorch, a one-line ModelError names the ``train`` extra."""
    import json
    import sys
    import types

    args = ["train", "--kind", "neural", "--base", str(tmp_path), "--train", "a.jsonl:5", "--dev", "b.jsonl",
            "--out", str(tmp_path / "n"), "--pair-rank", "4", "--no-freeze-embeddings", "--quiet"]
    fake = types.ModuleType("dualdecomp.models.neural.training")
    seen = []

    def fine_tune_from_options(options, context):
        seen.append(options)
        return {"step": 1, "dev_token_f1": 0.5}

    fake.train_from_options = fine_tune_from_options
    monkeypatch.setitem(sys.modules, "dualdecomp.models.neural.training", fake)
    code, out, err = _train(args, capsys)
    assert code == 0, err
    assert json.loads(out) == {"step": 1, "dev_token_f1": 0.5}
    assert seen[0].pair_rank == 4 and seen[0].freeze_embeddings is False and seen[0].train == ["a.jsonl:5"]
    monkeypatch.delitem(sys.modules, "dualdecomp.models.neural.training")
    monkeypatch.setitem(sys.modules, "torch", None)  # as if the train extra were not installed
    code, _, err = _train(args, capsys)
    assert code == 3, err
    assert "optional train extra" in err and "pip install 'dualdecomp[train]'" in err


def test_the_cli_loads_no_kind_until_a_command_needs_one():
    """Building the parser (``dualdecomp --help``, every command's start) imports no kind module and not
    numpy; ``train --kind dependency`` adds that kind's options only."""
    import subprocess
    import sys

    code = ("import sys; from dualdecomp.app.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.endswith('.kind') or m.endswith('.trainer') "
            "or m == 'numpy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    from dualdecomp.app.cli import build_parser

    parser = build_parser()
    ns = parser.parse_args(["train", "--kind=dependency", "--train", "a", "--out", "b", "--second-order"])
    assert ns.second_order is True and ns.kind == "dependency" and not hasattr(ns, "trainer")
    ns = build_parser().parse_args(["train", "--train", "a", "--out", "b", "--trainer", "mira"])
    assert ns.kind == "bigram" and ns.trainer == "mira" and ns.workers == 1
