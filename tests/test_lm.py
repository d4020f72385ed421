"""Tests of the language-model part: normalisation, lmplz builds, exact LM potentials, corpus readers.

These tests need KenLM's lmplz and build_binary (``make lmplz`` puts them in ``<repo>/.tools/bin``; PATH
and ``$DUALDECOMP_LMPLZ_DIR`` work too). They FAIL, not skip, when the programs are missing: CI builds
them.

Note on exactness: ``kenlm.Model.score`` accumulates the per-word log10 probabilities in a C ``float``
(single precision), so it can differ from any float64 sum by ~1e-6. The potentials are therefore compared
to 1e-9 with the float64 sum of ``kenlm.Model.full_scores`` (the same per-word values ``score`` adds up)
and to 1e-4 with ``score`` itself.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
import os
from pathlib import Path

import kenlm
import numpy as np
import pytest

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.models.lm.build import (
    arpa_counts,
    build_lm,
    build_lm_report,
    find_programs,
    lm_tokens,
    read_corpus_sentences,
)
from dualdecomp.models.lm.model import RARE, LanguageModel, load_lm, normalise

REPO = Path(__file__).resolve().parent.parent
WRITTEN = REPO / "data" / "corpora" / "written.train.jsonl"
DEFAULT_LM = REPO / "data" / "default_model" / "lm.binary"
SHARED_GOOGLE = REPO.parent / "shared" / "data" / "google"
MEMORY = "64M"  # lmplz sorting memory for the tiny test corpora (the 20% default is slow to allocate)

SENTENCE = "The 3 Zorblaxian envoys said , in 2013 , that the government of Japan had <unk> nothing .".split()


# --- fixtures -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def programs():
    try:
        return find_programs()
    except ModelError as exc:
        pytest.fail(f"KenLM programs are required for these tests (run `make lmplz`): {exc}")


@pytest.fixture(scope="module")
def written_sentences() -> list[list[str]]:
    """Text and compressions of the first 200 lines of written.train.jsonl."""
    lines = WRITTEN.read_text(encoding="utf-8").splitlines()[:200]
    sentences = []
    for line in lines:
        obj = json.loads(line)
        sentences.append(obj["text"].split())
        sentences.extend(c.split() for c in obj["compressions"] if c.split())
    return sentences


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory, programs, written_sentences) -> Path:
    """Three small LMs: trigram binary, bigram ARPA, trigram binary with a <rare> token."""
    d = tmp_path_factory.mktemp("lms")
    build_lm(written_sentences, d / "tri.binary", order=3, memory=MEMORY)
    build_lm(written_sentences, d / "bi.arpa", order=2, binary=False, memory=MEMORY)
    with_unk = [*written_sentences, "the <unk> said nothing .".split(), "<unk> <unk> of japan".split()]
    build_lm(with_unk, d / "rare.binary", order=3, memory=MEMORY)
    return d


@pytest.fixture(scope="module")
def tri(lm_dir) -> LanguageModel:
    return load_lm(lm_dir / "tri.binary")


@pytest.fixture(scope="module")
def rare(lm_dir) -> LanguageModel:
    return load_lm(lm_dir / "rare.binary")


def _full_sum(model: kenlm.Model, words: list[str]) -> float:
    """float64 sum of KenLM's per-word log10 probabilities, with <s> and </s>."""
    return sum(prob for prob, _, _ in model.full_scores(" ".join(words), bos=True, eos=True))


def _random_keeps(n: int, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    keeps = [np.zeros(n, dtype=bool), np.ones(n, dtype=bool)]
    keeps += [rng.random(n) < rng.uniform(0.1, 0.9) for _ in range(count)]
    return keeps


def _kept_sequence(keep: np.ndarray) -> list[int]:
    return [0, *(int(k) + 1 for k in np.flatnonzero(keep)), len(keep) + 1]


def _trigram_objective(T: np.ndarray, keep: np.ndarray) -> float:
    s = _kept_sequence(keep)
    if len(s) == 2:
        return float(T[0, 0, s[1]])
    return float(T[0, 0, s[1]] + sum(T[s[t - 2], s[t - 1], s[t]] for t in range(2, len(s))))


def _bigram_objective(B: np.ndarray, keep: np.ndarray) -> float:
    s = _kept_sequence(keep)
    return float(sum(B[s[t - 1], s[t]] for t in range(1, len(s))))


# --- normalisation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("token", "expected"), [
    ("Obama", "obama"), ("the", "the"), ("1,500", "##"), ("G8", "##"), ("2013-14", "##"), ("##", "##"),
    ("U.S.", "u.s."), ("ÉCOLE", "école"), ("<unk>", "<unk>"), ("''", "''"), ("3rd", "##"),
])
def test_normalise_token(token, expected):
    assert normalise_token(token) == expected


