"""The neural scorer's training examples: the Google TSV reader and its errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from dualdecomp.core.errors import InputError
from dualdecomp.models.neural.examples import read_examples


def test_google_tsv_gives_tokens_and_keep_labels(tmp_path) -> None:
    path = tmp_path / "train.tsv.gz"
    path.write_bytes(gzip.compress(b"napster is officially dead .\t1 1 0 1 1\tNNP VBZ RB JJ .\n"))
    [example] = read_examples(path)
    assert example.words == ("napster", "is", "officially", "dead", ".")
    assert np.array_equal(example.target, [1.0, 1.0, 0.0, 1.0, 1.0])
    assert example.source == "train.tsv.gz"


@pytest.mark.parametrize("name, content, message", [
    ("missing.tsv.gz", None, r"missing\.tsv\.gz: cannot read: No such file"),
    ("plain.tsv.gz", b"not gzip\t1 1\n", r"plain\.tsv\.gz: cannot read: Not a gzipped file"),
    ("latin.tsv", "caf\xe9 ouvert\t1 1\n".encode("latin-1"), r"latin\.tsv:1: not valid UTF-8"),
    ("short.tsv", b"a b\t1\n", r"short\.tsv:1: 2 tokens but labels"),
])
def test_an_unreadable_training_file_is_an_input_error(tmp_path, name, content, message) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_examples(path)
