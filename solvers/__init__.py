"""Exact subproblem solvers (the ``solvers`` layer): one subpackage per component kind.

``bigram`` (contract 1, with its k-best and character-budget variants), ``ngram`` (contract 2, the
trigram LM path), ``dependency`` (contract 3, skip-bigram dependency parsing) and ``transducer`` (the
STSG chart and the approximate T3+LM beam baseline); ``bag_count`` is the per-type count component of
the T3 edit-distance loss. Solvers import only :mod:`dualdecomp.core` and :mod:`dualdecomp.data`.
"""
