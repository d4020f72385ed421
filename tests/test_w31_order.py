"""W3.1 item 8: ``dualdecomp order --input`` gives a bad sentence or line its own error row (exit 2 at the
end) and orders the others, instead of stopping the file with an internal error (exit 4).

Run against the code before the fix (/tmp/baseline): every test here but two failed there (the
reproductions exited 4 with "internal error", or stopped at the first bad line with exit 2 and no
rows); the two that passed there check what already held (a file of good lines; UTF-8 in training data).
"""

from __future__ import annotations

import json

import pytest

from dualdecomp.app.cli import main
from dualdecomp.core.errors import InputError
from dualdecomp.data.ordering.reading import read_conllu_examples

GOOD_CONLLU = ("# sent_id = good\n1\tthe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
               "2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n")
FAST = ["--lm-beam", "0", "--lm-weight", "0", "--timeout", "5"]


def _order(path, capsys) -> tuple[int, list[dict], str]:
    code = main(["order", "--input", str(path), *FAST])
    captured = capsys.readouterr()
    return code, [json.loads(line) for line in captured.out.splitlines()], captured.err


def _one_error_between_good_rows(rows: list[dict], bad_id: str) -> dict:
    assert [r["id"] for r in rows] == ["good", bad_id, "good2"]
    assert "error" not in rows[0] and "error" not in rows[2]
    assert rows[0]["complete"] and rows[2]["complete"]
    assert set(rows[1]) == {"id", "error"}
    return rows[1]


def _conllu(tmp_path, bad_block: bytes) -> object:
    path = tmp_path / "in.conllu"
    path.write_bytes(GOOD_CONLLU.encode() + b"\n" + bad_block + b"\n"
                     + GOOD_CONLLU.replace("good", "good2").encode())
    return path


@pytest.mark.parametrize("bad_block, bad_id, message", [
    # a word line with too few columns (was KeyError 'deprel')
    (b"# sent_id = few\n1\tthe\tthe\tDET\n2\tcat\tcat\tNOUN\tNN\t_\t0\troot\t_\t_\n", "few", "DEPREL column"),
    # a head of 5,000 digits (was ValueError from int())
    (b"1\tthe\tthe\tDET\tDT\t_\t" + b"9" * 5000 + b"\tdet\t_\t_\n2\tcat\tcat\tNOUN\tNN\t_\t0\troot\t_\t_\n",
     "in.conllu:2", "not valid CoNLL-U"),
    # bytes that are not UTF-8 (the whole file was refused)
    (b"# sent_id = latin\n1\tcaf\xe9\tcaf\xe9\tNOUN\tNN\t_\t0\troot\t_\t_\n", "in.conllu:2",
     "not valid UTF-8"),
    # a head that is not a number (was an InputError that ended the whole file)
    (b"1\tthe\tthe\tDET\tDT\t_\tx\tdet\t_\t_\n", "in.conllu:2", "not valid CoNLL-U"),
    # a head out of range (was an InputError that ended the whole file)
    (b"# sent_id = range\n1\ta\t_\t_\tDT\t_\t7\t_\t_\t_\n", "range", "out of range"),
])
def test_conllu_bad_sentence_gets_an_error_row(tmp_path, capsys, bad_block, bad_id, message):
    code, rows, err = _order(_conllu(tmp_path, bad_block), capsys)
    assert code == 2
    assert message in _one_error_between_good_rows(rows, bad_id)["error"]
    assert "1 of 3 inputs failed" in err and "internal error" not in err


GOOD = '{"id": "good", "words": ["dog", "the", "barked"]}\n'
GOOD2 = '{"id": "good2", "words": ["cat", "a", "slept"]}\n'


@pytest.mark.parametrize("bad_line, bad_id, message", [
    (b'{"id": "u", "words": ["caf\xe9"]}', "in.jsonl:2", "not valid UTF-8"),
    (b'{"id": "h", "words": ["a", "b"], "heads": [2, ' + b"9" * 5000 + b"]}", "in.jsonl:2", "not JSON"),
    (b'{"id": "deep", "words": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "in.jsonl:2", "not JSON"),
    (b'{"id": "cyc", "words": ["a", "b"], "heads": [2, 1]}', "cyc", "cycle"),
    (b"not json", "in.jsonl:2", "not JSON"),
    (b"[1, 2]", "in.jsonl:2", "JSON object"),
])
def test_jsonl_bad_line_gets_an_error_row(tmp_path, capsys, bad_line, bad_id, message):
    path = tmp_path / "in.jsonl"
    path.write_bytes(GOOD.encode() + bad_line + b"\n" + GOOD2.encode())
    code, rows, err = _order(path, capsys)
    assert code == 2
    assert message in _one_error_between_good_rows(rows, bad_id)["error"]
    assert "internal error" not in err


def test_a_file_of_good_lines_exits_0_without_a_summary(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text(GOOD + "\n" + GOOD2)
    code, rows, err = _order(path, capsys)
    assert code == 0 and [r["id"] for r in rows] == ["good", "good2"] and "failed" not in err


def test_an_id_with_a_lone_surrogate_is_written(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "\\ud800x", "words": ["a", "dog"]}\n')
    code, rows, _ = _order(path, capsys)
    assert code == 0 and rows[0]["id"] == "\\ud800x"


def test_unreadable_input_file_is_one_error(tmp_path, capsys):
    assert main(["order", "--input", str(tmp_path / "missing.jsonl"), *FAST]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "dir.conllu").mkdir()
    assert main(["order", "--input", str(tmp_path / "dir.conllu"), *FAST]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("bad_block, message", [
    (b"1\tthe\tthe\tDET\n", "DEPREL column"),
    (b"1\tthe\tthe\tDET\tDT\t_\t" + b"9" * 5000 + b"\tdet\t_\t_\n", "not valid CoNLL-U"),
    (b"1\tcaf\xe9\tx\tNOUN\tNN\t_\t0\troot\t_\t_\n", "UTF-8"),  # (an InputError before too)
])
def test_training_data_with_a_bad_sentence_is_an_input_error(tmp_path, bad_block, message):
    path = _conllu(tmp_path, bad_block)
    with pytest.raises(InputError, match=message):
        read_conllu_examples(path)
