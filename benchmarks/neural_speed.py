"""Decode time and memory of the neural configurations against the old default, in one run (issue W2.2).

The dev sentences of 25 to 35 tokens (``eval.dev``, ``broadcast.dev``, ``written.dev``; parsed once,
outside the measurement) are compressed at free length by each configuration (``neural-mcdonald`` is
the default since W2.2) with
``Compressor.compress`` (potentials — the encoder for the neural component — plus decoding). One JSON
line per configuration: median and mean milliseconds per sentence, the ratio of the median to the old
default's (``config.json`` before W2.2, i.e. McDonald+Dep+LM by DD, measured in the same run), the share
certified, and the peak resident memory of the process (Linux ``VmHWM``) after that configuration ran.
The neural configurations run with the onnxruntime encoder (the default); ``--numpy-encoder CONFIG ...``
adds rows for those configurations with the numpy reference encoder (``DUALDECOMP_ENCODER=numpy``), so
the two encoders are compared in the same run; ``--int8-encoder CONFIG ...`` likewise with the int8
onnxruntime graph (``DUALDECOMP_ENCODER=onnx-int8``; its ``ratio_to_float32`` is to the same
configuration's float32 row of this run).

The first line is the machine (``benchmarks/machine.py``: CPU, cores, int8 and bfloat16 instructions):
the int8 graph's gain depends on them.

``--encoder-variants`` adds, after those, the encoder alone (``data/default_model/neural``, the MiniLM
token scorer, or the scorer folder ``--variants-scorer`` names, e.g. ``neural_mpnet``; the same
sentences' word pieces; in a process of its own) under onnxruntime session options of its own: float32
and int8 graph, 1 and 2 intra-op threads, ``session.intra_op.allow_spinning`` on and off, and at one
thread the four graph optimisation levels. The variants are timed in turns (every variant over all
sentences, three rounds), so a change of load on the machine falls on all of them; each line has the
median milliseconds per sentence and its ratio to float32 with the same threads, spinning and level.

``--logit-gap`` adds what the int8 graph does to the default model's scores on every sentence of the three
dev files (any length): the largest |difference| of a keep log-odds of the unary scorer
(``neural``) and of a bigram potential of the chain scorer (``neural_chain``), the share of tokens whose
unary keep decision (the sign of the log-odds) flips, and the share of tokens kept by one backend and
not by the other in the default configuration's free-length compressions.

``python benchmarks/neural_speed.py [--configs neural neural-dependency-lm ...] [--numpy-encoder neural]
[--int8-encoder neural-chain-mcdonald] [--encoder-variants [--variants-scorer neural_mpnet]] [--logit-gap]
[--limit N]``
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import multiprocessing
import statistics
import time
from pathlib import Path

import numpy as np
from machine import this_machine  # the sibling module (this folder is on sys.path)

from dualdecomp.app.compressor import Compressor
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.models.neural.onnx_encoder import OnnxEncoder
from dualdecomp.models.neural.store import load_neural_model

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "default_model"
DEV = ("eval.dev.jsonl", "broadcast.dev.jsonl", "written.dev.jsonl")
BASELINE = "mcdonald-dependency-lm"
DEFAULT = "neural-chain-mcdonald"
ENCODER_ROUNDS = 3


def timed_items(limit: int = 60, min_tokens: int = 25, max_tokens: int = 35) -> list:
    """The first ``limit`` dev sentences (eval, broadcast, written) of ``min_tokens`` to ``max_tokens``
    tokens: the sentences every neural speed measurement times."""
    return [it for name in DEV for it in read_corpus(ROOT / "data" / "corpora" / name)
            if min_tokens <= it.n <= max_tokens][:limit]


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _session_options(threads: int, spinning: bool, level: str):
    """onnxruntime options with a pool of their own: ``threads`` intra-op threads, spinning on or off,
    graph optimisation ``level`` (disable, basic, extended, all)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.log_severity_level = 3
    name = "ORT_DISABLE_ALL" if level == "disable" else f"ORT_ENABLE_{level.upper()}"
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, name)
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    return options


