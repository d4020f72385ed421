"""A configuration's component ``options`` reach its kind's loader (the neural int8 encoder), and an option
the loader does not take is a clear ModelError."""

from __future__ import annotations

import json

import pytest

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import write_manifest
from dualdecomp.models.configuration import ComponentSpec, JointConfig, JointModel, parse_config, save_config
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder, onnx_available
from tests.neural_tiny import write_tiny_scorer


@pytest.fixture()
def scorer_dir(tmp_path):
    write_tiny_scorer(tmp_path / "neural", seed=0, quantise=True)
    return tmp_path


def _save(directory, components) -> None:
    save_config(JointConfig("one scorer, twice", tuple(components)), directory)
    write_manifest(directory)


@pytest.mark.skipif(not onnx_available(), reason="onnxruntime is not installed")
def test_the_backend_option_picks_the_int8_encoder_for_that_component_only(scorer_dir, monkeypatch) -> None:
    monkeypatch.delenv("DUALDECOMP_ENCODER", raising=False)
    _save(scorer_dir, [ComponentSpec("neural", "neural", 1.0, {"backend": "onnx-int8"}),
                        ComponentSpec("neural", "neural", 1.0)])
    spec = json.loads((scorer_dir / "config.json").read_text())
    assert spec["components"][0]["options"] == {"backend": "onnx-int8"}
    assert "options" not in spec["components"][1]
    model = JointModel(scorer_dir)
    int8, plain = (m.encoder for m in model.models)
    assert isinstance(int8, OnnxEncoder) and int8.int8
    assert isinstance(plain, OnnxEncoder) and not plain.int8


def test_an_option_the_loader_does_not_take_is_a_model_error(scorer_dir) -> None:
    _save(scorer_dir, [ComponentSpec("neural", "neural", 1.0, {"precision": "int8"})])
    with pytest.raises(ModelError, match="takes no option precision"):
        JointModel(scorer_dir)


@pytest.mark.parametrize("options", [[1], {"backend": [1]}, "onnx-int8"])
def test_options_must_be_an_object_of_plain_values(options) -> None:
    spec = {"format": "dualdecomp-config", "version": 1, "name": "x",
            "components": [{"kind": "neural", "path": "neural", "options": options}]}
    with pytest.raises(ModelError, match="options must be an object"):
        parse_config(spec)
