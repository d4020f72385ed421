"""Prepare the encoder probe's inputs for a GPU machine (benchmarks/neural_encoder_probe.md).

Reads the shipped neural recipe's training data (the files and seeded samples of ``make neural-model``)
and the three dev files, cuts them into word pieces with each base encoder's tokenizer
(:class:`~dualdecomp.models.neural.pieces.Pieces`, the training code's own), and stores the base
encoders as int8 rows with a float32 scale per row (:func:`~dualdecomp.models.neural.store.quantise_rows`)
so that they fit the device's 64 MiB per call. Writes folders of at most ``--folder-mb`` MB into ``OUT/a``,
``OUT/b``, ... (one per device call); the first also holds ``neural_encoder_probe.py`` and
``models/neural/batching.py``.

Usage (the train venv: PyTorch and safetensors)::

    python benchmarks/neural_encoder_probe_prepare.py --minilm .cache/minilm \\
        --mpnet /tmp/mpnet/all-mpnet-base-v2 --out .probe
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from dualdecomp.models.neural.examples import read_examples, sample_indices
from dualdecomp.models.neural.pieces import BERT_SPECIALS, Pieces
from dualdecomp.models.neural.store import quantise_rows

SHARED = Path("../shared/data")
TRAIN = [  # (file, sample size) in the order of make neural-model: the sample seed is the index
    (Path("data/corpora/eval.train.jsonl"), None),
    (Path("data/corpora/broadcast.train.jsonl"), None),
    (Path("data/corpora/written.train.jsonl"), None),
    (SHARED / "google/train180k.tsv.gz", 100_000),
    (SHARED / "google/train20k-b.tsv.gz", 20_000),
    (Path("data/corpora/broadcast.train.jsonl"), None),
    (Path("data/corpora/written.train.jsonl"), None),
]
DEV = [Path(f"data/corpora/{name}.dev.jsonl") for name in ("eval", "broadcast", "written")]
SPECIALS = {"minilm": BERT_SPECIALS, "mpnet": ("<s>", "</s>", "<unk>")}
TARGET_STEPS = 6
"""Targets are stored as round(6 t): the gold targets are 0, 1/3, 1/2, 2/3 or 1."""


def recipe_sentences() -> tuple[list, list, list[int]]:
    """D131 (the recipe's sample), X80 (train180k's unsampled sentences) and the dev sentences with
    their file index."""
    d131, x80 = [], []
    for seed, (path, size) in enumerate(TRAIN):
        examples = read_examples(path)
        chosen = sample_indices(len(examples), size, seed)  # as sample_examples picks them
        d131.extend(examples[i] for i in chosen)
        if path.name == "train180k.tsv.gz":
            taken = set(chosen.tolist())
            x80.extend(ex for i, ex in enumerate(examples) if i not in taken)
    dev, dev_file = [], []
    for index, path in enumerate(DEV):
        for ex in read_examples(path):
            dev.append(ex)
            dev_file.append(index)
    return d131, x80, dev, dev_file


def encode(examples: list, tokens: dict[str, Pieces]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Piece arrays per tokenizer of the sentences that fit one window in every tokenizer, and their
    indices."""
    keep, per_tok = [], {name: ([], []) for name in tokens}
    for i, ex in enumerate(examples):
        windows = {name: tok.windows(ex.words) for name, tok in tokens.items()}
        if any(len(w) != 1 for w in windows.values()):
            continue
        keep.append(i)
        for name, w in windows.items():
            ids, lens = per_tok[name]
            ids.append(w[0].ids.astype(np.uint16))
            lens.append(np.diff(np.append(w[0].first, len(w[0].ids) - 1)).astype(np.uint8))
    arrays: dict[str, np.ndarray] = {}
    for name, (ids, lens) in per_tok.items():
        arrays[f"{name}/ids"] = np.concatenate(ids)
        arrays[f"{name}/id_len"] = np.array([len(a) for a in ids], dtype=np.uint16)
        arrays[f"{name}/word_pieces"] = np.concatenate(lens)
    targets = [np.rint(np.asarray(examples[i].target) * TARGET_STEPS).astype(np.uint8) for i in keep]
    arrays["targets"] = np.concatenate(targets)
    arrays["words"] = np.array([len(t) for t in targets], dtype=np.uint16)
    return arrays, np.asarray(keep, dtype=np.int64)


