"""Free-length calibration: a per-token score bias that makes free-length outputs as long as the references.

At a fixed length a bias of c per kept token adds the same constant to every compression, so it changes
nothing; at free length it moves the compression rate, monotonically (the optimal length of
``f(z) + c·|z|`` is non-decreasing in c). :func:`~dualdecomp.models.rate_bisection.bisect_rate` finds
where a monotone rate crosses its target; the bigram, dependency and configurations' calibrations use it.
:func:`calibrate_length_bias` calibrates a configuration with the engine in the loop
(``dualdecomp train --kind length-bias --model MODEL_DIR [--config NAME] --dev FILE ... --write``), stored
as ``length_bias`` in the configuration by :func:`write_length_bias`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dualdecomp.core.model_files import read_json, write_manifest
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.engine.decode import decode
from dualdecomp.models.configuration import JointModel, config_path, with_length_bias
from dualdecomp.models.rate_bisection import bisect_rate


def calibrate_length_bias(model_dir: str | Path, config: str | None, dev_files: Sequence[str | Path],
                    iterations: int = 16, log: Callable[[str], None] | None = None) -> float:
    """The ``length_bias`` of a joint configuration whose free-length outputs keep the references' share.

    The rate is the mean over sentences of kept / n, then the mean over the dev files; the target is the
    same mean over the references. Every dev sentence's components are built once (without a bias) and
    decoded at free length with the configuration's engine options for each candidate bias.

    Parameters
    ----------
    model_dir : path
        The joint model directory.
    config : str or None
        ``configs/NAME.json``, or None for ``config.json``.
    dev_files : sequence of paths
        Corpora with references.
    iterations : int
        Bisection steps.
    log : callable, optional
        Receives one line per rate evaluated.

    Returns
    -------
    float
    """

    joint = JointModel(model_dir, config)
    options = {k: v for k, v in joint.config.decode.items() if k not in ("decoder", "beam", "solver")}
    sets, targets = [], []
    for f in dev_files:
        items = [it for it in read_corpus(f) if it.compressions]
        sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
        built = []
        for s in sentences:
            comps, _ = joint.components(s, length_bias=0.0)
            built.append((comps, s.n))
        sets.append(built)
        targets.append(np.mean([np.mean([len(c) / it.n for c in it.compressions]) for it in items]))
    target = float(np.mean(targets))

    def rate(c: float) -> float:
        per_file = []
        for built in sets:
            lengths = [decode(with_length_bias(comps, c), **options).length / n for comps, n in built]
            per_file.append(np.mean(lengths))
        r = float(np.mean(per_file))
        if log is not None:
            log(f"bias {c:+.4f}: rate {100 * r:.2f} % (target {100 * target:.2f} %)")
        return r

    return bisect_rate(rate, target, increasing=True, iterations=iterations)


def write_length_bias(model_dir: str | Path, config: str | None, bias: float) -> Path:
    """Store ``bias`` (rounded to 6 decimals) as the ``length_bias`` of a configuration file and rewrite
    the directory's ``MANIFEST.json``; returns the file written.

    Parameters
    ----------
    model_dir : path
        The model directory.
    config : str or None
        ``configs/NAME.json``, or None for ``config.json``.
    bias : float
        The calibrated bias (:func:`calibrate_length_bias`).

    Returns
    -------
    pathlib.Path
    """
    d = Path(model_dir)
    path = config_path(d, config)
    spec = read_json(path)
    spec["length_bias"] = round(bias, 6)
    path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    write_manifest(d)
    return path
