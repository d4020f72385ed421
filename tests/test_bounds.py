"""Bounded memory and time (issue W2.5): --max-tokens, the --chars cap, decompression limits, MemoryError
rows and the per-sentence deadline."""

from __future__ import annotations

import gzip
import json
import zipfile

import numpy as np
import pytest

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.limits import DEFAULT_MAX_TOKENS, char_budget_cap
from dualdecomp.core.deadline import Deadline, TimeLimitError
from dualdecomp.core.errors import InputError, ModelError, SolverError
from dualdecomp.core.model_files import check_npz_size, read_gzip_capped
from dualdecomp.data.parsing import parse_tokens

WORDS = "the minister said on monday that the new rules would apply to every company".split()


@pytest.fixture(scope="module")
def compressor():
    return Compressor()


@pytest.fixture(scope="module")
def sentence():
    return parse_tokens([WORDS])[0]


def test_max_tokens_default_and_error(compressor, sentence):
    # W3.1: the default is the configuration's measured limit (300 only for a model without one)
    assert DEFAULT_MAX_TOKENS == 300 and compressor.max_tokens == compressor.joint.config.growth.max_tokens
    small = Compressor(max_tokens=5)
    with pytest.raises(InputError, match="--max-tokens 5"):
        small.compress(sentence)
    with pytest.raises(InputError, match="positive integer"):
        Compressor(max_tokens=0)


def test_long_line_is_an_error_row_and_is_not_parsed(tmp_path, monkeypatch):
    import dualdecomp.app.batch as batch

    parsed_lengths = []
    real = batch.parse_tokens

    def spy(texts, ids=None):
        parsed_lengths.extend(len(t) for t in texts)
        return real(texts, ids=ids)

    monkeypatch.setattr(batch, "parse_tokens", spy)
    inp = tmp_path / "in.jsonl"
    rows_in = [{"id": "a", "text": " ".join(WORDS * 3)}, {"id": "b", "text": " ".join(WORDS)}]
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows_in))
    rows, summary = run_batch(inp, None, Compressor(max_tokens=20), BatchOptions(deterministic=True))
    assert "longer than --max-tokens 20" in rows[0]["error"] and rows[0]["id"] == "a"
    assert "error" not in rows[1] and summary.failed == 1
    assert parsed_lengths == [len(WORDS)]


def test_memory_error_is_that_lines_error_row(tmp_path):
    class Exhausted(Compressor):
        def compress_lengths(self, sentence, lengths, chars=None, time_limit=None, deadline=None):
            if sentence.n > 5:
                raise MemoryError
            return super().compress_lengths(sentence, lengths, chars, time_limit, deadline)

    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in [{"id": "big", "text": " ".join(WORDS)},
                                                         {"id": "ok", "text": " ".join(WORDS[:4])}]))
    rows, summary = run_batch(inp, tmp_path / "out.jsonl", Exhausted(), BatchOptions(deterministic=True))
    assert rows[0]["error"].startswith("out of memory") and "error" not in rows[1]
    assert summary.lines == 2 and summary.failed == 1


def test_chars_budget_is_capped_by_the_sentence(compressor, sentence):
    cap = char_budget_cap([len(t) for t in sentence.tokens])
    assert cap == len(" ".join(sentence.tokens))
    huge = compressor.components(sentence, chars=10 ** 9)[0][0]
    capped = compressor.components(sentence, chars=cap)[0][0]
    assert huge.budget == capped.budget < 10 ** 9
    a = compressor.compress(sentence, chars=10 ** 9)
    b = compressor.compress(sentence, chars=cap)
    assert np.array_equal(a.keep, b.keep) and a.result.primal == b.result.primal


