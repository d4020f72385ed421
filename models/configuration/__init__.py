"""Configurations (``dualdecomp.models.configuration``): a model directory's recipe — which kinds, from
which files, at which weights, decoded by which decoder with which options (``config.json``,
``configs/NAME.json``; :mod:`~dualdecomp.models.configuration.config`), and its measured growth of time
and memory with the length (:mod:`~dualdecomp.models.configuration.growth`).

The public API: what the application, the trainers and users import (``JointModel``, ``JointConfig``).
"""

from dualdecomp.models.configuration.config import (
    FORMAT,
    VERSION,
    ComponentSpec,
    JointConfig,
    JointModel,
    config_names,
    config_path,
    parse_config,
    save_config,
    weighted_component,
    with_length_bias,
)
from dualdecomp.models.configuration.growth import (
    Growth,
    PowerLaw,
    limit_from_growth,
    parse_growth,
    round_down,
)

__all__ = ["FORMAT", "VERSION", "ComponentSpec", "Growth", "JointConfig", "JointModel", "PowerLaw",
           "config_names", "config_path", "limit_from_growth", "parse_config",
           "parse_growth", "round_down", "save_config", "weighted_component", "with_length_bias"]
