"""The output of every word-ordering decoder: an ordered sentence with its dependency tree, and its JSON
row."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class OrderingResult:
    """An ordered sentence with its dependency tree.

    Attributes
    ----------
    order : tuple of int
        Input word indices in output order (all of them iff ``complete``).
    words, pos : tuple of str
        The output words and their tags.
    heads : tuple of int
        CoNLL-U style heads of the output words: 1-based output positions, 0 for the root.
    complete : bool
        A goal edge (every word, one tree) was found; False after the timeout rule.
    score : float
        Scaled model score F(e)/|e| of the goal edge (NaN when incomplete).
    recovered : float
        Share of the input words present in the output.
    expansions : int
        Edges popped from the agenda (or DP states, for the exact decoder).
    seconds : float
    method : str
        ``"best-first (approximate)"`` or ``"exact DP"``.
    certified : bool
        True only when a decoder proved the output optimal: under the model that ``certified_for`` names.
    certified_for : str or None
        For which model the certificate holds, set by the decoder (word ordering's decoder registry):
        ``"paper model + LM"`` / ``"paper model"`` (the exact DP, the tree beam with nothing pruned),
        ``"LM alone"`` (the LM beam search: the LMs' optimum, no syntax), ``"lineariser + LM"`` /
        ``"lineariser"`` (the head-domain lineariser); None when not certified (the JSON row's
        ``certified_for`` is then null).
    stopped : tuple of str
        The stages the time limit cut short, each with what it returned (empty: none; the row then has
        ``"timed_out": true`` and a ``"note"``).
    """

    order: tuple[int, ...]
    words: tuple[str, ...]
    pos: tuple[str, ...]
    heads: tuple[int, ...]
    complete: bool
    score: float
    recovered: float
    expansions: int
    seconds: float
    method: str = "best-first (approximate)"
    certified: bool = False
    stopped: tuple[str, ...] = ()
    certified_for: str | None = None

    @property
    def timed_out(self) -> bool:
        """Whether the time limit cut some stage short (``stopped``)."""
        return bool(self.stopped)

    def as_json(self) -> dict:
        """A JSON-ready dict (``timed_out`` and ``note`` only when the time limit cut a stage short)."""
        row = {"text": " ".join(self.words), "words": list(self.words), "pos": list(self.pos),
               "heads": list(self.heads), "order": [k + 1 for k in self.order], "complete": self.complete,
               "score": None if self.score != self.score else self.score, "recovered": self.recovered,
               "expansions": self.expansions, "seconds": round(self.seconds, 4), "method": self.method,
               "certified": self.certified, "certified_for": self.certified_for if self.certified else None}
        if self.stopped:
            row["timed_out"] = True
            row["note"] = "time limit reached in: " + "; ".join(self.stopped)
        return row

    def after(self, stopped: tuple[str, ...]) -> OrderingResult:
        """This result with earlier stages that the time limit cut short put before its own."""
        return replace(self, stopped=stopped + self.stopped) if stopped else self
