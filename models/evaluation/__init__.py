"""Evaluation measures of the three tasks (compression, word ordering, rewriting)."""
