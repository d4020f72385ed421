"""The rewriting STSG (Cohn & Lapata 2008): rules beyond deletion, and (to come) their exact chart."""

from dualdecomp.solvers.rewriting.rules import OPERATIONS, Operations, RewriteRule, reordered_count

__all__ = ["OPERATIONS", "Operations", "RewriteRule", "reordered_count"]
