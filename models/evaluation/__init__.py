"""Evaluation measures of the three tasks (compression, word ordering, rewriting)."""

from dualdecomp.models.evaluation.compression import at_reference_lengths, bigram_f1, token_f1
from dualdecomp.models.evaluation.ordering import certified_share, evaluate

__all__ = ["at_reference_lengths", "bigram_f1", "certified_share", "evaluate", "token_f1"]
