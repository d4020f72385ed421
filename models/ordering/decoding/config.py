"""Which decoders order which inputs: the settings of ``OrderingDecoder.decode`` (exact DP, tree beam DP,
head-domain lineariser, second stage, LM beam) and the default tree beam."""

from __future__ import annotations

import warnings
from dataclasses import InitVar, dataclass

DEFAULT_TREE_BEAM = 64
"""K of the tree beam DP of the CLI's and the benchmark's decoders: the largest K of {4, 8, 16, 32, 64} whose
slowest full-tree sentence of dev 1000-1029 stays within 5 s (docs/word-ordering.md, "The tree beam DP")."""
SECOND_STAGES = ("tree-beam", "lineariser")
"""What may order the completed tree of a best-first output (``ExactConfig.second_stage``)."""
OLD_SECOND_STAGES = {"linearizer": "lineariser"}
"""Old spellings of second stages, still accepted (the project spells -ise since W3.2)."""
_OLD_FLAG = "ExactConfig(linearizer=...) is deprecated: use lineariser=..."  # old spelling kept
LM_BEAM_INPUTS = ("none", "untagged", "applicable")
"""Which inputs the model's LM beam orders: none; those that give no tag and no head outside their units;
every input it can order (no head given outside its units)."""


@dataclass(frozen=True)
class ExactConfig:
    """Settings of the decoders (``OrderingDecoder.decode``: ``dualdecomp.models.ordering.decoding.decoder``).

    Attributes
    ----------
    max_states : int or None
        Run the exact DP first, with at most this many states before it gives up uncertified; None: no
        exact DP.
    beam : int or None
        K: the tree beam DP (the same DP keeping the K best states per step and the K best subtrees per
        node — APPROXIMATE, always a complete output, certified only when nothing was pruned) decodes the
        full trees the exact DP did not certify, and completes and re-orders best-first outputs of the
        other inputs. None: those are left to best-first search (the paper's method).
    lineariser : bool
        Order full trees the exact DP did not certify with the model's head-domain lineariser (when it has
        one; ``dualdecomp.models.ordering.lineariser.model``) instead of the tree beam DP.
    second_stage : str
        What orders the completed tree of a best-first output: ``"tree-beam"`` (the tree beam DP, when
        ``beam`` is set) or ``"lineariser"`` (the head-domain lineariser, when the model has one; the old
        spelling ``"linearizer"`` is accepted and stored as ``"lineariser"``).
    beam_attachments : int or None
        A bound per sentence on the tree beam DP's work that does not depend on the machine: its beam is
        halved (``beam``, ``beam // 2``, ..., 1) until the tree's worst case of attachments
        (``dualdecomp.models.ordering.paper.exact.worst_case_attachments``) is within it. None: always
        ``beam``.
    lm_beam : str
        Which inputs the model's LM beam search orders, when the model has one (one of
        :data:`LM_BEAM_INPUTS`; ``dualdecomp.models.ordering.bag_lm.search``): the paper model's decoders take
        the others.
    """

    max_states: int | None = 100_000
    beam: int | None = None
    lineariser: bool = False
    second_stage: str = "tree-beam"
    beam_attachments: int | None = None
    lm_beam: str = "none"
    linearizer: InitVar[bool | None] = None  # old spelling kept: deprecated keyword for ``lineariser``;
    # dataclasses.replace reads it as the class attribute None, so it never overrides ``lineariser`` there

    def __post_init__(self, old_flag: bool | None) -> None:
        if old_flag is not None:
            warnings.warn(_OLD_FLAG, DeprecationWarning, stacklevel=3)  # 3: the caller of ExactConfig()
            object.__setattr__(self, "lineariser", bool(old_flag))
        object.__setattr__(self, "second_stage", second_stage_name(self.second_stage))
        if self.second_stage not in SECOND_STAGES:
            raise ValueError(f"second_stage must be one of {SECOND_STAGES}, not {self.second_stage!r}")
        if self.lm_beam not in LM_BEAM_INPUTS:
            raise ValueError(f"lm_beam must be one of {LM_BEAM_INPUTS}, not {self.lm_beam!r}")
        if self.beam_attachments is not None and self.beam_attachments < 1:
            raise ValueError("beam_attachments must be positive")


def second_stage_name(value: str) -> str:
    """The second stage ``value`` names, its old spelling (:data:`OLD_SECOND_STAGES`) accepted."""
    return OLD_SECOND_STAGES.get(value, value)
