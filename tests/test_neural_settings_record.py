"""What a neural training run records of its settings: the settings added later (``--autocast``,
``--max-batch-pieces``) only when they differ from their defaults, so a run with them at their defaults
has the fingerprint it had before they existed; otherwise they are in the fingerprint (a checkpoint of
other values is refused) and in the record."""

from __future__ import annotations

import argparse
from dataclasses import asdict

import pytest

from dualdecomp.models.neural.checkpoint import fingerprint
from dualdecomp.models.neural.examples import Example
from dualdecomp.models.neural.training_settings import (
    LATER_SETTINGS,
    TrainingSettings,
    add_arguments,
    recorded_settings,
    settings_from_options,
)


def test_later_settings_are_recorded_only_off_their_defaults() -> None:
    plain = recorded_settings(TrainingSettings())
    assert set(plain) == set(asdict(TrainingSettings())) - set(LATER_SETTINGS)
    changed = recorded_settings(TrainingSettings(autocast="bfloat16", max_batch_pieces=4096))
    assert changed == {**plain, "autocast": "bfloat16", "max_batch_pieces": 4096}
    assert recorded_settings(TrainingSettings(max_batch_pieces=1)) == {**plain, "max_batch_pieces": 1}


def test_later_settings_change_the_fingerprint(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}")
    data = [Example(("a", "b"), (1.0, 0.0), "toy")]
    prints = [fingerprint(s, data, data, tmp_path)["settings"] for s in (
        TrainingSettings(), TrainingSettings(autocast="bfloat16"), TrainingSettings(max_batch_pieces=64))]
    assert prints[0] != prints[1] and prints[0] != prints[2] and prints[1] != prints[2]
    assert "autocast" not in prints[0] and prints[1]["autocast"] == "bfloat16"


def test_the_options_parse_and_refuse_an_unknown_autocast(capsys) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    need = ["--base", "b", "--train", "t", "--dev", "d", "--out", "o"]
    args = parser.parse_args(need + ["--autocast", "bfloat16", "--max-batch-pieces", "4096",
                                     "--unpack-base", "w1", "w2"])
    assert settings_from_options(args) == TrainingSettings(autocast="bfloat16", max_batch_pieces=4096)
    assert [str(w) for w in args.unpack_base] == ["w1", "w2"]
    with pytest.raises(SystemExit):
        parser.parse_args(need + ["--autocast", "float16"])
    assert "invalid choice" in capsys.readouterr().err