def encoder_variants(words: list[list[str]], scorer_folder: str = "neural") -> None:
    """Time one scorer's encoder alone (by default the MiniLM token scorer's) under each variant (see the
    module docstring)."""
    scorer = load_neural_model(MODEL / scorer_folder, backend="numpy")
    pieces = [w.ids for words_ in words for w in scorer.pieces.windows(words_)]
    variants = [(int8, threads, spinning, "all") for threads in (1, 2) for spinning in (True, False)
                for int8 in (False, True)]
    variants += [(int8, 1, True, level) for level in ("disable", "basic", "extended")
                 for int8 in (False, True)]
    encoders = {v: OnnxEncoder(scorer.encoder, int8=v[0], options=_session_options(*v[1:])) for v in variants}
    times: dict[tuple, list[float]] = {v: [] for v in variants}
    for _ in range(ENCODER_ROUNDS):
        for v, enc in encoders.items():
            enc(pieces[0])  # wake the pool up outside the measurement
            for ids in pieces:
                start = time.perf_counter()
                enc(ids)
                times[v].append(1000 * (time.perf_counter() - start))
    medians = {v: statistics.median(t) for v, t in times.items()}
    for (int8, threads, spinning, level), median in medians.items():
        print(json.dumps({"scorer": scorer_folder, "encoder": "int8" if int8 else "float32",
                          "threads": threads, "spinning": spinning, "optimisation": level,
                          "sequences": len(pieces),
                          "mean_pieces": round(sum(map(len, pieces)) / len(pieces), 1),
                          "median_ms": round(median, 3),
                          "ratio_to_float32": round(median / medians[(False, threads, spinning, level)], 3),
                          "ratio_to_float32_1_thread": round(median / medians[(False, 1, True, "all")], 3)}),
              flush=True)


