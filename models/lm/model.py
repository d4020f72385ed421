"""KenLM n-gram language model: token normalisation and the LM potentials of docs/architecture.md §2.

The LMs of this project are estimated (``dualdecomp.models.lm.build``) on text normalised exactly like the
Google compression training data: tokens lowercased, every token containing a digit replaced by ``##``. Rare
words, written ``<unk>`` in that corpus, are represented by the token ``<rare>`` (lmplz reserves
``<unk>``). At query time a word absent from the LM vocabulary is mapped to ``<rare>`` when the LM has
that token, else left to KenLM's own ``<unk>``; the literal tokens ``<unk>``, ``<s>`` and ``</s>`` in an
input are treated as unknown words too (the builder maps them to ``<rare>`` as well).

Positions follow the contracts: 0 is ``<s>``, 1..n the tokens, n+1 is ``</s>``; scores are log10.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Iterable, Sequence
from pathlib import Path

import kenlm
import numpy as np

from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import LM_FILE, open_model_file, verify_file
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.solvers.ngram import PackedTrigram

RARE = "<rare>"
"""The LM token standing for a rare word (the corpus' ``<unk>`` placeholder)."""

SPECIAL_TOKENS = frozenset({"<unk>", "<s>", "</s>"})
"""Input tokens that never denote themselves: they are scored as unknown words."""

_NEG_INF = -math.inf

LOOKUPS_PER_CHECK = 4096
"""KenLM lookups of :meth:`LanguageModel.trigram_rows` between two checks of the sentence's deadline (a
few milliseconds; one check is a ``time.monotonic()`` call)."""


def normalise(tokens: Iterable[str]) -> list[str]:
    """Normalise every token with :func:`normalise_token`.

    Parameters
    ----------
    tokens : iterable of str

    Returns
    -------
    list of str
    """
    return [normalise_token(t) for t in tokens]


class LanguageModel:
    """A KenLM model (ARPA or binary) with the potentials the compression solvers need.

    Parameters
    ----------
    path : str or pathlib.Path
        An ARPA file or a KenLM binary file.
    cased : bool
        The model was estimated on tokens as written (``build_lm_report(..., cased=True)``): queries keep
        each token's case and digits (only the special tokens are unknown words). Default: the
        project's normalisation (lowercase, digits → ``##``).

    Attributes
    ----------
    path : pathlib.Path
        The file the model was loaded from.
    cased : bool
    order : int
        The n-gram order.
    has_rare : bool
        Whether the vocabulary has the ``<rare>`` token (unknown words are then mapped to it).

    Raises
    ------
    ModelError
        If the file is missing, unreadable or not a valid KenLM model.
    """

    def __init__(self, path: str | Path, cased: bool = False) -> None:
        self.path = Path(path)
        self.cased = bool(cased)
        self._model = _load_kenlm(self.path)
        self.order = int(self._model.order)
        self.has_rare = RARE in self._model
        self._context_keys: dict[tuple[str, ...], kenlm.State] = {}

    def __repr__(self) -> str:
        return f"LanguageModel(path={str(self.path)!r}, order={self.order})"

    @property
    def kenlm_model(self) -> kenlm.Model:
        """The loaded ``kenlm.Model`` (for searches that keep KenLM states themselves)."""
        return self._model

    # --- vocabulary ---------------------------------------------------------------------------------

    def __contains__(self, word: str) -> bool:
        """Whether ``word`` (already normalised) is in the LM vocabulary (never true for ``<unk>``)."""
        return word in self._model

    def lm_word(self, token: str) -> str:
        """The word the LM scores for one input token: normalised, unknown words mapped to ``<rare>``.

        Parameters
        ----------
        token : str
            A raw (cased) token.

        Returns
        -------
        str
            ``normalise_token(token)`` if it is in the vocabulary; otherwise ``"<rare>"`` when the LM
            has that token, else the normalised token itself, which KenLM scores as ``<unk>`` (or
            ``"<unk>"`` for ``<unk>``/``<s>``/``</s>``, an empty token or one containing whitespace).
            A cased model (``cased``) keeps the token as written.
        """
        word = token if self.cased else normalise_token(token)
        if word in SPECIAL_TOKENS or word not in self._model:
            if self.has_rare:
                return RARE
            if word in SPECIAL_TOKENS or not word or any(ch.isspace() for ch in word):
                return "<unk>"
        return word

    def lm_words(self, tokens: Iterable[str]) -> list[str]:
        """:meth:`lm_word` of every token.

        Parameters
        ----------
        tokens : iterable of str

        Returns
        -------
        list of str
        """
        return [self.lm_word(t) for t in tokens]

    # --- scores -------------------------------------------------------------------------------------

    def sentence_logprob(self, tokens: Sequence[str]) -> float:
        """log10 probability of a whole sentence, with ``<s>`` and ``</s>``.

        Parameters
        ----------
        tokens : sequence of str
            Raw tokens (normalised and OOV-mapped here).

        Returns
        -------
        float
            Equal to ``kenlm.Model.score(" ".join(self.lm_words(tokens)), bos=True, eos=True)``.
        """
        return self.phrase_logprob(self.lm_words(tokens), ("<s>",), eos=True)

    def phrase_logprob(self, words: Sequence[str], context: Sequence[str] | None = None,
                       eos: bool = False) -> float:
        """log10 probability of LM words after a context, optionally followed by ``</s>``.

        Parameters
        ----------
        words : sequence of str
            LM words (already mapped by :meth:`lm_word`).
        context : sequence of str or None
            None: the null context (a phrase that may not start the sentence: its first word is scored
            as a unigram). Otherwise the LM words before ``words``; a leading ``"<s>"`` is the sentence
            start.
        eos : bool
            Also score ``</s>`` after ``words``.

        Returns
        -------
        float
            With ``context=("<s>",)`` and ``eos=True`` equal to ``kenlm.Model.score(" ".join(words))``.
        """
        model = self._model
        state, out = kenlm.State(), kenlm.State()
        context = tuple(context or ())
        if context[:1] == ("<s>",):
            model.BeginSentenceWrite(state)
            context = context[1:]
        else:
            model.NullContextWrite(state)
        for word in context:
            model.BaseScore(state, word, out)
            state, out = out, state
        total = 0.0
        for word in [*words, "</s>"] if eos else words:
            total += model.BaseScore(state, word, out)
            state, out = out, state
        return total

    def bigram_matrix(self, tokens: Sequence[str]) -> np.ndarray:
        """Bigram potentials of contract 1: log10 p(w_j | w_i) with a one-word context.

        Parameters
        ----------
        tokens : sequence of str
            The n raw tokens of the sentence.

        Returns
        -------
        numpy.ndarray
            float64 of shape (n+2, n+2). For 0 <= i < j <= n+1, entry [i, j] is log10 p(w_j | w_i) where
            w_0 = ``<s>`` (sentence-start context), w_1..w_n the tokens and w_{n+1} = ``</s>``. Entries
            with i >= j are -inf (so column 0 and row n+1 are -inf).
        """
        words = self.lm_words(tokens)
        n = len(words)
        model = self._model
        B = np.full((n + 2, n + 2), _NEG_INF, dtype=np.float64)
        targets = [*words, "</s>"]  # w_1 .. w_{n+1}
        scratch = kenlm.State()
        for i in range(n + 1):
            state = self._begin_state() if i == 0 else self.context_key((words[i - 1],))
            row = B[i]
            for j in range(i + 1, n + 2):
                row[j] = model.BaseScore(state, targets[j - 1], scratch)
        return B

    def trigram_tensor(self, tokens: Sequence[str]) -> np.ndarray:
        """Trigram potentials of contract 2: log10 p(w_c | w_a w_b), as a dense tensor.

        Parameters
        ----------
        tokens : sequence of str
            The n raw tokens of the sentence.

        Returns
        -------
        numpy.ndarray
            float64 of shape (n+2, n+2, n+2). For 0 <= a < b < c <= n+1, T[a, b, c] = log10 p(w_c | w_a w_b)
            (w_0 = ``<s>``, w_{n+1} = ``</s>``); T[0, 0, c] = log10 p(w_c | <s>) for 1 <= c <= n+1 (the
            first kept word, and the empty compression via T[0, 0, n+1]). Every other entry is -inf.

        Notes
        -----
        For a model of order <= 3, the sum of T along a kept sequence (contract 2) equals
        ``sentence_logprob`` of the kept tokens up to floating-point rounding. For a higher order the
        entries use a two-word context only. O(n^3) memory: the decoders use :meth:`trigram_rows`.
        """
        return self.trigram_rows(tokens).dense()

    def trigram_rows(self, tokens: Sequence[str], deadline: Deadline | None = None) -> PackedTrigram:
        """The trigram potentials of :meth:`trigram_tensor`, context-pruned (exact, same numbers).

        The score of w_c after the pair (a, b) depends only on KenLM's state after ``w_a w_b``, so pairs
        with equal states share one row of scores (:class:`~dualdecomp.solvers.ngram.packed.PackedTrigram`):
        memory O(n^2 + S·n) and at most S·n KenLM lookups for S distinct states, instead of O(n^3) for
        both. A row is filled only from the first target its pairs need (c > b), about a third of S·n
        lookups for a sentence whose pairs all have distinct states; the other entries stay -inf.

        Parameters
        ----------
        tokens : sequence of str
            The n raw tokens of the sentence.
        deadline : Deadline, optional
            The sentence's deadline, checked once per first context word ``a`` and, inside its row, after
            every :data:`LOOKUPS_PER_CHECK` KenLM lookups (a row can make O(n²) of them), so the overshoot
            is at most about that many lookups plus one row's fill (n + 1), whatever the length.

        Returns
        -------
        PackedTrigram
            ``rows[ctx[a, b], c]`` = T[a, b, c] of :meth:`trigram_tensor` for every entry the DP reads.

        Raises
        ------
        TimeLimitError
            When ``deadline`` passes during the lookups.
        """
        words = self.lm_words(tokens)
        n = len(words)
        m = n + 2
        model = self._model
        targets = ["<s>", *words, "</s>"]  # targets[k] = w_k
        scratch = kenlm.State()
        states: dict[kenlm.State, int] = {}
        rows: list[np.ndarray] = [np.full(m, _NEG_INF)]  # row 0: the pairs the DP never reads
        filled_from: list[int] = [m]  # row k holds the scores of targets filled_from[k] .. n+1

        def row_of(state: kenlm.State, first: int) -> tuple[int, int]:
            # the DP reads T[a, b, c] only for c > b: fill a row from the first target a pair needs,
            # extending it when a pair with an earlier b shares the state; also returns the lookups made
            k = states.get(state)
            if k is None:
                k = states[state] = len(rows)
                rows.append(np.full(m, _NEG_INF))
                filled_from.append(m)
            done = filled_from[k] - first
            if done > 0:
                row = rows[k]
                for c in range(first, filled_from[k]):
                    row[c] = model.BaseScore(state, targets[c], scratch)
                filled_from[k] = first
            return k, max(done, 0)

        ctx = np.zeros((m, m), dtype=np.int64)
        begin = self._begin_state()
        ctx[0, 0] = row_of(begin, 1)[0]
        # states after the first word of a context: <s> for a = 0, else w_a from a null context
        heads = [begin, *(self.context_key((w,)) for w in words)]
        since_check = 0  # KenLM lookups since the deadline was last checked
        for a in range(0, n + 1):
            stage = f"computing the lm potentials (KenLM lookups, context word {a} of {n})"
            if deadline is not None:
                deadline.check(stage)
                since_check = 0
            head = heads[a]
            for b in range(a + 1, n + 1):
                if deadline is not None and since_check >= LOOKUPS_PER_CHECK:
                    deadline.check(stage)
                    since_check = 0
                pair = kenlm.State()
                model.BaseScore(head, targets[b], pair)
                ctx[a, b], done = row_of(pair, b + 1)
                since_check += done + 1
        return PackedTrigram(np.array(rows), ctx)

    def context_key(self, words: tuple[str, ...]) -> kenlm.State:
        """What the LM reads of a context: KenLM's state after LM words read from the null context.

        KenLM keeps in a state only the last words that some n-gram of the model extends, so two contexts
        with equal keys give every following word the same probability (e.g. "zebra xylophone" and
        "xylophone" when no trigram starts with "zebra xylophone").

        Parameters
        ----------
        words : tuple of str
            LM words (already mapped by :meth:`lm_word`), at most ``order - 1`` of them matter.

        Returns
        -------
        kenlm.State
            Hashable; equal for equivalent contexts.
        """
        key = self._context_keys.get(words)
        if key is None:
            model = self._model
            key, out = kenlm.State(), kenlm.State()
            model.NullContextWrite(key)
            for word in words:
                model.BaseScore(key, word, out)
                key, out = out, key
            if len(self._context_keys) > 1_000_000:
                self._context_keys.clear()
            self._context_keys[words] = key
        return key

    def extended_left(self, words: tuple[str, str], before: Iterable[str]) -> bool:
        """Whether the trigram model has an n-gram ``x w1 w2`` for some ``x`` in ``before``.

        When it has none, ``log p(w2 | x w1) = log p(w2 | w1) + backoff(x w1)`` for every such x: what a
        context x changes in the score of a phrase starting ``w1 w2`` does not depend on w2.

        Parameters
        ----------
        words : tuple of str
            Two LM words ``(w1, w2)``.
        before : iterable of str
            LM words that may precede them (``"<s>"``: the sentence start).

        Returns
        -------
        bool
        """
        first, second = words
        model = self._model
        after_start, out = kenlm.State(), kenlm.State()
        model.BaseScore(self._begin_state(), first, after_start)
        for x in before:
            context = after_start if x == "<s>" else self.context_key((x, first))
            if model.BaseFullScore(context, second, out).ngram_length >= 3:
                return True
        return False

    # --- helpers ------------------------------------------------------------------------------------

    def _begin_state(self) -> kenlm.State:
        state = kenlm.State()
        self._model.BeginSentenceWrite(state)
        return state


def load_lm(path: str | Path, cased: bool = False) -> LanguageModel:
    """Load a KenLM model (ARPA or binary).

    Parameters
    ----------
    path : str or pathlib.Path
    cased : bool
        Whether the model was estimated on tokens as written (:class:`LanguageModel`).

    Returns
    -------
    LanguageModel

    Raises
    ------
    ModelError
        If the file is missing, unreadable or not a valid KenLM model.
    """
    return LanguageModel(path, cased)


def _load_kenlm(path: Path) -> kenlm.Model:
    """Open a KenLM model, turning every failure into a ModelError with a one-line reason."""
    try:
        # a regular file within LM_FILE's cap before KenLM opens it by name (it may be a symlink: an LM is
        # also named on the command line; a model's loader checks the path it names, path_inside)
        with open_model_file(path, LM_FILE, follow_symlinks=True) as fh:
            head = fh.read(64)
    except FileNotFoundError:
        raise ModelError(f"language model not found: {path}") from None
    except OSError as exc:
        raise ModelError(f"cannot read language model {path}: {exc.strerror or exc}") from exc
    if not head:
        raise ModelError(f"language model file is empty: {path}")
    config = kenlm.Config()
    config.show_progress = False
    config.arpa_complain = kenlm.ARPALoadComplain.NONE
    try:
        model = kenlm.Model(str(path), config)
    except MemoryError:
        raise
    except UnicodeDecodeError as exc:
        raise ModelError(f"invalid KenLM model {path}: neither a KenLM binary nor an ARPA text file "
                         f"(not UTF-8 at byte {exc.start} of a line)") from exc
    except Exception as exc:  # KenLM raises OSError, UnicodeDecodeError, RuntimeError, ... on bad files
        raise ModelError(f"invalid or corrupted KenLM model {path}: {_reason(exc)}") from exc
    if int(model.order) < 1:
        raise ModelError(f"invalid KenLM model {path}: order {model.order}")
    _check_binary_vocabulary(path, model)
    verify_file(path)  # after KenLM's own checks: a flipped byte in its tables loads silently
    return model


def _reason(exc: BaseException) -> str:
    """A short reason from a KenLM exception (its messages quote C++ source locations)."""
    text = " ".join(str(exc).split())
    wrapped = re.fullmatch(r"Cannot read model '.*?' \((.*)\)", text)
    if wrapped:
        text = wrapped.group(1)
    thrown = re.search(r" threw \w+(?: because `.*?')?\.\s*(.+)$", text)
    if thrown:
        text = thrown.group(1)
    text = text.strip(" .") or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


# KenLM binary format 5 on little-endian 64-bit machines (lm/binary_format.hh): the Sanity header
# (magic, 0.0f, 1.0f, -0.5f, 1, 0xffffffff, padding, uint64 1), FixedWidthParameters (order at offset 88,
# has_vocabulary at offset 100), then the n-gram counts as uint64 from offset 108. With a vocabulary, the
# file ends with the vocabulary strings, each NUL-terminated, <unk> first (right after the tables, which
# may not end with a NUL).
_BINARY_MAGIC = b"mmap lm http://kheafield.com/code format version 5\n\0"
_SANITY = _BINARY_MAGIC + struct.pack("<4xfffII4xQ", 0.0, 1.0, -0.5, 1, 0xFFFFFFFF, 1)
_ORDER_OFFSET, _HAS_VOCAB_OFFSET, _COUNTS_OFFSET = 88, 100, 108


def _check_binary_vocabulary(path: Path, model: kenlm.Model) -> None:
    """Check that a KenLM binary ends with its whole vocabulary.

    KenLM itself checks the size of the mapped tables but not the vocabulary strings stored after them,
    so a binary truncated by a few bytes would load. Files of another layout are left to KenLM.
    """
    with open_model_file(path, LM_FILE, follow_symlinks=True) as fh:
        header = fh.read(_COUNTS_OFFSET + 8)
        if len(header) < _COUNTS_OFFSET + 8 or header[: len(_SANITY)] != _SANITY:
            return
        if header[_HAS_VOCAB_OFFSET] != 1 or header[_ORDER_OFFSET] != model.order:
            return
        vocab_size = struct.unpack_from("<Q", header, _COUNTS_OFFSET)[0]
        size = fh.seek(0, os.SEEK_END)
        tail_bytes = min(size, 64 * vocab_size + 4096)
        fh.seek(size - tail_bytes)
        tail = fh.read(tail_bytes)
        if tail.count(b"\0") <= vocab_size and tail_bytes < size:
            fh.seek(0)
            tail = fh.read()
    words = tail.split(b"\0")
    complete = len(words) > vocab_size and words[-1] == b"" and words[-1 - vocab_size].endswith(b"<unk>")
    if complete:
        try:
            complete = all(w.decode("utf-8") in model for w in words[-vocab_size:-1])
        except UnicodeDecodeError:
            complete = False
    if not complete:
        raise ModelError(f"corrupted KenLM model {path}: its vocabulary of {vocab_size} words is "
                         "incomplete (truncated file?)")
