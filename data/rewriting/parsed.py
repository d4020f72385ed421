"""Parsing the rewriting corpus: sources and references as ``Sentence`` + phrase-structure ``Tree`` + lemmas,
with an on-disk cache so that training does not parse the same text twice.

The pipeline is the project's (:data:`dualdecomp.data.parsing.PIPELINES`, the first installed), loaded
here *with* its rule-based lemmatiser (``dualdecomp.data.parsing.load_pipeline`` leaves it out): the
lemmatiser runs after the tagger and parser and changes neither, so tags and heads are those of
``parse_text``; the lemmas feed the word aligner (:mod:`dualdecomp.data.rewriting.alignment`). A text is
tokenised by spaCy's tokeniser, whitespace tokens are dropped (their spacing kept in ``spaces``), and the
clean tokens are tagged and parsed in batches (``nlp.pipe``). Trees come from
:func:`dualdecomp.data.trees.from_dependency` (computed on demand, never stored).

The cache is one gzipped JSON file (never pickle)::

    {"format": "dualdecomp-rewriting-parses", "version": 1,
     "entries": {KEY: [tokens, spaces, pos, tags, heads, labels, lemmas], ...}}

``KEY`` is the first 32 hex digits of SHA-256 of ``pipeline_version() + "\\n" + text``: a different
spaCy, pipeline or cache format misses instead of returning stale parses. ``spaces`` is a string of
``0``/``1``. The file is rewritten atomically (temporary file + rename) when new texts were parsed, with
gzip's timestamp fixed, so the same texts give the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.jsonl import is_valid_unicode
from dualdecomp.data.parsing import doc_to_sentence, load_pipeline
from dualdecomp.data.rewriting.corpus import RewritingExample
from dualdecomp.data.sentence import Sentence
from dualdecomp.data.trees import Tree, from_dependency

__all__ = ["CACHE_FORMAT", "ParsedExample", "ParsedText", "load_lemmatising_pipeline", "parse_examples",
           "parse_texts", "pipeline_version"]

CACHE_FORMAT = 1
"""Version of the cache's layout (part of every key)."""

_MAGIC = "dualdecomp-rewriting-parses"


@dataclass(frozen=True)
class ParsedText:
    """A parsed text: its ``Sentence`` (tokens, tags, dependency parse, spacing), lemmas and tree.

    Attributes
    ----------
    sentence : Sentence
        Tokens, POS, PTB tags, heads, labels and spacing.
    lemmas : tuple of str
        spaCy's lemma of each token.
    """

    sentence: Sentence
    lemmas: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.lemmas) != self.sentence.n:
            raise InputError(f"sentence {self.sentence.id!r}: {len(self.lemmas)} lemmas for "
                             f"{self.sentence.n} tokens")

    @property
    def tokens(self) -> tuple[str, ...]:
        """The tokens."""
        return self.sentence.tokens

    @cached_property
    def tree(self) -> Tree:
        """The phrase-structure tree (:func:`dualdecomp.data.trees.from_dependency`)."""
        return from_dependency(self.sentence)


@dataclass(frozen=True)
class ParsedExample:
    """A rewriting example with its source and chosen reference sets parsed.

    Attributes
    ----------
    id : str
        The example's id.
    source : ParsedText
        The parsed source (sentence id: the example id).
    references : Mapping[str, tuple[ParsedText, ...]]
        Reference set name → its parsed rewrites, in file order (sentence ids ``ID/SET/K``).
    """

    id: str
    source: ParsedText
    references: Mapping[str, tuple[ParsedText, ...]]


def load_lemmatising_pipeline():
    """The project's spaCy pipeline with its lemmatiser (``dualdecomp.data.parsing.load_pipeline``:
    once per process)."""
    return load_pipeline(lemmas=True)


def pipeline_version() -> str:
    """``LANG_NAME-VERSION/spacy-VERSION/cache-N``: what a cached parse depends on."""
    import spacy  # lazy: spaCy is slow to import and only parsing needs it

    meta = load_lemmatising_pipeline().meta
    return f"{meta['lang']}_{meta['name']}-{meta['version']}/spacy-{spacy.__version__}/cache-{CACHE_FORMAT}"


def _key(version: str, text: str) -> str:
    return hashlib.sha256(f"{version}\n{text}".encode()).hexdigest()[:32]


def _encode(parsed: ParsedText) -> list:
    s = parsed.sentence
    return [list(s.tokens), "".join("1" if b else "0" for b in s.spaces), list(s.pos), list(s.tags),
            list(s.heads), list(s.labels), list(parsed.lemmas)]


def _decode(entry, sid: str) -> ParsedText:
    tokens, spaces, pos, tags, heads, labels, lemmas = entry
    sent = Sentence(tuple(tokens), tuple(pos), tuple(tags), tuple(int(h) for h in heads), tuple(labels),
                    tuple(c == "1" for c in spaces), sid)
    return ParsedText(sent, tuple(lemmas))


def _read_cache(path: Path) -> dict[str, list]:
    if not path.exists():
        return {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, EOFError, ValueError) as exc:
        raise ModelError(f"{path}: unreadable parse cache ({exc}); delete it to re-parse") from None
    if (not isinstance(data, dict) or data.get("format") != _MAGIC
            or not isinstance(data.get("entries"), dict)):
        raise ModelError(f"{path}: not a rewriting parse cache; delete it to re-parse")
    if data.get("version") != CACHE_FORMAT:
        return {}  # another layout: its keys cannot match anyway
    return data["entries"]


