"""Reading CoNLL-U / JSONL for word ordering; bad input gets one clear error line and exit code 2."""

from __future__ import annotations

import json

import pytest

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.inputs import ROOT, OrderingExample, OrderingInput, is_projective
from dualdecomp.data.ordering.reading import (
    read_conllu_examples,
    read_conllu_inputs,
    read_inputs,
    read_jsonl_inputs,
)
from tests.ordering_oracles import FIXTURES


def test_conllu_with_multiword_tokens_empty_nodes_and_comments():
    examples = read_conllu_examples(FIXTURES / "tiny.conllu", limit=2)
    assert examples[0].ident == "t1"
    assert examples[0].words == ("The", "cat", "sat", "on", "the", "mat", ".")
    assert examples[0].heads == (1, 2, ROOT, 5, 5, 2, 2)
    second = examples[1]  # "don't" = do + n't (the range line is skipped); the empty node 5.1 is skipped
    assert second.words == ("We", "do", "n't", "like", "rain", ".")
    assert second.pos == ("PRP", "VBP", "RB", "VB", "NN", ".")
    assert second.heads == (3, 3, 3, ROOT, 3, 3)


def test_conllu_inputs_keep_only_the_given_constraints():
    inputs = read_conllu_inputs(FIXTURES / "tiny.conllu")
    partial = inputs[2]
    assert partial.words == ("dogs", "bark", "loudly")
    assert partial.pos == ("NNS", None, None)
    assert partial.heads == (1, None, 1)
    assert not partial.full_tree and inputs[0].full_tree


def test_jsonl_inputs():
    inputs = read_jsonl_inputs(FIXTURES / "demo.jsonl")
    assert inputs[0].heads == (None,) * 6
    assert inputs[1].heads == (2, 0, ROOT, 2, 2) and inputs[1].pos[0] == "NN"


@pytest.mark.parametrize("name, message", [("cycle.conllu", "cycle"), ("head_range.conllu", "out of range")])
def test_bad_conllu_trees(name, message):
    with pytest.raises(InputError, match=message):
        read_inputs(FIXTURES / name)


@pytest.mark.parametrize("record, message", [
    ({"words": []}, "empty"),
    ({"words": ["a", "b"], "heads": [2, 1]}, "cycle"),
    ({"words": ["a", "b"], "heads": [3, 0]}, "out of range"),
    ({"words": ["a", "b"], "heads": [-1, 0]}, "out of range"),
    ({"words": ["a", "b"], "heads": [0, 0]}, "root"),
    ({"words": ["a"], "heads": [1]}, "own head"),
    ({"words": ["a", "b"], "pos": ["DT"]}, "POS"),
    ({"words": ["a", ""]}, "empty"),
    ({"text": 3}, "required"),
    ({"words": ["\ud800", "dog"]}, "surrogate"),
    ({"words": ["a", "b"], "pos": ["\udc80", None]}, "POS"),
])
def test_bad_jsonl_records(tmp_path, record, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match=message):
        read_jsonl_inputs(path)


def test_empty_bag_is_an_input_error():
    with pytest.raises(InputError, match="empty"):
        OrderingInput((), (), ())


def test_table7_inputs_sample_the_requested_shares_and_keep_the_tree():
    ex = read_conllu_examples(FIXTURES / "tiny.conllu", limit=1)[0]
    for seed in range(5):
        half = ex.as_input(0.5, 0.5, seed)
        assert sorted(half.words) == sorted(ex.words)
        assert sum(p is not None for p in half.pos) == round(0.5 * len(ex))
        assert sum(h is not None for h in half.heads) == round(0.5 * len(ex))
        full = ex.as_input(1.0, 1.0, seed)
        # the shuffled tree is the gold tree: map back through the words' identities
        back = {k: full.words[k] for k in range(len(ex))}
        gold_arcs = {(ex.words[m], ex.words[g]) for m, g in enumerate(ex.heads) if g != ROOT}
        for k, h in enumerate(full.heads):
            if h != ROOT:
                assert (back[k], back[h]) in gold_arcs


def test_projectivity():
    assert is_projective((1, ROOT, 1))
    assert not is_projective((2, 3, ROOT, 2))  # arcs 0->2 and 1->3 cross
    with pytest.raises(InputError):
        OrderingExample(("a", "b"), ("DT", "NN"), (ROOT, ROOT))


@pytest.mark.parametrize("argv, message", [
    (["order", "--input", "tests/fixtures/ordering/cycle.conllu"], "cycle"),
    (["order", "--input", "tests/fixtures/ordering/head_range.conllu"], "out of range"),
    (["order", "--words", "  "], "empty"),
    (["order", "--input", "nonexistent.conllu"], "no such file"),
    (["order", "--input", "x.txt"], "unknown input format"),
    (["order", "--words", "a b", "--lm-weight", "-1"], "--lm-weight"),
    (["order", "--words", "a b", "--lm-weight", "nan"], "--lm-weight"),
    (["order", "--words", "a b", "--tree-beam", "-1"], "--tree-beam"),
    (["order", "--words", "a b", "--exact", "--exact-states", "0"], "--exact-states"),
    (["order", "--words", "a b", "--tree-beam-attachments", "0"], "--tree-beam-attachments"),
])
def test_cli_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err and "Traceback" not in err


def test_cli_missing_model_is_exit_3(capsys, tmp_path):
    assert main(["order", "--model", str(tmp_path), "--words", "a b"]) == 3
    assert "not found" in capsys.readouterr().err


def test_cli_missing_or_invalid_lm_is_exit_3(capsys, tmp_path):
    assert main(["order", "--words", "a b", "--lm", str(tmp_path / "none.binary"), "--lm-weight", "1"]) == 3
    (tmp_path / "bad.arpa").write_text("not an arpa file\n")
    assert main(["order", "--words", "a b", "--lm", str(tmp_path / "bad.arpa"), "--lm-weight", "1"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 2
