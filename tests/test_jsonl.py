"""Tests of data/jsonl.py: JSONL reading, the corpus format, atomic writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import CorpusItem, read_corpus, read_jsonl, read_jsonl_numbered, write_jsonl_atomic

CORPORA = Path(__file__).resolve().parent.parent / "data" / "corpora"


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_read_jsonl_skips_blank_lines(tmp_path):
    p = write(tmp_path / "a.jsonl", ['{"a": 1}', "", "   ", '{"b": "é"}'])
    assert list(read_jsonl(p)) == [{"a": 1}, {"b": "é"}]
    assert [n for n, _ in read_jsonl_numbered(p)] == [1, 4]


def test_read_jsonl_invalid_json_names_path_and_line(tmp_path):
    p = write(tmp_path / "bad.jsonl", ['{"a": 1}', '{"a": '])
    with pytest.raises(InputError, match=r"bad\.jsonl:2: invalid JSON"):
        list(read_jsonl(p))


def test_read_jsonl_non_object_line(tmp_path):
    p = write(tmp_path / "list.jsonl", ['{"a": 1}', "[1, 2]"])
    with pytest.raises(InputError, match=r"list\.jsonl:2: expected a JSON object"):
        list(read_jsonl(p))


def test_read_jsonl_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        list(read_jsonl(tmp_path / "nope.jsonl"))


def test_read_jsonl_not_utf8(tmp_path):
    p = tmp_path / "latin.jsonl"
    p.write_bytes(b'{"a": "\xe9"}\n')
    with pytest.raises(InputError, match="UTF-8"):
        list(read_jsonl(p))


def test_read_corpus_fields(tmp_path):
    p = write(tmp_path / "c.jsonl", [
        json.dumps({"id": 7, "doc": "d1", "text": "a b  c", "compressions": ["a c", ""]}),
        json.dumps({"text": "x y"}),
    ])
    items = read_corpus(p)
    assert items[0] == CorpusItem(id="7", text=("a", "b", "c"), compressions=(("a", "c"), ()), doc="d1")
    assert items[1] == CorpusItem(id="2", text=("x", "y"), compressions=(), doc=None)
    assert items[0].n == 3


@pytest.mark.parametrize("row, message", [
    ({"id": "a", "text": ""}, "'text' must be a non-empty string"),
    ({"id": "a", "text": "   "}, "'text' must be a non-empty string"),
    ({"id": "a", "text": 3}, "'text' must be a non-empty string"),
    ({"id": "a", "text": "a b", "compressions": "a"}, "'compressions' must be a list of strings"),
    ({"id": "a", "text": "a b", "compressions": [["a"]]}, "'compressions' must be a list of strings"),
    ({"id": True, "text": "a b"}, "'id' must be a string or an integer"),
    ({"id": [1], "text": "a b"}, "'id' must be a string or an integer"),
    ({"id": "a", "text": "a b", "compressions": ["b a"]}, "not a deletion-only subsequence"),
])
def test_read_corpus_invalid(tmp_path, row, message):
    p = write(tmp_path / "c.jsonl", [json.dumps({"id": "ok", "text": "fine"}), json.dumps(row)])
    with pytest.raises(InputError, match=message) as info:
        read_corpus(p)
    assert "c.jsonl:2" in str(info.value)


def test_read_corpus_duplicate_id(tmp_path):
    p = write(tmp_path / "c.jsonl", ['{"id": "a", "text": "x"}', '{"id": "a", "text": "y"}'])
    with pytest.raises(InputError, match="duplicate id 'a'"):
        read_corpus(p)


def test_corpus_item_validates_tokens():
    with pytest.raises(InputError):
        CorpusItem(id="a", text=())
    with pytest.raises(InputError):
        CorpusItem(id="a", text=("a b",))


@pytest.mark.parametrize("name", ["broadcast.dev", "written.dev", "eval.dev"])
def test_project_corpora_read(name):
    items = read_corpus(CORPORA / f"{name}.jsonl")
    assert items and all(item.compressions for item in items)
    assert {len(item.compressions) for item in items} == ({3} if name.startswith("broadcast") else {1})


def test_write_jsonl_atomic_roundtrip(tmp_path):
    p = tmp_path / "out.jsonl"
    rows = [{"id": "1", "text": "ça va"}, {"id": 2, "keep": [1, 0]}]
    write_jsonl_atomic(p, rows)
    assert list(read_jsonl(p)) == rows
    assert "ça" in p.read_text(encoding="utf-8")
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl"]


def test_write_jsonl_atomic_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "out.jsonl"
    write_jsonl_atomic(p, [{"a": 1}])
    with pytest.raises(InputError, match="cannot serialise"):
        write_jsonl_atomic(p, [{"a": 2}, {"b": object()}])
    assert list(read_jsonl(p)) == [{"a": 1}]
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl"]


def test_write_jsonl_atomic_missing_directory(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        write_jsonl_atomic(tmp_path / "no" / "out.jsonl", [{"a": 1}])


def test_read_jsonl_keeps_unicode_separators_and_accepts_a_bom():
    nasty = Path(__file__).parent / "nasty"
    assert [r["id"] for r in read_jsonl(nasty / "separators.jsonl")] == ["ls", "ps", "nel", "plain"]
    assert [r["id"] for r in read_jsonl(nasty / "bom.jsonl")] == ["first", "second"]


@pytest.mark.parametrize("line", ['{"n": ' + "9" * 4400 + "}", '{"x": ' + "[" * 5000 + "]" * 5000 + "}"])
def test_read_jsonl_long_integer_or_deep_nesting_is_an_input_error(tmp_path, line):
    p = tmp_path / "x.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(InputError, match=r"x.jsonl:1: invalid JSON"):
        list(read_jsonl(p))
