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
                 "--epochs", "1", "--hope-epochs", "1", "--leave-one-out"])
    assert code == 0
    meta = json.loads((out / "model.json").read_text(encoding="utf-8"))["meta"]
    assert meta["training"]["hope_epochs"] == 1 and [e["epoch"] for e in meta["epochs"]] == [1, 2]
    assert meta["training"]["leave_one_out"] is True
    from dualdecomp.app.rewriter import Rewriter

    result = Rewriter(out).rewrite_text("The river flows through the northern part of the town.")
    assert result.certified and result.rewrite


@pytest.mark.parametrize("option", [["--epochs", "0"], ["--min-count", "0"], ["--lexical-min-count", "0"],
                                    ["--min-sources", "0"],
                                    ["--hope-epochs", "-1"], ["--delete-weight", "-1"],
                                    ["--oracle-head-price", "-0.5"], ["--bigram-loss", "-1"],
                                    ["--add-reward", "-2"],
                                    ["--bigram-add-reward", "-1"]])
def test_train_kind_rewriting_refuses_bad_options(tmp_path, capsys, option):
    code = main(["train", "--kind", "rewriting", "--data", str(tmp_path), "--out", str(tmp_path / "m"),
                 *option])
    assert code == 2
    assert "must be" in capsys.readouterr().err


@pytest.mark.parametrize("weights", [["turkcorpus"], ["turkcorpus=x"], ["turkcorpus=inf"], ["=1"], ["news=1"],
                                     ["asset=1", "asset=2"], ["asset=-1", "turkcorpus=1"],
                                     ["asset=0", "turkcorpus=0"]])
def test_train_kind_rewriting_refuses_bad_loss_set_weights(tmp_path, capsys, weights):
    code = main(["train", "--kind", "rewriting", "--data", str(tmp_path), "--out", str(tmp_path / "m"),
                 "--loss-set-weights", *weights])
    assert code == 2
    err = capsys.readouterr().err
    assert "--loss-set-weights" in err or "reference-set weights" in err
    assert "Traceback" not in err


def test_loss_set_weights_share_each_set_weight_among_its_references():
    from types import SimpleNamespace

    from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings, _loss_shares

    ref = SimpleNamespace
    example = SimpleNamespace(references={"asset": [ref(tokens=["a", "x"]), ref(tokens=["a", "y"])],
                                          "turkcorpus": [ref(tokens=["a", "z"])]})
    settings = RewriteTrainingSettings(data_dir="d", out_dir="o", cache_dir="c",
                                       loss_set_weights=(("asset", 0.25), ("turkcorpus", 0.75)))
    shares = _loss_shares(example, settings)
    assert shares.share("a") == 1.0 and shares.share("x") == pytest.approx(0.125)
    assert shares.share("z") == pytest.approx(0.75)
    only = _loss_shares(example, RewriteTrainingSettings(data_dir="d", out_dir="o", cache_dir="c",
                                                         loss_set_weights=(("turkcorpus", 1.0),)))
    assert only.share("z") == 1.0 and only.share("x") == 0.0


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


def test_leave_one_out_charts_lack_exactly_the_rules_their_own_source_keeps_alive(tmp_path):
    """A source's leave-one-out chart has every rule matching it but those whose count, less the source's
    own occurrences (:func:`rule_occurrences` of its aligned pairs), falls under the pruning threshold;
    the occurrences of all sources add up to the grammar's counts."""
    _need_data_and_lmplz()
    from collections import Counter

    from dualdecomp.data.rewriting import read_rewriting
    from dualdecomp.data.rewriting.parsed import parse_examples
    from dualdecomp.models.rewriting.extraction import rule_occurrences
    from dualdecomp.models.rewriting.model import rules_for
    from dualdecomp.models.rewriting.pipeline import (
        RewriteTrainingSettings,
        _grammar,
        _pairs,
        _rules_without,
        _survives,
    )
    from dualdecomp.solvers.rewriting import RewriteGrammarConfig

    settings = RewriteTrainingSettings(data_dir=str(SHARED_REWRITING), out_dir=str(tmp_path / "m"),
                                       cache_dir=str(tmp_path / "cache"), limit=8, leave_one_out=True)
    examples = parse_examples(read_rewriting(SHARED_REWRITING / "train.jsonl")[:8], settings.reference_sets,
                              cache=tmp_path / "parses.json")
    grammar, _ = _grammar(settings, examples, tmp_path)
    config = RewriteGrammarConfig(**settings.grammar)
    own = [rule_occurrences(_pairs([ex], settings.reference_sets), config) for ex in examples]
    total_extracted, total_paraphrased = Counter(), Counter()
    for extracted, paraphrased in own:
        total_extracted.update(extracted)
        total_paraphrased.update(paraphrased)
    left_out = 0
    for ex, (extracted, paraphrased) in zip(examples, own, strict=True):
        kept = {r.key for r in _rules_without(ex, grammar, settings)}
        for rule in rules_for(grammar, ex.source.tree):
            if rule.origins & {"copy", "delete"}:
                assert rule.key in kept
                continue
            counts = (extracted, total_extracted) if "train" in rule.origins else (paraphrased,
                                                                                  total_paraphrased)
            assert rule.count == counts[1][rule.key]  # the grammar counts what the sources contribute
            alive = rule.count - counts[0].get(rule.key, 0) >= settings.min_count
            assert (rule.key in kept) == alive
            left_out += not alive
    assert left_out > 0  # some rules live on one source's references alone
    assert not _survives(_rule("took", {"train"}, 1), 1, 2, None)
    # --min-sources 2: the extracted rules of fewer than two sources go, lexical paraphrases stay
    from dataclasses import replace

    from dualdecomp.models.rewriting.pipeline import _from_enough_sources

    pruned = {r.key for r in _from_enough_sources(grammar, examples, replace(settings, min_sources=2))}
    dropped = 0
    for rule in grammar:
        kind = 0 if "train" in rule.origins else 1
        sources = sum(1 for occurrences in own if occurrences[kind].get(rule.key, 0))
        exempt = bool(rule.origins & {"copy", "delete", "lexical"})
        assert (rule.key in pruned) == (exempt or sources >= 2)
        dropped += rule.key not in pruned
    assert dropped > 0
