"""``dualdecomp train --kind length-bias``: a configuration's ``length_bias`` calibrated on dev corpora
(:func:`~dualdecomp.models.length_bias.calibration.calibrate_length_bias`), so that its free-length
outputs keep the references' share of tokens; ``--write`` stores it in the configuration file. Not a
component kind: the configuration's components are left as they are, only its bias per kept token is
fitted.
"""

from __future__ import annotations

import argparse

from dualdecomp.core.errors import InputError
from dualdecomp.models.length_bias.calibration import calibrate_length_bias, write_length_bias
from dualdecomp.models.registry import Trainer, TrainingContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind length-bias``."""
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="the model directory holding the configuration")
    parser.add_argument("--config", default=None, metavar="NAME",
                        help="calibrate configs/NAME.json (default: config.json)")
    parser.add_argument("--dev", nargs="+", required=True, metavar="JSONL",
                        help="dev corpora with references, whose share of kept tokens is the target")
    parser.add_argument("--iterations", type=int, default=16,
                        help="bisection steps (default: %(default)s)")
    parser.add_argument("--write", action="store_true",
                        help="store the bias in the configuration file (and rewrite MANIFEST.json)")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Calibrate the configuration's ``length_bias``; write it with ``--write``; return the report."""
    if args.iterations < 1:
        raise InputError("--iterations must be >= 1")
    bias = calibrate_length_bias(args.model, args.config, args.dev, iterations=args.iterations,
                                 log=context.log)
    written = write_length_bias(args.model, args.config, bias) if args.write else None
    return {"config": args.config, "length_bias": round(bias, 6),
            "written": None if written is None else str(written)}


TRAINER = Trainer(summary="a configuration's length_bias, bisected on --dev so that its free-length outputs "
                          "keep the references' share of tokens (--write stores it)",
                  add_arguments=add_arguments, train=train_from_options)