def _write_cache(path: Path, entries: dict[str, list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"format": _MAGIC, "version": CACHE_FORMAT, "entries": dict(sorted(entries.items()))}
    payload = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            gz.write(payload)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 would hide the cache from other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _parse(texts: Sequence[str], batch_size: int, progress: bool) -> list[ParsedText]:
    """Tokenise, tag, parse and lemmatise each text (no cache)."""
    from spacy.tokens import Doc  # lazy: spaCy is slow to import and only parsing needs it

    nlp = load_lemmatising_pipeline()
    docs = []
    for text in texts:
        doc = nlp.tokenizer(text)
        words = [t for t in doc if not t.is_space]
        if not words:
            raise InputError(f"no tokens in {text!r}")
        spaces = [bool(t.whitespace_) or (t.i + 1 < len(doc) and doc[t.i + 1].is_space) for t in words]
        docs.append(Doc(nlp.vocab, words=[t.text for t in words], spaces=spaces))
    stream = nlp.pipe(docs, batch_size=batch_size)
    if progress:
        from tqdm import tqdm  # lazy: only a progress bar needs it

        stream = tqdm(stream, total=len(docs), desc="parsing", unit="sent", leave=False)
    return [ParsedText(doc_to_sentence(doc), tuple(t.lemma_ for t in doc)) for doc in stream]


def parse_texts(texts: Iterable[str], ids: Sequence[str] | None = None,
                cache: str | os.PathLike[str] | None = None, batch_size: int = 256,
                progress: bool = False) -> list[ParsedText]:
    """Parse raw texts (each as one sentence; several spaCy sentences stay together under ``TOP``).

    Parameters
    ----------
    texts : iterable of str
        Raw texts, each with at least one non-whitespace character.
    ids : sequence of str, optional
        The sentence id of each text (default: its position).
    cache : str or path-like, optional
        The cache file (module docstring); created when missing, updated when a text was not in it.
    batch_size : int
        spaCy batch size.
    progress : bool
        Show a progress bar (stderr) while parsing.

    Returns
    -------
    list of ParsedText
        One per text, in order. Each distinct text is parsed once.

    Raises
    ------
    InputError
        If a text is blank or not valid Unicode.
    ModelError
        If the cache file exists but is not a parse cache, or no spaCy pipeline is installed.
    """
    texts = list(texts)
    if ids is not None and len(ids) != len(texts):
        raise InputError(f"{len(ids)} ids for {len(texts)} texts")
    for text in texts:
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"cannot parse an empty text: {text!r}")
        if not is_valid_unicode(text):
            raise InputError("the text is not valid Unicode (unpaired surrogate)")
    version = pipeline_version()
    path = Path(cache) if cache is not None else None
    entries = _read_cache(path) if path is not None else {}
    keys = {text: _key(version, text) for text in texts}
    todo = [text for text, key in keys.items() if key not in entries]
    if todo:
        for text, parsed in zip(todo, _parse(todo, batch_size, progress), strict=True):
            entries[keys[text]] = _encode(parsed)
        if path is not None:
            _write_cache(path, entries)
    out = []
    for k, text in enumerate(texts):
        sid = ids[k] if ids is not None else str(k)
        try:
            out.append(_decode(entries[keys[text]], sid))
        except (InputError, ValueError, TypeError) as exc:
            raise ModelError(f"{path}: invalid cached parse of {text!r} ({exc}); delete the cache") from None
    return out


def parse_examples(examples: Sequence[RewritingExample], reference_sets: Sequence[str] | None = None,
                   cache: str | os.PathLike[str] | None = None, batch_size: int = 256,
                   progress: bool = False) -> list[ParsedExample]:
    """Parse the sources and the chosen reference sets of rewriting examples (one batched run).

    Parameters
    ----------
    examples : sequence of RewritingExample
        From :func:`dualdecomp.data.rewriting.read_rewriting`.
    reference_sets : sequence of str, optional
        The reference sets to parse (default: all of each example's); each must be one of the examples'.
    cache, batch_size, progress
        As :func:`parse_texts`.

    Returns
    -------
    list of ParsedExample
        In the order of ``examples``.

    Raises
    ------
    InputError
        If a reference set name is not one of an example's sets (the message lists the file's).
    """
    texts: list[str] = []
    ids: list[str] = []
    for ex in examples:
        names = tuple(ex.references) if reference_sets is None else tuple(reference_sets)
        for name in names:
            if name not in ex.references:
                raise InputError(f"unknown reference set {name!r} (example {ex.id!r} has "
                                 f"{', '.join(ex.references)})")
        texts.append(ex.text)
        ids.append(ex.id)
        for name in names:
            for k, ref in enumerate(ex.references[name]):
                texts.append(ref)
                ids.append(f"{ex.id}/{name}/{k}")
    parsed = iter(parse_texts(texts, ids=ids, cache=cache, batch_size=batch_size, progress=progress))
    out = []
    for ex in examples:
        names = tuple(ex.references) if reference_sets is None else tuple(reference_sets)
        source = next(parsed)
        refs = {name: tuple(next(parsed) for _ in ex.references[name]) for name in names}
        out.append(ParsedExample(ex.id, source, MappingProxyType(refs)))
    return out
