"""Training sentences for the neural scorer: tokens and a keep target per token.

Sources (``../shared/data`` and the vendored ``data/corpora``):

* the Google training portion (``google/train180k.tsv.gz``, ``google/train20k-b.tsv.gz``): tab-separated
  tokens and 0/1 keep labels, lowercased, digits as ``##`` and rare words as ``<unk>``;
* JSONL corpora (``google/eval.train.jsonl``, the Clarke & Lapata train files): cased text and one or
  more gold compressions; the target of a token is the fraction of the compressions that keep it
  (three annotators for broadcast news: 0, 1/3, 2/3 or 1).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dualdecomp.core.errors import InputError
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import read_corpus

__all__ = ["Example", "read_examples", "read_google_tsv", "read_jsonl_examples", "sample_examples",
           "sample_indices"]


@dataclass(frozen=True)
class Example:
    """One training sentence.

    Attributes
    ----------
    words : tuple of str
        The tokens.
    target : numpy.ndarray
        float64 (n,) in [0, 1]: the probability that each token is kept.
    source : str
        The file it came from (its name).
    """

    words: tuple[str, ...]
    target: np.ndarray
    source: str


def read_google_tsv(path: str | os.PathLike[str]) -> Iterator[Example]:
    """The sentences of a Google training file (``tokens<TAB>labels<TAB>...``, gzip or plain).

    Raises
    ------
    InputError
        A file that cannot be read (missing, not gzip, not UTF-8), a line without two columns or with
        labels that do not match its tokens.
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    lineno = 0
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 2:
                    raise InputError(f"{path}:{lineno}: expected tokens and labels separated by a tab")
                words, labels = cols[0].split(), cols[1].split()
                if not words or len(words) != len(labels) or any(x not in ("0", "1") for x in labels):
                    raise InputError(f"{path}:{lineno}: {len(words)} tokens but labels {cols[1][:40]!r}")
                yield Example(tuple(words), np.array([float(x) for x in labels]), path.name)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}:{lineno + 1}: not valid UTF-8: {exc.reason}") from exc
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc


def read_jsonl_examples(path: str | os.PathLike[str]) -> list[Example]:
    """The items of a JSONL corpus with at least one compression; target = mean keep over them."""
    out = []
    for item in read_corpus(path):
        if item.compressions:
            target = np.mean([keep_vector(item.text, c) for c in item.compressions], axis=0)
            out.append(Example(item.text, target.astype(np.float64), Path(path).name))
    return out


def read_examples(path: str | os.PathLike[str]) -> list[Example]:
    """The examples of one file, by its kind (``.tsv``/``.tsv.gz`` Google format, else JSONL)."""
    name = Path(path).name
    if name.endswith((".tsv", ".tsv.gz")):
        return list(read_google_tsv(path))
    return read_jsonl_examples(path)


def sample_indices(count: int, size: int | None, seed: int) -> np.ndarray:
    """The sorted indices of a uniform random subset of ``size`` of ``count`` items (all of them when
    ``size`` is None or larger); :func:`sample_examples` takes these."""
    if size is None or size >= count:
        return np.arange(count)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(count, size=size, replace=False))


def sample_examples(examples: Sequence[Example], size: int | None, seed: int) -> list[Example]:
    """A uniform random subset of ``size`` examples (all of them when ``size`` is None or larger)."""
    return [examples[i] for i in sample_indices(len(examples), size, seed)]
