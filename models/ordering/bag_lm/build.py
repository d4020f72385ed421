"""Estimate the LM beam's n-gram models (``lm_beam.binary``, and ``lm_beam_cased.binary`` in a word-order
model directory), and choose its beam on dev.

The sources are the default LM's Google sentence-compression training sentences and compressions
(``dualdecomp.models.lm.default.SOURCES``) plus the sentences of the EWT train file (never dev), estimated
by KenLM's ``lmplz`` (modified Kneser-Ney) with the first pruning setting of :func:`prune_schedule` whose
binary fits in 25 MB, the default LM's size limit. ``lm_beam.json`` beside it records the sources (with
their sha256), the order, the pruning, the n-gram counts and the size. The cased LM is estimated from the EWT
train sentences alone, tokens as written (no lowercasing, no digit masking), unpruned. Orders and weights
were chosen on dev by the rules in docs/word-ordering.md ("An LM beam decoder for bags").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import file_sha256
from dualdecomp.data.ordering.inputs import OrderingExample
from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.evaluation import certified_share, evaluate
from dualdecomp.models.lm import MAX_BYTES, SOURCES, build_lm_report, build_within, read_corpora_sentences
from dualdecomp.models.ordering.bag_lm.search import CASED_LM_FILE, LM_FILE, LMTerm, lm_beam_decode

PROVENANCE_FILE = "lm_beam.json"
EWT_TRAIN = "ud-english-ewt/en_ewt-ud-train.conllu"
SELECTION_CONDITION = "bnp"


def prune_schedule(order: int) -> tuple[tuple[int, ...] | None, ...]:
    """The pruning settings tried in turn: unpruned; singletons pruned from order 3 up; from order 2 up;
    singletons of order 2 and counts up to 2 from order 3 up.

    Parameters
    ----------
    order : int
        At least 3.

    Returns
    -------
    tuple
        lmplz ``--prune`` settings (None = unpruned), one threshold per order.
    """
    if order < 3:
        raise InputError(f"the LM beam's LM is estimated with order 3 or more (got {order})")
    rest = order - 3
    return (None, (0, 0, 1, *[1] * rest), (0, 1, 1, *[1] * rest), (0, 1, 2, *[2] * rest))


def build_lm_beam_lm(data_dir: str | Path, out_dir: str | Path, order: int = 4, memory: str = "20%",
                     lmplz: str | Path | None = None, log=print, cased_order: int | None = None) -> dict:
    """Estimate the LM beam's LMs into ``out_dir`` (:data:`LM_FILE`, optionally :data:`CASED_LM_FILE`, and
    :data:`PROVENANCE_FILE`).

    Parameters
    ----------
    data_dir : str or Path
        The shared data directory (``google/`` and ``ud-english-ewt/``).
    out_dir : str or Path
        A word-order model directory.
    order : int
    memory : str
        lmplz sorting memory.
    lmplz : str or Path, optional
        Where the KenLM programs are.
    log : callable
    cased_order : int, optional
        Also estimate a cased LM of this order (unpruned) from the EWT train sentences as written.

    Returns
    -------
    dict
        The provenance written to :data:`PROVENANCE_FILE`.

    Raises
    ------
    InputError
        Missing source files or a bad order.
    ModelError
        lmplz missing or failing, or no pruning setting fits.
    """
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    sources = [data_dir / s for s in (*SOURCES, EWT_TRAIN)]
    for path in sources:
        if not path.is_file():
            raise InputError(f"missing data file {path} (is --data-dir right?)")
    schedule = prune_schedule(order)
    ewt = [list(example.words) for example in read_conllu_examples(sources[-1])]  # read once, used by both

    def sentences() -> Iterator[list[str]]:
        yield from read_corpora_sentences(sources[:-1])
        yield from ewt

    def describe(paths: list[Path]) -> list[dict]:
        return [{"file": str(p.relative_to(data_dir)), "sha256": file_sha256(p)} for p in paths]

    out_dir.mkdir(parents=True, exist_ok=True)
    built, prune = build_within(sentences, out_dir / LM_FILE, order, schedule, MAX_BYTES, memory, lmplz, log)
    cased = None
    if cased_order is not None:
        log(f"estimating the cased order-{cased_order} LM of the EWT train sentences ...")
        made = build_lm_report(ewt, out_dir / CASED_LM_FILE, order=cased_order, memory=memory, lmplz=lmplz,
                               cased=True)
        cased = {"file": CASED_LM_FILE, "order": made.order, "prune": None, "size_bytes": made.size_bytes,
                 "ngram_counts": list(made.counts), "sentences": made.sentences, "tokens": made.tokens,
                 "tokens_as_written": True, "sources": describe(sources[-1:])}
    provenance = {"file": LM_FILE, "order": built.order, "prune": list(prune) if prune else None,
                  "max_bytes": MAX_BYTES, "size_bytes": built.size_bytes, "ngram_counts": list(built.counts),
                  "sentences": built.sentences, "tokens": built.tokens,
                  "estimation": "KenLM lmplz, modified Kneser-Ney (--discount_fallback); binary trie, "
                                "-q 8 -b 8",
                  "sources": describe(sources), "cased": cased}
    (out_dir / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
    return provenance


def select_beam(terms: Sequence[LMTerm], dev: Sequence[OrderingExample], beams: Sequence[int],
                condition: str = SELECTION_CONDITION, seed: int = 0,
                log: Callable[[dict], None] = lambda entry: None) -> tuple[int, list[dict]]:
    """The beam of the stated rule: the highest BLEU of the LM beam on the selection sentences (ties: the
    smaller beam).

    Parameters
    ----------
    terms : sequence of LMTerm
        The LMs of the search, with their weights.
    dev : sequence of OrderingExample
        The selection sentences (dev 1000-1199 in the recipe).
    beams : sequence of int
        Candidates (positive).
    condition : str
        The input condition decoded (``bnp``: the bag with its base NPs as units).
    seed : int
        Sentence k uses seed + k.
    log : callable
        Called with each candidate's grid entry.

    Returns
    -------
    (int, list of dict)
        The chosen beam and the grid (beam, BLEU, certified share).
    """
    if not beams or min(beams) < 1:
        raise InputError("the LM beams tried must be positive")
    grid = []
    for beam in sorted(set(beams)):
        scores, results = evaluate(list(dev), lambda inp, b=beam: lm_beam_decode(terms, inp, b), condition,
                                   seed)
        entry = {"beam": beam, "bleu": round(scores.bleu, 2),
                 "certified": certified_share(results)}
        log(entry)
        grid.append(entry)
    best = max(grid, key=lambda e: (e["bleu"], -e["beam"]))
    return best["beam"], grid
