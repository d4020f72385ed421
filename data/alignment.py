"""Deletion alignment of a source sentence and its compression.

The alignment is a minimum edit with deletions only: the longest common subsequence of the two token
sequences (compression tokens that cannot be matched are left unaligned). Among the alignments of maximum
size, each compression token is aligned to its *last* possible source occurrence (docs/architecture.md §1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def align(source: Sequence[str], compression: Sequence[str], ignore_case: bool = False) -> list[int | None]:
    """Align each compression token to a source position.

    Parameters
    ----------
    source, compression : sequences of str
        Token sequences.
    ignore_case : bool
        Compare tokens case-insensitively.

    Returns
    -------
    list of int or None
        For each compression token, the 0-based source index it is aligned to (strictly increasing), or
        None when it cannot be aligned.
    """
    src = [t.lower() for t in source] if ignore_case else list(source)
    cmp = [t.lower() for t in compression] if ignore_case else list(compression)
    n, m = len(src), len(cmp)
    # suffix LCS table: L[i, j] = LCS of src[i:] and cmp[j:]
    lcs = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if src[i] == cmp[j]:
                lcs[i, j] = lcs[i + 1, j + 1] + 1
            else:
                lcs[i, j] = max(lcs[i + 1, j], lcs[i, j + 1])
    # Walk from the left; postpone every match while an equally long alignment remains possible later,
    # so each compression token lands on its last possible source occurrence.
    out: list[int | None] = [None] * m
    i = j = 0
    while i < n and j < m:
        if src[i] == cmp[j] and lcs[i, j] == lcs[i + 1, j + 1] + 1 and lcs[i + 1, j] < lcs[i, j]:
            out[j] = i
            i += 1
            j += 1
        elif lcs[i + 1, j] == lcs[i, j]:
            i += 1
        else:
            j += 1
    return out


def keep_vector(source: Sequence[str], compression: Sequence[str]) -> np.ndarray:
    """The bool keep vector (n,) of a deletion compression, by :func:`align`.

    Exact matches are tried first; if some compression tokens stay unaligned, a case-insensitive alignment
    is used when it aligns more tokens.
    """
    links = align(source, compression)
    if any(a is None for a in links):
        loose = align(source, compression, ignore_case=True)
        if sum(a is not None for a in loose) > sum(a is not None for a in links):
            links = loose
    keep = np.zeros(len(source), dtype=bool)
    for a in links:
        if a is not None:
            keep[a] = True
    return keep
