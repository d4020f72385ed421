"""``dualdecomp train --kind word-order-lm-beam`` (alias ``dualdecomp order build-lm-beam``): the LM beam
decoder of a word-order model (beyond the paper: a bag ordered by n-gram LMs alone, left to right,
APPROXIMATE). Its n-gram LM is estimated by lmplz (:func:`~dualdecomp.models.ordering.bag_lm.build.
build_lm_beam_lm`; with the cased LM of the EWT train sentences), its beam chosen on dev
(:func:`~dualdecomp.models.ordering.bag_lm.build.select_beam`); the LM files are written into the model
directory and the settings into its ``model.json`` (``make word-order-lm-beam`` runs it with the shipped
model's settings). The lmplz log and the dev grid are JSON lines on stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dualdecomp.core.errors import InputError
from dualdecomp.models.registry import Trainer, TrainingContext


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``dualdecomp train --kind word-order-lm-beam`` (and ``order build-lm-beam``)."""
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="the model: lm_beam.binary and lm_beam.json are written there, the settings "
                             "into model.json")
    parser.add_argument("--dev", required=True, metavar="CONLLU", help="dev treebank (beam selection)")
    parser.add_argument("--data-dir", default=None, metavar="DIR",
                        help="shared data directory with google/ and ud-english-ewt/ (default: "
                             "../shared/data beside the checkout)")
    parser.add_argument("--order", type=int, default=4,
                        help="n-gram order (default: %(default)s, chosen on dev)")
    parser.add_argument("--beams", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--cased-order", type=int, default=4,
                        help="order of the cased LM of the EWT train sentences added to the search's score "
                             "(default: %(default)s; 0 = none)")
    parser.add_argument("--cased-weight", type=float, default=0.5,
                        help="weight of the cased LM's log10 probability (default: %(default)s, chosen on "
                             "dev)")
    parser.add_argument("--start", type=int, default=1000,
                        help="first dev sentence used (default: %(default)s)")
    parser.add_argument("--sentences", type=int, default=200,
                        help="dev sentences used (default: %(default)s)")
    parser.add_argument("--default", action="store_true",
                        help="store that the default decoder orders inputs without tags and without heads "
                             "outside their units with the LM beam (decided on dev by a stated rule)")
    parser.add_argument("--lmplz", default=None, metavar="DIR", help="directory of lmplz and build_binary")


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Estimate the LM beam's LMs into ``--model``, choose its beam on dev, store both in the model's
    settings and return the report (``lm_beam``, ``default``, ``lm_bytes``)."""
    # lazy: listing or parsing the trainer's options loads no training code (nor KenLM)
    from dualdecomp.data.locations import CHECKOUT_ROOT
    from dualdecomp.data.ordering.reading import read_conllu_examples
    from dualdecomp.models.ordering.bag_lm.build import SELECTION_CONDITION, build_lm_beam_lm, select_beam
    from dualdecomp.models.ordering.bag_lm.search import CASED_LM_FILE, LM_FILE, lm_terms
    from dualdecomp.models.ordering.lineariser.model import load_lineariser
    from dualdecomp.models.ordering.paper.model import load_model

    if args.start < 0 or args.sentences < 1 or min(args.beams) < 1 or args.cased_order < 0:
        raise InputError("--start and --cased-order must be >= 0, --sentences and --beams >= 1")
    if not 0 < args.cased_weight < float("inf"):
        raise InputError("--cased-weight must be a positive number")
    model_dir = Path(args.model)
    # fails early on a missing or damaged model (its weights and its lineariser, what the decoder loads
    # besides the LM beam: decoding.load_decoder(lm_beam=False), which this folder does not import, since
    # decoding/ imports it); its LMs are rebuilt
    model = load_model(model_dir)
    load_lineariser(model_dir)
    dev = read_conllu_examples(args.dev, limit=args.start + args.sentences)[args.start:]
    data_dir = Path(args.data_dir) if args.data_dir else CHECKOUT_ROOT.parent / "shared" / "data"
    provenance = build_lm_beam_lm(data_dir, model_dir, args.order, lmplz=args.lmplz,
                                  log=lambda line: context.record({"log": line}),
                                  cased_order=args.cased_order or None)
    if not args.cased_order:
        (model_dir / CASED_LM_FILE).unlink(missing_ok=True)
    terms = lm_terms(model_dir, LM_FILE, CASED_LM_FILE if args.cased_order else None, args.cased_weight)
    beam, grid = select_beam(terms, dev, args.beams, log=context.record)
    selection = {"rule": f"highest BLEU of the LM beam on the {SELECTION_CONDITION} condition; ties: the "
                         "smaller beam", "dev_file": Path(args.dev).name, "start": args.start,
                 "sentences": len(dev), "condition": SELECTION_CONDITION, "grid": grid}
    decode_meta = {**model.meta.get("decode", {}), "lm_beam": {
        "lm": LM_FILE, "beam": beam, "default": bool(args.default),
        "default_inputs": "inputs that give no tag and no head outside their units",
        "order": provenance["order"], "prune": provenance["prune"],
        "cased_lm": CASED_LM_FILE if args.cased_order else None,
        "cased_weight": args.cased_weight if args.cased_order else None, "selection": selection}}
    model.save(model_dir, {"decode": decode_meta})
    return {"lm_beam": beam, "default": bool(args.default), "lm_bytes": provenance["size_bytes"]}


TRAINER = Trainer(summary="the LM beam decoder of a word-order model: its n-gram LMs estimated by lmplz into "
                          "--model, its beam chosen on dev (= dualdecomp order build-lm-beam)",
                  add_arguments=add_arguments, train=train_from_options)
