"""Estimate KenLM n-gram models with ``lmplz`` / ``build_binary``, and read corpora into token sentences.

Every token is normalised with :func:`dualdecomp.data.normalisation.normalise_token` (lowercase; a
token with a digit becomes ``##``) and the tokens ``<unk>``, ``<s>`` and ``</s>`` become ``<rare>``
(lmplz reserves them; ``<unk>`` is the Google corpus' placeholder for rare words).
Estimation is modified Kneser-Ney (``lmplz --discount_fallback``); the binary is a KenLM trie, quantised
to 8 bits by default.

The two programs are looked up in this order: the ``lmplz`` argument (a directory holding both, or the
path of ``lmplz`` itself), ``$DUALDECOMP_LMPLZ_DIR``, ``PATH``, ``<repo>/.tools/bin`` (where
``make lmplz`` / ``scripts/build_lmplz.sh`` installs them).
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.locations import CHECKOUT_ROOT
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.models.lm.model import RARE, SPECIAL_TOKENS

TOOLS_BIN = CHECKOUT_ROOT / ".tools" / "bin"
ENV_DIR = "DUALDECOMP_LMPLZ_DIR"
_STDERR_TAIL = 2000


@dataclass(frozen=True)
class LmPrograms:
    """Paths of the two KenLM programs."""

    lmplz: Path
    build_binary: Path


@dataclass(frozen=True)
class BuiltLM:
    """What :func:`build_lm_report` produced.

    Attributes
    ----------
    path : pathlib.Path
        The model file written (binary or ARPA).
    order : int
        n-gram order.
    counts : tuple of int
        Number of n-grams of each order in the estimated model (``counts[0]`` is the vocabulary size,
        including ``<unk>``, ``<s>`` and ``</s>``).
    sentences : int
        Sentences read.
    tokens : int
        Tokens read (without sentence boundaries).
    size_bytes : int
        Size of ``path``.
    seconds : float
        Wall-clock time of the whole build.
    """

    path: Path
    order: int
    counts: tuple[int, ...]
    sentences: int
    tokens: int
    size_bytes: int
    seconds: float

    @property
    def vocabulary_size(self) -> int:
        """Number of unigrams (including ``<unk>``, ``<s>``, ``</s>``)."""
        return self.counts[0]


# --- finding the programs ---------------------------------------------------------------------------


def find_programs(lmplz: str | Path | None = None) -> LmPrograms:
    """Locate ``lmplz`` and ``build_binary``.

    Parameters
    ----------
    lmplz : str or pathlib.Path, optional
        A directory holding both programs, or the path of ``lmplz`` (``build_binary`` is then looked
        for next to it). Default: ``$DUALDECOMP_LMPLZ_DIR``, then ``PATH``, then ``<repo>/.tools/bin``.

    Returns
    -------
    LmPrograms

    Raises
    ------
    ModelError
        If they cannot be found.
    """
    hint = ("run `make lmplz` (or scripts/build_lmplz.sh PREFIX, then put PREFIX/bin on PATH or set "
            f"${ENV_DIR}=PREFIX/bin)")
    if lmplz is not None:
        given = Path(lmplz)
        directory = given if given.is_dir() else given.parent
        found = _programs_in(directory, given if not given.is_dir() else directory / "lmplz")
        if found is None:
            raise ModelError(f"lmplz not found: no executable lmplz and build_binary at {given}; {hint}")
        return found
    env = os.environ.get(ENV_DIR)
    if env:
        found = _programs_in(Path(env), Path(env) / "lmplz")
        if found is None:
            raise ModelError(f"lmplz not found: ${ENV_DIR}={env} holds no executable lmplz and "
                             f"build_binary; {hint}")
        return found
    on_path, bb_on_path = shutil.which("lmplz"), shutil.which("build_binary")
    if on_path and bb_on_path:
        return LmPrograms(Path(on_path), Path(bb_on_path))
    found = _programs_in(TOOLS_BIN, TOOLS_BIN / "lmplz")
    if found is None:
        raise ModelError(f"lmplz not found (not in ${ENV_DIR}, on PATH or in {TOOLS_BIN}): {hint}")
    return found


def _programs_in(directory: Path, lmplz: Path) -> LmPrograms | None:
    build_binary = directory / "build_binary"
    if all(p.is_file() and os.access(p, os.X_OK) for p in (lmplz, build_binary)):
        return LmPrograms(lmplz, build_binary)
    return None


# --- building ---------------------------------------------------------------------------------------


def lm_tokens(tokens: Sequence[str], cased: bool = False) -> list[str]:
    """The tokens written to the lmplz corpus for one sentence.

    Parameters
    ----------
    tokens : sequence of str
        Raw tokens of one sentence.
    cased : bool
        Keep the tokens as written (no lowercasing, no digit masking).

    Returns
    -------
    list of str
        Normalised tokens, with ``<unk>``, ``<s>`` and ``</s>`` replaced by ``<rare>``.

    Raises
    ------
    InputError
        If a token is empty or contains whitespace.
    """
    out = []
    for tok in tokens:
        if not isinstance(tok, str) or not tok or any(ch.isspace() for ch in tok):
            raise InputError(f"invalid token {tok!r}: tokens must be non-empty strings without whitespace")
        word = tok if cased else normalise_token(tok)
        out.append(RARE if word in SPECIAL_TOKENS else word)
    return out


def build_lm(
    sentences: Iterable[Sequence[str]],
    out_path: str | Path,
    order: int = 3,
    prune: Sequence[int] | None = None,
    binary: bool = True,
    quantise: bool = True,
    memory: str = "20%",
    lmplz: str | Path | None = None,
) -> Path:
    """Estimate a modified Kneser-Ney n-gram LM from tokenised sentences.

    Parameters
    ----------
    sentences : iterable of sequences of str
        Tokenised sentences (raw tokens; normalised here, see :func:`lm_tokens`). Empty sentences are
        skipped.
    out_path : str or pathlib.Path
        Where to write the model (atomically: a temporary file in the same directory, then a rename).
    order : int
        n-gram order (2..6 with the default KenLM build).
    prune : sequence of int, optional
        lmplz ``--prune`` thresholds per order (e.g. ``(0, 0, 1)``: drop singleton trigrams);
        non-decreasing, at most ``order`` values, the first must be 0.
    binary : bool
        Write a KenLM binary trie (True) or keep the ARPA file (False).
    quantise : bool
        With ``binary``, quantise probabilities and backoffs to 8 bits (``-q 8 -b 8``).
    memory : str
        lmplz sorting memory (``-S``), e.g. ``"20%"`` or ``"1G"``.
    lmplz : str or pathlib.Path, optional
        Where the KenLM programs are (see :func:`find_programs`).

    Returns
    -------
    pathlib.Path
        ``out_path``.

    Raises
    ------
    InputError
        Bad arguments, invalid tokens or no sentences.
    ModelError
        lmplz or build_binary missing or failing (with the tail of their stderr).
    """
    return build_lm_report(sentences, out_path, order=order, prune=prune, binary=binary,
                           quantise=quantise, memory=memory, lmplz=lmplz).path


def build_lm_report(
    sentences: Iterable[Sequence[str]],
    out_path: str | Path,
    order: int = 3,
    prune: Sequence[int] | None = None,
    binary: bool = True,
    quantise: bool = True,
    memory: str = "20%",
    lmplz: str | Path | None = None,
    cased: bool = False,
) -> BuiltLM:
    """:func:`build_lm`, returning the n-gram counts and corpus statistics too.

    Parameters
    ----------
    sentences, out_path, order, prune, binary, quantise, memory, lmplz
        As for :func:`build_lm`.
    cased : bool
        Estimate on the tokens as written (:func:`lm_tokens`); load the model with ``cased=True``.

    Returns
    -------
    BuiltLM
    """
    start = time.perf_counter()
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= 6:
        raise InputError(f"order must be an integer in 1..6, got {order!r}")
    prune_args = _prune_args(prune, order)
    if not isinstance(memory, str) or not memory.strip():
        raise InputError(f"invalid lmplz memory size {memory!r}")
    out_path = Path(out_path)
    programs = find_programs(lmplz)
    out_dir = out_path.parent if str(out_path.parent) else Path(".")
    if not out_dir.is_dir():
        raise InputError(f"output directory does not exist: {out_dir}")
    if out_path.is_dir():
        raise InputError(f"output path is a directory: {out_path}")

    with tempfile.TemporaryDirectory(prefix="dualdecomp-lm-") as tmp:
        tmpdir = Path(tmp)
        corpus = tmpdir / "corpus.txt"
        n_sent = n_tok = 0
        with corpus.open("w", encoding="utf-8", newline="\n") as fh:
            for sent in sentences:
                if isinstance(sent, str):
                    raise InputError("sentences must be sequences of tokens, not strings")
                words = lm_tokens(sent, cased)
                if words:
                    fh.write(" ".join(words))
                    fh.write("\n")
                    n_sent += 1
                    n_tok += len(words)
        if n_sent == 0:
            raise InputError("no sentences to estimate a language model from")

        arpa = tmpdir / "model.arpa"
        cmd = [str(programs.lmplz), "-o", str(order), "--discount_fallback", "-S", memory,
               "-T", str(tmpdir / "lmplz-"), *prune_args]
        with corpus.open("rb") as stdin, arpa.open("wb") as stdout:
            _run(cmd, "lmplz", stdin=stdin, stdout=stdout)
        counts = arpa_counts(arpa)

        try:
            fd, tmp_name = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_dir)
        except OSError as exc:
            raise InputError(f"cannot write into {out_dir}: {exc.strerror or exc}") from exc
        os.close(fd)
        tmp_out = Path(tmp_name)
        try:
            if binary:
                quant = ["-q", "8", "-b", "8"] if quantise else []
                _run([str(programs.build_binary), "-T", str(tmpdir / "trie-"), *quant, "trie",
                      str(arpa), str(tmp_out)], "build_binary")
            else:
                shutil.copyfile(arpa, tmp_out)
            try:
                tmp_out.chmod(0o644)
                os.replace(tmp_out, out_path)
            except OSError as exc:
                raise InputError(f"cannot write {out_path}: {exc.strerror or exc}") from exc
        finally:
            tmp_out.unlink(missing_ok=True)
    return BuiltLM(path=out_path, order=order, counts=counts, sentences=n_sent, tokens=n_tok,
                   size_bytes=out_path.stat().st_size, seconds=time.perf_counter() - start)


def _prune_args(prune: Sequence[int] | None, order: int) -> list[str]:
    if prune is None:
        return []
    values = list(prune)
    if not values:
        return []
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise InputError(f"prune thresholds must be non-negative integers, got {values}")
    if len(values) > order:
        raise InputError(f"{len(values)} prune thresholds for an order-{order} model")
    if values[0] != 0:
        raise InputError("lmplz cannot prune unigrams: the first prune threshold must be 0")
    if any(b < a for a, b in zip(values, values[1:], strict=False)):
        raise InputError(f"prune thresholds must be non-decreasing, got {values}")
    return ["--prune", *map(str, values)]


def _run(cmd: list[str], name: str, stdin=None, stdout=None) -> None:
    """Run a KenLM program; on failure raise ModelError with the tail of its stderr."""
    try:
        proc = subprocess.run(cmd, stdin=stdin, stdout=stdout if stdout is not None else subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
    except OSError as exc:
        raise ModelError(f"cannot run {name} ({cmd[0]}): {exc}") from exc
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
        raise ModelError(f"{name} failed with exit code {proc.returncode}: {tail}")


def arpa_counts(path: str | Path) -> tuple[int, ...]:
    """The n-gram counts declared in an ARPA file's ``\\data\\`` header.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    tuple of int
        Count of each order, unigrams first.

    Raises
    ------
    ModelError
        If the header is missing or malformed.
    """
    counts: list[int] = []
    with _open_text(Path(path)) as fh:
        in_header = False
        for line in fh:
            line = line.strip()
            if line == "\\data\\":
                in_header = True
            elif in_header and line.startswith("ngram "):
                try:
                    counts.append(int(line.split("=", 1)[1]))
                except (IndexError, ValueError) as exc:
                    raise ModelError(f"{path}: malformed ARPA header line {line!r}") from exc
            elif in_header and (line.startswith("\\") or (counts and not line)):
                break
    if not counts:
        raise ModelError(f"{path}: no ARPA \\data\\ header")
    return tuple(counts)


# --- reading corpora --------------------------------------------------------------------------------


def read_corpus_sentences(path: str | Path) -> Iterator[list[str]]:
    """Read the token sentences of a corpus file, for language-model estimation.

    The format follows the file name (a trailing ``.gz`` is decompressed):

    - ``*.jsonl``: the project format, one object per line with ``"text"`` and optionally
      ``"compressions"`` (space-separated tokens): the text and every compression are yielded;
    - ``*.tsv``: the Google training format, columns tokens, keep labels (``1`` kept, ``0`` deleted),
      POS tags, dependency labels: the sentence and its compression (the kept tokens) are yielded;
    - anything else: plain text, one pre-tokenised (space-separated) sentence per line.

    Blank lines are skipped, as are empty compressions.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    iterator of list of str
        The tokens of each sentence, read lazily.

    Raises
    ------
    InputError
        If the file is missing (at call time), or unreadable or malformed (while iterating; the message
        gives the path and line number).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"corpus file not found: {path}")
    name = path.name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    if base.endswith(".jsonl"):
        parse = _parse_jsonl_line
    elif base.endswith(".tsv"):
        parse = _parse_tsv_line
    else:
        parse = _parse_text_line
    return _read_lines(path, parse)


