"""Length-bias calibration (``dualdecomp.models.length_bias``): a configuration's ``length_bias`` bisected
on dev corpora so that its free-length outputs keep the references' share of tokens
(``dualdecomp train --kind length-bias``; :mod:`dualdecomp.models.length_bias.calibration`)."""

from dualdecomp.models.length_bias.calibration import calibrate_length_bias, write_length_bias

__all__ = ["calibrate_length_bias", "write_length_bias"]
