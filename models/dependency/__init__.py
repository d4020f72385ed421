"""The public API of ``dualdecomp.models.dependency``: what other components import from it."""

from dualdecomp.models.dependency.model import DependencyModel
from dualdecomp.models.dependency.training import GoldStructure, best_tree, prepare_items

__all__ = ["DependencyModel", "GoldStructure", "best_tree", "prepare_items"]
