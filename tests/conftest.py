"""Shared fixtures: parsed sentences from the vendored corpora."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

# Every property test is derandomised (the same examples on every run: CI never flakes on a new seed)
# and has no per-example deadline (numba compilation and a loaded CI machine would trip it).
settings.register_profile("dualdecomp", derandomize=True, deadline=None)
settings.load_profile("dualdecomp")

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "data" / "corpora"


def pytest_terminal_summary(terminalreporter) -> None:
    """The architecture's two numbers (tests/test_layers.py), so a reviewer sees them move."""
    from tests.test_layers import architecture_report

    terminalreporter.write_line(architecture_report())


@pytest.fixture(scope="session")
def default_lm():
    """The embedded default model's KenLM trigram (``lm.binary``), loaded once."""
    from dualdecomp.data.locations import default_model_dir
    from dualdecomp.models.lm.model import load_lm

    return load_lm(default_model_dir() / "lm.binary")


@pytest.fixture(scope="session")
def corpora() -> Path:
    return CORPORA


@pytest.fixture(scope="session")
def parsed_dev():
    """The first 30 sentences of written.dev, parsed."""
    from dualdecomp.data.jsonl import read_corpus
    from dualdecomp.data.parsing import parse_tokens

    items = read_corpus(CORPORA / "written.dev.jsonl")[:30]
    return items, parse_tokens([it.text for it in items], ids=[it.id for it in items])


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A bigram model trained in a few seconds on 60 written-corpus sentences, without an LM."""
    from dualdecomp.app.cli import main

    out = tmp_path_factory.mktemp("model")
    code = main(["train", "--train", str(CORPORA / "written.train.jsonl"), "--dev",
                 str(CORPORA / "written.dev.jsonl"), "--limit", "60", "--epochs", "2", "--lm", "none",
                 "--hash-bits", "18", "--out", str(out), "--quiet"])
    assert code == 0
    return out
