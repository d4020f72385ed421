"""The ``neural`` component kind: a transformer scorer's potentials, decoded exactly.

Without a pair head the potentials of a sentence are the scorer's keep log-odds
(:class:`~dualdecomp.models.neural.model.NeuralScorer`) and at weight ``w`` the component is
:class:`~dualdecomp.solvers.unary.Unary` over ``w`` × those scores; with a pair head
(:mod:`~dualdecomp.models.neural.pair_head`) they are the chain model's bigram potentials and the component
is :class:`~dualdecomp.solvers.bigram.Bigram` over ``w`` × them. Both are exact at free and fixed length,
with ``to_ilp``, and combine with the other components by dual decomposition.

``dualdecomp train --kind neural`` fine-tunes the scorer (:mod:`dualdecomp.models.neural.training`); it
needs the optional ``train`` extra (PyTorch CPU and transformers), which decoding never does.
"""

from __future__ import annotations

import argparse

import numpy as np

from dualdecomp.core.errors import ModelError
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.models.neural.training_settings import add_arguments
from dualdecomp.models.registry import ComponentKind, Trainer, TrainingContext
from dualdecomp.solvers.bigram import Bigram
from dualdecomp.solvers.unary import Unary


def weighted_neural(scores: np.ndarray, weight: float) -> Unary | Bigram:
    """The component of ``weight`` × the scorer's potentials (unary (n,) or bigram (n+2, n+2))."""
    if scores.ndim == 2:
        return Bigram(weight * scores, name="neural")
    return Unary(weight * scores, name="neural")


_TRAIN_EXTRA = {"torch", "transformers", "safetensors"}
"""The top-level packages of the optional ``train`` extra (``pyproject.toml``)."""


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Fine-tune the scorer (:func:`dualdecomp.models.neural.training.train_from_options`).

    Raises
    ------
    ModelError
        PyTorch or transformers is not installed (the optional ``train`` extra).
    """
    try:
        # lazy: PyTorch (the optional train extra) is imported only to fine-tune
        from dualdecomp.models.neural.training import train_from_options as fine_tune_from_options
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _TRAIN_EXTRA:
            raise
        raise ModelError(f"training the neural scorer needs the optional train extra (PyTorch and "
                         f"transformers): pip install 'dualdecomp[train]' ({exc})") from None
    return fine_tune_from_options(args, context)


KIND = ComponentKind(
    name="neural",
    load=load_neural_model,
    potentials=lambda model, sentence: model.potentials(sentence),
    weighted=weighted_neural,
    components=(Unary, Bigram),
    trainer=Trainer(summary="the neural scorer, fine-tuned from a pretrained encoder (needs the optional "
                            "train extra: PyTorch)",
                    add_arguments=add_arguments, train=train_from_options, extra="train"),
)
