"""The ``dualdecomp`` spaCy pipeline component.

``nlp.add_pipe("dualdecomp", config={...})`` after a tagger and a parser sets, on every ``Doc``:

- ``doc._.compression``: the compressed text (detokenised with the document's own spacing);
- ``doc._.keep``: a list of bools, one per token of the ``Doc`` (whitespace tokens are never kept);
- ``doc._.certificate``: ``{"primal", "dual", "gap", "certified", "seconds"}``;
- ``doc._.compression_error``: None, or why this ``Doc`` could not be compressed (e.g. a fixed length
  longer than a short document); the three attributes above are then None, and ``nlp.pipe`` goes on with
  the next document instead of aborting.

A pipeline without a tagger and a parser before the component raises an ``InputError`` saying so (the
model's features need POS tags and dependency arcs; it never returns an empty "certified" compression).

The config takes the CLI's options: ``model`` (a model directory; the embedded default model when
null), ``length`` (an integer, or ``"ratio:R"``), ``ratio`` and ``chars``; and ``components``, your own
components added to the model's (:mod:`dualdecomp.app.user_components`): one entry or a list, each a
factory ``f(sentence) -> component`` named

- ``"MODULE:FUNCTION"``: imported (this runs your code), as ``dualdecomp compress --component``;
- ``"NAME"`` (no colon) or ``{"@misc": "NAME"}``: a function registered with
  ``@spacy.registry.misc("NAME")`` that returns a factory or a list of factories.

spaCy configs are strings, so a factory goes in by name; the registry is spaCy's own way (a name that
``nlp.to_disk`` keeps in ``config.cfg`` and a package can register through the ``spacy_misc`` entry
point), the import path needs no registration. The factory is registered with spaCy through the
``spacy_factories`` entry point, so ``import dualdecomp`` is not needed.
"""

from __future__ import annotations

from typing import Any

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry

from dualdecomp.core.errors import DualDecompError, InputError
from dualdecomp.data.parsing import doc_to_sentence

EXTENSIONS = ("compression", "keep", "certificate", "compression_error")


class DualDecompComponent:
    """Compress each ``Doc`` with a dualdecomp model (see the module docstring)."""

    def __init__(self, model: str | None = None, length: int | str | None = None, ratio: float | None = None,
                 chars: int | None = None, components: object = None) -> None:
        # lazy: spaCy imports this entry point whenever it builds a pipeline
        from dualdecomp.app.compressor import Compressor
        from dualdecomp.app.length_request import parse_length

        self.spec = parse_length(length=length, ratio=ratio)
        if self.spec.mode not in ("free", "fixed", "ratio"):
            raise InputError("the spaCy component takes length N, ratio:R or ratio, not gold or file")
        if chars is not None and self.spec.mode != "free":
            raise InputError("give either a length or a character budget, not both")
        self.chars = chars
        self.compressor = Compressor(model, extra_components=_factories(components))
        for name in EXTENSIONS:
            if not Doc.has_extension(name):
                Doc.set_extension(name, default=None)

    def __call__(self, doc: Doc) -> Doc:
        words = [t for t in doc if not t.is_space]
        if not words:
            doc._.compression, doc._.keep, doc._.certificate = "", [False] * len(doc), None
            return doc
        if not (doc.has_annotation("DEP") and (doc.has_annotation("TAG") or doc.has_annotation("POS"))):
            raise InputError("the dualdecomp component needs POS tags and a dependency parse: add it after a "
                             "tagger and a parser (e.g. spacy.load('en_core_web_sm'), then "
                             "nlp.add_pipe('dualdecomp'))")
        if len(words) == len(doc):
            sentence = doc_to_sentence(doc)
        else:
            sentence = doc_to_sentence(_without_spaces(doc))
        try:
            length = self.spec.for_sentence(sentence.n, 0)[0]
            result = self.compressor.compress(sentence, length, self.chars)
        except DualDecompError as exc:  # this document only: nlp.pipe goes on
            doc._.compression, doc._.keep, doc._.certificate = None, None, None
            doc._.compression_error = str(exc)
            return doc
        doc._.compression_error = None
        keep_words = iter(result.keep.tolist())
        doc._.keep = [False if t.is_space else bool(next(keep_words)) for t in doc]
        doc._.compression = result.text
        r = result.result
        doc._.certificate = {"primal": r.primal, "dual": r.dual, "gap": r.gap, "certified": r.certified,
                             "seconds": r.seconds}
        return doc


def _factories(components: object) -> list:
    """The factories named by the config's ``components`` (module docstring): import paths stay strings
    (the compressor imports them), registry names are looked up in ``spacy.registry.misc`` and called."""
    if components is None:
        return []
    items = components if isinstance(components, list | tuple) else [components]
    out: list = []
    for item in items:
        if isinstance(item, dict) and set(item) == {"@misc"}:
            item = item["@misc"]
        if isinstance(item, str) and ":" not in item:
            try:
                made = registry.misc.get(item)()
            except Exception as exc:  # catalogue's RegistryError, or the registered function's own
                raise InputError(f"components: {item!r} is neither MODULE:FUNCTION nor a working function "
                                 f"registered with @spacy.registry.misc ({exc})") from None
            out.extend(made if isinstance(made, list | tuple) else [made])
        else:
            out.append(item)
    return out


def _without_spaces(doc: Doc) -> Doc:
    """A copy of ``doc`` without whitespace tokens, keeping tags, heads and labels."""
    keep = [t.i for t in doc if not t.is_space]
    index = {i: k for k, i in enumerate(keep)}
    words = [doc[i].text for i in keep]
    spaces = [bool(doc[i].whitespace_) or (i + 1 < len(doc) and doc[i + 1].is_space) for i in keep]

    def head_of(i: int) -> int:
        h = doc[i].head.i
        while h != doc[h].head.i and doc[h].is_space:
            h = doc[h].head.i
        return index.get(h, index[i])

    return Doc(doc.vocab, words=words, spaces=spaces, pos=[doc[i].pos_ for i in keep],
               tags=[doc[i].tag_ for i in keep], deps=[doc[i].dep_ for i in keep],
               heads=[head_of(i) for i in keep])


@Language.factory("dualdecomp", default_config={"model": None, "length": None, "ratio": None, "chars": None,
                                               "components": None})
def make_component(nlp: Language, name: str, model: str | None, length: int | str | None,
                   ratio: float | None, chars: int | None, components: Any = None) -> DualDecompComponent:
    """spaCy factory of :class:`DualDecompComponent`."""
    return DualDecompComponent(model=model, length=length, ratio=ratio, chars=chars, components=components)
