"""Your own components from the high-level API, the CLI and the spaCy component
(:mod:`dualdecomp.app.user_components`): factories f(sentence) -> component added to a configuration's."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

import dualdecomp
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.user_components import as_factories, load_factory
from dualdecomp.core.errors import InputError
from dualdecomp.data.parsing import parse_text
from dualdecomp.solvers.unary import Unary

TEXT = "The Gilmer City Council on Tuesday plans to consider canceling its May council election."
WORD = "Tuesday"  # dropped by the shipped configurations at free length

# a factory module the CLI and the spaCy config import by MODULE:FUNCTION
MODULE = textwrap.dedent("""
    import numpy as np
    from dualdecomp.solvers.unary import Unary

    def keep_tuesday(sentence):
        return Unary(np.array([100.0 if t == "Tuesday" else 0.0 for t in sentence.tokens]))

    def not_a_component(sentence):
        return 42
""")


def keep_word(sentence):
    """A strong bonus for keeping WORD."""
    return Unary(np.array([100.0 if t == WORD else 0.0 for t in sentence.tokens]))


def require_word(sentence):
    """WORD must be kept (a hard constraint: -inf otherwise)."""
    return Unary(np.zeros(sentence.n), required=[t == WORD for t in sentence.tokens])


@pytest.fixture
def factory_module(tmp_path, monkeypatch):
    (tmp_path / "my_bonus_factories.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    yield "my_bonus_factories"
    import sys

    sys.modules.pop("my_bonus_factories", None)


def test_compressor_extra_components_decode_jointly_and_certify() -> None:
    plain = Compressor(config="mcdonald")
    assert WORD not in plain.compress_text(TEXT).tokens
    mine = Compressor(config="mcdonald", extra_components=keep_word)
    out = mine.compress_text(TEXT)
    assert WORD in out.tokens and out.result.certified
    # the same problem as the shipped components + the user's, decoded by hand (docs/components/your-own.md)
    sentence = parse_text(TEXT)
    shipped, _ = plain.components(sentence)
    by_hand = dualdecomp.decode([*shipped, keep_word(sentence)])
    assert np.array_equal(by_hand.keep, out.keep)
    assert out.result.primal == pytest.approx(by_hand.primal, abs=1e-9)


def test_compress_text_components_for_one_call_only() -> None:
    c = Compressor(config="mcdonald")
    assert WORD in c.compress_text(TEXT, components=[keep_word]).tokens
    assert WORD not in c.compress_text(TEXT).tokens  # not kept by the compressor
    assert WORD in dualdecomp.compress(TEXT, model=None, components=keep_word).tokens
    both = c.compress_text(f"{TEXT} It met on Tuesday.", split=True, components=keep_word)
    assert all(WORD in comp.tokens for comp in both)


def test_ilp_configuration_gets_them_too() -> None:
    c = Compressor(config="mcdonald-dependency-lm-ilp", extra_components=require_word)
    out = c.compress_text(TEXT, length=4)
    assert WORD in out.tokens and len(out.tokens) == 4 and out.result.certified


def test_bad_factories_are_input_errors(factory_module) -> None:
    with pytest.raises(InputError, match="give a factory"):
        Compressor(config="mcdonald", extra_components=Unary(np.zeros(3)))
    with pytest.raises(InputError, match="not a component"):
        bad = f"{factory_module}:not_a_component"
        Compressor(config="mcdonald", extra_components=bad).compress_text(TEXT)
    with pytest.raises(InputError, match="n = 3"):
        Compressor(config="mcdonald", extra_components=lambda s: Unary(np.zeros(3))).compress_text(TEXT)
    with pytest.raises(InputError, match="beam decoder"):
        Compressor(config="t3-lm-beam", extra_components=keep_word).compress_text(TEXT)
    with pytest.raises(InputError, match="MODULE:FUNCTION"):
        load_factory("no_colon_here")
    with pytest.raises(InputError, match="cannot import"):
        load_factory("no_such_module_xyz:f")
    with pytest.raises(InputError, match="has no"):
        load_factory(f"{factory_module}:missing")
    assert as_factories(None) == ()
    assert len(as_factories([keep_word, f"{factory_module}:keep_tuesday"])) == 2


def test_cli_component_option(factory_module, capsys) -> None:
    args = ["compress", "--config", "mcdonald", "--json", "--deterministic", TEXT]
    assert main(args) == 0
    assert WORD not in json.loads(capsys.readouterr().out)["compression"].split()
    assert main([*args[:-1], "--component", f"{factory_module}:keep_tuesday", TEXT]) == 0
    row = json.loads(capsys.readouterr().out)
    assert WORD in row["compression"].split() and row["certified"]
    assert main([*args[:-1], "--component", "no_such_module_xyz:f", TEXT]) == 2
    assert "cannot import" in capsys.readouterr().err


def test_cli_component_in_a_batch_with_resume_fingerprint(factory_module, tmp_path, capsys) -> None:
    src, out = tmp_path / "in.txt", tmp_path / "out.jsonl"
    src.write_text(TEXT + "\n", encoding="utf-8")
    base = ["compress", "--config", "mcdonald", "--input", str(src), "--output", str(out), "--quiet"]
    assert main(base) == 0
    assert WORD not in json.loads(out.read_text())["compression"].split()
    # --resume with a component: the earlier rows were made without it, so they are not reused
    assert main([*base, "--resume", "--component", f"{factory_module}:keep_tuesday"]) == 0
    assert WORD in json.loads(out.read_text())["compression"].split()


def test_spacy_component_takes_components(factory_module) -> None:
    import spacy

    from tests.test_spacy_component import _name

    @spacy.registry.misc("test_keep_tuesday.v1")
    def _registered():
        return keep_word

    for components in (f"{factory_module}:keep_tuesday", ["test_keep_tuesday.v1"],
                       {"@misc": "test_keep_tuesday.v1"}):
        nlp = spacy.load(_name(), exclude=["ner", "lemmatizer"])
        nlp.add_pipe("dualdecomp", config={"model": None, "components": components})
        doc = nlp(TEXT)
        assert WORD in doc._.compression.split() and doc._.certificate["certified"], components
    nlp = spacy.load(_name(), exclude=["ner", "lemmatizer"])
    with pytest.raises(InputError, match="registered"):
        nlp.add_pipe("dualdecomp", config={"components": ["no_such_registered_thing"]})
