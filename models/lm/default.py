"""Build the default language model shipped in ``data/default_model/lm.binary`` (and its ``LM.md``).

Run from the repository root (``make default-lm``)::

    dualdecomp lm default [--data-dir ../shared/data] [--out-dir data/default_model]

(``python -m dualdecomp.models.lm.default`` with the same options is an older alias, :func:`main`.)

It estimates a modified Kneser-Ney trigram (KenLM ``lmplz``, needs ``make lmplz``) from the Google
sentence-compression training sentences **and** their compressions, normalised like that corpus
(lowercase, tokens with a digit → ``##``, its rare-word placeholder ``<unk>`` → ``<rare>``):

- ``google/train180k.tsv.gz`` and ``google/train20k-b.tsv.gz`` (each sentence and its compression),
- ``google/eval.train.jsonl`` (each text and each compression).

``google/eval.dev.jsonl`` is never used for estimation; its texts (and compressions) give the reported
perplexities. The
binary is a KenLM trie quantised to 8 bits (``-q 8 -b 8``); when it exceeds the size limit (25 MB) the
model is re-estimated with the next pruning setting of :data:`PRUNE_SCHEDULE` until it fits.
``LM.md`` next to the model records the sources, the command, size, order, vocabulary and perplexity.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.core.errors import DualDecompError, InputError, ModelError
from dualdecomp.core.model_files import file_sha256
from dualdecomp.data.locations import CHECKOUT_ROOT, default_model_dir
from dualdecomp.data.normalisation import normalise_token
from dualdecomp.models.lm.build import BuiltLM, build_lm_report, read_corpora_sentences
from dualdecomp.models.lm.model import LanguageModel, load_lm

DEFAULT_DATA_DIR = CHECKOUT_ROOT.parent / "shared" / "data"
DEFAULT_OUT_DIR = default_model_dir()
SOURCES = ("google/train180k.tsv.gz", "google/train20k-b.tsv.gz", "google/eval.train.jsonl")
DEV = "google/eval.dev.jsonl"
ORDER = 3
MAX_BYTES = 25_000_000
PRUNE_SCHEDULE: tuple[tuple[int, ...] | None, ...] = (None, (0, 0, 1), (0, 1, 1), (0, 1, 2), (0, 2, 3))
"""lmplz ``--prune`` settings tried in turn until the binary fits (None = unpruned)."""


@dataclass(frozen=True)
class Perplexity:
    """Perplexity of a model on a set of sentences (KenLM's definition: ``</s>`` counts as a token)."""

    sentences: int
    tokens: int
    oov: int
    log10prob: float

    @property
    def perplexity(self) -> float:
        """10 ** (-log10prob / (tokens + sentences))."""
        return float(10.0 ** (-self.log10prob / (self.tokens + self.sentences)))


def perplexity(lm: LanguageModel, sentences: Iterator[list[str]] | Sequence[list[str]]) -> Perplexity:
    """Perplexity of ``lm`` on tokenised sentences (normalised and OOV-mapped like every LM query).

    Parameters
    ----------
    lm : LanguageModel
    sentences : iterable of lists of str

    Returns
    -------
    Perplexity
        ``oov`` counts tokens absent from the vocabulary (scored as ``<rare>`` or ``<unk>``).
    """
    n_sent = n_tok = n_oov = 0
    total = 0.0
    for tokens in sentences:
        n_sent += 1
        n_tok += len(tokens)
        n_oov += sum(1 for t in tokens if lm.lm_word(t) != normalise_token(t))
        total += lm.sentence_logprob(tokens)
    if n_sent == 0:
        raise InputError("no sentences to compute a perplexity on")
    return Perplexity(sentences=n_sent, tokens=n_tok, oov=n_oov, log10prob=total)


def _dev_sentences(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """The texts and the (non-empty) compressions of a JSONL file."""
    texts, compressions = [], []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    obj = json.loads(line)
                    texts.append(obj["text"].split())
                    compressions.extend(c.split() for c in obj.get("compressions", []) if c.split())
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                    raise InputError(f"{path}:{lineno}: malformed JSONL line ({exc})") from None
    return texts, compressions


def build_default_lm(
    data_dir: str | Path = DEFAULT_DATA_DIR,
    out_dir: str | Path = DEFAULT_OUT_DIR,
    max_bytes: int = MAX_BYTES,
    lmplz: str | Path | None = None,
    memory: str = "20%",
    log=print,
) -> tuple[BuiltLM, Perplexity]:
    """Estimate the default LM, write ``lm.binary`` and ``LM.md`` into ``out_dir``.

    Parameters
    ----------
    data_dir : str or pathlib.Path
        The shared data directory (holding ``google/``).
    out_dir : str or pathlib.Path
        Output directory (created if needed).
    max_bytes : int
        Size limit of the binary; pruning is increased along :data:`PRUNE_SCHEDULE` until it fits.
    lmplz : str or pathlib.Path, optional
        Where the KenLM programs are (see :func:`dualdecomp.models.lm.build.find_programs`).
    memory : str
        lmplz sorting memory.
    log : callable
        Progress messages.

    Returns
    -------
    (BuiltLM, Perplexity)
        The model written and its perplexity on the texts of ``google/eval.dev.jsonl``.

    Raises
    ------
    InputError
        Missing source files.
    ModelError
        lmplz missing or failing, or no pruning setting fits in ``max_bytes``.
    """
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    sources = [data_dir / s for s in SOURCES]
    dev = data_dir / DEV
    for path in [*sources, dev]:
        if not path.is_file():
            raise InputError(f"missing data file {path} (is --data-dir right?)")
    out_dir.mkdir(parents=True, exist_ok=True)
    out_path = out_dir / "lm.binary"
    dev_texts, dev_compressions = _dev_sentences(dev)

    with tempfile.TemporaryDirectory(prefix="dualdecomp-default-lm-", dir=out_dir) as tmp:
        candidate = Path(tmp) / "lm.binary"
        built, prune = build_within(lambda: read_corpora_sentences(sources), candidate, ORDER, PRUNE_SCHEDULE,
                                    max_bytes, memory, lmplz, log)
        lm = load_lm(candidate)
        ppl, ppl_comp = perplexity(lm, dev_texts), perplexity(lm, dev_compressions)
        del lm
        candidate.replace(out_path)
    built = dataclasses.replace(built, path=out_path)
    _write_report(out_dir / "LM.md", built, ppl, ppl_comp, prune, sources, data_dir)
    log(f"wrote {out_path} ({built.size_bytes} bytes); dev perplexity {ppl.perplexity:.1f} (texts), "
        f"{ppl_comp.perplexity:.1f} (compressions)")
    return built, ppl


def build_within(sentences: Callable[[], Iterable[Sequence[str]]], out_path: Path, order: int,
                 schedule: Sequence[tuple[int, ...] | None], max_bytes: int, memory: str = "20%",
                 lmplz: str | Path | None = None, log=print) -> tuple[BuiltLM, tuple[int, ...] | None]:
    """Estimate a binary LM with the first pruning setting of ``schedule`` whose file fits ``max_bytes``.

    Parameters
    ----------
    sentences : callable
        Returns the tokenised sentences afresh (one pass per setting tried).
    out_path : pathlib.Path
        The binary written (overwritten by each setting tried).
    order : int
    schedule : sequence of (tuple of int or None)
        lmplz ``--prune`` settings in the order tried (None = unpruned).
    max_bytes : int
    memory : str
        lmplz sorting memory.
    lmplz : str or pathlib.Path, optional
    log : callable

    Returns
    -------
    (BuiltLM, tuple of int or None)
        The model written and its pruning setting.

    Raises
    ------
    ModelError
        lmplz missing or failing, or no setting fits.
    """
    for prune in schedule:
        log(f"estimating an order-{order} LM, prune={prune} ...")
        built = build_lm_report(sentences(), out_path, order=order, prune=prune, binary=True, quantise=True,
                                memory=memory, lmplz=lmplz)
        log(f"  {built.size_bytes / 1e6:.1f} MB, n-grams {built.counts}, {built.seconds:.0f} s")
        if built.size_bytes <= max_bytes:
            return built, prune
    raise ModelError(f"no pruning setting gives an order-{order} model under {max_bytes} bytes")


def _write_report(path: Path, built: BuiltLM, ppl: Perplexity, ppl_comp: Perplexity,
                  prune: tuple[int, ...] | None, sources: list[Path], data_dir: Path) -> None:
    shown_dir = "../shared/data" if data_dir.resolve() == DEFAULT_DATA_DIR.resolve() else str(data_dir)
    src_lines = "\n".join(f"| `{s.relative_to(data_dir)}` | `{file_sha256(s)}` |" for s in sources)
    prune_text = "none (unpruned)" if prune is None else f"`--prune {' '.join(map(str, prune))}`"
    counts = ", ".join(f"{k + 1}-grams {c:,}" for k, c in enumerate(built.counts))
    text = f"""# Default language model: `lm.binary`

A KenLM **order-{built.order}** model, modified Kneser-Ney (`lmplz --discount_fallback`), stored as a
KenLM binary trie with 8-bit quantised probabilities and backoffs (`build_binary -q 8 -b 8 trie`).

- Size: **{built.size_bytes:,} bytes** ({built.size_bytes / 1e6:.1f} MB).
- Pruning: {prune_text}.
- Vocabulary: **{built.vocabulary_size:,}** words (unigrams, including `<unk>`, `<s>`, `</s>` and
  `<rare>`); n-grams: {counts}.
- Perplexity on the texts of `google/eval.dev.jsonl` (held out, never used for estimation):
  **{ppl.perplexity:.1f}** over {ppl.sentences:,} sentences, {ppl.tokens:,} tokens (+ one `</s>` each);
  {ppl.oov:,} tokens ({100 * ppl.oov / ppl.tokens:.1f} %) are out of vocabulary and scored as `<rare>`
  (so this is a closed-vocabulary perplexity, lower than an open-vocabulary one would be).
  On the reference compressions of the same file: **{ppl_comp.perplexity:.1f}** ({ppl_comp.sentences:,}
  sentences, {ppl_comp.tokens:,} tokens).

## Estimated from

{built.sentences:,} sentences ({built.tokens:,} tokens) of the shared data directory
(`{shown_dir}`, see its README.md / PROVENANCE.md; Google sentence-compression data, Filippova &
Altun 2013, "provided AS IS" by Google):

| file | sha256 |
|---|---|
{src_lines}

- `train180k.tsv.gz`, `train20k-b.tsv.gz`: every sentence **and** its compression (the tokens labelled 1).
- `eval.train.jsonl`: every text **and** every compression.
- Not used: `eval.dev.jsonl` (development data) and anything else.

Normalisation (`dualdecomp.data.normalisation.normalise_token`, the normalisation of the Google training
portion): tokens
lowercased, every token containing a digit replaced by `##`; the corpus' rare-word placeholder `<unk>`
is written `<rare>` (lmplz reserves `<unk>`). At query time, `dualdecomp.models.lm.model.LanguageModel` maps
any word outside the vocabulary to `<rare>`.

## Rebuild

```
make lmplz                        # or: scripts/build_lmplz.sh .tools
dualdecomp lm default --data-dir ../shared/data --out-dir data/default_model
```

Deterministic given the same inputs and KenLM version (kenlm 0.3.0 sdist from PyPI, built by
`scripts/build_lmplz.sh`); pruning is increased along `dualdecomp.models.lm.default.PRUNE_SCHEDULE` only if
the binary exceeds 25 MB (25,000,000 bytes).
"""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """The older entry point ``python -m dualdecomp.models.lm.default`` (undocumented alias of
    ``dualdecomp lm default``); returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m dualdecomp.models.lm.default",
                                     description="Build data/default_model/lm.binary and LM.md.")
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR),
                        help="shared data directory holding google/ (default: %(default)s)")
    parser.add_argument("--out-dir", default=str(DEFAULT_OUT_DIR), help="default: %(default)s")
    parser.add_argument("--max-mb", type=float, default=MAX_BYTES / 1e6,
                        help="size limit of the binary in MB of 10^6 bytes (default: %(default)s)")
    parser.add_argument("--lmplz", default=None, help="directory holding lmplz and build_binary")
    args = parser.parse_args(argv)
    try:
        build_default_lm(args.data_dir, args.out_dir, int(args.max_mb * 1e6), args.lmplz,
                         log=lambda msg: print(msg, file=sys.stderr))
    except DualDecompError as exc:
        print(f"dualdecomp.models.lm.default: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
