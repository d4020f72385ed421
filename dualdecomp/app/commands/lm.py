"""``dualdecomp lm``: estimate a KenLM language model (``build``), rebuild the shipped default LM
(``default``) or score text with one (``query``)."""

from __future__ import annotations

import argparse
import json
import sys

from dualdecomp.app.commands.deferred_parser import defer
from dualdecomp.app.commands.help_format import ParagraphHelpFormatter
from dualdecomp.app.commands.train import run_trainer
from dualdecomp.core.errors import InputError
from dualdecomp.models.registry import get_trainer

DESCRIPTION = """\
build: estimate a modified Kneser-Ney n-gram model with KenLM's lmplz from corpus files: *.jsonl (the
text and every compression of each line), *.tsv[.gz] (Google format: the sentence and its compression
from the keep labels) or plain text (one pre-tokenised sentence per line); .gz is decompressed. Tokens
are lowercased and every token with a digit becomes ##. Needs lmplz and build_binary (make lmplz).

default: rebuild the shipped default LM (data/default_model/lm.binary and its LM.md) from the Google
training data of the shared data directory: an order-3 model, 8-bit quantised, pruned until it fits
--max-mb (dualdecomp.models.lm.default).

query: print the normalised tokens (after mapping out-of-vocabulary words to <rare>) and the log10
probability, with <s> and </s>, of each pre-tokenised TEXT (or of each line of stdin), as JSON lines.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``lm`` command (subcommands ``build``, ``default`` and ``query``).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``lm`` parser (``func`` is set to :func:`run` on it and on its subcommands).
    """
    parser = subparsers.add_parser(
        "lm", help="build or query a KenLM n-gram language model", description=DESCRIPTION,
        formatter_class=ParagraphHelpFormatter)
    parser.set_defaults(func=run, lm_command=None)
    sub = parser.add_subparsers(dest="lm_command", metavar="{build,default,query}")

    build = sub.add_parser("build", help="estimate an LM from corpus files (= dualdecomp train --kind lm)",
                           description="Estimate a modified Kneser-Ney LM (KenLM lmplz) from corpus files "
                                       "(the same as dualdecomp train --kind lm --train CORPUS... "
                                       "--out OUT).")
    build.add_argument("train", nargs="+", metavar="CORPUS",
                       help="corpus files (.jsonl, .tsv[.gz] or plain text)")
    build.add_argument("out", metavar="OUT", help="output model file (KenLM binary, or ARPA with --arpa)")
    build.set_defaults(func=run)
    defer(build, _add_build_options)

    default = sub.add_parser(
        "default", help="rebuild the shipped default LM (data/default_model/lm.binary and LM.md)",
        description="Rebuild the default LM from the Google training data of the shared data directory "
                    "(sentences and their compressions; google/eval.dev.jsonl gives the perplexities) "
                    "and write lm.binary and LM.md into --out-dir. Needs lmplz (make lmplz).")
    default.add_argument("--data-dir", default=None, metavar="DIR",
                         help="shared data directory holding google/ (default: ../shared/data beside "
                              "the checkout)")
    default.add_argument("--out-dir", default=None, metavar="DIR",
                         help="where lm.binary and LM.md go (default: the embedded default model)")
    default.add_argument("--max-mb", type=float, default=25.0,
                         help="size limit of the binary in MB of 10^6 bytes (default: %(default)s)")
    default.add_argument("--lmplz", default=None, metavar="DIR",
                         help="directory holding lmplz and build_binary (default: $DUALDECOMP_LMPLZ_DIR, "
                              "PATH, then <repo>/.tools/bin)")
    default.add_argument("--memory", default="20%", help="lmplz sorting memory -S (default: %(default)s)")
    default.add_argument("--quiet", action="store_true", help="no progress messages")
    default.set_defaults(func=run)

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
    if args.lm_command == "default":
        return _default(args)
    if args.lm_command == "query":
        return _query(args)
    raise InputError("missing subcommand: dualdecomp lm {build,default,query} ... (see dualdecomp lm --help)")


def _add_build_options(parser: argparse.ArgumentParser, args: list[str]) -> None:
    """lmplz's options, declared by the ``lm`` kind (the same as ``dualdecomp train --kind lm``)."""
    # lazy: the lm kind loads KenLM and the trigram solver; keeps `dualdecomp --help` fast
    from dualdecomp.models.lm.kind import add_build_options

    add_build_options(parser)


def _build(args: argparse.Namespace) -> int:
    return run_trainer(get_trainer("lm"), args)


def _default(args: argparse.Namespace) -> int:
    # lazy: the lm kind loads KenLM; keeps `dualdecomp --help` fast
    from dualdecomp.models.lm.default import DEFAULT_DATA_DIR, DEFAULT_OUT_DIR, build_default_lm

    if not args.max_mb > 0:
        raise InputError(f"--max-mb must be positive, got {args.max_mb}")
    built, ppl = build_default_lm(args.data_dir or DEFAULT_DATA_DIR, args.out_dir or DEFAULT_OUT_DIR,
                                  int(args.max_mb * 1e6), args.lmplz, memory=args.memory,
                                  log=lambda msg: None if args.quiet else print(msg, file=sys.stderr))
    print(json.dumps({"path": str(built.path), "order": built.order, "counts": list(built.counts),
                      "bytes": built.size_bytes, "dev_perplexity": round(ppl.perplexity, 3)}))
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
