"""mpnet in the default? The probe's dev log-odds in the shipped configurations, and an mpnet-sized
encoder's speed (issue W3.5; the rule in benchmarks/neural_mpnet_default.md, written before the runs).

``accuracy``: the systems D, D[R1], D[R2], M, M[R2] of the rule. ``neural`` in a shipped configuration is
replaced by a stand-in returning a probe run's dev log-odds (``WORK/RUN.logits.npz``, in the order of the
dev sentences that have a compression; any other sentence falls back to the shipped scorer and is not
scored). Every dev file is compressed and evaluated as ``dualdecomp evaluate --table`` does, at free
and at gold length. One JSON line per (system, dev file, length).

``speed``: the shipped MiniLM encoder and an mpnet-shaped one (12 layers of 768, 12 heads, FFN 3,072,
random weights, the project's BERT graph without MPNet's relative-position bias), float32 and int8, alone
and timed in turns, over the word pieces of the dev sentences of 25 to 35 tokens; then the default and
Neural+McDonald with ``Compressor.compress`` at free length on the same sentences. One JSON line each,
then the estimates t(config) - t(MiniLM float32) + t(mpnet-shaped, backend).

``candidate``: a trained scorer (``make neural-model``'s third command) in place of ``neural`` in the default,
run by the project's own encoder (``--backend``: onnx-int8 and onnxruntime by default): the dev files at
free and gold length as for ``accuracy``, then the decode time of the default and of each candidate
backend with ``Compressor.compress`` on the sentences of ``speed``, timed in turns (three rounds).

``python benchmarks/neural_mpnet_default.py accuracy --work .cache/probe_b4096 [--runs R1 R2]``
``python benchmarks/neural_mpnet_default.py speed [--limit 60]``
``python benchmarks/neural_mpnet_default.py candidate --model .cache/candidates/neural_mpnet``
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
from neural_speed import timed_items  # the sibling benchmark's sentences (this folder is on sys.path)

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.evaluation import evaluate_files
from dualdecomp.app.length_request import parse_length
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.models.neural.encoder import Encoder, EncoderConfig
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder
from dualdecomp.models.neural.store import load_neural_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"
DEV = {"eval": "Google", "broadcast": "broadcast", "written": "written"}
SYSTEMS = (("D", "neural-chain-mcdonald", None), ("D[R1]", "neural-chain-mcdonald", "R1"),
           ("D[R2]", "neural-chain-mcdonald", "R2"), ("M", "neural-mcdonald", None),
           ("M[R2]", "neural-mcdonald", "R2"))


class CachedScorer:
    """The ``neural`` model's stand-in: a probe run's log-odds for the sentences it has, else the shipped
    scorer's (those sentences have no compression and are not scored)."""

    def __init__(self, shipped, logits: dict[tuple[str, ...], np.ndarray]) -> None:
        self.shipped, self.logits, self.hits = shipped, logits, 0

    def potentials(self, sentence) -> np.ndarray:
        found = self.logits.get(tuple(sentence.tokens))
        if found is None:
            return self.shipped.potentials(sentence)
        self.hits += 1
        return found.astype(np.float64)


UNARY_PATHS = ("neural", "neural_mpnet")
"""The paths of the token scorer in the shipped configurations (MiniLM; MPNet in the default)."""

def run_logits(work: Path, run: str) -> dict[tuple[str, ...], np.ndarray]:
    """The run's dev log-odds by sentence (its words), checked against the dev files' sentences."""
    items = [item for name in DEV for item in read_corpus(ROOT / f"data/corpora/{name}.dev.jsonl")
             if item.compressions]
    with np.load(work / f"{run}.logits.npz") as z:
        bounds = np.concatenate([[0], np.cumsum(z["words"])])
        if len(z["words"]) != len(items):
            raise SystemExit(f"{run}: {len(z['words'])} sentences, the dev files have {len(items)}")
        out = {}
        for k, item in enumerate(items):
            lg = z["logits"][bounds[k]:bounds[k + 1]]
            if len(lg) != len(item.text):
                raise SystemExit(f"{run}: sentence {k} has {len(lg)} log-odds for {len(item.text)} words")
            key = tuple(item.text)
            if key in out and not np.array_equal(out[key], lg):
                raise SystemExit(f"{run}: two dev sentences with the same words and different log-odds")
            out[key] = lg
    return out


