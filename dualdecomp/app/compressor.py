"""The compression pipeline: a model, a parsed sentence and a length request → a certified compression."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dualdecomp.app.length_request import parse_length
from dualdecomp.app.limits import char_budget_cap, token_limit
from dualdecomp.app.user_components import as_factories, build_components, factory_name
from dualdecomp.core.component import char_budget_taker
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import InputError
from dualdecomp.core.result import Result, json_float
from dualdecomp.data.detokenise import detokenise
from dualdecomp.data.locations import default_model_dir
from dualdecomp.data.parsing import parse_text, parse_tokens, tokenise_text
from dualdecomp.data.sentence import Sentence
from dualdecomp.engine.decoders import DEFAULT_DECODER, get_decoder
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.bigram.store import load_model
from dualdecomp.models.configuration import JointModel
from dualdecomp.solvers.bigram.solver import Bigram


@dataclass(frozen=True)
class Compression:
    """A compression of one sentence and its certificate.

    Attributes
    ----------
    sentence : Sentence
        The parsed source sentence.
    result : Result
        The decoder's result (keep, primal, dual, gap, certified, ...).
    note : str or None
        Set when the decoding differed from the model's full configuration (long-sentence fallback).
    """

    sentence: Sentence
    result: Result
    note: str | None = None

    @property
    def keep(self) -> np.ndarray:
        """bool (n,): kept tokens."""
        return self.result.keep

    @property
    def tokens(self) -> list[str]:
        """The kept tokens."""
        return [t for t, k in zip(self.sentence.tokens, self.result.keep, strict=True) if k]

    @property
    def compression(self) -> str:
        """The kept tokens separated by single spaces."""
        return " ".join(self.tokens)

    @property
    def text(self) -> str:
        """The kept tokens with the original spacing (detokenised)."""
        return detokenise(self.sentence, self.result.keep)

    def to_json(self, timing: bool = True, trace: bool = False) -> dict:
        """The fields of one output line of ``dualdecomp compress`` (docs/architecture.md §3).

        ``timing=False`` leaves out ``seconds``, the only field that differs between identical runs;
        ``trace=True`` adds the decoder's per-iteration ``trace`` (a list of objects).
        """
        r = self.result
        row = {"compression": self.compression, "keep": [int(k) for k in r.keep],
               "primal": json_float(r.primal), "dual": json_float(r.dual), "gap": json_float(r.gap),
               "certified": bool(r.certified)}
        if timing:
            row["seconds"] = round(r.seconds, 6)
        if self.note:
            row["note"] = self.note
        if trace:
            row["trace"] = [step.to_json() for step in r.trace]
        return row


def split_sentences(text: str) -> list[Sentence]:
    """Split raw text into sentences (spaCy's parser) and parse each: ids ``"1"``, ``"2"``, ..., the
    original spacing kept (as a ``--split`` line of a plain-text batch).

    Raises
    ------
    InputError
        A text without tokens or not valid Unicode.
    """
    if not isinstance(text, str):
        raise InputError(f"the text must be a str, not {type(text).__name__} (decode bytes first)")
    pieces = tokenise_text(text, split=True)
    if not pieces:
        raise InputError("empty text: nothing to compress")
    parsed = parse_tokens([toks for toks, _ in pieces], ids=[str(k) for k in range(1, len(pieces) + 1)])
    return [dataclasses.replace(s, spaces=spaces) for s, (_, spaces) in zip(parsed, pieces, strict=True)]


class Compressor:
    """Compress parsed sentences with a trained model.

    Parameters
    ----------
    model : BigramModel or path, optional
        A loaded bigram model, or a model directory: a bigram model (``model.json``) or a
        configuration (``config.json``, see :mod:`dualdecomp.models.configuration.config`). The embedded
        default model when None.
    config : str, optional
        Another configuration of the model directory (``configs/NAME.json``).
    max_tokens : int, optional
        Longest sentence compressed; a longer one is an :class:`InputError` (a per-line error in a batch),
        so memory and time stay bounded. None (the default): the configuration's measured limit (its
        ``"growth"``, :mod:`dualdecomp.models.configuration.growth`), or
        :data:`~dualdecomp.app.limits.DEFAULT_MAX_TOKENS` (300) for a model without one (a bigram model, one
        given in memory, a configuration without ``"growth"``).
    extra_components : callable, str or list of them, optional
        Your own components, added to the configuration's for every sentence and decoded jointly with
        them (certified by dual decomposition as a whole): a factory ``f(sentence) -> component or list of
        components`` over that sentence's tokens, a ``"MODULE:FUNCTION"`` naming one, or a list of those
        (:mod:`dualdecomp.app.user_components`; docs/components/your-own.md gives the shipped potentials'
        scale).

    Attributes
    ----------
    max_tokens : int
        The effective limit: the one asked for; or the default above, lowered to the configuration's own
        ``max_tokens`` when that is smaller (an explicit ``max_tokens`` overrides that cap too).
    token_limit : TokenLimit
        The limit before the configuration's own ``max_tokens``, with its source (for the message).
    requested_max_tokens : int or None
        The ``max_tokens`` argument as given.
    extra_components : tuple of callables
        The factories of ``extra_components``.
    """

    def __init__(self, model: BigramModel | str | os.PathLike[str] | None = None,
                 config: str | None = None, max_tokens: int | None = None,
                 extra_components: object = None) -> None:
        token_limit(max_tokens, None)  # a bad value is refused before the model is loaded
        self.extra_components = as_factories(extra_components)  # refused before the model is loaded too
        if self.extra_components:  # the batch journal's run fingerprint names them (absent otherwise)
            names = [factory_name(f) for f in self.extra_components]
            self.fingerprint = lambda: {"extra_components": names}
        self.requested_max_tokens = max_tokens
        self.joint = None
        self.model = None
        self.directory: Path | None = None  # the model directory (None for a model given in memory)
        self.config_name = config
        if isinstance(model, BigramModel):
            self.model = model
        else:
            directory = Path(model) if model is not None else default_model_dir()
            self.directory = directory
            # lexists: a config.json that is a link or a device goes to the loader, which refuses it
            if config is not None or os.path.lexists(directory / "config.json"):
                self.joint = JointModel(directory, config)
            else:
                self.model = load_model(directory)
        self.decode_options = dict(self.joint.config.decode) if self.joint is not None else {}
        joint_config = self.joint.config if self.joint is not None else None
        label = "the model's config.json" if config is None else f"configuration {config!r}"
        self.token_limit = token_limit(max_tokens, joint_config, label)
        # a configuration's own max_tokens is its default cap; an explicit max_tokens overrides it too
        own = joint_config.max_tokens if joint_config is not None and max_tokens is None else None
        self.max_tokens = self.token_limit.tokens if own is None else min(self.token_limit.tokens, own)

    def check_size(self, n: int) -> None:
        """Raise :class:`InputError` when a sentence of ``n`` tokens is over :attr:`max_tokens`: the joint
        configuration's own ``max_tokens`` (its message), else :attr:`token_limit` (a message naming that
        limit and how to raise it)."""
        if self.joint is not None and self.requested_max_tokens is None:
            self.joint.check_size(n)
        if n > self.token_limit.tokens:
            raise InputError(self.token_limit.message(n))

    def components(self, sentence: Sentence, chars: int | None = None,
                   deadline: Deadline | None = None, extra: object = None) -> tuple[list, str | None]:
        """The decoding components of ``sentence`` and a note when the long-sentence fallback was used.

        The components made by :attr:`extra_components` and by ``extra`` (factories, as for the
        constructor) follow the configuration's. A character budget, if given, is enforced by the first
        component that can (capability ``char_budget``: a bigram path). ``deadline`` is checked between
        the components' potentials."""
        if self.joint is not None:
            comps, note = self.joint.components(sentence, deadline=deadline)
        else:
            comps, note = [Bigram(self.model.potentials(sentence))], None
        factories = self.extra_components + as_factories(extra)
        if factories:
            decoder = self.decode_options.get("decoder", DEFAULT_DECODER)
            comps += build_components(factories, sentence, decoder)
        if chars is not None:
            first = char_budget_taker(comps)
            if first is None:
                raise InputError("this model has no bigram component to enforce a character budget")
            widths = np.array([len(t) for t in sentence.tokens], dtype=np.int64)
            # a budget over the whole sentence's length cannot bind: capping it keeps the DP's
            # O(n * chars) table proportional to the sentence, with the same result
            chars = min(chars, char_budget_cap([len(t) for t in sentence.tokens]))
            comps[first] = comps[first].with_char_budget(widths, chars)
        return comps, note

    def compress(self, sentence: Sentence, length: int | None = None, chars: int | None = None,
                 time_limit: float | None = None, deadline: Deadline | None = None,
                 components: object = None) -> Compression:
        """Compress one sentence, optionally to exactly ``length`` tokens or at most ``chars`` characters.

        Parameters
        ----------
        sentence : Sentence
            The parsed sentence.
        length : int, optional
            Exact number of kept tokens.
        chars : int, optional
            Maximum number of characters of the compression written with one space between kept tokens
            (the ``compression`` field; the detokenised ``text`` is never longer).
        time_limit : float, optional
            Seconds allowed to the sentence: potentials and decoding (and parsing, when the caller
            started ``deadline`` before it). When they run out between two components' potentials a
            :class:`~dualdecomp.core.deadline.TimeLimitError` (a SolverError) is raised; once the
            potentials are done the decoder gets what is left and returns the best compression found so
            far with its gap (``certified`` False unless proved).
        deadline : Deadline, optional
            A deadline already running (e.g. started before parsing); default: ``time_limit`` from now.
        components : callable, str or list of them, optional
            More of your own components for this call only, after :attr:`extra_components` (factories, as
            for the constructor).

        Raises
        ------
        InputError
            When ``length`` is negative or larger than the sentence, ``chars`` is negative, or both are
            given.
        """
        return self.compress_lengths(sentence, [length], chars, time_limit, deadline, components)[0]

    def compress_lengths(self, sentence: Sentence, lengths: Sequence[int | None], chars: int | None = None,
                         time_limit: float | None = None, deadline: Deadline | None = None,
                         components: object = None) -> list[Compression]:
        """Compress one sentence once per requested length (e.g. each reference's), building its
        components (features, potentials) only once. Arguments as in :meth:`compress`; the time limit
        covers the potentials and all the decodings together."""
        for length in lengths:
            if length is not None and not 0 <= length <= sentence.n:
                raise InputError(f"requested length {length} is impossible for a sentence of {sentence.n} "
                                 "tokens")
            if chars is not None and length is not None:
                raise InputError("give either a length or a character budget, not both")
        if chars is not None and (isinstance(chars, bool) or not isinstance(chars, int) or chars < 0):
            raise InputError(f"the character budget must be a non-negative integer, got {chars!r}")
        if sentence.n == 0:
            raise InputError("empty sentence: nothing to compress")
        self.check_size(sentence.n)
        if time_limit is not None and not time_limit > 0:
            raise InputError(f"the time limit must be positive, got {time_limit!r}")
        if deadline is None:
            deadline = Deadline.start(time_limit)
        options = dict(self.decode_options)
        decoder = get_decoder(options.pop("decoder", DEFAULT_DECODER))
        comps, note = self.components(sentence, chars, deadline, components)
        out = []
        for length in lengths:
            if deadline.seconds is not None:
                # what is left (the decoder returns its best compression so far, after one iteration
                # at least, when nothing is)
                options["time_limit"] = max(deadline.remaining(), 1e-9)
            result = decoder(comps, length, options)
            out.append(Compression(sentence, result, note))
        return out

    def compress_text(self, text: str, length: int | None = None, ratio: float | None = None,
                      chars: int | None = None, split: bool = False,
                      components: object = None) -> Compression | list[Compression]:
        """Tokenise and parse raw text with spaCy and compress it.

        Parameters
        ----------
        text : str
            Raw text: one sentence or a short passage, compressed as one unit; with ``split``, a paragraph.
        length : int, optional
            Exact number of kept tokens (of each sentence, with ``split``).
        ratio : float, optional
            Keep round(ratio · n) tokens (0 < ratio <= 1) of each sentence of n tokens.
        chars : int, optional
            At most this many characters (for each sentence, with ``split``).
        split : bool
            Split ``text`` into sentences (spaCy's parser, as ``dualdecomp compress --split``) and compress
            each one on its own.
        components : callable, str or list of them, optional
            More of your own components for this call (factories ``f(sentence) -> component``, as for the
            constructor's ``extra_components``), built for each sentence.

        Returns
        -------
        Compression, or (with ``split``) a list of Compression
            One per sentence, in order, with ids ``"1"``, ``"2"``, ...; each keeps its original spacing.

        Raises
        ------
        InputError
            When ``text`` is not a str (e.g. bytes: decode it first), has no tokens, or the length request
            is invalid.
        """
        if not isinstance(text, str):
            raise InputError(f"compress_text takes a str, not {type(text).__name__} (decode bytes first)")
        spec = parse_length(length=length, ratio=ratio)
        if not split:
            sentence = parse_text(text)
            return self.compress(sentence, spec.for_sentence(sentence.n, 0)[0], chars, components=components)
        return [self.compress(sentence, spec.for_sentence(sentence.n, k)[0], chars, components=components)
                for k, sentence in enumerate(split_sentences(text))]

    def compress_tokens(self, tokens: Sequence[str], length: int | None = None,
                        chars: int | None = None, components: object = None) -> Compression:
        """Parse pre-tokenised text (never re-tokenised) and compress it (``components``: as for
        :meth:`compress_text`)."""

        if not tokens:
            raise InputError("empty sentence: nothing to compress")
        return self.compress(parse_tokens([list(tokens)])[0], length, chars, components=components)
