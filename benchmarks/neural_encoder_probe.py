"""The encoder probe's GPU side (benchmarks/neural_encoder_probe.md): fine-tune keep scorers and write
their dev log-odds.

Standalone (PyTorch, transformers and numpy only) so that it runs on a lent GPU machine without the
project installed. Its inputs are made by ``neural_encoder_probe_prepare.py`` (pieces, targets, int8 base
encoders), copied into one working folder. The recipe is the shipped one (``make neural-model``: AdamW
8e-5, heads 1e-3, weight decay 0.01, warm-up 6 % and linear decay, batches of 32 sentences of similar
length, embeddings frozen, one epoch, BCE on each word's first piece, gradients clipped at 1, seed 0),
with bfloat16 autocast (on a GPU, or on a CPU with AVX-512 BF16 / AMX: about three times float32's speed).

Commands::

    python probe.py --work DIR --out OUT run R1 --deadline EPOCH_SECONDS   # one run
    python probe.py --work DIR --out OUT main --deadline EPOCH_SECONDS     # R2, then R3 and R4, then collect

A run writes ``DIR/RUN.logits.npz`` (dev log-odds), ``DIR/RUN.json`` (its record) and, for the students,
``DIR/RUN.weights-K.npz`` (the trained tensors in float16; every run writes all its tensors in
float16 to ``DIR/RUN.state.npz``, which stays where it is); the teacher also writes
``DIR/teacher.npz`` (its keep probabilities on D131 and X80). A run stops at ``--deadline`` (the record
says so) so that the device's time limit never loses everything.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where used, so that --help needs no PyTorch
    import torch

RUNS = {  # encoder, targets, training splits
    "R1": ("minilm", "gold", ("d131",)),
    "R2": ("mpnet", "gold", ("d131",)),
    "R3": ("minilm", "teacher", ("d131",)),
    "R4": ("minilm", "teacher", ("d131", "x80")),
    "R5": ("minilm", "gold", ("d131", "x80")),
}
STUDENTS = ("R3", "R4")
SETTINGS = {"batch_size": 32, "learning_rate": 8e-5, "head_learning_rate": 1e-3, "weight_decay": 0.01,
            "warmup": 0.06, "epochs": 1, "seed": 0, "clip": 1.0}
TARGET_STEPS = 6.0


class Split:
    """One split's sentences for one tokenizer: piece ids, first-piece positions, targets."""

    def __init__(self, data: dict, split: str, encoder: str, limit: int | None = None) -> None:
        ids, id_len = data[f"{split}/{encoder}/ids"], data[f"{split}/{encoder}/id_len"].astype(np.int64)
        pieces, words = data[f"{split}/{encoder}/word_pieces"], data[f"{split}/words"].astype(np.int64)
        targets = data[f"{split}/targets"].astype(np.float32) / TARGET_STEPS
        id_off, w_off = np.concatenate([[0], np.cumsum(id_len)]), np.concatenate([[0], np.cumsum(words)])
        self.ids = [ids[id_off[i]:id_off[i + 1]].astype(np.int64) for i in range(len(id_len))]
        starts = [np.concatenate([[0], np.cumsum(pieces[w_off[i]:w_off[i + 1]])[:-1]])
                  for i in range(len(words))]
        self.first = [1 + s.astype(np.int64) for s in starts]
        self.target = [targets[w_off[i]:w_off[i + 1]] for i in range(len(words))]
        if limit:  # (tests) the first sentences only
            self.ids, self.first, self.target = self.ids[:limit], self.first[:limit], self.target[:limit]

    def extend(self, other: Split) -> None:
        self.ids += other.ids
        self.first += other.first
        self.target += other.target


