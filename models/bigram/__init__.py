"""The public API of ``dualdecomp.models.bigram``: what other components import from it."""

from dualdecomp.models.bigram.features import BigramFeatures, bucket, mix
from dualdecomp.models.bigram.model import BigramModel
from dualdecomp.models.bigram.store import FORMAT, VERSION, read_spec, read_weights, save_weights, write_spec

__all__ = ["BigramFeatures", "BigramModel", "FORMAT", "VERSION", "bucket", "mix", "read_spec",
           "read_weights", "save_weights", "write_spec"]
