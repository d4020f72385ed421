"""The ``dependency`` component kind: the skip-bigram dependency compression model (contract 3)."""

from dualdecomp.models.dependency.store import load_dependency_model
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.dependency import Dependency


def _weighted(unit, weight: float) -> Dependency:
    A, S = unit
    return Dependency(weight * A, S=None if S is None else S.scaled(weight))


KIND = ComponentKind(
    name="dependency",
    load=load_dependency_model,
    unit=lambda model, sentence, deadline=None: model.potentials(sentence, deadline),
    weighted=_weighted,
    timed=True,
)