def _read_lines(path: Path, parse: Callable[[str], Iterator[list[str]]]) -> Iterator[list[str]]:
    lineno = 0
    try:
        with _open_binary(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"{path}:{lineno}: not valid UTF-8 ({exc.reason})") from None
                if not line.strip():
                    continue
                try:
                    yield from parse(line)
                except InputError as exc:
                    raise InputError(f"{path}:{lineno}: {exc}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read corpus {path} (after line {lineno}): {exc}") from exc


def read_corpora_sentences(paths: Iterable[str | Path]) -> Iterator[list[str]]:
    """:func:`read_corpus_sentences` of several files, in order.

    Parameters
    ----------
    paths : iterable of str or pathlib.Path

    Yields
    ------
    list of str
    """
    for path in paths:
        yield from read_corpus_sentences(path)


def _open_binary(path: Path) -> BinaryIO:
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def _open_text(path: Path) -> TextIO:
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8", errors="replace")


def _parse_text_line(line: str) -> Iterator[list[str]]:
    yield line.split()


def _parse_jsonl_line(line: str) -> Iterator[list[str]]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise InputError("a JSONL line must be an object")
    text = obj.get("text")
    if not isinstance(text, str):
        raise InputError('missing or non-string "text"')
    compressions = obj.get("compressions", [])
    if not isinstance(compressions, list) or not all(isinstance(c, str) for c in compressions):
        raise InputError('"compressions" must be a list of strings')
    tokens = text.split()
    if tokens:
        yield tokens
    for comp in compressions:
        comp_tokens = comp.split()
        if comp_tokens:
            yield comp_tokens


def _parse_tsv_line(line: str) -> Iterator[list[str]]:
    cols = line.rstrip("\r\n").split("\t")
    if len(cols) < 2:
        raise InputError(f"expected tab-separated tokens and keep labels, got {len(cols)} column(s)")
    tokens, labels = cols[0].split(), cols[1].split()
    if len(tokens) != len(labels):
        raise InputError(f"{len(tokens)} tokens but {len(labels)} keep labels")
    if any(lab not in ("0", "1") for lab in labels):
        raise InputError("keep labels must be 0 or 1")
    if tokens:
        yield tokens
    kept = [tok for tok, lab in zip(tokens, labels, strict=True) if lab == "1"]
    if kept:
        yield kept
