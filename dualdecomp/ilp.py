"""Public API: ``dualdecomp.ilp.decode`` (contract 5), the exact ILP reference decoder.

A façade over :mod:`dualdecomp.engine.ilp`, kept at this path because the contract names it.
"""

from dualdecomp.engine.ilp import decode

__all__ = ["decode"]
