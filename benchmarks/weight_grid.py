"""Tune the component weights of joint configurations on the dev files (bigram F1 at gold length).

Every dev sentence is parsed once and each component's potentials are built once at weight 1; each grid
point then scales them (a weight multiplies a component's score, as ``"weight"`` in a configuration)
and decodes every sentence at each reference's length with the engine (DD, at most 200 iterations,
``length_method="auto"``; a single component is solved exactly). Sentences longer than 80 tokens use the
McDonald component alone, as the shipped configurations' fallback does. Prints one line per grid point:
bigram F1 per dev file, their mean, and the share of certified decodes.

Usage (from the repository root)::

    python benchmarks/weight_grid.py --grid '[{"bigram": 1, "dependency": 0.25, "lm": 1}, ...]'
    python benchmarks/weight_grid.py --dependency 0 0.1 0.25 --lm 0 0.5 1      # the product grid
    python benchmarks/weight_grid.py --t3 data/default_model/t3 --transducer 0.1 0.5 --lm 0 1
    python benchmarks/weight_grid.py --neural-model data/default_model/neural --neural 1 --bigram 0 0.5 \
        --dependency 0 0.1 --lm 0 0.25

Weights of 0 leave a component out. ``--t3`` loads a T3 model (only needed for transducer weights > 0),
``--neural-model`` a neural scorer (for neural weights > 0), ``--chain-model`` a second one (weights of
kind ``chain``, e.g. the scorer with a pair head, ``data/default_model/neural_chain``), ``--neural2-model``
a third, a further token scorer beside the first (weights of kind ``neural2``: an ensemble of two token
scorers, summed as potentials); ``chain_unary`` weights the chain scorer's own keep log-odds once more
(as a configuration's ``"options": {"unary_scale": 1 + chain_unary / chain}`` on the chain component
does, in one encoder pass; negative down to ``-chain``, which leaves the pair head alone). With a
neural weight, sentences beyond the fallback length use the neural component alone (as the neural
configurations' fallback does), with only a chain weight the chain scorer alone (with its
``chain_unary``). ``--free`` adds the token F1 at free length.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from dualdecomp.core.component import merged_sums
from dualdecomp.data.alignment import keep_vector
from dualdecomp.data.jsonl import read_corpus
from dualdecomp.data.locations import default_model_dir
from dualdecomp.data.parsing import parse_tokens
from dualdecomp.engine.decode import decode
from dualdecomp.models.bigram.store import load_model
from dualdecomp.models.configuration import weighted_component
from dualdecomp.models.dependency.store import load_dependency_model
from dualdecomp.models.evaluation.compression import at_reference_lengths, token_f1
from dualdecomp.models.lm.model import load_lm
from dualdecomp.models.neural.store import load_neural_model
from dualdecomp.solvers.bigram import token_potentials

ROOT = Path(__file__).resolve().parents[1]
DEV = ["broadcast.dev.jsonl", "written.dev.jsonl", "eval.dev.jsonl"]
KINDS = ("bigram", "dependency", "lm", "transducer", "neural", "neural2", "chain", "chain_unary")
SCORERS = ("neural", "neural2", "chain")
"""The grid columns whose potentials come from a neural scorer of their own (``--KIND-model``)."""
KIND_OF = {"chain": "neural", "neural2": "neural", "chain_unary": "neural"}  # columns named not as their kind
MAX_TOKENS = 80


def prepare(model_dir: Path, t3_dir: Path | None, limit: int | None,
            scorer_dirs: dict[str, tuple[Path, str | None]] | None = None,
            needed: frozenset[str] = frozenset(KINDS)) -> list[tuple[str, list]]:
    """Per dev file: (item, {kind: potentials or component at weight 1}, reference token lists);
    ``scorer_dirs``: the neural scorers by grid column (:data:`SCORERS`), each with its encoder backend
    (None: the loader's default); ``needed``: the kinds some grid point weights (the dependency model and
    the LM are only loaded and run for them; McDonald always, as the fallback)."""
    bigram = load_model(model_dir)
    dependency = load_dependency_model(model_dir / "dependency") if "dependency" in needed else None
    lm = load_lm(model_dir / "lm.binary") if "lm" in needed else None
    transducer = None
    if t3_dir is not None and "transducer" in needed:
        from dualdecomp.models.transducer.model import load_t3

        transducer = load_t3(t3_dir)
    scorers = {kind: load_neural_model(path, backend)
               for kind, (path, backend) in (scorer_dirs or {}).items()}
    out = []
    for name in DEV:
        items = [it for it in read_corpus(ROOT / "data" / "corpora" / name) if it.compressions][:limit]
        sentences = parse_tokens([it.text for it in items], ids=[it.id for it in items])
        rows = []
        for it, s in zip(items, sentences, strict=True):
            refs = [[t for t, k in zip(it.text, keep_vector(it.text, c), strict=True) if k]
                    for c in it.compressions]
            parts = {"bigram": bigram.potentials(s)} | {kind: scorer.potentials(s)
                                                        for kind, scorer in scorers.items()}
            if "chain_unary" in needed:  # the chain scorer's keep log-odds once more, as bigram potentials
                parts["chain_unary"] = token_potentials(scorers["chain"].keep_logits(s.tokens))
            if s.n <= MAX_TOKENS:
                parts["short"] = True  # within the fallback length
                if dependency is not None:
                    parts["dependency"] = dependency.potentials(s)
                if lm is not None:
                    parts["lm"] = lm.trigram_tensor(it.text)
                if transducer is not None:
                    parts["transducer"] = transducer.component(s, 1.0)
            rows.append((it, parts, refs))
        out.append((name.removesuffix(".jsonl"), rows))
    return out


def weighs(weights: dict[str, float], kind: str) -> bool:
    """Whether a grid point uses a column: a weight > 0, or for ``chain_unary`` any weight but 0 (a
    negative one weighs the chain scorer's keep head less than its pair head, down to 0 at -chain)."""
    w = weights.get(kind, 0)
    return w != 0 if kind == "chain_unary" else w > 0


def components(parts: dict, weights: dict[str, float]) -> list:
    """The weighted components of one sentence; beyond the fallback length only some: the token scorer
    when weighted, else the chain scorer (with its ``chain_unary``) when weighted, else McDonald."""
    if "short" not in parts:
        if weighs(weights, "neural"):
            chosen = {"neural": 1.0}
        elif weighs(weights, "chain"):
            chosen = {kind: weights[kind] for kind in ("chain", "chain_unary") if weighs(weights, kind)}
        else:
            chosen = {"bigram": 1.0}
        return merged_sums([weighted_component(KIND_OF.get(kind, kind), parts[kind], weight)
                            for kind, weight in chosen.items()])
    return merged_sums([weighted_component(KIND_OF.get(kind, kind), parts[kind], weights[kind])
                        for kind in KINDS if weighs(weights, kind)])


def score(data: list[tuple[str, list]], weights: dict[str, float],
          free: bool = False) -> tuple[list[float], float, list[float]]:
    """Bigram F1 at gold length per dev file (mean over references, then sentences), the share certified,
    and with ``free`` the token F1 at free length per dev file (likewise averaged; else empty)."""
    f1s, certified, free_f1s = [], [], []
    for _, rows in data:
        per_sentence, per_sentence_free = [], []
        for it, parts, refs in rows:
            comps = components(parts, weights)
            method = "auto" if len(comps) > 1 else "exact"

            def keep_at(length: int | None, comps: list = comps, method: str = method) -> np.ndarray:
                res = decode(comps, length=length, max_iterations=200, length_method=method)
                certified.append(res.certified)
                return res.keep

            per_sentence.append(at_reference_lengths(it.text, refs, keep_at))
            if free:
                kept = [t for t, k in zip(it.text, keep_at(None), strict=True) if k]
                per_sentence_free.append(float(np.mean([token_f1(kept, ref) for ref in refs])))
        f1s.append(100 * float(np.mean(per_sentence)))
        if free:
            free_f1s.append(100 * float(np.mean(per_sentence_free)))
    return f1s, 100 * float(np.mean(certified)) if certified else 0.0, free_f1s


def grid_of(args: argparse.Namespace) -> list[dict[str, float]]:
    """The grid points: ``--grid``'s list, else the product of the per-kind weight lists."""
    if args.grid:
        return json.loads(args.grid)
    return [dict(zip(KINDS, ws, strict=True)) for ws in itertools.product(*(getattr(args, k) for k in KINDS))]


def main(argv: list[str] | None = None) -> int:
    """Run the grid and print one markdown table."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=str(default_model_dir()), help="directory with the bigram model, "
                   "dependency/ and lm.binary (default: the embedded default model)")
    p.add_argument("--t3", default=None, help="T3 model directory (for transducer weights)")
    p.add_argument("--neural-model", default=None, help="neural scorer directory (for neural weights)")
    p.add_argument("--chain-model", default=None, help="a second neural scorer, e.g. one with a pair head "
                   "(for chain weights)")
    p.add_argument("--neural2-model", default=None, help="a further token scorer beside --neural-model, "
                   "an ensemble member (for neural2 weights)")
    for which in SCORERS:
        p.add_argument(f"--{which}-backend", default=None, choices=("onnxruntime", "onnx-int8", "numpy"),
                       help=f"the {which} scorer's encoder backend (default: the loader's, float32), as a "
                       "configuration's \"options\" give it (the default runs its MPNet scorer in onnx-int8)")
    p.add_argument("--grid", default=None, help="JSON list of weight objects (overrides the product grid)")
    for kind in KINDS:
        p.add_argument(f"--{kind}", type=float, nargs="+", default=[1.0] if kind == "bigram" else [0.0])
    p.add_argument("--limit", type=int, default=None, help="first N sentences of each dev file")
    p.add_argument("--free", action="store_true", help="also the token F1 at free length per dev file and "
                   "their mean (after the gold-length columns; certified %% then counts both lengths)")
    args = p.parse_args(argv)
    grid = grid_of(args)
    if any(weighs(g, "chain_unary") for g in grid) and args.chain_model is None:
        p.error("chain_unary weights need --chain-model (they are its keep log-odds)")
    if any(g.get("chain_unary", 0) < -g.get("chain", 0) for g in grid):
        p.error("a chain_unary weight below minus the chain weight would weigh the keep head negatively "
                "(a configuration's unary_scale = 1 + chain_unary / chain must be >= 0)")
    if any(weighs(g, "transducer") for g in grid) and args.t3 is None:
        p.error("transducer weights need --t3")
    scorer_dirs = {}
    for kind in SCORERS:
        path = getattr(args, f"{kind}_model")
        if any(weighs(g, kind) for g in grid) and path is None:
            p.error(f"{kind} weights need --{kind}-model")
        if path is not None:
            scorer_dirs[kind] = (Path(path), getattr(args, f"{kind}_backend"))
    start = time.perf_counter()
    needed = frozenset({"bigram"} | {kind for g in grid for kind in KINDS if weighs(g, kind)})
    if "chain_unary" in needed:
        needed |= {"chain"}
    data = prepare(Path(args.model), Path(args.t3) if args.t3 else None, args.limit, scorer_dirs, needed)
    print(f"prepared in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    names = [name for name, _ in data]
    free_names = [f"{name} free" for name in names] + ["mean free"] if args.free else []
    print("| " + " | ".join([*KINDS, *names, "mean", *free_names, "certified %"]) + " |")
    print("|" + "---:|" * (len(KINDS) + len(names) + 2 + len(free_names)))
    for g in grid:
        f1s, cert, free_f1s = score(data, g, args.free)
        cells = [f"{g.get(k, 0):g}" for k in KINDS] + [f"{x:.2f}" for x in f1s] + [f"{np.mean(f1s):.2f}"]
        if args.free:
            cells += [f"{x:.2f}" for x in free_f1s] + [f"{np.mean(free_f1s):.2f}"]
        print("| " + " | ".join([*cells, f"{cert:.0f}"]) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
