"""The ``lm`` component kind: a KenLM trigram language model as a trigram path (contract 2).

Its potentials are context-pruned (:meth:`~dualdecomp.models.lm.model.LanguageModel.trigram_rows`):
memory grows with the number of distinct KenLM contexts of the sentence, not as (n+2)^3.
"""

from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.registry import ComponentKind
from dualdecomp.solvers.ngram import Trigram
from dualdecomp.solvers.ngram.packed import PackedTrigram

KIND = ComponentKind(
    name="lm",
    load=load_lm,
    unit=lambda lm, sentence, deadline=None: lm.trigram_rows(sentence.tokens, deadline),
    weighted=lambda T, weight: Trigram(T.scaled(weight) if isinstance(T, PackedTrigram) else weight * T),
    timed=True,
)
