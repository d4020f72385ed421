"""The rewriting pipeline: a rewriting model, a parsed sentence and a budget → a certified rewrite.

:class:`Rewriter` loads a rewriting model directory (the embedded ``data/rewrite_model/`` by default,
built by ``make rewrite-model``; see :mod:`dualdecomp.models.rewriting.model`) and rewrites raw text or
parsed sentences with the exact chart of the rewriting STSG (Cohn & Lapata 2008) and its bigram LM
(:func:`dualdecomp.solvers.rewriting.decode`). A rewrite is **certified** (primal = dual, gap 0: the
chart proves it optimal) unless ``max_states`` pruned a table, when it is labelled ``APPROXIMATE`` and has
no bound (dual and gap None). Budgets: exactly N target words (``length``), at most N characters of the
detokenised rewrite (``chars``) or at most ``floor(R · source characters)`` (``ratio``); a budget no
derivation meets is an :class:`~dualdecomp.core.errors.InputError`.

**Joint decoding** (``Rewriter(joint=NAME)``): the T3+LM dual decomposition of Yao, Wan & Xiao (2014,
§4). Each sentence is decoded by the engine (:func:`dualdecomp.engine.decode.decode`) over the rewriting
chart as a component over the source tokens (:class:`~dualdecomp.solvers.rewriting.RewriteComponent`, its
LM and the budget inside) and the components of a compression configuration (``"config"``: the
directory's ``config.json``, else ``configs/NAME.json`` of ``joint_model``, the embedded compression model
by default) at their configured weights: they must agree on which source tokens are kept. The rewrite's
primal, dual, gap and certificate are the engine's (certified only when it proves the keep vector
optimal); the rewrite is the chart's best derivation with the engine's keep vector.

**Paired punctuation** (on by default; ``DecodeSettings.paired_punctuation``): a sentence whose source
has bracket or quotation pairs (:func:`~dualdecomp.data.punctuation.punctuation_pairs`) is decoded by the
engine over the chart component and :class:`~dualdecomp.solvers.paired.PairedTokens`, so that each pair
is kept whole or dropped whole (a mark counts as kept only when written as itself, not substituted:
``keep_means_copied``); certified when the engine proves it (with joint decoding, the pairs join
the compression configuration's components). A sentence without pairs is decoded by the chart alone.

A :class:`Rewriter` is also a batch processor (:class:`dualdecomp.app.batch.BatchProcessor`): it gives
``dualdecomp rewrite --input`` its rows. The embedded model is trained on ASSET (CC BY-NC 4.0:
non-commercial use only) and TurkCorpus rewrites (NOTICE.md).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np

from dualdecomp.app.journal import model_fingerprint
from dualdecomp.app.limits import token_limit
from dualdecomp.app.safe_text import safe_text
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import DualDecompError, InputError, ModelError, SolverError
from dualdecomp.core.model_files import verify_directory, verify_files
from dualdecomp.core.result import json_float
from dualdecomp.data.detokenise import detokenise
from dualdecomp.data.jsonl import CorpusItem
from dualdecomp.data.locations import default_model_dir, rewrite_model_dir
from dualdecomp.data.parsing import parse_text
from dualdecomp.data.punctuation import punctuation_pairs
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import from_dependency
from dualdecomp.engine.decode import decode
from dualdecomp.models.rewriting.decode_settings import SETTINGS
from dualdecomp.models.rewriting.model import DecodeSettings, RewriteDecoder, load_rewrite_decoder
from dualdecomp.solvers.paired import PairedTokens
from dualdecomp.solvers.rewriting import Budget, Operations, rewrite_text

if TYPE_CHECKING:
    # lazy: for the annotation only (the batch imports this module)
    from dualdecomp.app.batch import BatchOptions
    from dualdecomp.app.compressor import Compressor

__all__ = ["Rewrite", "Rewriter", "make_budget"]

MODEL_FILES = ("model.json", "weights.npz", "grammar.bin", "lm.binary")
"""The files of a rewriting model directory checked against its ``MANIFEST.json`` before loading."""

JOINT_DEFAULT = "config"
"""The ``joint`` name of a compression model directory's own ``config.json``."""


