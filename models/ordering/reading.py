"""Reading ordering inputs and gold sentences from CoNLL-U (``conllu`` package) or JSONL.

CoNLL-U: multi-word token lines (``3-4``) and empty nodes (``5.1``) are skipped, so the words are the
syntactic words; comments are ignored except ``sent_id``. POS comes from XPOS (the PTB tags the paper
uses), a head from HEAD; ``_`` means "not given". As input, the word order of the file is ignored.

JSONL: one object per line, ``{"id": "...", "words": [...], "pos": [...], "heads": [...]}`` with ``pos``
and ``heads`` optional (``null`` entries mean "not given") and heads 1-based as in CoNLL-U (0 = root);
``"text": "w1 w2 ..."`` may replace ``words``. ``"units": [[3, 1], ...]`` (optional) lists ordered
units, each the 1-based numbers of its words in the order they must appear, contiguously (e.g. base NPs;
``OrderingInput.units``: the heads inside a unit must be given). CoNLL-U gold sentences also keep DEPREL,
from which ``dualdecomp.models.ordering.base_np`` derives base NPs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import conllu

from dualdecomp.core.errors import InputError
from dualdecomp.models.ordering.instance import ROOT, OrderingExample, OrderingInput


def _is_word(token) -> bool:
    return isinstance(token["id"], int)


def _conllu_sentences(path: Path) -> Iterator[conllu.TokenList]:
    try:
        with path.open(encoding="utf-8") as handle:
            yield from conllu.parse_incr(handle)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except conllu.exceptions.ParseException as exc:
        raise InputError(f"{path}: not valid CoNLL-U: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text: {exc}") from None


def _fields(sentence: conllu.TokenList, number: int, path: Path):
    ident = sentence.metadata.get("sent_id", f"{path.name}:{number}")
    tokens = [t for t in sentence if _is_word(t)]
    index = {t["id"]: k for k, t in enumerate(tokens)}
    words, pos, heads, rels = [], [], [], []
    for t in tokens:
        words.append(t["form"])
        rels.append(t["deprel"] if t["deprel"] not in (None, "_") else "")
        tag = t["xpos"] if t["xpos"] not in (None, "_") else None
        pos.append(tag)
        h = t["head"]
        if h is None or h == "_":
            heads.append(None)
        elif h == 0:
            heads.append(ROOT)
        elif h in index:
            heads.append(index[h])
        else:
            raise InputError(f"sentence {ident}: head of word {t['id']} is out of range: {h}")
    return ident, tuple(words), tuple(pos), tuple(heads), tuple(rels)


def read_conllu_examples(path: str | Path, limit: int | None = None) -> list[OrderingExample]:
    """Gold sentences (order, XPOS, tree) from a CoNLL-U file.

    Parameters
    ----------
    path : str or Path
    limit : int, optional
        Read at most this many sentences.

    Returns
    -------
    list of OrderingExample

    Raises
    ------
    InputError
        Missing file, bad CoNLL-U, or a sentence without a complete tree and tags.
    """
    path = Path(path)
    out = []
    for number, sentence in enumerate(_conllu_sentences(path), 1):
        ident, words, pos, heads, rels = _fields(sentence, number, path)
        if not words:
            continue
        out.append(OrderingExample(words, pos, heads, ident, rels))
        if limit is not None and len(out) >= limit:
            break
    return out


def read_conllu_inputs(path: str | Path) -> list[OrderingInput]:
    """Ordering inputs from CoNLL-U: words, with the POS and heads that are given (``_`` = not given)."""
    path = Path(path)
    return [OrderingInput(w, p, h, i) for i, w, p, h, _ in
            (_fields(s, number, path) for number, s in enumerate(_conllu_sentences(path), 1))]


def parse_jsonl_record(record: object, ident: str) -> OrderingInput:
    """One JSONL record as an ``OrderingInput`` (see the module docstring for the format)."""
    if not isinstance(record, dict):
        raise InputError(f"{ident}: a JSON object is expected")
    ident = str(record.get("id", ident))
    words = record.get("words")
    if words is None and isinstance(record.get("text"), str):
        words = record["text"].split()
    if not isinstance(words, list):
        raise InputError(f"{ident}: 'words' (a list) or 'text' (a string) is required")
    n = len(words)
    pos = record.get("pos") or [None] * n
    heads = record.get("heads") or [None] * n
    if not isinstance(pos, list) or not isinstance(heads, list):
        raise InputError(f"{ident}: 'pos' and 'heads' must be lists")
    if len(heads) != n or len(pos) != n:
        raise InputError(f"{ident}: {n} words but {len(pos)} POS tags and {len(heads)} heads")
    zero_based: list[int | None] = []
    for k, h in enumerate(heads):
        if h is None:
            zero_based.append(None)
        elif isinstance(h, bool) or not isinstance(h, int):
            raise InputError(f"sentence {ident}: head of word {k + 1} is not an integer: {h!r}")
        else:
            if h < 0 or h > n:
                raise InputError(f"sentence {ident}: head of word {k + 1} is out of range: {h} (n = {n})")
            zero_based.append(ROOT if h == 0 else h - 1)
    units = record.get("units") or []
    if not isinstance(units, list) or not all(isinstance(u, list) for u in units):
        raise InputError(f"sentence {ident}: 'units' must be a list of lists of word numbers")
    zero_units: list[tuple[int, ...]] = []
    for unit in units:
        for w in unit:
            if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= n:
                raise InputError(f"sentence {ident}: unit word {w!r} is not a word number 1..{n}")
        zero_units.append(tuple(w - 1 for w in unit))
    return OrderingInput(tuple(words), tuple(pos), tuple(zero_based), ident, tuple(zero_units))


def read_jsonl_inputs(path: str | Path) -> list[OrderingInput]:
    """Ordering inputs from a JSONL file (one record per non-empty line)."""
    path = Path(path)
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON: {exc.msg}") from None
        out.append(parse_jsonl_record(record, f"{path.name}:{number}"))
    return out


def read_inputs(path: str | Path) -> list[OrderingInput]:
    """Inputs from ``*.conllu`` or ``*.jsonl`` (by suffix)."""
    path = Path(path)
    if path.suffix == ".conllu":
        return read_conllu_inputs(path)
    if path.suffix in (".jsonl", ".json"):
        return read_jsonl_inputs(path)
    raise InputError(f"{path}: unknown input format (expected .conllu or .jsonl)")
