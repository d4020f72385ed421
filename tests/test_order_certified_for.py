"""Word ordering's rows say for which model a certificate holds (``certified_for``, set by each decoder of
``dualdecomp.models.ordering.decoding.registry``): ``certified: true`` from the LM beam means "optimal
for the LM alone", not for the paper's model."""

from __future__ import annotations

import json

from dualdecomp.app.cli import main
from dualdecomp.models.ordering.decoding.registry import (
    LINEARISER,
    LM_ALONE,
    PAPER_MODEL,
    GaveUp,
    decode_with,
)
from tests.test_ordering_decoder_registry import BAG, SEARCH, TREE, bundle


def _row(result):
    assert not isinstance(result, GaveUp)
    return result.as_json()


def test_each_decoder_names_the_model_of_its_certificate() -> None:
    b = bundle(lm_beam=10_000)  # a beam that prunes nothing: the LMs' optimum
    expected = {"lm-beam": (BAG, LM_ALONE), "exact-dp": (TREE, PAPER_MODEL), "lineariser": (TREE, LINEARISER)}
    for name, (inp, model) in expected.items():
        row = _row(decode_with(b, name, inp))
        assert row["certified"] is True and row["certified_for"] == model, name
    row = _row(decode_with(b, "best-first", BAG, SEARCH))
    assert row["certified"] is False and row["certified_for"] is None


def test_uncertified_rows_say_null() -> None:
    row = _row(decode_with(bundle(lm_beam=1), "lm-beam", BAG))  # a beam of 1 prunes
    assert row["certified"] is False and row["certified_for"] is None


def test_cli_the_barked_dog_is_certified_for_the_lm_alone(capsys) -> None:
    assert main(["order", "--words", "dog the barked ."]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["certified"] is True and row["certified_for"] == "LM alone"
