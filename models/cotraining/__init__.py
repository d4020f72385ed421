"""Co-training (``dualdecomp.models.cotraining``): the bigram and dependency models trained together, dual
decomposition in the perceptron loop (``dualdecomp train --kind cotraining``; old name ``joint``).

The trainer is :data:`dualdecomp.models.cotraining.trainer.TRAINER`, found by the registry
(:mod:`dualdecomp.models.registry`); the training itself is :mod:`dualdecomp.models.cotraining.training`.
"""