def make_budget(chars: int | None = None, ratio: float | None = None,
                length: int | None = None) -> Budget | None:
    """The budget of one request: at most ``chars`` characters, at most ``floor(ratio · source
    characters)``, exactly ``length`` words, or None (free length).

    Raises
    ------
    InputError
        More than one given, or a value that is not a whole number >= 0 (``chars``, ``length``) or a
        finite number > 0 (``ratio``).
    """
    given = [name for name, v in (("chars", chars), ("ratio", ratio), ("length", length)) if v is not None]
    if len(given) > 1:
        raise InputError(f"give at most one budget, not {' and '.join(given)}")
    for name, v in (("chars", chars), ("length", length)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0):
            raise InputError(f"the {name} budget must be a whole number >= 0, got {v!r}")
    if ratio is not None:
        if isinstance(ratio, bool) or not isinstance(ratio, int | float | np.integer | np.floating) \
                or not math.isfinite(float(ratio)) or not ratio > 0:
            raise InputError(f"the ratio must be a finite number > 0, got {ratio!r}")
        return Budget.ratio(float(ratio))
    if chars is not None:
        return Budget.chars(int(chars))
    if length is not None:
        return Budget.words(int(length))
    return None


@dataclass(frozen=True)
class Rewrite:
    """A rewrite of one sentence and its certificate.

    Attributes
    ----------
    text : str
        The source text (detokenised).
    rewrite : str
        The rewrite, detokenised.
    words : tuple of str
        The rewrite's target words (tokens).
    primal : float
        The derivation's score (rule scores + LM score); joint decoding: the engine's primal, that score
        plus the compression components' scores of the kept source tokens.
    dual : float or None
        The proved upper bound: ``primal`` when certified; None when a beam pruned (no bound); joint
        decoding: the engine's dual bound.
    gap : float or None
        ``dual - primal``: 0 when certified, None otherwise (joint decoding: the engine's gap).
    certified : bool
        The chart (joint decoding: the engine) proved the rewrite optimal under the model(s) and the
        budget.
    seconds : float
        Decoding time (the hypergraph, its scores and the chart; not the parse).
    operations : Operations
        Counts of kept, deleted, substituted, reordered and inserted words.
    method : str
        ``EXACT`` or ``APPROXIMATE``; joint decoding: ``dual decomposition: rewrite chart + NAME``.
    rules : tuple of str
        The rules that fired, top-down (``RewriteRule.key``: source fragment => target fragment | links |
        word links).
    chars : int
        Characters of :attr:`rewrite`.
    limit : int or None
        The budget's limit (words or characters; None at free length).
    """

    text: str
    rewrite: str
    words: tuple[str, ...]
    primal: float
    dual: float | None
    gap: float | None
    certified: bool
    seconds: float
    operations: Operations
    method: str
    rules: tuple[str, ...] = ()
    chars: int = 0
    limit: int | None = None

    def to_json(self, timing: bool = True, rules: bool = False) -> dict:
        """The fields of one output row of ``dualdecomp rewrite`` (without ``id``).

        ``timing=False`` leaves out ``seconds`` (the only field that differs between identical runs);
        ``rules=True`` adds the rules that fired.
        """
        row = {"text": safe_text(self.text), "rewrite": safe_text(self.rewrite),
               "primal": json_float(self.primal),
               "dual": None if self.dual is None else json_float(self.dual),
               "gap": None if self.gap is None else json_float(self.gap),
               "certified": bool(self.certified)}
        if timing:
            row["seconds"] = round(self.seconds, 6)
        row["operations"] = self.operations.as_dict()
        row["method"] = self.method
        if rules:
            row["rules"] = [safe_text(r) for r in self.rules]
        return row


def _item_text(item: CorpusItem) -> str:
    """The source text of a batch item: its tokens with their original spacing (single spaces when the
    input was pre-tokenised)."""
    if item.spaces is None:
        return " ".join(item.text)
    return "".join(t + (" " if s else "") for t, s in zip(item.text, item.spaces, strict=True)).rstrip()


