"""Corpus-level evaluation of a system output file against gold references (docs/architecture.md §4).

The per-sentence metrics (CR, token / bigram / GR F1, ROUGE) are
:mod:`dualdecomp.models.evaluation.compression`.

Corpus level: macro-average over sentences. With several references the per-sentence score is the mean
over references. When a system line carries ``references`` (gold-length mode: one compression per
reference, made at that reference's length), reference r is compared with ``references[r]``; otherwise
the single ``compression`` is compared with every reference. CR is averaged the same way. Lines carrying
``error`` are counted as failed and excluded from every average.
"""

from __future__ import annotations

import math
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import CorpusItem, read_corpus, read_jsonl_numbered
from dualdecomp.data.parsing import parse_unique
from dualdecomp.models.evaluation.compression import (
    PairScores,
    compression_rate,
    make_rouge_scorer,
    mean_scores,
    score_pair,
)

Tokens = tuple[str, ...]


# --------------------------------------------------------------------------------------------------------
# corpus level


@dataclass(frozen=True)
class EvaluationReport:
    """Corpus-level evaluation of a system output file.

    Metric fields are macro-averages over the evaluated sentences, as fractions in [0, 1].

    Attributes
    ----------
    cr : float
        Mean compression rate of the system compressions.
    token_f1, bigram_f1, gr_f1, rouge1, rouge2, rougeL : float
        Mean metrics (per sentence: mean over references).
    n : int
        Number of sentences evaluated (failed lines excluded).
    failed : int
        Number of system lines carrying ``error`` (excluded from every average).
    certified : float or None
        Fraction of scored outputs certified optimal, macro-averaged over sentences (in gold-length mode a
        sentence counts the fraction of its per-reference outputs that are certified); None if no line
        says.
    mean_seconds : float or None
        Mean ``seconds`` per decode (in gold-length mode, per-reference entries are averaged within the
        sentence first); None if no line says.
    missing : int
        Gold sentences absent from the system output (non-zero only with ``allow_missing``).
    gold_length : int
        Evaluated sentences scored in gold-length mode (system line with ``references``).
    reference_cr : float
        Mean compression rate of the gold references over the evaluated sentences.
    """

    cr: float
    token_f1: float
    bigram_f1: float
    gr_f1: float
    rouge1: float
    rouge2: float
    rougeL: float  # the name rouge-score uses
    n: int
    failed: int
    certified: float | None = None
    mean_seconds: float | None = None
    missing: int = 0
    gold_length: int = 0
    reference_cr: float = math.nan

    LABELS = {"cr": "CR", "token_f1": "token F1", "bigram_f1": "bigram F1", "gr_f1": "GR-F1",
              "rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}

    @property
    def mode(self) -> str:
        """``"gold-length"``, ``"free"`` or ``"mixed"``: how the lengths of the scored outputs were set."""
        if self.gold_length == self.n:
            return "gold-length"
        return "free" if self.gold_length == 0 else "mixed"

    def to_dict(self) -> dict[str, Any]:
        """The report as a JSON-serialisable dict (metrics as fractions; plus ``mode``).

        Returns
        -------
        dict
        """
        out = asdict(self)
        out["mode"] = self.mode
        return out

    def to_line(self) -> str:
        """One human-readable line: metrics as percentages with one decimal, then counts.

        Returns
        -------
        str
        """
        parts = [f"{label} {100 * getattr(self, name):.1f}" for name, label in self.LABELS.items()]
        tail = [f"ref CR {100 * self.reference_cr:.1f}", f"n={self.n}", f"failed={self.failed}"]
        if self.missing:
            tail.append(f"missing={self.missing}")
        tail.append(f"lengths={self.mode}")
        if self.certified is not None:
            tail.append(f"certified {100 * self.certified:.1f}%")
        if self.mean_seconds is not None:
            tail.append(f"{self.mean_seconds:.3g} s/sentence")
        return " | ".join([" · ".join(parts), " · ".join(tail)])

    @classmethod
    def markdown_header(cls, name_column: str = "system") -> str:
        """Header and separator lines of the markdown table whose rows :meth:`to_markdown_row` makes.

        Parameters
        ----------
        name_column : str
            Title of the first column.

        Returns
        -------
        str
            Two lines joined by a newline.
        """
        cols = [name_column, *cls.LABELS.values(), "n", "failed", "certified", "s/sent"]
        head = "| " + " | ".join(cols) + " |"
        sep = "|" + "|".join(["---"] + ["---:"] * (len(cols) - 1)) + "|"
        return head + "\n" + sep

    def to_markdown_row(self, name: str = "system") -> str:
        """One markdown table row (metrics as percentages with one decimal).

        Parameters
        ----------
        name : str
            Content of the first column.

        Returns
        -------
        str
        """
        cells = [name.replace("|", "\\|")]
        cells += [f"{100 * getattr(self, m):.1f}" for m in self.LABELS]
        cells += [str(self.n), str(self.failed)]
        cells.append("–" if self.certified is None else f"{100 * self.certified:.1f}%")
        cells.append("–" if self.mean_seconds is None else f"{self.mean_seconds:.3g}")
        return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class _Line:
    """A validated, non-failed system line: one system compression per reference."""

    item: CorpusItem
    outputs: tuple[Tokens, ...]
    gold_length: bool
    certified: float | None
    seconds: float | None


def _is_subsequence(sub: Sequence[str], seq: Sequence[str]) -> bool:
    it = iter(seq)
    return all(tok in it for tok in sub)


def _read_compression(obj: Mapping[str, Any], item: CorpusItem, where: str) -> Tokens:
    """The kept tokens of a system output object (``compression`` and/or ``keep``), validated."""
    comp = obj.get("compression")
    keep = obj.get("keep")
    if comp is None and keep is None:
        raise InputError(f"{where}: id {item.id!r}: no 'compression' nor 'keep'")
    tokens: Tokens | None = None
    if comp is not None:
        if not isinstance(comp, str):
            raise InputError(f"{where}: id {item.id!r}: 'compression' must be a string")
        tokens = tuple(comp.split())
        if not _is_subsequence(tokens, item.text):
            raise InputError(f"{where}: id {item.id!r}: compression is not a subsequence of the gold text")
    if keep is not None:
        if (not isinstance(keep, list)
                or not all(k in (0, 1) and isinstance(k, int | bool) for k in keep)):
            raise InputError(f"{where}: id {item.id!r}: 'keep' must be a list of 0/1")
        if len(keep) != item.n:
            raise InputError(f"{where}: id {item.id!r}: 'keep' has {len(keep)} entries, the gold text "
                             f"has {item.n} tokens")
        kept = tuple(t for t, k in zip(item.text, keep, strict=True) if k)
        if tokens is not None and kept != tokens:
            raise InputError(f"{where}: id {item.id!r}: 'keep' is inconsistent with 'compression'")
        tokens = kept
    assert tokens is not None
    return tokens


def _optional_number(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where}: {key!r} must be a finite number")
    return float(value)


def _optional_bool(obj: Mapping[str, Any], key: str, where: str) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise InputError(f"{where}: {key!r} must be true or false")
    return value


def _read_line(row: Mapping[str, Any], item: CorpusItem, where: str) -> _Line:
    if not item.compressions:
        raise InputError(f"{where}: gold item {item.id!r} has no reference compression")
    text = row.get("text")
    if text is not None and (not isinstance(text, str) or tuple(text.split()) != item.text):
        raise InputError(f"{where}: id {item.id!r}: 'text' differs from the gold text")
    certified = _optional_bool(row, "certified", where)
    seconds = _optional_number(row, "seconds", where)
    refs = row.get("references")
    if refs is None:
        comp = _read_compression(row, item, where)
        return _Line(item, (comp,) * len(item.compressions), False,
                     None if certified is None else float(certified), seconds)
    if not isinstance(refs, list) or not all(isinstance(r, dict) for r in refs):
        raise InputError(f"{where}: id {item.id!r}: 'references' must be a list of objects")
    if len(refs) != len(item.compressions):
        raise InputError(f"{where}: id {item.id!r}: {len(refs)} entries in 'references', the gold item "
                         f"has {len(item.compressions)} references")
    if "compression" in row or "keep" in row:
        _read_compression(row, item, where)  # validate the top-level output too
    outputs = []
    entry_cert: list[bool] = []
    entry_secs: list[float] = []
    for r, (entry, gold) in enumerate(zip(refs, item.compressions, strict=True)):
        here = f"{where}: references[{r}]"
        comp = _read_compression(entry, item, here)
        length = entry.get("length")
        if length is not None:
            if isinstance(length, bool) or not isinstance(length, int):
                raise InputError(f"{here}: id {item.id!r}: 'length' must be an integer")
            if length != len(comp):
                raise InputError(f"{here}: id {item.id!r}: 'length' is {length} but the compression has "
                                 f"{len(comp)} tokens")
        if len(comp) != len(gold):
            raise InputError(f"{here}: id {item.id!r}: compression has {len(comp)} tokens, gold reference "
                             f"{r} has {len(gold)} (gold-length output made for another gold file?)")
        outputs.append(comp)
        c = _optional_bool(entry, "certified", here)
        s = _optional_number(entry, "seconds", here)
        if c is not None:
            entry_cert.append(c)
        if s is not None:
            entry_secs.append(s)
    # Certificates and times describe the scored outputs: those of the entries (one decode each) when
    # they carry them, else the line's own fields.
    if entry_cert:
        cert_value: float | None = sum(entry_cert) / len(entry_cert)
    else:
        cert_value = None if certified is None else float(certified)
    if entry_secs:
        seconds = _mean(entry_secs)
    return _Line(item, tuple(outputs), True, cert_value, seconds)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def evaluate(gold: Sequence[CorpusItem], rows: Iterable[tuple[Hashable, Mapping[str, Any]]],
             allow_missing: bool = False, source: str = "system output",
             progress: bool = False) -> EvaluationReport:
    """Evaluate system output rows against a gold corpus.

    Parameters
    ----------
    gold : sequence of CorpusItem
        The gold corpus (each evaluated item needs at least one reference compression).
    rows : iterable of (location, dict)
        The system output lines with a location for messages (e.g. the line number, as given by
        ``dualdecomp.data.jsonl.read_jsonl_numbered``). Format: see ``dualdecomp compress``.
    allow_missing : bool
        Tolerate gold sentences absent from the system output (they are counted in ``missing``);
        otherwise they are an error.
    source : str
        Name of the system output used in messages (``source:location``).
    progress : bool
        Show a progress bar while parsing.

    Returns
    -------
    EvaluationReport

    Raises
    ------
    InputError
        On a system id that is missing, unknown to the gold corpus or repeated; a compression that is not
        a subsequence of the gold text; a ``keep`` inconsistent with the compression; a gold-length output
        whose lengths do not match the references; missing gold sentences (unless ``allow_missing``); or
        when no sentence is left to evaluate.
    """
    by_id: dict[str, CorpusItem] = {}
    for item in gold:
        if item.id in by_id:
            raise InputError(f"gold corpus: duplicate id {item.id!r}")
        by_id[item.id] = item
    seen: set[str] = set()
    lines: list[_Line] = []
    failed = 0
    for loc, row in rows:
        where = f"{source}:{loc}"
        raw_id = row.get("id")
        if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise InputError(f"{where}: missing or invalid 'id' (needed to match the gold corpus)")
        sid = str(raw_id)
        item = by_id.get(sid)
        if item is None:
            raise InputError(f"{where}: id {sid!r} is not in the gold corpus")
        if sid in seen:
            raise InputError(f"{where}: id {sid!r} appears twice")
        seen.add(sid)
        if row.get("error") is not None:
            failed += 1
            continue
        lines.append(_read_line(row, item, where))
    missing = [sid for sid in by_id if sid not in seen]
    if missing and not allow_missing:
        raise InputError(f"{source}: {len(missing)} of {len(by_id)} gold sentences have no output line "
                         f"(first: {missing[0]!r}); use allow_missing to evaluate the others")
    if not lines:
        raise InputError(f"{source}: no sentence to evaluate ({failed} failed line(s))")

    seqs: list[Tokens] = []
    for line in lines:
        seqs.extend(line.outputs)
        seqs.extend(line.item.compressions)
    parses = parse_unique(seqs, progress=progress)
    scorer = make_rouge_scorer()

    per_sentence: list[PairScores] = []
    ref_cr: list[float] = []
    for line in lines:
        src = line.item.text
        pairs = [score_pair(src, out, ref, parses[out], parses[ref], scorer)
                 for out, ref in zip(line.outputs, line.item.compressions, strict=True)]
        per_sentence.append(mean_scores(pairs))
        ref_cr.append(_mean([compression_rate(src, ref) for ref in line.item.compressions]))
    means = mean_scores(per_sentence)
    certs = [line.certified for line in lines if line.certified is not None]
    secs = [line.seconds for line in lines if line.seconds is not None]
    return EvaluationReport(
        **asdict(means),
        n=len(lines),
        failed=failed,
        certified=_mean(certs) if certs else None,
        mean_seconds=_mean(secs) if secs else None,
        missing=len(missing),
        gold_length=sum(line.gold_length for line in lines),
        reference_cr=_mean(ref_cr),
    )


def evaluate_files(gold_path: str | os.PathLike[str], system_path: str | os.PathLike[str],
                   allow_missing: bool = False, progress: bool = False) -> EvaluationReport:
    """Evaluate a system output JSONL file against a gold corpus JSONL file.

    Parameters
    ----------
    gold_path : str or path-like
        Gold corpus in the project JSONL format (``text`` and ``compressions``).
    system_path : str or path-like
        Output of ``dualdecomp compress`` (JSONL, one line per sentence, matched to the gold by ``id``).
    allow_missing : bool
        Tolerate gold sentences without an output line (counted in ``missing``).
    progress : bool
        Show a progress bar while parsing.

    Returns
    -------
    EvaluationReport

    Raises
    ------
    InputError
        On unreadable files, invalid JSON (``path:line``), and every case listed in :func:`evaluate`.
    """
    gold = read_corpus(gold_path)
    return evaluate(gold, read_jsonl_numbered(system_path), allow_missing=allow_missing,
                    source=os.fspath(system_path), progress=progress)
