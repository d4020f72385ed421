"""Exact solvers for ordering (projective linearisation of a given dependency tree)."""