def _with_neural(config: str, replace=None) -> tuple[Compressor, object]:
    """The shipped configuration with the MiniLM token scorer (``neural``) as its unary component, as the
    rule's systems were defined (the default's is ``neural_mpnet`` since it passed this rule: it is put
    back to MiniLM), and that component's model; with ``replace``, that model is ``replace(MiniLM's)``."""
    compressor = Compressor(MODEL, config)
    k = next(i for i, c in enumerate(compressor.joint.config.components) if c.path in UNARY_PATHS)
    if compressor.joint.config.components[k].path != "neural":
        compressor.joint.models[k] = load_neural_model(MODEL / "neural")
    if replace is not None:
        compressor.joint.models[k] = replace(compressor.joint.models[k])
    return compressor, compressor.joint.models[k]


def _timed_in_turns(runs: dict, inputs: list, rounds: int = 3) -> tuple[dict, dict]:
    """Milliseconds and outputs of each run over every input, the runs in turns (each over all inputs,
    ``rounds`` times; one untimed call first in each turn), so a change of load falls on all of them."""
    times: dict = {name: [] for name in runs}
    outputs: dict = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            run(inputs[0])
            for x in inputs:
                start = time.perf_counter()
                outputs[name].append(run(x))
                times[name].append(1000 * (time.perf_counter() - start))
    return times, outputs


def _score_dev(system: str, config: str, neural: str, compressor: Compressor, stand_in=None) -> None:
    """Compress and evaluate the three dev files at free and gold length; one JSON line each."""
    for length in ("free", "gold"):
        spec = parse_length(None if length == "free" else length)
        options = BatchOptions(spec=spec, deterministic=True)
        for name, label in DEV.items():
            dev = ROOT / f"data/corpora/{name}.dev.jsonl"
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "out.jsonl"
                start = time.perf_counter()
                run_batch(dev, out, compressor, options)
                seconds = time.perf_counter() - start
                report = evaluate_files(dev, out)
            print(json.dumps({"system": system, "config": config, "neural": neural,
                              "dev": label, "length": length, "token_f1": round(100 * report.token_f1, 2),
                              "bigram_f1": round(100 * report.bigram_f1, 2),
                              "cr": round(100 * report.cr, 2),
                              "certified": report.certified, "n": report.n, "failed": report.failed,
                              "cached_hits": stand_in.hits if stand_in else None,
                              "seconds": round(seconds, 1)}), flush=True)


def accuracy(work: Path, runs: list[str]) -> None:
    logits = {run: run_logits(work, run) for run in runs}
    for system, config, run in SYSTEMS:
        if run is not None and run not in logits:
            continue
        # the stand-in wraps the configuration's own shipped scorer
        replace = None if run is None else partial(CachedScorer, logits=logits[run])
        compressor, neural = _with_neural(config, replace)
        _score_dev(system, config, run or "shipped", compressor, neural if run is not None else None)


def candidate(model: Path, backends: list[str], limit: int, rounds: int = 3) -> None:
    config = "neural-chain-mcdonald"
    systems = {"D": _with_neural(config)[0]}
    for backend in backends:
        candidate_scorer = load_neural_model(model, backend=backend)
        systems[f"D[mpnet {backend}]"] = _with_neural(config, lambda _, c=candidate_scorer: c)[0]
    for name, compressor in systems.items():
        if name != "D":
            _score_dev(name, config, f"{model} ({name[8:-1]})", compressor)
    sentences = parse_tokens([it.text for it in timed_items(limit)])
    times, results = _timed_in_turns({name: c.compress for name, c in systems.items()}, sentences, rounds)
    certified = {name: sum(bool(r.result.certified) for r in out) for name, out in results.items()}
    for name, ms in times.items():
        print(json.dumps({"system": name, "sentences": len(sentences),
                          "median_ms": round(statistics.median(ms), 3),
                          "ratio_to_D": round(statistics.median(ms) / statistics.median(times["D"]), 3),
                          "certified": certified[name] / (rounds * len(sentences)),
                          "load_average": os.getloadavg()[0]}), flush=True)


