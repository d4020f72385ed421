"""A joint configuration's own size bound (``"max_tokens"`` in its JSON): the ILP reference configuration
refuses long sentences with a per-line error by default (issue W2.5); an explicit ``--max-tokens``
overrides it (W3.1 item 7: tests/test_w31_max_tokens.py)."""

from __future__ import annotations

import json

import pytest

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.models.configuration import JointConfig, parse_config

ILP = "mcdonald-dependency-lm-ilp"
WORDS = "the minister said on monday that the new rules would apply to every company".split()


def _spec(**extra) -> dict:
    return {"format": "dualdecomp-config", "version": 1, "name": "x",
            "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], **extra}


def test_parse_and_round_trip() -> None:
    cfg = parse_config(_spec(max_tokens=12))
    assert cfg.max_tokens == 12 and cfg.to_json()["max_tokens"] == 12
    assert parse_config(cfg.to_json()) == cfg
    assert parse_config(_spec()).max_tokens is None and "max_tokens" not in parse_config(_spec()).to_json()


@pytest.mark.parametrize("value", [0, -3, 2.5, "40", True])
def test_invalid_max_tokens_is_a_model_error(value) -> None:
    with pytest.raises(ModelError, match="max_tokens must be a positive integer"):
        parse_config(_spec(max_tokens=value))


@pytest.fixture(scope="module")
def ilp() -> Compressor:
    return Compressor(config=ILP)  # the default limit: the configuration's own bound


def test_shipped_ilp_configuration_is_bounded(ilp) -> None:
    assert isinstance(ilp.joint.config, JointConfig) and ilp.joint.config.max_tokens == 40
    ilp.check_size(40)
    with pytest.raises(InputError, match="longer than the configuration's max_tokens 40"):
        ilp.check_size(41)
    Compressor(config="mcdonald-dependency-lm").check_size(300)  # the other configurations: --max-tokens only


def test_long_line_gets_its_error_row_and_the_batch_goes_on(tmp_path, ilp) -> None:
    inp = tmp_path / "in.jsonl"
    rows_in = [{"id": "long", "text": " ".join(WORDS * 3)}, {"id": "short", "text": "the minister said"}]
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows_in))
    rows, summary = run_batch(inp, None, ilp, BatchOptions(deterministic=True))
    assert "42 tokens is longer than the configuration's max_tokens 40" in rows[0]["error"]
    assert "error" not in rows[1] and rows[1]["certified"] and summary.failed == 1
