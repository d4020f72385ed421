"""The rewriting STSG (Cohn & Lapata 2008): rules beyond deletion, and (to come) their exact chart."""

from dualdecomp.solvers.rewriting.grammar import (
    ORIGINS,
    RewriteGrammar,
    RewriteGrammarConfig,
    from_deletion_rule,
    load_rewrite_grammar,
    rewriting_coverage_rules,
    save_rewrite_grammar,
)
from dualdecomp.solvers.rewriting.rules import OPERATIONS, Operations, RewriteRule, reordered_count

__all__ = ["OPERATIONS", "ORIGINS", "Operations", "RewriteGrammar", "RewriteGrammarConfig", "RewriteRule",
           "from_deletion_rule", "load_rewrite_grammar", "reordered_count", "rewriting_coverage_rules",
           "save_rewrite_grammar"]