def mpnet_shaped(seed: int = 0) -> Encoder:
    """An encoder of all-mpnet-base-v2's shape with random weights (N(0, 0.02); layer norms at 1, 0)."""
    shipped = load_neural_model(MODEL / "neural", backend="numpy").encoder
    spec = {**shipped.config.to_dict(), "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072}
    config = EncoderConfig.from_dict(spec)
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in config.parameter_shapes().items():
        if "LayerNorm" in name or "norm" in name.lower():
            params[name] = (np.ones(shape) if name.endswith(("weight", "gamma")) else np.zeros(shape)).astype(
                np.float32)
        else:
            params[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
    return Encoder(config, params)


def speed(limit: int, rounds: int = 3) -> None:
    words = [it.text for it in timed_items(limit)]
    scorer = load_neural_model(MODEL / "neural", backend="numpy")
    pieces = [w.ids for ws in words for w in scorer.pieces.windows(ws)]
    big = mpnet_shaped()
    encoders = {("MiniLM", "float32"): OnnxEncoder(scorer.encoder), ("MiniLM", "int8"): OnnxEncoder(
        scorer.encoder, int8=True), ("mpnet-shaped", "float32"): OnnxEncoder(big), ("mpnet-shaped", "int8"):
        OnnxEncoder(big, int8=True)}
    times, _ = _timed_in_turns(encoders, pieces, rounds)
    enc_ms = {v: statistics.median(t) for v, t in times.items()}
    for (encoder, backend), ms in enc_ms.items():
        print(json.dumps({"encoder": encoder, "backend": backend, "sequences": len(pieces),
                          "mean_pieces": round(sum(map(len, pieces)) / len(pieces), 1),
                          "median_ms": round(ms, 3),
                          "ratio_to_minilm_float32": round(ms / enc_ms[("MiniLM", "float32")], 3)}),
              flush=True)
    del encoders
    sentences = parse_tokens(words)
    config_ms = {}
    for config in ("neural-chain-mcdonald", "neural-mcdonald"):  # one after the other
        ms, results = _timed_in_turns({config: _with_neural(config)[0].compress}, sentences, rounds)
        certified = sum(bool(r.result.certified) for r in results[config])
        config_ms[config] = statistics.median(ms[config])
        print(json.dumps({"config": config, "sentences": len(sentences),
                          "median_ms": round(config_ms[config], 3),
                          "certified": certified / (rounds * len(sentences))}), flush=True)
    for config, ms in config_ms.items():
        for backend in ("float32", "int8"):
            est = ms - enc_ms[("MiniLM", "float32")] + enc_ms[("mpnet-shaped", backend)]
            print(json.dumps({"estimate": config, "unary_encoder": f"mpnet-shaped {backend}",
                              "median_ms": round(est, 2), "load_average": os.getloadavg()[0]}), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("accuracy")
    a.add_argument("--work", type=Path, required=True, help="the encoder probe's working folder")
    a.add_argument("--runs", nargs="+", default=["R1", "R2"])
    s = sub.add_parser("speed")
    s.add_argument("--limit", type=int, default=60)
    c = sub.add_parser("candidate")
    c.add_argument("--model", type=Path, required=True, help="the candidate scorer's directory")
    c.add_argument("--backend", nargs="+", default=["onnx-int8", "onnxruntime"])
    c.add_argument("--limit", type=int, default=60)
    args = ap.parse_args()
    if args.what == "accuracy":
        accuracy(args.work, args.runs)
    elif args.what == "candidate":
        candidate(args.model, args.backend, args.limit)
    else:
        speed(args.limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