def _batching():
    """``models/neural/batching.py``, loaded by its path: beside this script on the GPU machine (the
    preparation copies it there), else in the repository."""
    here = Path(__file__).resolve()
    for path in (here.with_name("batching.py"), here.parents[1] / "models" / "neural" / "batching.py"):
        if path.is_file():
            spec = importlib.util.spec_from_file_location("probe_batching", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise SystemExit("batching.py is neither beside this script nor in the repository")


BATCHING = _batching()


def batches(split: Split, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of similar lengths in random order (the training code's own)."""
    return BATCHING.length_batches([len(x) for x in split.ids], batch_size, rng)


def tensors(split: Split, batch: np.ndarray, pad: int, device: str) -> tuple[torch.Tensor, ...]:
    import torch

    arrays = BATCHING.padded_batch(split.ids, split.first, split.target, batch, pad)
    return tuple(torch.from_numpy(a).to(device, non_blocking=True) for a in arrays)


def make_scorer(encoder: torch.nn.Module, hidden: int) -> torch.nn.Module:
    """The encoder with a keep head on each word's first piece (log-odds, float32)."""
    import torch

    class Scorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(hidden, 1)

        def forward(self, ids, mask, first):
            states = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            picked = torch.gather(states, 1, first.unsqueeze(-1).expand(-1, -1, states.shape[-1]))
            return self.head(picked).squeeze(-1).float()

    return Scorer()


def load_encoder(work: Path, name: str) -> tuple[torch.nn.Module, dict]:
    """The base encoder from its int8 parts (dequantised to float32)."""
    import torch
    from transformers import AutoConfig, AutoModel

    configs = json.loads((work / "configs.json").read_text())
    cfg = dict(configs[name])
    kind = cfg.pop("model_type")
    config = AutoConfig.for_model(kind, **{k: v for k, v in cfg.items()
                                           if not k.startswith("_") and k != "architectures"})
    model = AutoModel.from_config(config, add_pooling_layer=False)
    state = {}
    for part in sorted(glob.glob(str(work / f"{name}_*.npz"))):
        with np.load(part) as z:
            for key in z.files:
                if key.endswith("::scale"):
                    continue
                arr = z[key]
                if key + "::scale" in z.files:
                    arr = arr.astype(np.float32) * z[key + "::scale"][:, None]
                state[key] = torch.from_numpy(np.asarray(arr, dtype=np.float32))
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing:
        raise SystemExit(f"{name}: tensors missing from the parts: {missing[:5]}")
    return model, {"pad": int(config.pad_token_id or 0), "hidden": int(config.hidden_size),
                   "unexpected": sorted(unexpected)}


def evaluate(model: torch.nn.Module, split: Split, pad: int, device: str) -> tuple[list[np.ndarray], dict]:
    """Dev log-odds per sentence (eval mode) and the pooled loss / token F1 of logit > 0."""
    import torch

    model.eval()
    order = np.argsort([len(x) for x in split.ids], kind="stable")
    out: list[np.ndarray | None] = [None] * len(split.ids)
    loss = n = tp = npred = ngold = 0.0
    with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
        for s in range(0, len(order), 128):
            batch = order[s:s + 128]
            ids, mask, first, target, wmask = tensors(split, batch, pad, device)
            logits = model(ids, mask, first)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            loss += float((bce * wmask).sum())
            n += float(wmask.sum())
            pred, gold = (logits > 0).float() * wmask, (target >= 0.5).float() * wmask
            tp += float((pred * gold).sum())
            npred, ngold = npred + float(pred.sum()), ngold + float(gold.sum())
            lg = logits.cpu().numpy()
            for r, i in enumerate(batch):
                out[i] = lg[r, :len(split.first[i])].copy()
    model.train()
    return out, {"dev_loss": loss / n, "dev_token_f1_pooled": 2 * tp / (npred + ngold), "dev_cr": npred / n}


def train(run: str, work: Path, deadline: float, device: str, limit: int | None = None,
          max_batch_pieces: int = 0) -> None:
    import torch

    t0 = time.time()
    encoder_name, targets, splits = RUNS[run]
    torch.manual_seed(SETTINGS["seed"])
    with np.load(work / "data.npz") as z:
        data = {k: z[k] for k in z.files}
    train_split = Split(data, splits[0], encoder_name, limit)
    for extra in splits[1:]:
        train_split.extend(Split(data, extra, encoder_name, limit))
    if targets == "teacher":
        with np.load(work / "teacher.npz") as z:
            probs = np.concatenate([z[s] for s in splits]).astype(np.float32)
        off = 0
        for k, t in enumerate(train_split.target):
            train_split.target[k] = probs[off:off + len(t)]
            off += len(t)
        assert off == len(probs), (off, len(probs))
    dev = Split(data, "dev", encoder_name, limit)
    encoder, info = load_encoder(work, encoder_name)
    model = make_scorer(encoder, info["hidden"]).to(device)
    model.train()
    for p in model.encoder.embeddings.parameters():
        p.requires_grad_(False)
    trained = [(n, p) for n, p in model.encoder.named_parameters() if p.requires_grad]
    no_decay = [p for n, p in trained if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in trained if not ("LayerNorm" in n or n.endswith("bias"))]
    optim = torch.optim.AdamW([
        {"params": decay, "weight_decay": SETTINGS["weight_decay"], "lr": SETTINGS["learning_rate"]},
        {"params": no_decay, "weight_decay": 0.0, "lr": SETTINGS["learning_rate"]},
        {"params": list(model.head.parameters()), "weight_decay": 0.0, "lr": SETTINGS["head_learning_rate"]},
    ], fused=device == "cuda")
    rng = np.random.default_rng(SETTINGS["seed"])
    order = batches(train_split, SETTINGS["batch_size"], rng)
    total = len(order) * SETTINGS["epochs"]
    warm = max(1, int(SETTINGS["warmup"] * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    step, running, curve, stopped = 0, [], [], "epoch"
    print(run, f"training {len(train_split.ids)} sentences, {total} steps", flush=True)
    start = time.time()
    lengths, micro = [len(x) for x in train_split.ids], 0
    for batch in order:
        optim.zero_grad(set_to_none=True)
        words = float(sum(len(train_split.first[i]) for i in batch))
        loss = 0.0
        for part in BATCHING.split_by_pieces(batch, lengths, max_batch_pieces):
            ids, mask, first, target, wmask = tensors(train_split, part, info["pad"], device)
            with torch.autocast(device, dtype=torch.bfloat16):
                logits = model(ids, mask, first)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            part_loss = (bce * wmask).sum() / words
            part_loss.backward()
            loss, micro = loss + part_loss.detach(), micro + 1
        torch.nn.utils.clip_grad_norm_(model.parameters(), SETTINGS["clip"])
        optim.step()
        sched.step()
        step += 1
        running.append(loss.detach())
        if step % 500 == 0 or step == 100:
            curve.append({"step": step, "train_loss": float(torch.stack(running).mean()),
                          "seconds": round(time.time() - start, 1),
                          "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2)})
            running = []
            print(run, json.dumps(curve[-1]), flush=True)
        if time.time() > deadline:
            stopped = f"deadline at step {step} of {total}"
            break
    train_seconds = time.time() - start
    logits, metrics = evaluate(model, dev, info["pad"], device)
    np.savez_compressed(work / f"{run}.logits.npz", logits=np.concatenate(logits).astype(np.float32),
                        words=np.array([len(x) for x in logits], dtype=np.int64))
    full = {k: v.detach().float().cpu().numpy().astype(np.float16) for k, v in model.state_dict().items()}
    np.savez(work / f"{run}.state.npz", **full)  # every tensor in float16, for later use on this machine
    if run in STUDENTS:
        state = {k: v for k, v in full.items() if ".embeddings." not in f".{k}"}
        keys = sorted(state)
        half = len(keys) // 2
        for k, part in enumerate((keys[:half], keys[half:])):
            np.savez(work / f"{run}.weights-{k}.npz", **{key: state[key] for key in part})
    record = {"run": run, "encoder": encoder_name, "targets": targets, "splits": list(splits),
              "train_sentences": len(train_split.ids), "steps": step, "total_steps": total,
              "stopped": stopped, "train_seconds": round(train_seconds, 1), "micro_batches": micro,
              "max_batch_pieces": max_batch_pieces,
              "seconds_per_step": round(train_seconds / max(step, 1), 4),
              "wall_seconds": round(time.time() - t0, 1), "curve": curve, **metrics,
              "unexpected_keys": info["unexpected"],
              "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
              "torch": torch.__version__, "settings": SETTINGS}
    (work / f"{run}.json").write_text(json.dumps(record, indent=1))
    print(run, "done", json.dumps({k: record[k] for k in ("steps", "stopped", "train_seconds", "dev_loss",
                                                            "dev_token_f1_pooled")}), flush=True)
    if run == "R2":  # then the teacher labels D131 and X80 (its record is written first)
        teacher = {}
        for split in ("d131", "x80"):
            lg, _ = evaluate(model, Split(data, split, encoder_name, limit), info["pad"], device)
            teacher[split] = (1.0 / (1.0 + np.exp(-np.concatenate(lg)))).astype(np.float32)
        np.savez(work / "teacher.tmp.npz", **teacher)
        (work / "teacher.tmp.npz").rename(work / "teacher.npz")


def spawn(run: str, args: argparse.Namespace, deadline: float) -> subprocess.Popen:
    """``run`` in a process of its own, with this command's options, logging to ``WORK/RUN.log``."""
    cmd = [sys.executable, __file__, "--work", str(args.work), "--out", str(args.out),
           "--device", args.device, "--max-batch-pieces", str(args.max_batch_pieces)]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    log = open(args.work / f"{run}.log", "w")
    return subprocess.Popen([*cmd, "run", run, "--deadline", str(deadline)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def collect(work: Path, out: Path) -> None:
    """Everything the runs wrote, into OUT (at most 8 files: records, logs, logits, student weights)."""
    out.mkdir(parents=True, exist_ok=True)
    records = {p.stem: json.loads(p.read_text()) for p in sorted(work.glob("R?.json"))}
    (out / "records.json").write_text(json.dumps(records, indent=1))
    logits = {}
    for p in sorted(work.glob("R?.logits.npz")):
        with np.load(p) as z:
            logits[f"{p.name[:2]}/logits"], logits[f"{p.name[:2]}/words"] = z["logits"], z["words"]
    if logits:
        np.savez_compressed(out / "logits.npz", **logits)
    with open(out / "logs.txt", "w") as fh:
        for p in sorted(work.glob("*.log")):
            fh.write(f"==== {p.name}\n{p.read_text()[-6000:]}\n")
    for p in sorted(work.glob("R?.weights-*.npz")):
        shutil.copy(p, out / p.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", help="cuda or cpu (default: cuda where there is one)")
    ap.add_argument("--limit", type=int, default=None, help="(tests) use the first N sentences of each split")
    ap.add_argument("--max-batch-pieces", type=int, default=0,
                    help="cut a batch into micro-batches of at most this padded size (0: never; on this "
                         "2-core, 23 GB machine mpnet needs one: 4096)")
    sub = ap.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("run", choices=sorted(RUNS))
    one.add_argument("--deadline", type=float, required=True)
    every = sub.add_parser("main")
    every.add_argument("--deadline", type=float, required=True)
    every.add_argument("--wait-for", nargs="*", default=["R1", "R5"], help="runs started by an earlier call")
    args = ap.parse_args()
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = True
    if args.command == "run":
        train(args.run, args.work, args.deadline, args.device, args.limit, args.max_batch_pieces)
        return 0
    margin = 25.0  # seconds kept for collecting
    teacher = spawn("R2", args, args.deadline - 60)
    while teacher.poll() is None and time.time() < args.deadline - margin:
        time.sleep(2)
    students = []
    if (args.work / "teacher.npz").exists():
        students = [spawn(r, args, args.deadline - margin - 20) for r in STUDENTS]
    waiting = set(args.wait_for) | set(STUDENTS if students else ())
    while time.time() < args.deadline - margin:
        finished = all((args.work / f"{r}.json").exists() for r in waiting)
        if finished and all(p.poll() is not None for p in students):
            break
        time.sleep(2)
    collect(args.work, args.out)
    for p in [teacher, *students]:
        if p.poll() is None:
            p.kill()
    shown = ("steps", "stopped", "train_seconds", "dev_loss", "dev_token_f1_pooled")
    records = json.loads((args.out / "records.json").read_text())
    print(json.dumps({r: {k: rec[k] for k in shown} for r, rec in records.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
