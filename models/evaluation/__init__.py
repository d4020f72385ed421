"""Evaluation measures of the three tasks (compression, word ordering, rewriting)."""

from dualdecomp.models.evaluation.compression import at_reference_lengths, bigram_f1, token_f1
from dualdecomp.models.evaluation.ordering import certified_share, evaluate
from dualdecomp.models.evaluation.rewriting import RewriteScores, evaluate_rewrites

__all__ = ["RewriteScores", "at_reference_lengths", "bigram_f1", "certified_share", "evaluate",
           "evaluate_rewrites", "token_f1"]
