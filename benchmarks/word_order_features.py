"""Compiled vs Python word-ordering model and trainer, measured in one run (JSON lines).

Guided learning (``dualdecomp order train``'s single-process trainer, the shipped recipe's settings) on
the first ``--train-sentences`` eligible EWT train sentences for ``--epochs`` epochs, and best-first
search (``--pops`` pops, words only, LM term at its stored weight) on the first ``--dev-sentences`` dev
sentences, each run with the definitions and with the compiled code (the default):

* ``training``: the Python feature templates (``features.attach_features``, tuples hashed one by one,
  one scoring call per attachment) and the trainer's numpy loops (``training.ReferenceTrainer``)
  against the compiled features and trainer (``feature_kernel``, ``training_kernel``);
* ``training loops``: the compiled features in both, the trainer's numpy loops against its compiled ones
  (the chart's rescoring, the update's merge, the popped edge's attachments scored in one call);
* ``best-first search``: the Python feature templates against the compiled kernel.

Each line gives the seconds of both, their ratio, whether the results are identical (the averaged
weights byte for byte; the decoded orders and scores) and the peak resident memory of the process so
far. The kernels are compiled (or loaded from numba's cache) before any clock starts.

Example::

    python benchmarks/word_order_features.py --train ../shared/data/ud-english-ewt/en_ewt-ud-train.conllu \\
        --dev ../shared/data/ud-english-ewt/en_ewt-ud-dev.conllu
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from dataclasses import fields

from word_order import peak_mb  # the sibling benchmark's memory probe (this folder is on sys.path)

from dualdecomp.data.ordering.reading import read_conllu_examples
from dualdecomp.models.evaluation.ordering import condition_input
from dualdecomp.models.ordering.decoding.load import load_decoder, with_decoding_lm
from dualdecomp.models.ordering.paper.features import attach_features
from dualdecomp.models.ordering.paper.model import OrderingModel, new_model
from dualdecomp.models.ordering.paper.search import SearchConfig, best_first
from dualdecomp.models.ordering.paper.train_run import RunConfig, eligible
from dualdecomp.models.ordering.paper.training import ReferenceTrainer, TrainConfig, Trainer


class PythonFeatureModel(OrderingModel):
    """The same model with the Python feature templates in place of the compiled kernel."""

    def attach_features(self, ctx, head, dep, right):
        return attach_features(ctx, head, dep, right, self.mask)

    def attach_score(self, ctx, head, dep, right, lm=None):
        local = self.attach_features(ctx, head, dep, right)
        return self._joined_score(ctx, head, dep, right, float(self.weights[local].sum()), lm)

    def attach_scores(self, ctx, edge, others, attachments, lm=None):
        return [self.attach_score(ctx, *((edge, others[k]) if edge_is_head else (others[k], edge)), right, lm)
                for k, edge_is_head, right in attachments]


def copy_as(model: OrderingModel, cls: type[OrderingModel]) -> OrderingModel:
    """A copy of ``model`` with its own weight array (the trainer updates it in place) as ``cls``."""
    values = {f.name: getattr(model, f.name) for f in fields(model)}
    values["weights"] = model.weights.copy()
    return cls(**values)


def train_seconds(model: OrderingModel, sentences, epochs: int, trainer_class: type[Trainer] = Trainer
                  ) -> tuple[float, str]:
    """Seconds of ``epochs`` epochs of guided learning and a digest of the averaged weights."""
    trainer = trainer_class(model, TrainConfig(chart_size=32, max_expansions=300, seed=0))
    start = time.perf_counter()
    for epoch in range(epochs):
        trainer.epoch(sentences, epoch)
    seconds = time.perf_counter() - start
    return seconds, hashlib.sha256(trainer.averaged().tobytes()).hexdigest()


def decode_seconds(model: OrderingModel, inputs, pops: int, lm=None) -> tuple[float, list]:
    """Seconds of best-first search over ``inputs`` (with the LM term ``lm``) and its outputs (order, score;
    None when incomplete)."""
    config = SearchConfig(chart_size=32, timeout=None, max_expansions=pops)
    start = time.perf_counter()
    outputs = [(r.order, None if r.score != r.score else r.score)  # NaN (timeout rule) as None
               for r in (best_first(model, inp, config, lm=lm) for inp in inputs)]
    return time.perf_counter() - start, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", required=True)
    parser.add_argument("--dev", required=True)
    parser.add_argument("--model", default="data/word_order_model")
    parser.add_argument("--train-sentences", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--dev-sentences", type=int, default=30)
    parser.add_argument("--pops", type=int, default=1000)
    args = parser.parse_args()

    train = eligible(read_conllu_examples(args.train), RunConfig(max_length=20))[:args.train_sentences]
    warm = new_model(train[:2], hash_bits=20)
    train_seconds(warm, train[:2], 1)  # compile / load the kernels before the clocks
    fresh = new_model(train, hash_bits=20)
    kernel_s, kernel_digest = train_seconds(copy_as(fresh, OrderingModel), train, args.epochs)
    for what, model_class in (("training", PythonFeatureModel), ("training loops", OrderingModel)):
        python_s, python_digest = train_seconds(copy_as(fresh, model_class), train, args.epochs,
                                                ReferenceTrainer)
        print(json.dumps({"what": what, "sentences": len(train), "epochs": args.epochs,
                          "python_s": round(python_s, 2), "compiled_s": round(kernel_s, 2),
                          "speedup": round(python_s / kernel_s, 2),
                          "identical_weights": python_digest == kernel_digest, "peak_mb": peak_mb()}),
              flush=True)

    decoder = with_decoding_lm(load_decoder(args.model))
    model = decoder.model
    dev = read_conllu_examples(args.dev, limit=args.dev_sentences)
    inputs = [condition_input(ex, "words", seed=k) for k, ex in enumerate(dev)]
    python_s, python_out = decode_seconds(copy_as(model, PythonFeatureModel), inputs, args.pops, decoder.lm)
    kernel_s, kernel_out = decode_seconds(model, inputs, args.pops, decoder.lm)
    print(json.dumps({"what": "best-first search", "sentences": len(inputs), "pops": args.pops,
                      "python_s": round(python_s, 2), "compiled_s": round(kernel_s, 2),
                      "speedup": round(python_s / kernel_s, 2),
                      "identical_outputs": python_out == kernel_out, "peak_mb": peak_mb()}), flush=True)


if __name__ == "__main__":
    main()
