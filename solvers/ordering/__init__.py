"""Exact solvers for ordering (projective linearisation of a given dependency tree)."""

from dualdecomp.solvers.ordering.domain_order import (
    EXACT_LIMIT,
    beam_domain_order,
    best_domain_order,
    greedy_domain_order,
    order_score,
)
from dualdecomp.solvers.ordering.linearise import Linearisation, best_linearisation

__all__ = ["EXACT_LIMIT", "Linearisation", "beam_domain_order", "best_domain_order", "best_linearisation",
           "greedy_domain_order", "order_score"]
