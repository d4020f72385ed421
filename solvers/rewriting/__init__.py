"""The rewriting STSG (Cohn & Lapata 2008): rules beyond deletion, and their exact chart with a bigram LM."""

from dualdecomp.solvers.rewriting.chart import (
    APPROXIMATE,
    EXACT,
    Budget,
    RewriteDerivation,
    decode,
    derivation_score,
    lm_score,
)
from dualdecomp.solvers.rewriting.component import (
    RewriteComponent,
    copied_token_lists,
    copied_tokens,
    keep_means_copied,
    restrict_hypergraph,
    target_word_links,
    used_tokens,
)
from dualdecomp.solvers.rewriting.grammar import (
    ORIGINS,
    RewriteGrammar,
    RewriteGrammarConfig,
    from_deletion_rule,
    load_rewrite_grammar,
    rewriting_coverage_rules,
    save_rewrite_grammar,
)
from dualdecomp.solvers.rewriting.hypergraph import RewriteHypergraph, build_rewrite_hypergraph
from dualdecomp.solvers.rewriting.rules import OPERATIONS, Operations, RewriteRule, reordered_count
from dualdecomp.solvers.rewriting.text import (
    detokenise_words,
    function_words,
    joins_left,
    joins_right,
    rewrite_text,
    rule_word_case,
    sentence_case,
    space_between,
    text_chars,
)

__all__ = ["APPROXIMATE", "Budget", "EXACT", "OPERATIONS", "ORIGINS", "Operations", "RewriteComponent",
           "RewriteDerivation", "RewriteGrammar", "RewriteGrammarConfig", "RewriteHypergraph", "RewriteRule",
           "build_rewrite_hypergraph", "copied_token_lists", "copied_tokens", "decode", "derivation_score",
           "detokenise_words", "from_deletion_rule", "function_words", "joins_left", "joins_right",
           "keep_means_copied", "lm_score", "load_rewrite_grammar", "reordered_count", "restrict_hypergraph",
           "rewrite_text", "rewriting_coverage_rules", "rule_word_case", "save_rewrite_grammar",
           "sentence_case", "space_between", "target_word_links", "text_chars", "used_tokens"]
