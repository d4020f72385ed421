"""The batch row of one compressed line (``dualdecomp compress``): the compressor's part of the batch
protocol (:class:`dualdecomp.app.batch.BatchProcessor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dualdecomp.app.safe_text import safe_text
from dualdecomp.core.deadline import Deadline
from dualdecomp.core.errors import DualDecompError, SolverError
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import CorpusItem

if TYPE_CHECKING:
    # lazy: for the annotation only (the batch imports this module)
    from dualdecomp.app.batch import BatchOptions

__all__ = ["compression_row"]


def compression_row(index: int, item: CorpusItem, sentence, compressor, options: BatchOptions,
                    deadline: Deadline | None = None) -> tuple[dict, int]:
    """One line's row and exit code; ``deadline``, when given, was started before the line's parse.

    ``sentence`` is None for a line over the compressor's ``max_tokens`` (not parsed): its row is the
    limit's error. The length request (``options.spec``, gold lengths from the item's compressions) and
    ``options.chars`` go to ``compressor.compress_lengths``; with gold lengths every reference's
    compression is added under ``references``.
    """
    spec = options.spec
    base = {"id": item.id, "text": " ".join(item.text)}
    try:
        if sentence is None:  # not parsed: over the compressor's size limit
            compressor.check_size(len(item.text))
        if deadline is not None:
            deadline.check("parsing")
        gold = None
        if spec.mode == "gold":
            gold = [int(keep_vector(item.text, c).sum()) for c in item.compressions]
        lengths = spec.for_sentence(sentence.n, index, gold)
        results = compressor.compress_lengths(sentence, lengths, options.chars, time_limit=options.time_limit,
                                              deadline=deadline)
    except DualDecompError as exc:
        return {**base, "error": safe_text(str(exc))}, exc.exit_code
    except MemoryError:
        return ({**base, "error": f"out of memory compressing this line ({len(item.text)} tokens)"},
                SolverError.exit_code)
    timing, trace = not options.deterministic, options.trace
    row = {**base, **results[0].to_json(timing=timing, trace=trace)}
    if item.spaces is not None:  # raw-text input: the compression with the original spacing
        row["output"] = results[0].text
    if spec.mode == "gold":
        row["references"] = [{"length": m, **c.to_json(timing=timing, trace=trace)}
                             for m, c in zip(lengths, results, strict=True)]
    return row, 0