def logit_gap() -> None:
    """What the int8 graph moves in the default model's scores and compressions (all dev sentences)."""
    items = [it for name in DEV for it in read_corpus(ROOT / "data" / "corpora" / name)]
    words = [list(it.text) for it in items]
    unary = {b: load_neural_model(MODEL / "neural", backend=b) for b in ("onnxruntime", "onnx-int8")}
    chain = {b: load_neural_model(MODEL / "neural_chain", backend=b) for b in ("onnxruntime", "onnx-int8")}
    gaps, chain_gaps, flips, tokens = [], [], 0, 0
    for w in words:
        a, b = unary["onnxruntime"].keep_logits(w), unary["onnx-int8"].keep_logits(w)
        gaps.append(float(np.abs(a - b).max()))
        flips += int(((a > 0) != (b > 0)).sum())
        tokens += len(w)
        pa, pb = chain["onnxruntime"].bigram_potentials(w), chain["onnx-int8"].bigram_potentials(w)
        finite = np.isfinite(pa)
        chain_gaps.append(float(np.abs(pa[finite] - pb[finite]).max()))
    sentences = parse_tokens(words, ids=[it.id for it in items])
    keeps = {}
    for backend in ("onnxruntime", "onnx-int8"):
        os.environ["DUALDECOMP_ENCODER"] = backend
        comp = Compressor(MODEL, DEFAULT)
        keeps[backend] = [np.asarray(comp.compress(s).result.keep, dtype=bool) for s in sentences]
    os.environ.pop("DUALDECOMP_ENCODER", None)
    changed = [int((x != y).sum()) for x, y in zip(keeps["onnxruntime"], keeps["onnx-int8"], strict=True)]
    print(json.dumps({"logit_gap": "onnx-int8 vs onnxruntime", "sentences": len(words), "tokens": tokens,
                      "max_abs_keep_logit_diff": round(max(gaps), 4),
                      "median_of_sentence_max_diff": round(statistics.median(gaps), 4),
                      "max_abs_chain_potential_diff": round(max(chain_gaps), 4),
                      "unary_decisions_flipped": round(flips / tokens, 5),
                      f"{DEFAULT}_tokens_changed": round(sum(changed) / tokens, 5),
                      f"{DEFAULT}_sentences_changed": round(sum(c > 0 for c in changed) / len(words), 4)}),
          flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--configs", nargs="+",
                   default=[BASELINE, "neural", "neural-mcdonald", DEFAULT,
                            "neural-dependency-lm", "neural-mcdonald-dependency-lm"])
    p.add_argument("--numpy-encoder", nargs="*", default=["neural", "neural-dependency-lm"], metavar="CONFIG",
                   help="configurations also measured with the numpy encoder (default: %(default)s)")
    p.add_argument("--int8-encoder", nargs="*", default=[DEFAULT], metavar="CONFIG",
                   help="configurations also measured with the int8 onnxruntime encoder "
                        "(default: %(default)s)")
    p.add_argument("--encoder-variants", action="store_true",
                   help="also time the encoder alone: float32/int8, 1/2 threads, spinning, optimisation")
    p.add_argument("--variants-scorer", default="neural", metavar="FOLDER",
                   help="the default model's scorer folder whose encoder --encoder-variants times "
                        "(default: %(default)s)")
    p.add_argument("--logit-gap", action="store_true",
                   help="also measure what the int8 encoder moves in the scores and outputs on all of dev")
    p.add_argument("--model", type=Path, default=MODEL,
                   help="the model directory whose configurations are timed (default: the embedded one)")
    p.add_argument("--limit", type=int, default=60, help="sentences measured (default: %(default)s)")
    p.add_argument("--min-tokens", type=int, default=25)
    p.add_argument("--max-tokens", type=int, default=35)
    args = p.parse_args(argv)
    if not (MODEL / args.variants_scorer / "model.json").is_file():
        p.error(f"--variants-scorer: {MODEL / args.variants_scorer} is not a scorer folder")
    print(json.dumps(this_machine().as_json()), flush=True)
    items = timed_items(args.limit, args.min_tokens, args.max_tokens)
    sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
    medians: dict[str, float] = {}
    runs = [(name, "default")  # every configuration timed with another encoder is timed as it is too
            for name in dict.fromkeys([BASELINE, *args.configs, *args.int8_encoder, *args.numpy_encoder])]
    runs += [(name, "numpy") for name in args.numpy_encoder]
    runs += [(name, "onnx-int8") for name in args.int8_encoder]
    for name, encoder in runs:
        if encoder == "default":
            os.environ.pop("DUALDECOMP_ENCODER", None)
        else:
            os.environ["DUALDECOMP_ENCODER"] = encoder
        comp = Compressor(args.model, name)
        comp.compress(sentences[0])  # compile and load outside the measurement
        times, certified = [], 0
        for s in sentences:
            start = time.perf_counter()
            out = comp.compress(s)
            times.append(1000 * (time.perf_counter() - start))
            certified += bool(out.result.certified)
        label = name if encoder == "default" else f"{name} [{encoder} encoder]"
        medians[label] = statistics.median(times)
        row = {"config": label, "sentences": len(sentences),
               "mean_tokens": round(sum(s.n for s in sentences) / len(sentences), 1),
               "median_ms": round(medians[label], 2), "mean_ms": round(statistics.fmean(times), 2),
               "ratio_to_old_default": round(medians[label] / medians[BASELINE], 3)}
        if encoder != "default":
            row["ratio_to_float32"] = round(medians[label] / medians[name], 3)
        row |= {"certified": round(certified / len(sentences), 3), "peak_rss_mb": round(_peak_mb(), 1)}
        print(json.dumps(row), flush=True)
    os.environ.pop("DUALDECOMP_ENCODER", None)
    if args.encoder_variants:  # own process: pools of their own cannot be made beside the shared pool
        child = multiprocessing.get_context("spawn").Process(target=encoder_variants,
                                                             args=([list(it.text) for it in items],
                                                                   args.variants_scorer))
        child.start()
        child.join()
    if args.logit_gap:
        logit_gap()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
