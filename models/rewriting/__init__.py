"""Rewriting (Cohn & Lapata 2008): extraction of the rewriting STSG from word-aligned tree pairs."""

from dualdecomp.models.rewriting.extraction import (
    RULE_TYPES,
    ExtractionReport,
    derivable,
    extract_rewrite_grammar,
    extract_rules,
    node_alignment,
    paraphrase_rules,
    rule_types,
)

__all__ = ["RULE_TYPES", "ExtractionReport", "derivable", "extract_rewrite_grammar", "extract_rules",
           "node_alignment", "paraphrase_rules", "rule_types"]