def test_normalise_list():
    assert normalise(["The", "9", "Cats"]) == ["the", "##", "cats"]
    assert normalise([]) == []


def test_normalisation_is_that_of_google_training_data():
    path = SHARED_GOOGLE / "train20k-b.tsv.gz"
    if not path.is_file():
        pytest.skip(f"shared data not available: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in itertools.islice(fh, 3000):
            tokens = line.split("\t")[0].split()
            assert normalise(tokens) == tokens


def test_lm_tokens_for_building():
    assert lm_tokens(["The", "<unk>", "<s>", "</s>", "1999"]) == ["the", RARE, RARE, RARE, "##"]
    for bad in ("", "a b", "tab\there"):
        with pytest.raises(InputError):
            lm_tokens(["ok", bad])


# --- building -----------------------------------------------------------------------------------------


def test_build_arpa_normalises(lm_dir, tmp_path, programs):
    out = build_lm([["The", "Cat", "sat", "in", "1999", "<unk>", "."], ["the", "dog", "."]],
                   tmp_path / "m.arpa", order=3, binary=False, memory=MEMORY)
    assert out == tmp_path / "m.arpa"
    text = out.read_text(encoding="utf-8")
    assert text.lstrip().startswith("\\data\\")
    unigrams = {line.split("\t")[1] for line in text.split("\\1-grams:")[1].split("\\2-grams:")[0]
                .strip().splitlines()}
    assert {"the", "cat", "##", RARE, "<s>", "</s>", "<unk>"} <= unigrams
    assert "The" not in unigrams and "1999" not in unigrams
    assert arpa_counts(out)[0] == len(unigrams)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.arpa"]  # atomic: no temporary left


def test_build_report_and_binary(tmp_path, written_sentences, programs):
    built = build_lm_report(written_sentences, tmp_path / "lm.bin", order=3, prune=(0, 0, 1), memory=MEMORY)
    assert built.path.is_file() and built.size_bytes == built.path.stat().st_size
    assert built.order == 3 and len(built.counts) == 3
    assert built.sentences == len(written_sentences)
    assert built.tokens == sum(len(s) for s in written_sentences)
    lm = load_lm(built.path)
    assert lm.order == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lm.bin"]


def test_build_rejects_bad_arguments(tmp_path, programs):
    sents = [["a", "b"]]
    with pytest.raises(InputError):
        build_lm(sents, tmp_path / "x", order=0)
    with pytest.raises(InputError):
        build_lm(sents, tmp_path / "x", prune=(1, 1))
    with pytest.raises(InputError):
        build_lm(sents, tmp_path / "x", prune=(0, 2, 1))
    with pytest.raises(InputError):
        build_lm(sents, tmp_path / "x", order=2, prune=(0, 0, 1))
    with pytest.raises(InputError):
        build_lm([[], []], tmp_path / "x")
    with pytest.raises(InputError):
        build_lm(sents, tmp_path / "no" / "such" / "dir" / "x", memory=MEMORY)
    assert not (tmp_path / "x").exists()


def test_build_reports_lmplz_failure(tmp_path, programs):
    with pytest.raises(ModelError, match=r"(?s)lmplz failed.*xyz"):
        build_lm([["a", "b"]], tmp_path / "x", memory="xyz")
    assert list(tmp_path.iterdir()) == []


def test_missing_lmplz_is_a_model_error(tmp_path, monkeypatch):
    with pytest.raises(ModelError, match="lmplz not found"):
        build_lm([["a"]], tmp_path / "x", lmplz=tmp_path / "nothing")
    monkeypatch.setenv("DUALDECOMP_LMPLZ_DIR", str(tmp_path))
    with pytest.raises(ModelError, match="make lmplz"):
        find_programs()


def test_programs_found_by_env_and_argument(programs, monkeypatch):
    directory = programs.lmplz.parent
    assert find_programs(directory).lmplz == programs.lmplz
    assert find_programs(programs.lmplz).build_binary == programs.build_binary
    monkeypatch.setenv("DUALDECOMP_LMPLZ_DIR", str(directory))
    assert find_programs().lmplz == directory / "lmplz"


# --- the potentials -----------------------------------------------------------------------------------


def test_shapes_and_infinities(tri):
    n = len(SENTENCE)
    B, T = tri.bigram_matrix(SENTENCE), tri.trigram_tensor(SENTENCE)
    assert B.shape == (n + 2, n + 2) and B.dtype == np.float64
    assert T.shape == (n + 2, n + 2, n + 2) and T.dtype == np.float64
    i, j = np.indices(B.shape)
    assert np.all(np.isneginf(B[i >= j]))
    assert np.all(np.isfinite(B[i < j])) and np.all(B[i < j] <= 0)
    a, b, c = np.indices(T.shape)
    valid = ((a < b) & (b < c)) | ((a == 0) & (b == 0) & (c >= 1))
    assert np.all(np.isfinite(T[valid])) and np.all(T[valid] <= 0)
    assert np.all(np.isneginf(T[~valid]))


def test_empty_sentence(tri, lm_dir):
    model = kenlm.Model(str(lm_dir / "tri.binary"))
    B, T = tri.bigram_matrix([]), tri.trigram_tensor([])
    assert B.shape == (2, 2) and T.shape == (2, 2, 2)
    expected = _full_sum(model, [])
    assert B[0, 1] == pytest.approx(expected, abs=1e-9)
    assert T[0, 0, 1] == pytest.approx(expected, abs=1e-9)
    assert tri.sentence_logprob([]) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("name", ["tri.binary", "rare.binary"])
def test_trigram_tensor_is_exact(lm_dir, name):
    lm = load_lm(lm_dir / name)
    model = kenlm.Model(str(lm_dir / name))
    T = lm.trigram_tensor(SENTENCE)
    words = lm.lm_words(SENTENCE)
    assert "zorblaxian" not in lm  # OOV words are exercised
    for keep in _random_keeps(len(SENTENCE), 300, seed=1):
        kept = [w for w, k in zip(words, keep, strict=True) if k]
        got = _trigram_objective(T, keep)
        assert got == pytest.approx(_full_sum(model, kept), abs=1e-9)
        assert got == pytest.approx(model.score(" ".join(kept), bos=True, eos=True), abs=1e-4)
        raw = [t for t, k in zip(SENTENCE, keep, strict=True) if k]
        assert lm.sentence_logprob(raw) == pytest.approx(got, abs=1e-9)


def test_bigram_matrix_is_exact_for_a_bigram_model(lm_dir):
    lm = load_lm(lm_dir / "bi.arpa")
    model = kenlm.Model(str(lm_dir / "bi.arpa"))
    assert lm.order == 2
    B = lm.bigram_matrix(SENTENCE)
    words = lm.lm_words(SENTENCE)
    for keep in _random_keeps(len(SENTENCE), 300, seed=2):
        kept = [w for w, k in zip(words, keep, strict=True) if k]
        assert _bigram_objective(B, keep) == pytest.approx(_full_sum(model, kept), abs=1e-9)
    # for a bigram model the trigram tensor reduces to the same potentials
    T = lm.trigram_tensor(SENTENCE)
    n = len(SENTENCE)
    for a, b, c in [(0, 0, 1), (0, 3, 5), (2, 4, n + 1)]:
        assert T[a, b, c] == B[b, c]


def test_bigram_matrix_uses_a_one_word_context(tri, lm_dir):
    model = kenlm.Model(str(lm_dir / "tri.binary"))
    B = tri.bigram_matrix(SENTENCE)
    words = tri.lm_words(SENTENCE)
    n = len(words)
    for i in range(n + 1):
        for j in range(i + 1, n + 2):
            if i == 0 and j == n + 1:
                expected = list(model.full_scores("", bos=True, eos=True))[0][0]
            elif i == 0:
                expected = list(model.full_scores(words[j - 1], bos=True, eos=False))[0][0]
            elif j == n + 1:
                expected = list(model.full_scores(words[i - 1], bos=False, eos=True))[1][0]
            else:
                pair = f"{words[i - 1]} {words[j - 1]}"
                expected = list(model.full_scores(pair, bos=False, eos=False))[1][0]
            assert B[i, j] == pytest.approx(expected, abs=1e-9)


def test_trigram_first_word_row(tri):
    B, T = tri.bigram_matrix(SENTENCE), tri.trigram_tensor(SENTENCE)
    np.testing.assert_array_equal(T[0, 0, 1:], B[0, 1:])


# --- vocabulary and <rare> ----------------------------------------------------------------------------


def test_rare_mapping(rare, tri, lm_dir):
    assert rare.has_rare and not tri.has_rare
    assert RARE in rare
    words = rare.lm_words(["The", "Zorblaxian", "<unk>", "1999", "Japan"])
    assert words == ["the", RARE, RARE, "##", "japan"]
    # without <rare>, unknown words stay (KenLM scores them as <unk>)
    assert tri.lm_words(["The", "Zorblaxian"]) == ["the", "zorblaxian"]
    assert tri.lm_words(["<s>", "</s>", "<unk>", "", "a b"]) == ["<unk>"] * 5
    assert rare.lm_words(["<s>", "</s>", "", "a b"]) == [RARE] * 4
    model = kenlm.Model(str(lm_dir / "tri.binary"))
    assert tri.sentence_logprob(["Zorblaxian"]) == pytest.approx(_full_sum(model, ["<unk>"]), abs=1e-9)
    rmodel = kenlm.Model(str(lm_dir / "rare.binary"))
    assert rare.sentence_logprob(["Zorblaxian", "said"]) == pytest.approx(
        _full_sum(rmodel, [RARE, "said"]), abs=1e-9)
    assert rare.sentence_logprob(["Zorblaxian"]) != pytest.approx(_full_sum(rmodel, ["<unk>"]), abs=1e-6)


# --- loading errors -----------------------------------------------------------------------------------


def _assert_model_error(path: Path) -> None:
    with pytest.raises(ModelError) as info:
        load_lm(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message and "Traceback" not in message


def test_missing_and_bad_files(lm_dir, tmp_path):
    _assert_model_error(tmp_path / "does-not-exist.binary")
    _assert_model_error(tmp_path)  # a directory
    data = (lm_dir / "tri.binary").read_bytes()
    for cut in (100, len(data) // 2, len(data) - 16, len(data) - 1):
        truncated = tmp_path / f"truncated-{cut}.binary"
        truncated.write_bytes(data[:cut])
        _assert_model_error(truncated)
    arpa = (lm_dir / "bi.arpa").read_bytes()
    truncated_arpa = tmp_path / "truncated.arpa"
    truncated_arpa.write_bytes(arpa[: len(arpa) * 2 // 3])
    _assert_model_error(truncated_arpa)
    rng = np.random.default_rng(0)
    for k in range(3):
        garbage = tmp_path / f"garbage-{k}.binary"
        garbage.write_bytes(rng.integers(0, 256, size=50_000 * (k + 1), dtype=np.uint8).tobytes())
        _assert_model_error(garbage)
    text = tmp_path / "text.arpa"
    text.write_text("this is not a language model\n", encoding="utf-8")
    _assert_model_error(text)
    empty = tmp_path / "empty.binary"
    empty.write_bytes(b"")
    _assert_model_error(empty)


def test_unreadable_file(lm_dir, tmp_path, monkeypatch):
    path = tmp_path / "locked.binary"
    path.write_bytes((lm_dir / "tri.binary").read_bytes())
    if os.geteuid() != 0:
        path.chmod(0)
        _assert_model_error(path)
        path.chmod(0o644)

    def refuse(name, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(name))

    # what an unreadable file looks like, even to root (every model file is opened by os.open:
    # dualdecomp.core.model_files.open_model_file)
    monkeypatch.setattr(os, "open", refuse)
    _assert_model_error(path)


# --- the shipped default LM ---------------------------------------------------------------------------


def test_default_lm():
    assert DEFAULT_LM.is_file(), f"{DEFAULT_LM} missing: run dualdecomp lm default"
    assert DEFAULT_LM.stat().st_size <= 25_000_000
    lm = load_lm(DEFAULT_LM)
    assert lm.order == 3
    assert lm.has_rare
    assert "the" in lm and "##" in lm
    good = lm.sentence_logprob("the president said on monday that he would resign .".split())
    bad = lm.sentence_logprob("resign would he that monday on said president the .".split())
    assert math.isfinite(good) and good > bad
    assert (DEFAULT_LM.parent / "LM.md").is_file()


def _fake_data_dir(root: Path) -> Path:
    """A tiny stand-in for the shared data directory, with the four google/ files."""
    google = root / "google"
    google.mkdir(parents=True)
    tsv = ["the cat sat on the mat .\t1 1 1 0 0 0 1\tDT NN VBD IN DT NN .\tdet nsubj ROOT prep det pobj p",
           "a <unk> dog barked at ## cars .\t0 0 1 1 0 0 0 1\tDT JJ NN VBD IN CD NNS .\tx x x x x x x x"]
    for name in ("train180k.tsv.gz", "train20k-b.tsv.gz"):
        (google / name).write_bytes(gzip.compress(("\n".join(tsv) + "\n").encode("utf-8")))
    rows = [{"id": "t1", "text": "The Dog sat on 3 mats .", "compressions": ["The Dog sat ."]}]
    (google / "eval.train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    dev = [{"id": "d1", "text": "The cat barked .", "compressions": ["cat barked ."]}]
    (google / "eval.dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dev), encoding="utf-8")
    return root


def test_default_lm_pipeline(tmp_path, programs):
    from dualdecomp.models.lm.default import build_default_lm

    data = _fake_data_dir(tmp_path / "data")
    built, ppl = build_default_lm(data, tmp_path / "out", memory=MEMORY, log=lambda msg: None)
    assert built.path == tmp_path / "out" / "lm.binary" and built.path.is_file()
    assert built.sentences == 2 * (2 + 2) + 2  # each TSV file: 2 sentences + 2 compressions; JSONL: 2
    lm = load_lm(built.path)
    assert lm.order == 3 and lm.has_rare and "mats" in lm and "barked" in lm
    assert ppl.sentences == 1 and ppl.tokens == 4 and ppl.perplexity > 1
    assert ppl.log10prob == pytest.approx(lm.sentence_logprob("The cat barked .".split()))
    report = (tmp_path / "out" / "LM.md").read_text(encoding="utf-8")
    assert f"{built.vocabulary_size:,}" in report and "eval.dev.jsonl" in report
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["LM.md", "lm.binary"]
    with pytest.raises(ModelError, match="no pruning setting"):
        build_default_lm(data, tmp_path / "small", max_bytes=100, memory=MEMORY, log=lambda msg: None)
    with pytest.raises(InputError, match="missing data file"):
        build_default_lm(tmp_path / "nowhere", tmp_path / "out2", memory=MEMORY, log=lambda msg: None)


def test_lm_default_command_builds_the_default_lm(tmp_path, programs, capsys):
    """``dualdecomp lm default`` (make default-lm) is build_default_lm: the same files, a JSON report."""
    from dualdecomp.app.cli import main
    from dualdecomp.models.lm.default import build_default_lm

    data = _fake_data_dir(tmp_path / "data")
    assert main(["lm", "default", "--data-dir", str(data), "--out-dir", str(tmp_path / "cli"),
                 "--memory", MEMORY, "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    built, ppl = build_default_lm(data, tmp_path / "direct", memory=MEMORY, log=lambda msg: None)
    assert report["path"] == str(tmp_path / "cli" / "lm.binary") and report["bytes"] == built.size_bytes
    assert report["counts"] == list(built.counts) and report["dev_perplexity"] == round(ppl.perplexity, 3)
    assert (tmp_path / "cli" / "lm.binary").read_bytes() == (tmp_path / "direct" / "lm.binary").read_bytes()
    assert main(["lm", "default", "--data-dir", str(tmp_path / "nowhere"), "--out-dir",
                 str(tmp_path / "x"), "--quiet"]) == 2  # missing data: InputError, exit 2


# --- corpus readers -----------------------------------------------------------------------------------


def test_read_plain_text(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("The cat sat .\n\n  a  b\tc \n", encoding="utf-8")
    assert list(read_corpus_sentences(path)) == [["The", "cat", "sat", "."], ["a", "b", "c"]]
    gz = tmp_path / "corpus.txt.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert list(read_corpus_sentences(gz)) == [["The", "cat", "sat", "."], ["a", "b", "c"]]


def test_read_jsonl(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"id": "1", "text": "The cat sat on the mat .",
             "compressions": ["cat sat .", "The cat sat .", ""]},
            {"id": "2", "text": "Hello world"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    assert list(read_corpus_sentences(path)) == [
        "The cat sat on the mat .".split(), ["cat", "sat", "."], ["The", "cat", "sat", "."],
        ["Hello", "world"]]


def test_read_real_jsonl_corpus():
    sentences = list(itertools.islice(read_corpus_sentences(WRITTEN), 2))
    first = json.loads(WRITTEN.read_text(encoding="utf-8").splitlines()[0])
    assert sentences[0] == first["text"].split()
    assert sentences[1] == first["compressions"][0].split()


def test_read_google_tsv(tmp_path):
    lines = ["first warning weather , ##\t1 1 1 0 1\tRB VBG NN , CD\tadvmod amod ROOT p dep",
             "napster is officially dead .\t1 1 0 1 1\tNNP VBZ RB JJ .\tnsubj ROOT advmod acomp p",
             "all gone\t0 0\tDT VBN\tdet ROOT"]
    path = tmp_path / "train.tsv.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    assert list(read_corpus_sentences(path)) == [
        "first warning weather , ##".split(), "first warning weather ##".split(),
        "napster is officially dead .".split(), "napster is dead .".split(),
        ["all", "gone"]]
    plain = tmp_path / "train.tsv"
    plain.write_text(lines[1] + "\n", encoding="utf-8")
    assert len(list(read_corpus_sentences(plain))) == 2


def test_malformed_jsonl_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok ."}\n{"text": "fine"}\n{"text": "broken\n', encoding="utf-8")
    reader = read_corpus_sentences(path)
    assert next(reader) == ["ok", "."]
    with pytest.raises(InputError, match=r"bad\.jsonl:3"):
        list(reader)
    for content in ('{"id": 1}\n', '["text"]\n', '{"text": "a", "compressions": "a"}\n'):
        path.write_text(content, encoding="utf-8")
        with pytest.raises(InputError, match=r"bad\.jsonl:1"):
            list(read_corpus_sentences(path))


def test_malformed_tsv_and_other_errors(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a b c\t1 0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.tsv:1.*3 tokens but 2"):
        list(read_corpus_sentences(path))
    path.write_text("a b\t1 2\n", encoding="utf-8")
    with pytest.raises(InputError, match="keep labels"):
        list(read_corpus_sentences(path))
    path.write_text("a b\n", encoding="utf-8")
    with pytest.raises(InputError, match="column"):
        list(read_corpus_sentences(path))
    with pytest.raises(InputError, match="not found"):
        read_corpus_sentences(tmp_path / "missing.jsonl")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin\.txt:2.*UTF-8"):
        list(read_corpus_sentences(latin))
    broken_gz = tmp_path / "broken.txt.gz"
    words = np.random.default_rng(0).integers(0, 10**6, size=20_000)
    full = gzip.compress("\n".join(map(str, words)).encode("ascii"))
    broken_gz.write_bytes(full[: len(full) // 2])
    with pytest.raises(InputError, match="broken"):
        list(read_corpus_sentences(broken_gz))


# --- CLI ----------------------------------------------------------------------------------------------


def _cli(argv: list[str]) -> int:
    from dualdecomp.app.commands import lm as lm_command

    parser = argparse.ArgumentParser(prog="dualdecomp")
    lm_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_build_and_query(tmp_path, programs, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat .\nthe dog sat on the cat .\n", encoding="utf-8")
    out = tmp_path / "m.arpa"
    assert _cli(["lm", "build", str(corpus), str(WRITTEN), str(out), "--order", "2", "--arpa",
                 "--prune", "0", "1", "--memory", MEMORY]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["order"] == 2 and len(report["counts"]) == 2
    assert out.read_text(encoding="utf-8").lstrip().startswith("\\data\\")
    assert _cli(["lm", "query", str(out), "The 2 cats sat .", "the Zorblaxian"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["tokens"] == ["the", "##", "cats", "sat", "."]
    assert lines[0]["log10prob"] == pytest.approx(load_lm(out).sentence_logprob("The 2 cats sat .".split()))
    assert len(lines) == 2


def test_cli_errors(tmp_path):
    with pytest.raises(InputError):
        _cli(["lm"])
    with pytest.raises(InputError, match="not found"):
        _cli(["lm", "build", str(tmp_path / "missing.jsonl"), str(tmp_path / "out")])
    with pytest.raises(ModelError):
        _cli(["lm", "query", str(tmp_path / "missing.binary"), "text"])


def test_default_paths_point_into_the_checkout():
    """lmplz's folder, the shared data and the default LM are found from a checkout (editable install)."""
    from dualdecomp.app.commands.t3 import DEFAULT_LM as T3_DEFAULT_LM
    from dualdecomp.models.lm import build, default

    assert build.TOOLS_BIN == REPO / ".tools" / "bin"
    assert default.DEFAULT_DATA_DIR == REPO.parent / "shared" / "data"
    assert default.DEFAULT_OUT_DIR == DEFAULT_LM.parent
    assert T3_DEFAULT_LM == DEFAULT_LM and T3_DEFAULT_LM.is_file()
