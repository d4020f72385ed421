"""Words to word pieces for the neural scorer, with the index of each word's first piece.

The scorer reads one score per word from the hidden state of the word's first piece. Words are
normalised as the Google training data were (:func:`dualdecomp.data.normalisation.mask_digits`: a
token with a digit becomes ``##``; the tokenizer lowercases), a word contributes at most
:data:`MAX_PIECES_PER_WORD` pieces (a pathological "word" cannot fill the window), and a sentence
longer than the encoder's window is cut into consecutive
windows at word boundaries, each encoded on its own with its own start and end pieces (``[CLS]`` and
``[SEP]`` for BERT, ``<s>`` and ``</s>`` for MPNet). Training and inference use this one module, so they
see the same pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import JSON_FILE, read_model_bytes
from dualdecomp.data.normalisation import mask_digits

__all__ = ["BERT_SPECIALS", "MAX_PIECES_PER_WORD", "MPNET_SPECIALS", "PieceWindow", "Pieces", "specials_for"]

MAX_PIECES_PER_WORD = 8
"""Pieces kept per word (its first ones); the first piece carries the word's score."""

BERT_SPECIALS = ("[CLS]", "[SEP]", "[UNK]")
"""The start, end and unknown pieces of a BERT word-piece vocabulary."""

MPNET_SPECIALS = ("<s>", "</s>", "<unk>")
"""The start, end and unknown pieces of an MPNet vocabulary."""

SPECIALS = {"bert": BERT_SPECIALS, "mpnet": MPNET_SPECIALS}
"""The special pieces of each model type."""


def specials_for(model_type: str) -> tuple[str, str, str]:
    """The start, end and unknown pieces of an encoder's vocabulary.

    Parameters
    ----------
    model_type : {"bert", "mpnet"}
        The encoder's architecture (:attr:`~dualdecomp.models.neural.encoder.EncoderConfig.model_type`).

    Raises
    ------
    ModelError
        Another model type.
    """
    if model_type not in SPECIALS:
        raise ModelError(f"no special pieces known for model type {model_type!r} "
                         f"(known: {', '.join(SPECIALS)})")
    return SPECIALS[model_type]


UNKNOWN_MARK = "<unk>"
"""How the Google training files mark rare words (read as the tokenizer's unknown piece)."""


@dataclass(frozen=True)
class PieceWindow:
    """One encoder input: piece ids and, for each of its words, the position of its first piece.

    Attributes
    ----------
    ids : numpy.ndarray
        int64 (T,): ``[CLS] pieces... [SEP]`` (or MPNet's ``<s> pieces... </s>``).
    first : numpy.ndarray
        int64 (m,): position in ``ids`` of the first piece of each of the window's m words.
    start : int
        Index, in the sentence, of the window's first word.
    """

    ids: np.ndarray
    first: np.ndarray
    start: int


class Pieces:
    """A word-piece tokenizer (Hugging Face ``tokenizers`` JSON) that splits sentences into windows.

    Parameters
    ----------
    path : path
        ``tokenizer.json`` of the encoder.
    max_pieces : int
        The encoder's window (:attr:`~dualdecomp.models.neural.encoder.EncoderConfig.max_pieces`), the
        start and end pieces included.
    specials : (str, str, str)
        The names of the start, end and unknown pieces (default :data:`BERT_SPECIALS`; see
        :func:`specials_for`).

    Raises
    ------
    ModelError
        The file is missing, refused (:func:`~dualdecomp.core.model_files.open_model_file`: a regular
        file within the cap of a JSON model file), cannot be read as a tokenizer, or it lacks one of
        the special pieces.
    """

    def __init__(self, path: str | Path, max_pieces: int = 512,
                 specials: tuple[str, str, str] = BERT_SPECIALS) -> None:
        try:
            text = read_model_bytes(path, JSON_FILE).decode("utf-8")
        except FileNotFoundError:
            raise ModelError(f"{path}: missing") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelError(f"{path}: not a readable tokenizer.json ({exc})") from None
        try:
            self._tok = Tokenizer.from_str(text)
        except Exception as exc:  # tokenizers raises bare Exception subclasses for malformed files
            raise ModelError(f"{path}: not a readable tokenizer.json ({exc})") from None
        ids = [self._tok.token_to_id(name) for name in specials]
        if any(v is None for v in ids):
            raise ModelError(f"{path}: the tokenizer lacks one of {', '.join(specials)}")
        self.cls_id, self.sep_id, self.unk_id = ids
        self.vocab_size = self._tok.get_vocab_size()
        if max_pieces < MAX_PIECES_PER_WORD + 2:
            raise ModelError(f"the encoder window must hold at least {MAX_PIECES_PER_WORD + 2} pieces")
        self.max_pieces = max_pieces

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        """The piece ids of each (normalised) word, at most :data:`MAX_PIECES_PER_WORD`, at least one."""
        normalised = [mask_digits(w) for w in words]
        enc = self._tok.encode(normalised, is_pretokenized=True, add_special_tokens=False)
        out: list[list[int]] = [[] for _ in words]
        for piece, word in zip(enc.ids, enc.word_ids, strict=True):
            if word is not None and len(out[word]) < MAX_PIECES_PER_WORD:
                out[word].append(piece)
        for k, w in enumerate(words):
            if w == UNKNOWN_MARK or not out[k]:
                out[k] = [self.unk_id]
        return out

    def windows(self, words: Sequence[str]) -> list[PieceWindow]:
        """The encoder inputs of a sentence: consecutive windows of whole words, each within the window.

        Parameters
        ----------
        words : sequence of str
            The sentence's tokens (at least one).

        Returns
        -------
        list of PieceWindow
            Covering the words in order.
        """
        per_word = self.word_pieces(words)
        room = self.max_pieces - 2
        windows: list[PieceWindow] = []
        ids: list[int] = [self.cls_id]
        first: list[int] = []
        start = 0
        for k, pieces in enumerate(per_word):
            if len(ids) - 1 + len(pieces) > room:
                windows.append(self._window(ids, first, start))
                ids, first, start = [self.cls_id], [], k
            first.append(len(ids))
            ids.extend(pieces)
        windows.append(self._window(ids, first, start))
        return windows

    def _window(self, ids: list[int], first: list[int], start: int) -> PieceWindow:
        return PieceWindow(ids=np.asarray([*ids, self.sep_id], dtype=np.int64),
                           first=np.asarray(first, dtype=np.int64), start=start)
