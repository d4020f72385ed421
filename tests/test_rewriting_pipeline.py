"""Building a rewriting model (``make rewrite-model``, ``dualdecomp train --kind rewriting``): the same
inputs give the same bytes, with or without the grammar cache; the folder says its licence; bad options
are refused (W3.3 item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dualdecomp.app.cli import main
from dualdecomp.data.locations import CHECKOUT_ROOT, default_model_dir
from dualdecomp.models.rewriting.pipeline import _pruned
from dualdecomp.solvers.rewriting import RewriteGrammar, RewriteRule
from dualdecomp.solvers.transducer import NODE, WORD, Frag

SHARED_REWRITING = CHECKOUT_ROOT.parent / "shared" / "data" / "rewriting"


def _need_data_and_lmplz() -> None:
    if not (SHARED_REWRITING / "train.jsonl").is_file():
        pytest.skip(f"the shared rewriting corpus is absent ({SHARED_REWRITING})")
    from dualdecomp.models.lm.build import find_programs

    try:
        find_programs()
    except Exception as exc:  # noqa: BLE001 - any reason lmplz cannot be found
        pytest.skip(f"KenLM's lmplz is not available (make lmplz; DUALDECOMP_LMPLZ_DIR): {exc}")


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_rebuild_is_byte_identical(tmp_path):
    _need_data_and_lmplz()
    from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings, train_rewrite_model

    def build(name: str, cache: str) -> dict[str, bytes]:
        settings = RewriteTrainingSettings(data_dir=str(SHARED_REWRITING), out_dir=str(tmp_path / name),
                                           cache_dir=str(tmp_path / cache), limit=8, dev_limit=3, epochs=2,
                                           delete_weight=0.25, keep_weight=50.0,
                                           keep_encoder=str(default_model_dir() / "neural"))
        return _files(train_rewrite_model(settings, say=lambda _: None))

    first = build("a", "cache1")
    again = build("b", "cache1")  # the grammar comes from the cache
    fresh = build("c", "cache2")  # everything from scratch
    assert set(first) == {"MANIFEST.json", "README.md", "grammar.bin", "keep_classifier.npz", "lm.binary",
                          "model.json", "weights.npz"}
    assert first == again == fresh
    assert b"CC BY-NC 4.0" in first["README.md"] and b"NON-COMMERCIAL" in first["model.json"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_train_kind_rewriting_writes_a_loadable_model(tmp_path, capsys):
    _need_data_and_lmplz()
    out = tmp_path / "model"
    code = main(["train", "--kind", "rewriting", "--quiet", "--data", str(SHARED_REWRITING),
                 "--out", str(out), "--cache", str(tmp_path / "cache"), "--limit", "6", "--dev-limit", "2",
                 "--epochs", "1", "--hope-epochs", "1"])
    assert code == 0
    meta = json.loads((out / "model.json").read_text(encoding="utf-8"))["meta"]
    assert meta["training"]["hope_epochs"] == 1 and [e["epoch"] for e in meta["epochs"]] == [1, 2]
    from dualdecomp.app.rewriter import Rewriter

    result = Rewriter(out).rewrite_text("The river flows through the northern part of the town.")
    assert result.certified and result.rewrite


@pytest.mark.parametrize("option", [["--epochs", "0"], ["--min-count", "0"], ["--lexical-min-count", "0"],
                                    ["--hope-epochs", "-1"], ["--delete-weight", "-1"],
                                    ["--oracle-head-price", "-0.5"], ["--bigram-loss", "-1"],
                                    ["--add-reward", "-2"],
                                    ["--bigram-add-reward", "-1"]])
def test_train_kind_rewriting_refuses_bad_options(tmp_path, capsys, option):
    code = main(["train", "--kind", "rewriting", "--data", str(tmp_path), "--out", str(tmp_path / "m"),
                 *option])
    assert code == 2
    assert "must be" in capsys.readouterr().err


def _rule(word: str, origins: set[str], count: int) -> RewriteRule:
    """⟨VBD, VBD⟩ → ⟨purchased, WORD⟩ with these origins and count."""
    return RewriteRule(Frag(NODE, "VBD", (Frag(WORD, "purchased"),)), Frag(NODE, "VBD", (Frag(WORD, word),)),
                       (), (0,), frozenset(origins), count)


@pytest.mark.parametrize(("min_count", "lexical", "kept"), [
    (2, None, {"bought", "acquired", "purchased"}),
    (2, 1, {"bought", "acquired", "got", "purchased"}),
    (1, None, {"bought", "acquired", "got", "took", "purchased"}),
    (1, 3, {"bought", "acquired", "took", "purchased"}),
    (3, 1, {"bought", "got", "purchased"})])
def test_pruning_keeps_lexical_paraphrases_by_their_own_count(min_count, lexical, kept):
    grammar = RewriteGrammar([_rule("bought", {"lexical", "train"}, 3), _rule("acquired", {"train"}, 2),
                              _rule("got", {"lexical"}, 1), _rule("took", {"train"}, 1),
                              _rule("purchased", {"copy"}, 0)])
    words = {r.target.children[0].label for r in _pruned(grammar, min_count, lexical)}
    assert words == kept