def quantised_encoder(base: Path) -> dict[str, np.ndarray]:
    """The base encoder's tensors (no pooler): 2-D as int8 rows plus ``NAME::scale``, the rest float32."""
    from safetensors.numpy import load_file  # the train extra

    out = {}
    for name, tensor in load_file(str(base / "model.safetensors")).items():
        if name.startswith("pooler.") or not np.issubdtype(tensor.dtype, np.floating):
            continue  # the pooler is not used; position_ids is a buffer the model makes itself
        if tensor.ndim == 2:
            q, scale = quantise_rows(tensor)
            out[name], out[name + "::scale"] = q, scale
        else:
            out[name] = tensor.astype(np.float32)
    return out


def split_parts(tensors: dict[str, np.ndarray], limit: int) -> list[dict[str, np.ndarray]]:
    """Tensors in parts of at most ``limit`` bytes (or one tensor), a tensor and its scale together."""
    parts: list[dict[str, np.ndarray]] = [{}]
    used = 0
    for name in sorted(k for k in tensors if not k.endswith("::scale")):
        group = {k: tensors[k] for k in (name, name + "::scale") if k in tensors}
        size = sum(a.nbytes for a in group.values())
        if used + size > limit and parts[-1]:
            parts.append({})
            used = 0
        parts[-1].update(group)
        used += size
    return parts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minilm", type=Path, required=True, help="unpacked all-MiniLM-L6-v2 (make train-env)")
    ap.add_argument("--mpnet", type=Path, required=True, help="unpacked all-mpnet-base-v2")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--folder-mb", type=float, default=62.0, help="at most this much per call's folder")
    ap.add_argument("--part-mb", type=float, default=12.0, help="at most this much per weights file")
    args = ap.parse_args()
    tokens = {name: Pieces(base / "tokenizer.json", 512, SPECIALS[name])
              for name, base in (("minilm", args.minilm), ("mpnet", args.mpnet))}
    d131, x80, dev, dev_file = recipe_sentences()
    print(f"D131 {len(d131)}, X80 {len(x80)}, dev {len(dev)}")
    data: dict[str, np.ndarray] = {}
    for split, examples in (("d131", d131), ("x80", x80), ("dev", dev)):
        arrays, kept = encode(examples, tokens)
        data.update({f"{split}/{k}": v for k, v in arrays.items()})
        data[f"{split}/index"] = kept
        print(f"{split}: {len(kept)} of {len(examples)} sentences fit one window")
    data["dev/file"] = np.asarray(dev_file, dtype=np.uint8)[data["dev/index"]]
    limit = int(args.folder_mb * 1e6)
    first = args.out / "a"
    shutil.rmtree(args.out, ignore_errors=True)
    first.mkdir(parents=True)
    np.savez_compressed(first / "data.npz", **data)
    shutil.copy(Path(__file__).with_name("neural_encoder_probe.py"), first / "probe.py")
    shutil.copy(Path(__file__).resolve().parents[1] / "models/neural/batching.py", first / "batching.py")
    used = (first / "data.npz").stat().st_size
    configs = {}
    parts: list[tuple[str, dict[str, np.ndarray]]] = []
    for name, base in (("minilm", args.minilm), ("mpnet", args.mpnet)):
        configs[name] = json.loads((base / "config.json").read_text())
        parts.extend((name, p) for p in split_parts(quantised_encoder(base), int(args.part_mb * 1e6)))
    (first / "configs.json").write_text(json.dumps({**configs, "specials": SPECIALS}, indent=1))
    folder, count = first, 0
    for name, part in parts:  # greedy: each part into the current folder while it fits, else the next
        size = sum(a.nbytes for a in part.values())
        if used + size > limit:
            folder = args.out / chr(ord(folder.name) + 1)
            folder.mkdir()
            used = 0
        np.savez(folder / f"{name}_{count}.npz", **part)
        used += size
        count += 1
    for f in sorted(args.out.rglob("*")):
        if f.is_file():
            print(f"{f} {f.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
