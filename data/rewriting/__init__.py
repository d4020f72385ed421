"""The rewriting corpus (compression beyond deletion, Cohn & Lapata 2008): reading it, parsing sources and
references (with an on-disk cache), and aligning words monolingually."""

from dualdecomp.data.rewriting.alignment import Alignment, align_words
from dualdecomp.data.rewriting.corpus import RewritingExample, read_rewriting
from dualdecomp.data.rewriting.parsed import ParsedExample, ParsedText, parse_examples, parse_texts

__all__ = ["Alignment", "ParsedExample", "ParsedText", "RewritingExample", "align_words", "parse_examples",
           "parse_texts", "read_rewriting"]
