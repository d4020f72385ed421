"""Evaluation of deletion compressions against gold references (DESIGN.md §4).

Per-sentence metrics of one system compression against one reference (both token sequences, deletion
compressions of the same source):

- **CR**, compression rate: kept tokens / source tokens.
- **token F1**: F1 of the clipped token-count overlap (multiset intersection).
- **bigram F1**: the same over the multisets of adjacent bigrams of the kept tokens, each sequence padded
  with the boundary markers ``<s> … </s>``. The padding is a choice: it gives one-token and empty
  compressions bigrams (``<s> w``, ``w </s>``; ``<s> </s>``), so every compression, including the empty
  one, is scored by the same formula, and it rewards getting the first and the last kept word right
  (like the bigram component of the compression models, DESIGN.md §2). Markers are represented by
  ``None`` so they can never coincide with a real token. Numbers are therefore somewhat higher than
  unpadded bigram F1, especially on short compressions.
- **GR-F1** (Clarke & Lapata 2006): F1 over the multisets of labelled dependency triples
  ``(head word, dependent word, label)`` of the spaCy parses of the system output and of the reference,
  each parsed as a sentence of its own (pre-tokenised, ``dualdecomp.data.parsing.parse_tokens``). The root
  arc is included with head word ``"ROOT"``. Words are compared exactly (case-sensitive surface forms).
- **ROUGE-1, ROUGE-2, ROUGE-L** F-measures from ``rouge-score`` (``use_stemmer=False``, the package's
  default tokenizer, fed the space-joined tokens). One convention on top of the package: when the
  system and reference token sequences are identical the three scores are 1 (the package scores 0 when
  its tokenizer leaves no n-gram, e.g. ROUGE-2 of a one-word output, or an output made only of
  punctuation).

F1 conventions, shared by token, bigram and GR F1: both multisets empty → 1; exactly one empty → 0.
F1 is symmetric in system and reference.

Corpus level: macro-average over sentences. With several references the per-sentence score is the mean
over references. When a system line carries ``references`` (gold-length mode: one compression per
reference, made at that reference's length), reference r is compared with ``references[r]``; otherwise
the single ``compression`` is compared with every reference. CR is averaged the same way. Lines carrying
``error`` are counted as failed and excluded from every average.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from dualdecomp.core.errors import InputError
from dualdecomp.data.jsonl import CorpusItem, read_corpus, read_jsonl_numbered
from dualdecomp.data.sentence import Sentence

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
ROOT = "ROOT"
"""Head word of the root arc in GR triples."""

Tokens = tuple[str, ...]


# --------------------------------------------------------------------------------------------------------
# per-sentence metrics


def compression_rate(source: Sequence[str], compression: Sequence[str]) -> float:
    """Compression rate: kept tokens / source tokens.

    Parameters
    ----------
    source : sequence of str
        The source tokens (non-empty).
    compression : sequence of str
        The kept tokens.

    Returns
    -------
    float
        ``len(compression) / len(source)``.
    """
    if not source:
        raise InputError("compression rate of an empty source is undefined")
    return len(compression) / len(source)


def multiset_f1(system: Counter[Any], reference: Counter[Any]) -> float:
    """F1 of the clipped overlap of two multisets.

    precision = |system ∩ reference| / |system|, recall = |system ∩ reference| / |reference|, where ∩ takes
    the minimum count of each element. Both empty → 1.0; exactly one empty → 0.0.

    Parameters
    ----------
    system, reference : Counter
        Multisets (non-positive counts are ignored).

    Returns
    -------
    float
        F1 in [0, 1]; symmetric in its arguments.
    """
    n_sys = sum(c for c in system.values() if c > 0)
    n_ref = sum(c for c in reference.values() if c > 0)
    if n_sys == 0 and n_ref == 0:
        return 1.0
    if n_sys == 0 or n_ref == 0:
        return 0.0
    overlap = sum((system & reference).values())
    # 2PR / (P + R) with P = o / s and R = o / r simplifies to 2o / (s + r)
    return 2.0 * overlap / (n_sys + n_ref)


def token_f1(system: Sequence[str], reference: Sequence[str]) -> float:
    """Token F1: clipped token-count overlap of a system compression and a reference.

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens.

    Returns
    -------
    float
        F1 in [0, 1] (1 when both are empty, 0 when exactly one is).
    """
    return multiset_f1(Counter(system), Counter(reference))


def padded_bigrams(tokens: Sequence[str]) -> Counter[tuple[str | None, str | None]]:
    """Multiset of adjacent bigrams of ``<s> tokens </s>``.

    The boundary markers are ``None`` (``<s>`` on the left, ``</s>`` on the right), so they never collide
    with a token. A sequence of L tokens has L + 1 bigrams; the empty one has ``(<s>, </s>)``.

    Parameters
    ----------
    tokens : sequence of str
        Kept tokens.

    Returns
    -------
    Counter
        Bigram counts.
    """
    padded: list[str | None] = [None, *tokens, None]
    return Counter(zip(padded[:-1], padded[1:], strict=True))


def bigram_f1(system: Sequence[str], reference: Sequence[str]) -> float:
    """Bigram F1: clipped overlap of the boundary-padded bigram multisets (see :func:`padded_bigrams`).

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens.

    Returns
    -------
    float
        F1 in [0, 1]; 1 when both sequences are empty (both are just ``<s> </s>``).
    """
    return multiset_f1(padded_bigrams(system), padded_bigrams(reference))


def at_reference_lengths(tokens: Sequence[str], references: Iterable[Sequence[str]],
                         decode_at: Callable[[int], Sequence[bool]],
                         metric: Callable[[Sequence[str], Sequence[str]], float] = bigram_f1) -> float:
    """Mean ``metric`` over the references of the compression decoded at each reference's length.

    The gold-length protocol of the project's dev scores: ``decode_at(L)`` returns the keep vector of a
    compression of ``tokens`` with L kept tokens; it is called once per distinct reference length.
    """
    decoded: dict[int, Sequence[bool]] = {}
    scores = []
    for ref in references:
        if len(ref) not in decoded:
            decoded[len(ref)] = decode_at(len(ref))
        kept = [t for t, k in zip(tokens, decoded[len(ref)], strict=True) if k]
        scores.append(metric(kept, ref))
    return sum(scores) / len(scores)


def gr_triples(sentence: Sentence) -> Counter[tuple[str, str, str]]:
    """Labelled dependency triples ``(head word, dependent word, label)`` of a parsed sentence.

    Parameters
    ----------
    sentence : Sentence
        A parse (``dualdecomp.data.parsing.parse_tokens``).

    Returns
    -------
    Counter
        Triple counts; the root arc has head word ``"ROOT"``.
    """
    out: Counter[tuple[str, str, str]] = Counter()
    for tok, head, label in zip(sentence.tokens, sentence.heads, sentence.labels, strict=True):
        out[(ROOT if head == 0 else sentence.tokens[head - 1], tok, label)] += 1
    return out


def gr_f1(system: Sentence, reference: Sentence) -> float:
    """GR-F1 (Clarke & Lapata 2006): F1 over labelled dependency triples of two parses.

    Parameters
    ----------
    system, reference : Sentence
        Parses of the system compression and of the reference, each parsed as its own sentence.

    Returns
    -------
    float
        F1 in [0, 1] (1 when both are empty, 0 when exactly one is).
    """
    return multiset_f1(gr_triples(system), gr_triples(reference))


def make_rouge_scorer():
    """The ROUGE scorer used by the evaluation (ROUGE-1/2/L, no stemming).

    Returns
    -------
    rouge_score.rouge_scorer.RougeScorer
    """
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=False)


def rouge_f1(system: Sequence[str], reference: Sequence[str], scorer=None) -> tuple[float, float, float]:
    """ROUGE-1, ROUGE-2 and ROUGE-L F-measures of a system compression against one reference.

    Parameters
    ----------
    system, reference : sequence of str
        Kept tokens (fed to ``rouge-score`` space-joined).
    scorer : RougeScorer, optional
        A scorer from :func:`make_rouge_scorer` (one is made when omitted).

    Returns
    -------
    tuple of float
        (ROUGE-1, ROUGE-2, ROUGE-L) F-measures in [0, 1]; all 1 when the token sequences are identical.
    """
    if tuple(system) == tuple(reference):
        return (1.0, 1.0, 1.0)
    if scorer is None:
        scorer = make_rouge_scorer()
    scores = scorer.score(" ".join(reference), " ".join(system))  # (target, prediction)
    r1, r2, rl = (float(scores[t].fmeasure) for t in ROUGE_TYPES)
    return (r1, r2, rl)


@dataclass(frozen=True)
class PairScores:
    """Metrics of one system compression against one reference (all fractions in [0, 1]).

    Attributes
    ----------
    cr : float
        Compression rate of the system compression.
    token_f1, bigram_f1, gr_f1, rouge1, rouge2, rougeL : float
        See the module docstring.
    """

    cr: float
    token_f1: float
    bigram_f1: float
    gr_f1: float
    rouge1: float
    rouge2: float
    rougeL: float  # the name rouge-score uses


METRICS = tuple(f.name for f in fields(PairScores))


def score_pair(source: Sequence[str], system: Sequence[str], reference: Sequence[str],
               system_parse: Sentence, reference_parse: Sentence, scorer=None) -> PairScores:
    """All metrics of one system compression against one reference.

    Parameters
    ----------
    source : sequence of str
        The source tokens.
    system, reference : sequence of str
        Kept tokens of the system output and of the reference.
    system_parse, reference_parse : Sentence
        spaCy parses of ``system`` and ``reference`` (each as its own sentence).
    scorer : RougeScorer, optional
        From :func:`make_rouge_scorer`.

    Returns
    -------
    PairScores
    """
    r1, r2, rl = rouge_f1(system, reference, scorer)
    return PairScores(
        cr=compression_rate(source, system),
        token_f1=token_f1(system, reference),
        bigram_f1=bigram_f1(system, reference),
        gr_f1=gr_f1(system_parse, reference_parse),
        rouge1=r1,
        rouge2=r2,
        rougeL=rl,
    )


def mean_scores(scores: Sequence[PairScores]) -> PairScores:
    """Field-wise mean of several ``PairScores``.

    Parameters
    ----------
    scores : sequence of PairScores
        Non-empty.

    Returns
    -------
    PairScores
    """
    if not scores:
        raise InputError("mean of no scores")
    return PairScores(**{m: math.fsum(getattr(s, m) for s in scores) / len(scores) for m in METRICS})


def parse_unique(token_lists: Iterable[Sequence[str]], batch_size: int = 256,
                 progress: bool = False) -> dict[Tokens, Sentence]:
    """Parse each distinct token sequence once, in batches.

    Parameters
    ----------
    token_lists : iterable of sequences of str
        Token sequences, possibly repeated.
    batch_size : int
        Number of sequences per ``parse_tokens`` call.
    progress : bool
        Show a tqdm progress bar (on stderr).

    Returns
    -------
    dict
        Token tuple → its parse. The empty sequence maps to an empty ``Sentence`` (no parsing).
    """
    from dualdecomp.data.parsing import parse_tokens

    unique: dict[Tokens, None] = {}
    for toks in token_lists:
        unique.setdefault(tuple(toks), None)
    todo = [t for t in unique if t]
    out: dict[Tokens, Sentence] = {}
    if () in unique:
        out[()] = Sentence(tokens=(), pos=(), tags=(), heads=(), labels=())
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc="parsing", unit="sent", leave=False)
    try:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start:start + batch_size]
            for toks, sent in zip(chunk, parse_tokens(chunk, batch_size=batch_size), strict=True):
                out[toks] = sent
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return out


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
