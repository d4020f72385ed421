"""The encoder probe's GPU script (benchmarks/neural_encoder_probe.py) end to end on tiny random encoders, on
the CPU: the runs, the teacher's labels, the students, and what comes back. Needs the train extra."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from dualdecomp.models.neural.store import quantise_rows  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "neural_encoder_probe.py"
VOCAB = 40
TINY = {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32,
        "vocab_size": VOCAB, "max_position_embeddings": 64, "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0}


def write_encoder(work: Path, name: str, model_type: str) -> None:
    """A random encoder's config and its tensors as the preparation writes them (int8 rows, two parts)."""
    config = transformers.AutoConfig.for_model(model_type, **TINY)
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config, add_pooling_layer=False)
    tensors = {}
    for key, value in model.state_dict().items():
        if not value.is_floating_point():
            continue
        array = value.numpy()
        if array.ndim == 2:
            tensors[key], tensors[key + "::scale"] = quantise_rows(array)
        else:
            tensors[key] = array.astype(np.float32)
    names = sorted(k for k in tensors if not k.endswith("::scale"))
    for part, chunk in enumerate((names[:len(names) // 2], names[len(names) // 2:])):
        np.savez(work / f"{name}_{part}.npz",
                 **{k: tensors[k] for n in chunk for k in (n, n + "::scale") if k in tensors})
    configs = json.loads((work / "configs.json").read_text()) if (work / "configs.json").exists() else {}
    configs[name] = {"model_type": model_type, **TINY, "pad_token_id": 1 if model_type == "mpnet" else 0}
    (work / "configs.json").write_text(json.dumps(configs))


def write_data(work: Path, sizes: dict[str, int]) -> dict[str, list[int]]:
    """Random sentences in the preparation's format (the same words for both tokenizers); returns the
    number of words of each split's sentences."""
    rng = np.random.default_rng(1)
    data, words_of = {}, {}
    for split, n in sizes.items():
        words = rng.integers(1, 9, size=n)
        words_of[split] = words.tolist()
        data[f"{split}/words"] = words.astype(np.uint16)
        data[f"{split}/targets"] = rng.integers(0, 7, size=words.sum()).astype(np.uint8)
        data[f"{split}/index"] = np.arange(n)
        for name in ("minilm", "mpnet"):
            pieces = rng.integers(1, 3, size=words.sum()).astype(np.uint8)
            bounds = np.concatenate([[0], np.cumsum(words)])
            lengths = [int(pieces[bounds[i]:bounds[i + 1]].sum()) + 2 for i in range(n)]
            data[f"{split}/{name}/word_pieces"] = pieces
            data[f"{split}/{name}/id_len"] = np.asarray(lengths, dtype=np.uint16)
            data[f"{split}/{name}/ids"] = rng.integers(3, VOCAB, size=sum(lengths)).astype(np.uint16)
    data["dev/file"] = np.zeros(sizes["dev"], dtype=np.uint8)
    np.savez_compressed(work / "data.npz", **data)
    return words_of


def probe(work: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), "--work", str(work), "--out", str(out), "--device", "cpu", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def test_probe_runs_label_distil_and_collect(tmp_path) -> None:
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    write_encoder(work, "minilm", "bert")
    write_encoder(work, "mpnet", "mpnet")
    words = write_data(work, {"d131": 40, "x80": 24, "dev": 12})
    deadline = str(time.time() + 500)
    for run in ("R1", "R5"):
        done = probe(work, out, "run", run, "--deadline", deadline)
        assert done.returncode == 0, done.stderr[-2000:]
    done = probe(work, out, "main", "--deadline", deadline)
    assert done.returncode == 0, done.stderr[-2000:]
    records = json.loads((out / "records.json").read_text())
    assert sorted(records) == ["R1", "R2", "R3", "R4", "R5"]
    steps = {"R1": 2, "R2": 2, "R3": 2, "R4": 2, "R5": 2}  # 40 sentences, and 64, in batches of 32
    for run, record in records.items():
        assert record["stopped"] == "epoch" and record["steps"] == record["total_steps"] == steps[run]
        assert record["train_sentences"] == (64 if run in ("R4", "R5") else 40)
        assert record["unexpected_keys"] == [] and 0 < record["dev_loss"] < 5
    with np.load(out / "logits.npz") as z:
        for run in records:
            assert z[f"{run}/words"].tolist() == words["dev"]
            assert len(z[f"{run}/logits"]) == sum(words["dev"]) and np.isfinite(z[f"{run}/logits"]).all()
    with np.load(work / "teacher.npz") as z:  # the teacher's keep probabilities, word by word
        assert [len(z[s]) for s in ("d131", "x80")] == [sum(words["d131"]), sum(words["x80"])]
        assert ((z["d131"] > 0) & (z["d131"] < 1)).all()
    students = sorted(p.name for p in out.glob("R?.weights-*.npz"))
    assert students == ["R3.weights-0.npz", "R3.weights-1.npz", "R4.weights-0.npz", "R4.weights-1.npz"]
    state = {}
    for name in students[:2]:
        with np.load(out / name) as z:
            state.update({k: z[k] for k in z.files})
    assert "head.weight" in state and not any("embeddings" in k for k in state)
    assert len(list(out.iterdir())) <= 8  # what a device call can bring back


def test_a_deadline_stops_a_run_and_says_so(tmp_path) -> None:
    work, out = tmp_path / "work", tmp_path / "out"
    work.mkdir()
    write_encoder(work, "minilm", "bert")
    write_data(work, {"d131": 96, "x80": 4, "dev": 6})
    done = probe(work, out, "run", "R1", "--deadline", str(time.time() - 1))
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((work / "R1.json").read_text())
    assert record["stopped"] == "deadline at step 1 of 3" and record["steps"] == 1
    assert (work / "R1.logits.npz").exists()


def test_micro_batches_give_the_same_run(tmp_path) -> None:
    """Without dropout, a run cut into micro-batches ends where the whole batches do (up to bfloat16)."""
    logits = {}
    for budget in (0, 24):
        work, out = tmp_path / f"work{budget}", tmp_path / f"out{budget}"
        work.mkdir()
        write_encoder(work, "minilm", "bert")
        write_data(work, {"d131": 64, "x80": 4, "dev": 10})
        done = probe(work, out, "--max-batch-pieces", str(budget), "run", "R1", "--deadline",
                     str(time.time() + 500))
        assert done.returncode == 0, done.stderr[-2000:]
        record = json.loads((work / "R1.json").read_text())
        assert record["steps"] == 2 and record["max_batch_pieces"] == budget
        assert record["micro_batches"] == 2 if budget == 0 else record["micro_batches"] > 10
        with np.load(work / "R1.logits.npz") as z:
            logits[budget] = z["logits"]
    assert np.allclose(logits[0], logits[24], atol=0.02)
    assert not np.allclose(logits[0], 0.0)