class Rewriter:
    """Rewrite text with a trained rewriting model.

    Parameters
    ----------
    model_dir : path, optional
        A rewriting model directory; the embedded ``data/rewrite_model/`` when None.
    max_states : int, optional
        Beam per vertex table: pruned rewrites are ``APPROXIMATE`` (no bound). None: the model's setting
        (``meta.max_states``; the embedded model's is None: exact, every rewrite certified).
    max_tokens : int, optional
        Longest sentence rewritten (default :data:`~dualdecomp.app.limits.DEFAULT_MAX_TOKENS`); a longer
        one is an :class:`InputError` (a per-line error in a batch).
    joint : str, optional
        Decode jointly (module docstring) with this configuration of ``joint_model``: ``"config"`` its
        ``config.json``, any other name its ``configs/NAME.json``. None (default): the chart alone.
    joint_model : path, optional
        The compression model directory of ``joint`` (default: the embedded compression model).
    lm_scale : float, optional
        Multiplier of the learnt LM weight (None: the model's ``meta.decode`` setting, else 1).
    word_bias : float, optional
        Score added per target word written (None: the model's setting, else 0; > 0 favours longer
        rewrites).
    substitution_bias, insertion_bias : float, optional
        Score added per source word substituted / per target word inserted (None: the model's setting,
        else 0).
    article_agreement : bool, optional
        Forbid "a"/"an" before a word that takes the other article, unless the source has that bigram
        (None: the model's setting, else the default).
    paired_punctuation : bool, optional
        Keep both marks of every bracket or quotation pair of the source, or neither (module docstring;
        None: the model's setting, else the default).
    keep_weight : float, optional
        Weight μ >= 0 of the in-domain keep classifier's term: μ × the centred log-odds of every source
        token written as itself (None: the model's setting, else 0; a model without a keep classifier
        takes only 0). All seven are decode settings: ``dualdecomp.models.rewriting.decode_settings``.

    Raises
    ------
    InputError
        A bad ``max_states``, ``max_tokens``, ``lm_scale``, bias, ``article_agreement``,
        ``paired_punctuation`` or ``keep_weight``; a ``keep_weight`` for a model without a keep
        classifier; an unknown ``joint`` configuration.
    ModelError
        A missing or damaged model directory.
    """

    raw_jsonl = True
    """Batch protocol: a JSONL line's ``text`` is raw text (as in the rewriting corpus), tokenised."""
    config_name = None

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, max_states: int | None = None,
                 max_tokens: int | None = None, joint: str | None = None,
                 joint_model: str | os.PathLike[str] | None = None, lm_scale: float | None = None,
                 word_bias: float | None = None, substitution_bias: float | None = None,
                 insertion_bias: float | None = None, article_agreement: bool | None = None,
                 paired_punctuation: bool | None = None, keep_weight: float | None = None) -> None:
        self.token_limit = token_limit(max_tokens, None)
        self.max_tokens = self.token_limit.tokens
        self.requested_max_tokens = max_tokens
        if max_states is not None and (isinstance(max_states, bool) or not isinstance(max_states, int)
                                       or max_states < 1):
            raise InputError(f"max_states must be a positive integer, got {max_states!r}")
        self.requested_max_states = max_states
        self.requested_settings = (lm_scale, word_bias, substitution_bias, insertion_bias, article_agreement,
                                   paired_punctuation, keep_weight)
        DecodeSettings().replace(*self.requested_settings)  # bad values are input errors before loading
        self.directory = Path(model_dir) if model_dir is not None else rewrite_model_dir()
        self.decoder: RewriteDecoder = self._load(self.directory, max_states, model_dir is None,
                                                  self.requested_settings)
        if joint is None and joint_model is not None:
            raise InputError("a joint model directory needs a joint configuration (joint=NAME)")
        if joint is not None and (not isinstance(joint, str) or not joint):
            raise InputError(f"joint must be a configuration name, got {joint!r}")
        self.joint = joint
        self.joint_directory = (Path(joint_model) if joint_model is not None else default_model_dir()) \
            if joint is not None else None
        self.compressor: Compressor | None = None
        self._joint_fingerprint: str | None = None
        if joint is not None:
            # lazy: the compression pipeline is loaded only for joint decoding
            from dualdecomp.app.compressor import Compressor

            self.compressor = Compressor(self.joint_directory, None if joint == JOINT_DEFAULT else joint)

    @staticmethod
    def _load(d: Path, max_states: int | None, embedded: bool,
              settings: tuple[float | None, ...]) -> RewriteDecoder:
        if not d.is_dir():
            how = " (build the embedded model with `make rewrite-model`)" if embedded else ""
            raise ModelError(f"{d}: no rewriting model directory here{how}")
        verify_directory(d)  # every file its MANIFEST.json lists, before any is read
        verify_files(*(d / name for name in MODEL_FILES))
        try:
            return load_rewrite_decoder(d, max_states, *settings)
        except DualDecompError:
            raise
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:  # e.g. a damaged LM
            raise ModelError(f"{d}: cannot load the rewriting model: {type(exc).__name__}: {exc}") from None

    @property
    def max_states(self) -> int | None:
        """The effective beam (None: exact)."""
        return self.decoder.max_states

    @property
    def licence(self) -> str | None:
        """The model's licence note (``model.json`` → ``meta.licence``)."""
        note = self.decoder.model.meta.get("licence")
        return note if isinstance(note, str) else None

    def check_size(self, n: int) -> None:
        """Raise :class:`InputError` when a sentence of ``n`` tokens is over :attr:`max_tokens`."""
        if n > self.max_tokens:
            raise InputError(self.token_limit.message(n))

    def rewrite_sentence(self, sentence: Sentence, budget: Budget | None = None,
                         deadline: Deadline | None = None) -> Rewrite:
        """Rewrite one parsed sentence (exact unless :attr:`max_states` prunes).

        Parameters
        ----------
        sentence : Sentence
            The parsed sentence (its spacing is the source's).
        budget : Budget, optional
            See :func:`make_budget`.
        deadline : Deadline, optional
            Checked before decoding and after the derivation forest is built (the chart itself is not
            anytime: a rewrite is either found whole or the time limit's error is raised).

        Raises
        ------
        InputError
            An empty or over-long sentence; a budget no derivation meets.
        SolverError
            The beam pruned every derivation that meets the budget; the time limit ran out.
        """
        if sentence.n == 0:
            raise InputError("empty sentence: nothing to rewrite")
        self.check_size(sentence.n)
        if deadline is not None:
            deadline.check("parsing")
        pairs = punctuation_pairs(sentence.tokens) if self.decoder.settings.paired_punctuation else ()
        if self.compressor is not None or pairs:
            return self._rewrite_engine(sentence, budget, deadline, pairs)
        start = perf_counter()
        dec = self.decoder
        hg = dec.hypergraph(from_dependency(sentence))
        if deadline is not None:
            deadline.check("building the derivation forest")
        der = dec.decode(hg, budget)
        seconds = perf_counter() - start
        rules = tuple(str(hg.rule(e).key) for e in der.hyperedges)
        source = detokenise(sentence, np.ones(sentence.n, dtype=bool))
        return Rewrite(text=source, rewrite=rewrite_text(der.words, source),
                       words=tuple(der.words), primal=float(der.score),
                       dual=float(der.score) if der.certified else None,
                       gap=0.0 if der.certified else None, certified=bool(der.certified), seconds=seconds,
                       operations=der.operations, method=der.method, rules=rules, chars=der.chars,
                       limit=der.limit)

    def _rewrite_engine(self, sentence: Sentence, budget: Budget | None, deadline: Deadline | None,
                        pairs: tuple[tuple[int, int], ...]) -> Rewrite:
        """One parsed sentence decoded by the engine (module docstring): the chart with the compression
        configuration's components (joint decoding) and/or the paired punctuation's ``pairs``."""
        if self.compressor is not None:
            self.compressor.check_size(sentence.n)
        start = perf_counter()
        marks = sorted({k for pair in pairs for k in pair})  # kept = written as itself (not substituted)
        chart = self.decoder.component(from_dependency(sentence), budget, copied=marks)
        if deadline is not None:
            deadline.check("building the derivation forest")
        others: list = [PairedTokens(sentence.n, pairs)] if pairs else []
        options: dict = {}
        if self.compressor is not None:
            others = [*self.compressor.components(sentence, deadline=deadline)[0], *others]
            options = dict(self.compressor.decode_options)
            if options.pop("decoder", "dd") != "dd":  # an ILP or beam configuration: the engine's defaults
                options = {}
        if deadline is not None and deadline.seconds is not None:
            options["time_limit"] = max(deadline.remaining(), 1e-9)
        result = decode([chart, *others], **options)
        der = chart.derivation_given(result.keep)  # the chart's best rewrite with the engine's keep
        if der is None or not math.isfinite(result.primal):
            parts = [f"the compression configuration {self.joint!r}"] if self.joint is not None else []
            parts += ["the paired punctuation"] if pairs else []
            raise SolverError("dual decomposition found no rewrite on which the rewriting chart and "
                              + " and ".join(parts) + " agree"
                              + ("" if deadline is None or deadline.seconds is None else " in time"))
        seconds = perf_counter() - start
        hg = chart.hypergraph
        rules = tuple(str(hg.rule(e).key) for e in der.hyperedges)
        source = detokenise(sentence, np.ones(sentence.n, dtype=bool))
        return Rewrite(text=source, rewrite=rewrite_text(der.words, source),
                       words=tuple(der.words), primal=float(result.primal), dual=float(result.dual),
                       gap=float(result.gap), certified=bool(result.certified), seconds=seconds,
                       operations=der.operations, method=self.engine_method(bool(pairs)), rules=rules,
                       chars=der.chars, limit=der.limit)

    def engine_method(self, paired: bool) -> str:
        """The ``method`` of a rewrite decoded by the engine (joint decoding, and ``paired``: with the
        paired punctuation)."""
        parts = ([self.joint] if self.joint is not None else []) + (["paired punctuation"] if paired else [])
        return "dual decomposition: rewrite chart + " + " + ".join(parts)

    def rewrite_text(self, text: str, chars: int | None = None, ratio: float | None = None,
                     length: int | None = None) -> Rewrite:
        """Tokenise and parse raw text with spaCy and rewrite it.

        Parameters
        ----------
        text : str
            Raw text (one sentence, rewritten as one unit).
        chars : int, optional
            At most this many characters of the detokenised rewrite.
        ratio : float, optional
            At most ``floor(ratio · source characters)`` characters.
        length : int, optional
            Exactly this many target words.

        Raises
        ------
        InputError
            ``text`` is not a str or has no tokens; more than one budget; a budget no rewrite meets.
        """
        if not isinstance(text, str):
            raise InputError(f"rewrite_text takes a str, not {type(text).__name__} (decode bytes first)")
        budget = make_budget(chars, ratio, length)
        if not text.strip():
            raise InputError("empty text: nothing to rewrite")
        return self.rewrite_sentence(parse_text(text), budget)

    # -- the batch protocol (dualdecomp.app.batch.BatchProcessor) -----------------------------------------

    def fingerprint(self) -> dict:
        """The settings that change a row (hashed into a batch's run fingerprint)."""
        out: dict = {"task": "rewrite", "max_states": self.max_states}
        if self.decoder.settings != DecodeSettings():
            out["decode"] = self.decoder.settings.as_dict()
        if self.joint is not None:
            if self._joint_fingerprint is None:
                self._joint_fingerprint = model_fingerprint(self.joint_directory)
            out["joint"] = {"config": self.joint, "model": self._joint_fingerprint}
        return out

    def worker_factory(self) -> partial:
        """A picklable loader of this rewriter (for the workers of a distributed batch)."""
        joint_model = None if self.joint_directory is None else str(self.joint_directory.resolve())
        return partial(Rewriter, str(self.directory.resolve()), max_states=self.requested_max_states,
                       max_tokens=self.requested_max_tokens, joint=self.joint, joint_model=joint_model,
                       **dict(zip(SETTINGS, self.requested_settings, strict=True)))

    def row_text(self, item: CorpusItem) -> str:
        """The ``text`` field of an item's row."""
        return safe_text(_item_text(item))

    def batch_row(self, index: int, item: CorpusItem, sentence: Sentence | None, options: BatchOptions,
                  deadline: Deadline | None) -> tuple[dict, int]:
        """The row of one batch line and its exit code (``options.budget``: the run's budget)."""
        base = {"id": item.id, "text": self.row_text(item)}
        try:
            if sentence is None:  # not parsed: over max_tokens
                self.check_size(len(item.text))
            budget = Budget(*options.budget) if options.budget is not None else None
            result = self.rewrite_sentence(sentence, budget, deadline)
        except DualDecompError as exc:
            return {**base, "error": safe_text(str(exc))}, exc.exit_code
        except MemoryError:
            return ({**base, "error": f"out of memory rewriting this line ({len(item.text)} tokens)"},
                    SolverError.exit_code)
        return {**base, **result.to_json(timing=not options.deterministic), "text": base["text"]}, 0
