"""``dualdecomp lm``: estimate a KenLM language model (``build``) or score text with one (``query``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dualdecomp.core.errors import InputError

DESCRIPTION = """\
build: estimate a modified Kneser-Ney n-gram model with KenLM's lmplz from corpus files: *.jsonl (the
text and every compression of each line), *.tsv[.gz] (Google format: the sentence and its compression
from the keep labels) or plain text (one pre-tokenised sentence per line); .gz is decompressed. Tokens
are lowercased and every token with a digit becomes ##. Needs lmplz and build_binary (`make lmplz`).

query: print the normalised tokens (after mapping out-of-vocabulary words to <rare>) and the log10
probability, with <s> and </s>, of each pre-tokenised TEXT (or of each line of stdin), as JSON lines.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``lm`` command (subcommands ``build`` and ``query``).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``lm`` parser (``func`` is set to :func:`run` on it and on both subcommands).
    """
    parser = subparsers.add_parser(
        "lm", help="build or query a KenLM n-gram language model", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(func=run, lm_command=None)
    sub = parser.add_subparsers(dest="lm_command", metavar="{build,query}")

    build = sub.add_parser("build", help="estimate an LM from corpus files",
                           description="Estimate a modified Kneser-Ney LM (KenLM lmplz) from corpus files.")
    build.add_argument("corpus", nargs="+", metavar="CORPUS",
                       help="corpus files (.jsonl, .tsv[.gz] or plain text)")
    build.add_argument("out", metavar="OUT", help="output model file (KenLM binary, or ARPA with --arpa)")
    build.add_argument("--order", type=int, default=3, help="n-gram order (default: %(default)s)")
    build.add_argument("--prune", type=int, nargs="+", default=None, metavar="N",
                       help="lmplz --prune thresholds per order, e.g. --prune 0 0 1 "
                            "(drop singleton trigrams)")
    build.add_argument("--arpa", action="store_true", help="write an ARPA file instead of a binary trie")
    build.add_argument("--no-quantize", action="store_true",
                       help="do not quantise the binary to 8 bits (-q 8 -b 8)")
    build.add_argument("--memory", default="20%", help="lmplz sorting memory -S (default: %(default)s)")
    build.add_argument("--lmplz", default=None, metavar="DIR",
                       help="directory holding lmplz and build_binary (default: $DUALDECOMP_LMPLZ_DIR, "
                            "PATH, then <repo>/.tools/bin)")
    build.set_defaults(func=run)

    query = sub.add_parser("query", help="score pre-tokenised text with an LM",
                           description="Print the LM tokens and log10 probability of each TEXT "
                                       "(or of each stdin line) as one JSON line.")
    query.add_argument("model", metavar="MODEL", help="KenLM model (binary or ARPA)")
    query.add_argument("text", nargs="*", metavar="TEXT",
                       help="space-separated tokens (default: read one sentence per stdin line)")
    query.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``lm build`` or ``lm query``; returns the exit code.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of :func:`add_parser`.

    Returns
    -------
    int
        0 on success.

    Raises
    ------
    InputError
        No subcommand, bad options or corpus files.
    ModelError
        Missing or invalid model, or lmplz missing or failing.
    """
    if args.lm_command == "build":
        return _build(args)
    if args.lm_command == "query":
        return _query(args)
    raise InputError("missing subcommand: dualdecomp lm {build,query} ... (see dualdecomp lm --help)")


def _build(args: argparse.Namespace) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.models.lm.build import build_lm_report, read_corpora_sentences, read_corpus_sentences

    for path in args.corpus:
        read_corpus_sentences(path)  # checks that every file exists before the long run
    out = Path(args.out)
    if out.is_dir():
        raise InputError(f"OUT is a directory: {out}")
    built = build_lm_report(read_corpora_sentences(args.corpus), out, order=args.order, prune=args.prune,
                            binary=not args.arpa, quantize=not args.no_quantize, memory=args.memory,
                            lmplz=args.lmplz)
    print(json.dumps({"path": str(built.path), "order": built.order, "counts": list(built.counts),
                      "sentences": built.sentences, "tokens": built.tokens, "bytes": built.size_bytes,
                      "seconds": round(built.seconds, 3)}))
    return 0


def _query(args: argparse.Namespace) -> int:
    # lazy: keeps `dualdecomp --help` and the other commands fast
    from dualdecomp.models.lm.model import load_lm

    lm = load_lm(args.model)
    texts = args.text if args.text else (line.rstrip("\n") for line in sys.stdin)
    for text in texts:
        tokens = text.split()
        words = lm.lm_words(tokens)
        print(json.dumps({"text": text, "tokens": words, "log10prob": lm.sentence_logprob(tokens)},
                         ensure_ascii=False), flush=True)
    return 0
