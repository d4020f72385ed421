"""The ``lm`` component kind: a KenLM trigram language model as a trigram path (contract 2), estimated by
KenLM's lmplz (``dualdecomp train --kind lm``, also ``dualdecomp lm build``).

Its potentials are context-pruned (:meth:`~dualdecomp.models.lm.model.LanguageModel.trigram_rows`):
memory grows with the number of distinct KenLM contexts of the sentence, not as (n+2)^3.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.registry import ComponentKind, Trainer, TrainingContext
from dualdecomp.solvers.ngram import PackedTrigram, Trigram


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """lmplz's options (``--order``, ``--prune``, ``--arpa``, ``--no-quantise``, ``--memory``, ``--lmplz``),
    shared by ``dualdecomp train --kind lm`` and ``dualdecomp lm build``."""
    parser.add_argument("--order", type=int, default=3, help="n-gram order (default: %(default)s)")
    parser.add_argument("--prune", type=int, nargs="+", default=None, metavar="N",
                        help="lmplz --prune thresholds per order, e.g. --prune 0 0 1 "
                             "(drop singleton trigrams)")
    parser.add_argument("--arpa", action="store_true", help="write an ARPA file instead of a binary trie")
    parser.add_argument("--no-quantise", action="store_true",
                        help="do not quantise the binary to 8 bits (-q 8 -b 8)")
    old = "--no-quantize"  # old spelling kept: still accepted, not shown (docs/glossary.md)
    parser.add_argument(old, dest="no_quantise", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory", default="20%", help="lmplz sorting memory -S (default: %(default)s)")
    parser.add_argument("--lmplz", default=None, metavar="DIR",
                        help="directory holding lmplz and build_binary (default: $DUALDECOMP_LMPLZ_DIR, "
                             "PATH, then <repo>/.tools/bin)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind lm``."""
    parser.add_argument("--train", nargs="+", required=True, metavar="CORPUS",
                        help="corpus files: *.jsonl (the text and every compression of each line), "
                             "*.tsv[.gz] (Google format) or plain text (one pre-tokenised sentence per line)")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="output model file (KenLM binary, or ARPA with --arpa)")
    add_build_options(parser)


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Estimate the LM of the ``--train`` corpora into ``--out``; return the build report."""
    # lazy: loading the kind to decode does not load its trainer
    from dualdecomp.models.lm.build import build_lm_report, read_corpora_sentences, read_corpus_sentences

    for path in args.train:
        read_corpus_sentences(path)  # checks that every file exists before the long run
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"OUT is a directory: {out}")
    built = build_lm_report(read_corpora_sentences(args.train), out, order=args.order, prune=args.prune,
                            binary=not args.arpa, quantise=not args.no_quantise, memory=args.memory,
                            lmplz=args.lmplz)
    return {"path": str(built.path), "order": built.order, "counts": list(built.counts),
            "sentences": built.sentences, "tokens": built.tokens, "bytes": built.size_bytes,
            "seconds": round(built.seconds, 3)}


KIND = ComponentKind(
    name="lm",
    load=load_lm,
    potentials=lambda lm, sentence, deadline=None: lm.trigram_rows(sentence.tokens, deadline),
    weighted=lambda T, weight: Trigram(T.scaled(weight) if isinstance(T, PackedTrigram) else weight * T),
    components=(Trigram,),
    trainer=Trainer(summary="a KenLM n-gram LM, modified Kneser-Ney by lmplz (also: dualdecomp lm build)",
                    add_arguments=add_arguments, train=train_from_options),
    timed=True,
)
