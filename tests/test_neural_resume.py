"""Resumable neural fine-tuning (only with the optional ``train`` extra): a run cut into pieces by
``--stop-after-steps`` and by the time budget, resumed from its checkpoints, exports bit-identical weights
and learning curve to an uninterrupted run, with dropout and with the pair head; a checkpoint of other
settings or data is refused, a damaged one named; a finished model is not trained again; the command
exits 4 after a piece.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from dualdecomp.app.cli import main as cli_main  # noqa: E402
from dualdecomp.core.errors import InputError, ModelError  # noqa: E402
from dualdecomp.models.neural.checkpoint import checkpoint_root, read_checkpoint  # noqa: E402
from dualdecomp.models.neural.examples import Example  # noqa: E402
from dualdecomp.models.neural.training import PieceOptions, TrainingSettings, fine_tune  # noqa: E402
from tests.neural_tiny import WORDS  # noqa: E402
from tests.neural_tiny_base import write_tiny_base  # noqa: E402


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    return write_tiny_base(tmp_path_factory.mktemp("base"))


@pytest.fixture(scope="module")
def tiny_mpnet_base(tmp_path_factory):
    return write_tiny_base(tmp_path_factory.mktemp("mpnet"), model_type="mpnet")


def _data(seed: int, n: int = 40) -> list[Example]:
    """Random sentences of 3 to 7 tiny-vocabulary words, targets in {0, 0.5, 1} (as broadcast's)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = tuple(WORDS[i] for i in rng.integers(0, len(WORDS), int(rng.integers(3, 8))))
        out.append(Example(words, rng.integers(0, 3, len(words)) / 2.0, "toy"))
    return out


def _settings(**kw) -> TrainingSettings:
    # 40 sentences in batches of 8: 5 steps an epoch, 6 epochs = 30 steps
    base = dict(epochs=6, batch_size=8, learning_rate=5e-3, head_learning_rate=5e-2, eval_every=4,
                max_minutes=5, threads=1, freeze_embeddings=False, warmup=0.2)
    return TrainingSettings(**{**base, **kw})


def _weights(out) -> dict[str, np.ndarray]:
    with np.load(out / "weights.npz", allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _untimed(curve: list[dict]) -> list[dict]:
    return [{k: v for k, v in p.items() if k != "minutes"} for p in curve]


def _assert_same_model(a, b) -> None:
    wa, wb = _weights(a), _weights(b)
    assert sorted(wa) == sorted(wb)
    differ = [k for k in wa if wa[k].dtype != wb[k].dtype or not np.array_equal(wa[k], wb[k])]
    assert differ == []
    ca = json.loads((a / "curve.json").read_text())
    cb = json.loads((b / "curve.json").read_text())
    assert _untimed(ca) == _untimed(cb)  # exact float equality of every loss and F1


@pytest.mark.parametrize("pair_rank, model_type, extra", [
    (0, "bert", {}), (4, "bert", {}),
    # MPNet in bfloat16 autocast, its batches cut into micro-batches (the mpnet candidate's recipe)
    (4, "mpnet", {"autocast": "bfloat16", "max_batch_pieces": 20})])
def test_a_run_cut_into_pieces_ends_bit_identical(request, tmp_path, pair_rank, model_type, extra) -> None:
    tiny_base = request.getfixturevalue("tiny_mpnet_base" if model_type == "mpnet" else "tiny_base")
    train, dev = _data(1), _data(2, 12)
    settings = _settings(pair_rank=pair_rank, **extra)
    whole = fine_tune(tiny_base, train, dev, tmp_path / "a", settings, log=lambda s: None,
                      pieces=PieceOptions(checkpoint_every=5))
    assert whole["steps"] == 30 and whole["stopped_by"] == "steps" and whole["pieces"] == 1
    assert not checkpoint_root(tmp_path / "a").exists()  # removed once the model is written

    out, root = tmp_path / "b", checkpoint_root(tmp_path / "b")
    logs: list[str] = []
    # the time budget ends the first piece after its first step (0 minutes); the budget is each piece's own
    first = fine_tune(tiny_base, train, dev, out, _settings(pair_rank=pair_rank, max_minutes=0, **extra),
                      log=logs.append, pieces=PieceOptions(checkpoint_every=5))
    assert first["stopped_by"] == "time budget" and first["steps"] == 1
    assert not out.exists() and read_checkpoint(root).progress["step"] == 1
    assert any("stopped by the time budget at step 1 of 30" in s for s in logs)
    # then pieces ending mid-epoch (7, 17), at an epoch's end (10) and on a checkpoint step (25)
    ends = []
    for k in (6, 3, 7, 8):
        record = fine_tune(tiny_base, train, dev, out, settings, log=logs.append,
                           pieces=PieceOptions(checkpoint_every=5, stop_after_steps=k))
        assert record["stopped_by"] == "stop-after-steps" and not out.exists()
        ends.append(read_checkpoint(root).progress["step"])
        assert len(list(root.iterdir())) == 1  # only the latest checkpoint is kept
    assert ends == [7, 10, 17, 25]
    assert any("resuming from the checkpoint" in s and "at step 17 of 30" in s for s in logs)
    last = fine_tune(tiny_base, train, dev, out, settings, log=logs.append,
                     pieces=PieceOptions(checkpoint_every=5, stop_after_steps=100))
    assert last["steps"] == 30 and last["stopped_by"] == "steps" and last["pieces"] == 6
    assert not root.exists()
    _assert_same_model(tmp_path / "a", out)
    assert {k: v for k, v in last["final"].items() if k != "minutes"} == \
        {k: v for k, v in whole["final"].items() if k != "minutes"}


def test_a_checkpoint_of_other_settings_or_data_is_refused(tiny_base, tmp_path) -> None:
    train, dev = _data(3), _data(4, 8)
    out = tmp_path / "m"
    fine_tune(tiny_base, train, dev, out, _settings(), log=lambda s: None,
              pieces=PieceOptions(stop_after_steps=3))
    with pytest.raises(InputError, match=r"learning_rate: 0\.005 there, 0\.001 now.*--no-resume"):
        fine_tune(tiny_base, train, dev, out, _settings(learning_rate=1e-3), log=lambda s: None)
    with pytest.raises(InputError, match="the training sentences differ"):
        fine_tune(tiny_base, train[:-1], dev, out, _settings(), log=lambda s: None)
    found = read_checkpoint(checkpoint_root(out))
    assert found.progress["step"] == 3  # refused: left as it was
    with (found.path / "tensors.npz").open("ab") as fh:  # a damaged checkpoint is named, never read
        fh.write(b"\0")
    with pytest.raises(ModelError, match="unreadable checkpoint.*sha256.*--no-resume"):
        fine_tune(tiny_base, train, dev, out, _settings(), log=lambda s: None)
    # --no-resume starts over, with the new settings
    record = fine_tune(tiny_base, train, dev, out, _settings(learning_rate=1e-3), log=lambda s: None,
                       pieces=PieceOptions(resume=False, stop_after_steps=2))
    assert record["steps"] == 2


def test_a_finished_model_is_not_trained_again(tiny_base, tmp_path) -> None:
    train, dev = _data(5, 16), _data(6, 8)
    out = tmp_path / "m"
    first = fine_tune(tiny_base, train, dev, out, _settings(epochs=1), log=lambda s: None)
    stamp = (out / "weights.npz").stat().st_mtime_ns
    logs: list[str] = []
    again = fine_tune(tiny_base, train, dev, out, _settings(epochs=1, max_minutes=1), log=logs.append)
    assert again == json.loads((out / "model.json").read_text())["meta"] and again["steps"] == first["steps"]
    assert any("not trained again" in s for s in logs)
    assert (out / "weights.npz").stat().st_mtime_ns == stamp
    # other settings: trained (and written) again
    fine_tune(tiny_base, train, dev, out, _settings(epochs=1, seed=1), log=lambda s: None)
    assert (out / "weights.npz").stat().st_mtime_ns != stamp


def test_the_command_exits_4_after_a_piece_and_0_when_done(tiny_base, tmp_path, capsys) -> None:
    train = tmp_path / "train.tsv"
    train.write_text("".join(" ".join(ex.words) + "\t" + " ".join(str(int(t >= 0.5)) for t in ex.target)
                             + "\n" for ex in _data(7, 16)))
    dev = tmp_path / "dev.jsonl"
    dev.write_text(json.dumps({"id": "1", "text": "the council plans to consider its election .",
                               "compressions": ["council plans election ."]}) + "\n")
    out = tmp_path / "model"
    argv = ["train", "--kind", "neural", "--base", str(tiny_base), "--train", str(train), "--dev", str(dev),
            "--out", str(out), "--epochs", "2", "--batch-size", "8", "--threads", "1", "--eval-every", "2"]
    assert cli_main([*argv, "--stop-after-steps", "3"]) == 4
    err = capsys.readouterr().err
    assert "stopped by --stop-after-steps at step 3 of 4" in err and "run the same command again" in err
    assert not out.exists()
    assert cli_main(argv) == 0
    assert "resuming from the checkpoint" in capsys.readouterr().err
    assert json.loads((out / "model.json").read_text())["meta"]["steps"] == 4
    assert cli_main(argv) == 0
    assert "not trained again" in capsys.readouterr().err
