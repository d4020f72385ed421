"""The public API of ``dualdecomp.models.lm``: what other components import from it."""

from dualdecomp.models.lm.build import build_lm_report, read_corpora_sentences
from dualdecomp.models.lm.default import MAX_BYTES, SOURCES, build_within
from dualdecomp.models.lm.model import LanguageModel, load_lm

__all__ = ["LanguageModel", "MAX_BYTES", "SOURCES", "build_lm_report", "build_within", "load_lm",
           "read_corpora_sentences"]
