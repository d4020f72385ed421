"""W3.1 item 7: ``--max-tokens`` per configuration, from measurement.

Each shipped configuration stores its measured growth (``"growth"`` in its JSON, written by
``benchmarks/memory.py --fit --write``); its default length limit follows from it by the rule of
:mod:`dualdecomp.models.configuration.growth`, and ``--max-tokens`` (``Compressor(max_tokens=...)``)
overrides it.
All 20 tests failed on the old code (/tmp/baseline), where every configuration refused a 301-token line:
the growth object and rule did not exist (no such module, no ``growth`` key);
``test_the_default_configuration_compresses_a_400_token_line`` got the 400-token line's error row
("longer than --max-tokens 300"); ``test_a_line_over_the_configurations_limit_gets_its_error_row`` got a
message naming only ``--max-tokens 300``; ``Compressor`` had no ``token_limit``, and its ``max_tokens``
ignored the configuration's own bound (1000 for the ILP configuration, now its effective 40).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.locations import default_model_dir

ROOT = Path(__file__).resolve().parents[1]


def _real_tokens(n: int) -> list[str]:
    """n tokens of real text: the sentences of eval.dev concatenated."""
    out: list[str] = []
    for item in read_corpus(ROOT / "data" / "corpora" / "eval.dev.jsonl"):
        out.extend(item.text)
        if len(out) >= n:
            return out[:n]
    raise AssertionError("eval.dev is too short")


def _growth(**change) -> dict:
    """A made-up growth: CPU 1e-6 n^2 s, memory 1e-3 n^2 MiB over a 548 MiB baseline (limit 1,200)."""
    spec = {"time": {"exponent": 2.0, "coefficient": 1e-6}, "memory": {"exponent": 2.0, "coefficient": 1e-3},
            "baseline_mib": 548.0, "lengths": [1000, 2000, 4000], "exceeded_at": None,
            "budget": {"seconds": 60, "mib": 2048}, "measured": "made up", "max_tokens": 1200}
    return {**spec, **change}


# --- the rule ----------------------------------------------------------------------------------------


def test_the_limit_follows_from_made_up_exponents() -> None:
    from dualdecomp.models.configuration import PowerLaw, limit_from_growth, round_down

    t2 = PowerLaw(2.0, 1e-6)  # 60 s at sqrt(6e7) = 7,745.97
    m2 = PowerLaw(2.0, 1e-3)  # 2,048 - 548 = 1,500 MiB at sqrt(1.5e6) = 1,224.7
    assert limit_from_growth(t2, None, 548.0, (1000, 2000, 4000), 60, 2048) == 7700  # time binds
    assert limit_from_growth(t2, m2, 548.0, (1000, 2000, 4000), 60, 2048) == 1200  # memory binds
    # a fit is not extrapolated past twice the longest length measured, nor to a length that failed
    assert limit_from_growth(t2, None, 548.0, (100, 200), 60, 2048) == 400
    assert limit_from_growth(t2, None, 548.0, (100, 200), 60, 2048, exceeded_at=350) == 340
    # never below the configuration's fallback length; a baseline over the budget leaves only that
    assert limit_from_growth(PowerLaw(3.0, 1.0), None, 10.0, (10, 20), 60, 2048, floor=80) == 80
    assert limit_from_growth(t2, m2, 4000.0, (1000, 2000), 60, 2048, floor=1) == 1
    # a flat time never binds; the memory (cubic) does: (1001 / 1e-6)^(1/3) = 1,000.3
    assert limit_from_growth(PowerLaw(0.0, 5.0), PowerLaw(3.0, 1e-6), 1047.0, (2000,), 60, 2048) == 1000
    assert [round_down(n) for n in (7, 99, 100, 1234, 7745, 12999)] == [7, 99, 100, 1200, 7700, 12000]
    assert math.isinf(PowerLaw(0.0, 5.0).reaches(60))


def test_growth_is_parsed_and_round_trips() -> None:
    from dualdecomp.models.configuration import parse_config

    spec = {"format": "dualdecomp-config", "version": 1, "name": "x",
            "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], "growth": _growth()}
    cfg = parse_config(spec)
    assert cfg.growth.max_tokens == 1200 and cfg.growth.memory.exponent == 2.0
    assert parse_config(cfg.to_json()) == cfg
    assert cfg.to_json()["growth"]["budget"] == {"seconds": 60.0, "mib": 2048.0}
    # the fallback length is the floor of the rule: its stated max_tokens must say so
    fb = {**spec, "fallback": {"max_tokens": 1500, "components": [0]}}
    with pytest.raises(ModelError, match="gives 1500"):
        parse_config(fb)
    assert parse_config({**fb, "growth": _growth(max_tokens=1500)}).growth.max_tokens == 1500


@pytest.mark.parametrize("change, message", [
    ({"max_tokens": 5000}, "disagrees with its measurements"),
    ({"time": {"exponent": -1.0, "coefficient": 1e-6}}, "time.exponent"),
    ({"time": {"exponent": 2.0, "coefficient": 0}}, "time.coefficient"),
    ({"memory": {"exponent": 2.0}}, "memory must be an object"),
    ({"baseline_mib": float("nan")}, "baseline_mib"),
    ({"lengths": []}, "lengths"),
    ({"lengths": [100, True]}, "lengths"),
    ({"exceeded_at": 0}, "exceeded_at"),
    ({"budget": {"seconds": 60}}, "budget"),
    ({"max_tokens": "1200"}, "max_tokens"),
    ({"frobnicate": 1}, "unknown key"),
])
def test_bad_growth_is_a_model_error(change, message) -> None:
    from dualdecomp.models.configuration import parse_config

    spec = {"format": "dualdecomp-config", "version": 1, "name": "x",
            "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], "growth": _growth(**change)}
    with pytest.raises(ModelError, match=message):
        parse_config(spec, "configs/x.json")
    with pytest.raises(ModelError, match="growth must be an object"):
        parse_config({**spec, "growth": [1, 2]})


def test_bad_growth_exits_3_on_the_command_line(tiny_model, tmp_path, capsys) -> None:
    d = tmp_path / "m"
    shutil.copytree(tiny_model, d)
    config = {"format": "dualdecomp-config", "version": 1, "name": "tiny",
              "components": [{"kind": "bigram", "path": ".", "weight": 1.0}], "decode": {},
              "growth": _growth(max_tokens=9999)}
    (d / "config.json").write_text(json.dumps(config))
    assert main(["compress", "--model", str(d), "a b c"]) == 3
    err = capsys.readouterr().err
    assert "growth.max_tokens 9999 disagrees" in err and "Traceback" not in err


# --- the limit a compressor applies ------------------------------------------------------------------


def test_every_shipped_configuration_has_its_measured_limit() -> None:
    from dualdecomp.models.configuration import JointModel

    d = default_model_dir()
    for name in [None, *sorted(p.stem for p in (d / "configs").glob("*.json"))]:
        cfg = JointModel(d, name).config
        assert cfg.growth is not None, name  # its own or its base's
        assert cfg.growth.max_tokens >= (cfg.fallback_max_tokens or 1)
        assert cfg.growth.budget_seconds == 60 and cfg.growth.budget_mib == 2048


def test_the_default_configuration_compresses_a_400_token_line(tmp_path) -> None:
    comp = Compressor()
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "long", "text": " ".join(_real_tokens(400))}) + "\n")
    rows, summary = run_batch(inp, None, comp, BatchOptions(deterministic=True))
    assert "error" not in rows[0], rows[0]["error"]
    assert len(rows[0]["keep"]) == 400 and summary.failed == 0
    assert comp.requested_max_tokens is None and comp.token_limit.source == "measured"
    assert comp.max_tokens == comp.joint.config.growth.max_tokens > 400


def test_a_line_over_the_configurations_limit_gets_its_error_row(tmp_path) -> None:
    comp = Compressor(config="mcdonald")
    limit = comp.max_tokens
    inp = tmp_path / "in.jsonl"
    rows_in = [{"id": "long", "text": " ".join(_real_tokens(limit + 1))},
               {"id": "short", "text": "the minister said on monday that the rules would apply"}]
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows_in))
    rows, summary = run_batch(inp, None, comp, BatchOptions(deterministic=True))  # the long one: not parsed
    error = rows[0]["error"]
    assert f"sentence of {limit + 1} tokens is longer than {limit} tokens" in error
    assert "the limit measured for configuration 'mcdonald' (a longer one would take over 60 s" in error
    assert error.endswith("split it, or raise the limit with --max-tokens N")
    assert "error" not in rows[1] and summary.failed == 1
    assert comp.token_limit.source == "measured" and limit == comp.joint.config.growth.max_tokens > 300


def test_max_tokens_overrides_the_measured_limit() -> None:
    measured = Compressor(config="mcdonald").max_tokens
    raised = Compressor(config="mcdonald", max_tokens=measured + 100)
    assert raised.max_tokens == measured + 100 and raised.token_limit.source == "option"
    raised.check_size(measured + 100)
    small = Compressor(config="mcdonald", max_tokens=5)
    with pytest.raises(InputError, match="longer than --max-tokens 5: split it, or raise --max-tokens"):
        small.check_size(6)


def test_the_configurations_own_bound_is_its_default_and_max_tokens_overrides_it() -> None:
    """The ILP configuration's own "max_tokens": 40 is its default limit; an explicit --max-tokens (the
    issue: "--max-tokens still overrides") raises it (on the old code of this session the explicit 50
    was lowered to 40)."""
    ilp = Compressor(config="mcdonald-dependency-lm-ilp")
    assert ilp.max_tokens == 40  # the effective limit (for the batch: not parsed beyond it)
    with pytest.raises(InputError, match="longer than the configuration's max_tokens 40"):
        ilp.check_size(41)
    raised = Compressor(config="mcdonald-dependency-lm-ilp", max_tokens=50)
    assert raised.max_tokens == 50 and raised.token_limit.source == "option"
    raised.check_size(50)
    with pytest.raises(InputError, match="longer than --max-tokens 50"):
        raised.check_size(51)


def test_a_model_without_growth_has_the_documented_default(tiny_model, tmp_path) -> None:
    from dualdecomp.app.limits import DEFAULT_MAX_TOKENS
    from dualdecomp.models.bigram.store import load_model

    for comp in (Compressor(tiny_model), Compressor(load_model(tiny_model))):
        assert comp.max_tokens == DEFAULT_MAX_TOKENS == 300 and comp.token_limit.source == "default"
        with pytest.raises(InputError, match=r"longer than the default --max-tokens 300 \(a model without a "
                                             r"measured limit\): split it, or raise --max-tokens"):
            comp.check_size(301)
    d = tmp_path / "joint"
    shutil.copytree(tiny_model, d)
    (d / "config.json").write_text(json.dumps({"format": "dualdecomp-config", "version": 1, "name": "j",
                                               "components": [{"kind": "bigram", "path": "."}]}))
    assert Compressor(d).max_tokens == 300 and Compressor(d, max_tokens=20).max_tokens == 20


def test_the_cli_default_is_the_measured_limit(tmp_path) -> None:
    """`dualdecomp compress` without --max-tokens takes the configuration's measured limit: a 400-token
    line is compressed (on the old code of this session, with the option's default of 300, it got the
    error row "longer than --max-tokens 300")."""
    import subprocess
    import sys

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "long", "text": " ".join(_real_tokens(400))}) + "\n")
    out = tmp_path / "out.jsonl"
    run = subprocess.run([sys.executable, "-m", "dualdecomp.app.cli", "compress", "--input", str(inp),
                          "--output", str(out), "--quiet", "--deterministic"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    row = json.loads(out.read_text())
    assert "error" not in row and len(row["keep"]) == 400


def test_a_config_json_that_is_a_device_link_is_refused(tmp_path) -> None:
    """A config.json that is a symlink to /dev/zero goes to the configuration loader, which refuses it
    (exit 3, naming the file); on the old code of this session `is_file()` skipped it and the model's
    bigram component was loaded alone, silently."""
    from dualdecomp.core.errors import ModelError
    from dualdecomp.data.locations import default_model_dir

    d = tmp_path / "model"
    shutil.copytree(default_model_dir(), d)
    (d / "config.json").unlink()
    (d / "config.json").symlink_to("/dev/zero")
    with pytest.raises(ModelError, match="config.json"):
        Compressor(d)
