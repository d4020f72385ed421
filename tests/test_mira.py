"""k-best MIRA: Hildreth's solution, the margin it enforces, and a small training run."""

from __future__ import annotations

import numpy as np

from dualdecomp.app.cli import main
from dualdecomp.models.bigram.mira import hildreth


def test_hildreth_single_constraint_closed_form() -> None:
    alpha = hildreth(np.array([0.5]), np.array([2.0]), np.array([[3.0]]), C=10.0)
    assert np.allclose(alpha, [(2.0 - 0.5) / 3.0])
    clipped = hildreth(np.array([0.5]), np.array([2.0]), np.array([[3.0]]), C=0.1)
    assert np.allclose(clipped, [0.1])
    satisfied = hildreth(np.array([3.0]), np.array([2.0]), np.array([[3.0]]), C=10.0)
    assert np.allclose(satisfied, [0.0])


def test_hildreth_meets_all_margins_when_unclipped() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        D = rng.normal(size=(4, 7))
        w = rng.normal(size=7)
        losses = rng.uniform(1, 3, size=4)
        alpha = hildreth(D @ w, losses, D @ D.T, C=1e9, iterations=5000)
        w2 = w + alpha @ D
        assert np.all(D @ w2 >= losses - 1e-6)
        assert np.all(alpha >= 0)
        # complementary slackness: a positive multiplier means a tight margin
        assert np.all((alpha < 1e-9) | (np.abs(D @ w2 - losses) < 1e-6))


def test_mira_training_runs(corpora, tmp_path) -> None:
    out = tmp_path / "m"
    assert main(["train", "--train", str(corpora / "written.train.jsonl"), "--dev",
                 str(corpora / "written.dev.jsonl"), "--limit", "40", "--epochs", "2", "--lm", "none",
                 "--hash-bits", "16", "--trainer", "mira", "--k", "3", "--length-mode", "gold",
                 "--out", str(out), "--quiet"]) == 0
    spec = (out / "model.json").read_text()
    assert "3-best MIRA" in spec
