"""The binary T3 grammar file (``save_grammar(..., "x.bin")``): same rules, ids, index and lookups as the
JSON file, lazy decoding, compressed array container (checksum, size cap), damaged files refused."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from dualdecomp.core.array_file import read_array_file, write_array_file
from dualdecomp.core.errors import ModelError
from dualdecomp.data.ptb import read_tree
from dualdecomp.data.trees import reindex
from dualdecomp.models.transducer.extraction import extract_grammar
from dualdecomp.solvers.transducer.frag_codec import narrow
from dualdecomp.solvers.transducer.grammar import (
    Grammar,
    GrammarConfig,
    Rule,
    load_grammar,
    parse_frag,
    save_grammar,
)

SOURCE = ("(S (S (WHNP (RB exactly) (WP what)) (S (NP (NNS records)) (VP (VBD made) (NP (PRP it))))) "
          "(CC and) (S (WHNP (WP which)) (S (NP (NNS ones)) (VP (VBP are) (VP (VBN involved))))))")
TARGET = "(S (WHNP (WP what)) (S (NP (NNS records)) (VP (VBP are) (VP (VBN involved)))))"


def grammar() -> Grammar:
    pair = (read_tree(SOURCE), reindex(read_tree(TARGET), [1, 2, 8, 9]))
    g, failed = extract_grammar([pair], GrammarConfig(depth=2, max_targets=7))
    assert failed == 0
    # words that need escaping or are not ASCII, a deleted word, a count, several kinds
    g.add(Rule(parse_frag('(NN "caf\\u00e9 \\"x\\"")'), parse_frag('(NN "caf\\u00e9 \\"x\\"")'),
               frozenset({"copy", "train"}), 3))
    g.add(Rule(parse_frag('(NP ~"über" @NN)'), parse_frag("@NN"), frozenset({"delete"}), 70000))
    return g


def same(a: Grammar, b: Grammar) -> None:
    assert len(a) == len(b)
    assert list(a.rules) == list(b.rules)  # sources, targets, kinds and counts, by id
    assert a.config == b.config
    for r in a.rules:
        assert a.candidates(r.production()) == b.candidates(r.production())


def test_binary_and_json_files_hold_the_same_grammar(tmp_path):
    g = grammar()
    binary, text = save_grammar(g, tmp_path / "g.bin"), save_grammar(g, tmp_path / "g.json.gz")
    assert binary.read_bytes()[:8] == b"DDARRAY1" and text.read_bytes()[:2] == b"\x1f\x8b"
    same(g, load_grammar(binary))
    same(load_grammar(text), load_grammar(binary))
    same(g, load_grammar(binary, validate=True))
    # the format is told by the content: a binary grammar under another name loads too
    (tmp_path / "renamed.json").write_bytes(binary.read_bytes())
    same(g, load_grammar(tmp_path / "renamed.json"))
    # the same grammar gives the same bytes, also when saved from a loaded (lazily decoded) grammar
    assert save_grammar(load_grammar(binary), tmp_path / "again.bin").read_bytes() == binary.read_bytes()


def test_rules_are_decoded_on_first_use_and_found_by_key(tmp_path):
    g = grammar()
    back = load_grammar(save_grammar(g, tmp_path / "g.bin"))
    assert all(r is None for r in back._rules)
    rule = g.rules[5]
    ids = back.candidates(rule.production())
    assert 5 in ids and ids == g.candidates(rule.production())
    assert sum(r is not None for r in back._rules) == 0  # the index needs no rule decoded
    assert back.find(rule.key) == 5
    assert back.rules[5] == rule
    assert sum(r is not None for r in back._rules) < len(g)
    assert back.find("(S @NP) => (S @XX)") is None
    assert [back.find(r.key) for r in g.rules] == list(range(len(g)))
    # adding to a loaded grammar merges by key, as to a built one
    assert back.add(Rule(rule.source, rule.target, frozenset({"copy"}), 2)) == 5
    assert back.rules[5].count == rule.count + 2 and "copy" in back.rules[5].kinds
    new = Rule(parse_frag('(X "zz")'), parse_frag('(X "zz")'), frozenset({"copy"}))
    assert back.add(new) == len(g) and back.find(new.key) == len(g)


def test_empty_grammar(tmp_path):
    back = load_grammar(save_grammar(Grammar(config=GrammarConfig(depth=0)), tmp_path / "e.bin"))
    assert len(back) == 0 and back.config.depth == 0 and back.find("(A @B) => (A @B)") is None


def test_binary_file_is_compressed_and_checksummed(tmp_path):
    g = grammar()
    path = save_grammar(g, tmp_path / "g.bin")
    raw = path.read_bytes()
    hlen = struct.unpack("<Q", raw[40:48])[0]
    header = json.loads(raw[48:48 + hlen])
    assert header["compression"] == "zlib" and header["payload_bytes"] > len(raw) - 48 - hlen
    for at in (20, 60, len(raw) // 2, len(raw) - 1):
        bad = bytearray(raw)
        bad[at] ^= 1
        path.write_bytes(bytes(bad))
        with pytest.raises(ModelError, match="g.bin"):
            load_grammar(path)
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelError, match="g.bin"):
        load_grammar(path)
    with pytest.raises(ModelError, match="not found"):
        load_grammar(tmp_path / "missing.bin")


def test_array_file_compressed_round_trip_and_size_cap(tmp_path):
    arrays = {"a": np.arange(1000, dtype=np.uint16), "b": np.zeros((3, 2)), "c": narrow([0, 70000]),
              "d": np.zeros(100_000, dtype=np.uint8)}
    for compress in (False, True):
        path = write_array_file(tmp_path / f"{compress}.arr", "f", 2, {"k": 1}, arrays, compress=compress)
        f = read_array_file(path, "f", 2)
        assert f.compressed is compress and f.meta == {"k": 1}
        for k, v in arrays.items():
            assert np.array_equal(f.arrays[k], v) and f.arrays[k].dtype == v.dtype
            assert not f.arrays[k].flags.writeable
    assert (tmp_path / "True.arr").stat().st_size < (tmp_path / "False.arr").stat().st_size
    with pytest.raises(ModelError, match="version"):
        read_array_file(tmp_path / "True.arr", "f", 3)
    # a payload that says it inflates to more than the cap is refused before inflating
    from dualdecomp.core.model_files import FileLimit

    with pytest.raises(ModelError, match="payload size"):
        read_array_file(tmp_path / "True.arr", "f", 2, FileLimit("test", 50_000))


def test_malformed_arrays_are_refused(tmp_path):
    g = grammar()
    good = read_array_file(save_grammar(g, tmp_path / "g.bin"), "dualdecomp-stsg-binary", 1)
    base = {k: np.array(v) for k, v in good.arrays.items()}

    def damaged(name: str, value: np.ndarray) -> None:
        arrays = dict(base, **{name: value})
        write_array_file(tmp_path / "bad.bin", "dualdecomp-stsg-binary", 1, good.meta, arrays, compress=True)
        with pytest.raises(ModelError, match="bad.bin"):
            load_grammar(tmp_path / "bad.bin", validate=True)

    nfrags = len(base["frag_sizes"])
    damaged("source", np.full_like(base["source"], nfrags))
    damaged("kinds", np.zeros_like(base["kinds"]))
    damaged("production", np.roll(base["production"], 1))  # a production that is not its source's
    damaged("frag_sizes", base["frag_sizes"][:-1])
    damaged("counts", base["counts"][:-1])
    damaged("node_labels", base["node_labels"].astype(np.int32))  # signed: not the format
    swapped = base["target"].copy()
    swapped[:] = base["source"]  # targets that do not match their sources
    damaged("target", swapped)


def test_t3_model_directory_writes_the_binary_grammar(tmp_path):
    from dualdecomp.core.model_files import verify_file
    from dualdecomp.models.transducer.model import TransducerModel, load_t3, save_t3

    g = grammar()
    (tmp_path / "grammar.json.gz").write_bytes(b"stale")  # a grammar of the old format is superseded
    save_t3(TransducerModel(g, np.zeros(1 << 8), 8), tmp_path)
    assert (tmp_path / "grammar.bin").is_file() and not (tmp_path / "grammar.json.gz").exists()
    verify_file(tmp_path / "grammar.bin")  # listed in the manifest
    same(g, load_t3(tmp_path).grammar)
    # a directory written before the binary format loads too
    save_grammar(g, tmp_path / "grammar.json.gz")
    (tmp_path / "grammar.bin").unlink()
    (tmp_path / "MANIFEST.json").unlink()
    same(g, load_t3(tmp_path).grammar)