def test_gzip_is_decompressed_with_a_cap(tmp_path):
    path = tmp_path / "g.json.gz"
    path.write_bytes(gzip.compress(b"x" * 100_000))
    assert len(read_gzip_capped(path, limit=100_000)) == 100_000
    with pytest.raises(ModelError, match="decompresses to more than 99999 bytes"):
        read_gzip_capped(path, limit=99_999)
    path.write_bytes(gzip.compress(b"x" * 1000)[:-30])
    with pytest.raises(ModelError, match="truncated|corrupted"):
        read_gzip_capped(path)


def test_npz_declared_size_is_capped(tmp_path):
    from dualdecomp.core.model_files import read_sparse_weights

    path = tmp_path / "weights.npz"
    np.savez_compressed(path, indices=np.arange(1000, dtype=np.int64), values=np.ones(1000))
    check_npz_size(path, limit=100_000)
    with pytest.raises(ModelError, match="more than the 1000 allowed"):
        check_npz_size(path, limit=1000)
    assert read_sparse_weights(path, 1024).sum() == 999  # index 0 is the padding feature
    with zipfile.ZipFile(path) as zf:
        assert sum(i.file_size for i in zf.infolist()) > 1000


def test_deadline():
    assert Deadline.start(None).remaining() is None and not Deadline.start(None).expired()
    with pytest.raises(TimeLimitError, match="while parsing"):
        Deadline(0.5, 0.0).check("parsing")
    assert issubclass(TimeLimitError, SolverError)


@pytest.mark.parametrize(("config", "second"), [(None, "neural"), ("mcdonald-lm", "lm")])
def test_time_limit_covers_the_potentials(sentence, config, second):
    # the expired deadline stops before the configuration's second component's potentials
    comp = Compressor(config=config)
    with pytest.raises(TimeLimitError, match=rf"computing the potentials \(before the {second} comp"):
        comp.compress(sentence, deadline=Deadline(0.5, 0.0))
    assert comp.compress(sentence, time_limit=30).result.keep.shape == (sentence.n,)


def test_after_the_potentials_the_decoder_gets_what_is_left(sentence):
    # one bigram component (its potentials check no deadline; the lm and dependency ones do, see
    # tests/test_deadline_potentials.py): an expired deadline still gives the first primal
    out = Compressor(config="mcdonald").compress(sentence, length=5, deadline=Deadline(0.5, 0.0))
    assert int(out.keep.sum()) == 5 and np.isfinite(out.result.primal)


def test_cli_text_time_limit_is_exit_4_when_it_runs_out_before_decoding(capsys, monkeypatch):
    import dualdecomp.core.deadline as dl
    from dualdecomp.app.cli import main

    clock = iter(range(0, 10 ** 6, 1000))  # every call 1000 s later
    monkeypatch.setattr(dl, "monotonic", lambda: float(next(clock)))
    assert main(["compress", "--time-limit", "1", "a b c"]) == 4
    assert "ran out while parsing" in capsys.readouterr().err


def test_out_of_memory_while_parsing_a_chunk_is_that_lines_error(monkeypatch, tmp_path):
    """A MemoryError in spaCy's chunk parse: the chunk is parsed line by line and only the line that still
    runs out of memory gets an error row; the batch goes on."""
    from dualdecomp.app import batch
    from dualdecomp.app.batch import BatchOptions, run_batch
    from dualdecomp.app.compressor import Compressor

    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "text": "Short line ."}\n{"id": "b", "text": "This one blows up ."}\n'
                      '{"id": "c", "text": "Another short one ."}\n')
    real = batch.parse_tokens

    def fragile(token_lists, ids=None, **kwargs):
        token_lists = [list(t) for t in token_lists]
        if len(token_lists) > 1 or token_lists[0][1] == "one":
            raise MemoryError
        return real(token_lists, ids=ids, **kwargs)

    monkeypatch.setattr(batch, "parse_tokens", fragile)
    rows, summary = run_batch(source, tmp_path / "out.jsonl", Compressor(), BatchOptions(deterministic=True))
    assert [("error" in r) for r in rows] == [False, True, False]
    assert "out of memory parsing this line" in rows[1]["error"]
    assert summary.failed == 1 and summary.exit_code == 4
