"""``dualdecomp train --kind rewriting``: build a rewriting model directory from the rewriting corpus
(:func:`~dualdecomp.models.rewriting.pipeline.train_rewrite_model`; ``make rewrite-model`` runs it with
the embedded model's settings). Not a component kind: the rewriting model is a task's model, decoded by
``dualdecomp rewrite``.
"""

from __future__ import annotations

import argparse
import math

from dualdecomp.core.errors import InputError
from dualdecomp.models.registry import Trainer, TrainingContext
from dualdecomp.models.rewriting.features import FEATURE_GROUPS
from dualdecomp.models.rewriting.pipeline import RewriteTrainingSettings, train_rewrite_model


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind rewriting``."""
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="the rewriting corpus folder (train.jsonl, dev.jsonl), "
                             "e.g. ../shared/data/rewriting")
    parser.add_argument("--out", required=True, metavar="DIR", help="the model directory to write")
    parser.add_argument("--cache", default=".cache/rewriting", metavar="DIR",
                        help="where the parses are cached (default: %(default)s)")
    parser.add_argument("--lm-corpus", nargs="*", default=[], metavar="FILE",
                        help="more sentences for the target LM besides the training references "
                             "(e.g. the Google training .tsv.gz files)")
    for flag, default, metavar, what in (
            ("--delete-weight", 1.0, "BETA", "beta of the loss: the price of deleting a word the references "
                                             "keep"),
            ("--oracle-head-price", 0.0, "P", "loss the oracle adds per phrase whose head it deletes while "
                                             "keeping some of its words"),
            ("--bigram-loss", 0.0, "A", "weight of the loss's bigram term: per bigram written, A x (1 - r - "
                                        "BETA x r if the source has it), r its share of the references"),
            ("--add-reward", 0.0, "L", "the loss's add reward: a written word not in the source costs 1 - r "
                                       "- L x r"),
            ("--bigram-add-reward", 0.0, "M", "the bigram term's add reward: a written bigram not in the "
                                              "source costs A x (1 - r - M x r)")):
        parser.add_argument(flag, type=float, default=default, metavar=metavar,
                            help=what + " (default: %(default)s)")
    parser.add_argument("--loss-set-weights", nargs="+", default=[], metavar="SET=W",
                        help="weigh the loss's reference shares by set, e.g. asset=0.25 turkcorpus=0.75 "
                             "(a set not named weighs 0; default: every reference the same)")
    parser.add_argument("--features", nargs="*", default=[], choices=FEATURE_GROUPS, metavar="GROUP",
                        help="optional feature groups: " + ", ".join(FEATURE_GROUPS) + " (default: none)")
    parser.add_argument("--epochs", type=int, default=3,
                        help="SSVM epochs towards the oracle (default: %(default)s)")
    parser.add_argument("--hope-epochs", type=int, default=0, metavar="K",
                        help="then K epochs towards the hope derivations: the best model score minus "
                             "loss under the current weights (default: %(default)s)")
    parser.add_argument("--leave-one-out", action="store_true",
                        help="train each source's chart without the rules only its own references gave "
                             "(a rule's count less that source's occurrences must still reach "
                             "--min-count)")
    parser.add_argument("--lam", type=float, default=1e-4, help="SSVM L2 lambda (default: %(default)s)")
    parser.add_argument("--min-count", type=int, default=2,
                        help="drop extracted rules seen fewer times (default: %(default)s)")
    parser.add_argument("--min-sources", type=int, default=1, metavar="K",
                        help="drop extracted rules seen in fewer distinct training sources (lexical "
                             "paraphrases exempt; default: %(default)s)")
    parser.add_argument("--lexical-min-count", type=int, default=None, metavar="N",
                        help="drop lexical paraphrase rules (one word for one word) seen fewer times "
                             "(default: --min-count)")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="train on the first N sources only")
    parser.add_argument("--dev-limit", type=int, default=None, metavar="N",
                        help="choose the epoch on the first N dev sources only")
    parser.add_argument("--seed", type=int, default=0, help="example order (default: %(default)s)")
    parser.add_argument("--lm-scale", type=float, default=1.0, metavar="X",
                        help="decode setting stored in the model: multiplier of the learnt LM weight "
                             "(default: %(default)s)")
    for flag, per in (("--word-bias", "word written"), ("--substitution-bias", "source word substituted"),
                      ("--insertion-bias", "word inserted")):
        parser.add_argument(flag, type=float, default=0.0, metavar="Y",
                            help=f"decode setting stored in the model: score added per {per} "
                                 "(default: %(default)s)")
    parser.add_argument("--no-article-agreement", action="store_true",
                        help="decode setting stored in the model: let 'a'/'an' stand before a word that "
                             "takes the other article (default: forbidden, unless the source has it)")
    parser.add_argument("--keep-encoder", metavar="DIR",
                        help="learn the in-domain keep classifier from the states of this neural model's "
                             "encoder (e.g. data/default_model/neural) and store it (default: none)")
    parser.add_argument("--keep-weight", type=float, default=0.0, metavar="MU",
                        help="decode setting stored in the model: weight >= 0 of the keep classifier's "
                             "term; needs --keep-encoder when not 0 (default: %(default)s)")


def _set_weights(items: list[str]) -> tuple[tuple[str, float], ...]:
    """``--loss-set-weights``' SET=W items as (set, weight) pairs; raises ``InputError`` for a bad one."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = float("nan")
        if not sep or not name or not math.isfinite(weight):
            raise InputError(f"--loss-set-weights: {item!r} is not SET=W (e.g. turkcorpus=0.75)")
        out.append((name, weight))
    return tuple(out)


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Train and write the model directory; return a short report."""
    prices = (args.delete_weight, args.oracle_head_price, args.bigram_loss, args.add_reward,
              args.bigram_add_reward)
    lexical = args.lexical_min_count
    if args.epochs < 1 or args.hope_epochs < 0 or args.min_count < 1 or args.min_sources < 1 \
            or (lexical is not None and lexical < 1) or not all(p >= 0 for p in prices):
        raise InputError("--epochs, --min-count, --min-sources and --lexical-min-count must be >= 1, "
                         "--hope-epochs, "
                         "--delete-weight, --oracle-head-price, --bigram-loss, --add-reward and "
                         "--bigram-add-reward >= 0")
    settings = RewriteTrainingSettings(data_dir=args.data, out_dir=args.out, cache_dir=args.cache,
                                       loss_set_weights=_set_weights(args.loss_set_weights),
                                       google=tuple(args.lm_corpus), limit=args.limit,
                                       dev_limit=args.dev_limit, min_count=args.min_count,
                                       lexical_min_count=args.lexical_min_count,
                                       min_sources=args.min_sources,
                                       epochs=args.epochs, lam=args.lam, seed=args.seed,
                                       delete_weight=args.delete_weight,
                                       oracle_head_price=args.oracle_head_price,
                                       bigram_loss=args.bigram_loss, add_reward=args.add_reward,
                                       bigram_add_reward=args.bigram_add_reward, hope_epochs=args.hope_epochs,
                                       leave_one_out=args.leave_one_out,
                                       features=tuple(sorted(set(args.features))), lm_scale=args.lm_scale,
                                       word_bias=args.word_bias, substitution_bias=args.substitution_bias,
                                       insertion_bias=args.insertion_bias,
                                       article_agreement=not args.no_article_agreement,
                                       keep_weight=args.keep_weight, keep_encoder=args.keep_encoder)
    out = train_rewrite_model(settings, say=context.log)
    return {"model": str(out)}


TRAINER = Trainer(summary="the rewriting model (Cohn & Lapata 2008 transducer): grammar, target LM and "
                          "SSVM weights from the rewriting corpus (dualdecomp rewrite)",
                  add_arguments=add_arguments, train=train_from_options)
