"""The examples of README.md and docs/**/*.md that show output print what the page shows
(tests/doc_examples.py).

Each page's examples run in order in one temporary directory; a mismatch names the page line, the command,
what the page shows and what it printed. Examples not run say why in their marker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import Block, matches, orphan_outputs, read_blocks

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # docs/components/ too
SENTINEL = "@@doc-example-step {}@@"
TIMEOUT = 400  # seconds per block


def _runnable(page: Path) -> bool:
    return any(b.skip is None and (b.lang == "console" or b.lang == "python") for b in read_blocks(page))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(PYTHONUNBUFFERED="1", COLUMNS="100", TERM="dumb")
    return env


def _workdir(tmp_path: Path) -> Path:
    for name in ("data", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _run_console(block: Block, cwd: Path) -> list[str]:
    script = ["exec 2>&1", "__rc=0"]
    for k, step in enumerate(block.steps):
        script += [f"printf '%s\\n' '{SENTINEL.format(k)}'", f"(exit $__rc); {step.command}", "__rc=$?"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, text=True, timeout=TIMEOUT)
    out = done.stdout
    failures = []
    for k, step in enumerate(block.steps):
        head = SENTINEL.format(k) + "\n"
        tail = SENTINEL.format(k + 1) + "\n"
        start = out.find(head)
        if start < 0:
            failures.append(f"{block.path.name}:{step.line}: `{step.command}` did not run\n{out}")
            continue
        start += len(head)
        end = out.find(tail, start)
        actual = out[start:] if end < 0 else out[start:end]
        if not matches(step.expected, actual):
            failures.append(f"{block.path.name}:{step.line}: $ {step.command}\n--- the page shows:\n"
                            f"{step.expected}\n--- it printed:\n{actual}")
    return failures


def _run_python(block: Block, cwd: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", block.text], cwd=cwd, env=_env(), capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, timeout=TIMEOUT)
    if done.returncode != 0:
        return [f"{block.where}: the Python example exits {done.returncode}\n{done.stderr[-3000:]}"]
    if block.output is not None and not matches(block.output, done.stdout):
        return [f"{block.where}: the Python example\n--- the page shows:\n{block.output}\n--- it printed:\n"
                f"{done.stdout}"]
    return []


def test_every_output_example_is_marked() -> None:
    """A shell example with output is a console block, and every output block has its Python block."""
    bad = []
    for page in PAGES:
        for block in read_blocks(page):
            if block.lang != "console" and any(line.startswith("$ ") for line in block.text.split("\n")):
                bad.append(f"{block.where}: a block with `$ ` commands must be ```console")
            if block.lang == "console" and block.skip is None and not block.steps:
                bad.append(f"{block.where}: a console block without a `$ ` command")
        bad += [f"{page.name}:{line}: an output block after no Python block" for line in orphan_outputs(page)]
    assert not bad, "\n".join(bad)


def test_the_comparison_masks_only_what_it_says() -> None:
    assert matches("x (5 of 25 tokens, 5.7 ms)", "x (5 of 25 tokens, 38.4 ms)")
    assert not matches("x (5 of 25 tokens, 5.7 ms)", "x (6 of 25 tokens, 5.7 ms)")
    assert matches("error: .../m2/lm.binary: bad", "error: /tmp/x/m2/lm.binary: bad")
    assert matches("a\n...\nd", "a\nb\nc\nd") and matches("a\n...\nd", "a\nd")
    assert not matches("a\nd", "a\nb\nd") and not matches("a", "")
    assert matches("prepared in 12.7 s", "prepared in 3.1 s") and not matches("0.2 s", "0.3 s")
    # float rounding that differs between CPUs: a primal's fifth digit, a gap of 1e-14, the tail after "..."
    assert matches("primal=73.3779 gap=0 (9 of 18)", "primal=73.3778 gap=1.42109e-14 (9 of 18)")
    assert matches('"primal": 25344.3991923778..., "gap": 0.0', '"primal": 25344.398110295657, "gap": 0.0')
    assert not matches("primal=73.3779", "primal=73.3709") and not matches("gap=0", "gap=0.001")
    assert not matches("token F1 74.4, bigram F1 61.4", "token F1 74.1, bigram F1 61.4")  # a decision
    assert not matches("(9 of 18 tokens)", "(0 of 18 tokens)") and not matches("0 of 2", "1 of 2")
    assert not matches("211320 sentences", "211321 sentences") and matches("v2 l0", "v2 l0")


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples(page: Path, tmp_path: Path) -> None:
    cwd = _workdir(tmp_path)
    failures: list[str] = []
    for block in read_blocks(page):
        if block.skip is not None or block.lang not in ("console", "python"):
            continue
        if block.setup:
            done = subprocess.run(["bash", "-c", block.setup], cwd=cwd, env=_env(), capture_output=True,
                                  text=True, timeout=TIMEOUT)
            assert done.returncode == 0, f"{block.where}: setup failed\n{done.stderr}"
        failures += _run_console(block, cwd) if block.lang == "console" else _run_python(block, cwd)
    assert not failures, "\n\n".join(failures)
