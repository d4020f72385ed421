"""A copy of the default model folder with candidate scorers and configurations added, to evaluate them.

The candidates of issue W3.5 (a retrained scorer in place of a shipped one, a configuration with other
weights or options) are judged by ``dualdecomp evaluate --table`` and by timing configurations side by
side (``benchmarks/dependency_default_speed.py --model``), and both read a model folder. This script makes
one, leaving ``data/default_model`` untouched: the files are hard links where the file system allows
(else copies), and every file this script writes replaces its link (written atomically under a new name),
so nothing is written through a link into the shipped folder.

``--add NAME=DIR`` puts a scorer folder (with its own manifest) into the copy as ``NAME``;
``--config NAME=JSON`` writes ``configs/NAME.json`` from a JSON object with ``components`` (and optionally
``decode``; the default's ``decode`` otherwise), checked by the configuration parser. The folder's manifest
is rewritten last. ::

    python benchmarks/candidate_folder.py --out .cache/dm_single \\
        --add neural_mpnet_chain=.cache/candidates/neural_mpnet_chain \\
        --config 'mpnet-single-u={"components": [{"kind": "bigram", "path": ".", "weight": 0.1},
            {"kind": "neural", "path": "neural_mpnet_chain", "weight": 1,
             "options": {"backend": "onnx-int8", "unary_scale": 2}}]}'
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from dualdecomp.core.errors import ModelError
from dualdecomp.core.model_files import read_json, verify_directory, write_manifest
from dualdecomp.data.locations import default_model_dir
from dualdecomp.models.configuration.config import parse_config, save_config


def _link_or_copy(src: str, dst: str) -> str:
    """Hard-link ``src`` to ``dst``; copy it where the file systems differ (or links are refused)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    return dst


def _pair(text: str, what: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or "/" in name or name.startswith("."):
        raise argparse.ArgumentTypeError(f"{what} must be NAME=..., with a plain NAME: {text!r}")
    return name, value


def build(out: Path, base: Path, scorers: dict[str, Path], configs: dict[str, dict]) -> Path:
    """Make ``out``: ``base`` linked or copied, the ``scorers`` folders added under their names, the
    ``configs`` written as ``configs/NAME.json``; returns ``out``.

    Raises
    ------
    ModelError
        ``out`` exists, a scorer folder fails its manifest, a name is taken, or a configuration is
        malformed.
    """
    if out.exists():
        raise ModelError(f"{out} exists: choose a new folder")
    verify_directory(base)
    for name, path in scorers.items():
        verify_directory(path)
        if (base / name).exists():
            raise ModelError(f"{base / name} exists: add the scorer under another name")
    decode = read_json(base / "config.json").get("decode", {})
    parsed = {}
    for name, spec in configs.items():
        if not isinstance(spec, dict) or "components" not in spec:
            raise ModelError(f"configuration {name}: a JSON object with 'components'")
        full = {"format": "dualdecomp-config", "version": 1, "name": name, "decode": decode} | spec
        parsed[name] = parse_config(full, where=f"configuration {name}")
    shutil.copytree(base, out, copy_function=_link_or_copy)
    for name, path in scorers.items():
        shutil.copytree(path, out / name, copy_function=_link_or_copy)
    for name, config in parsed.items():
        save_config(config, out, name)  # atomic: a new file, never written through a link
    write_manifest(out)
    return out


def main(argv: list[str] | None = None) -> int:
    """Build the folder; a clear message and exit code 2 on bad input."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="the new model folder (must not exist)")
    p.add_argument("--base", type=Path, default=default_model_dir(),
                   help="the folder copied (default: the embedded default model)")
    p.add_argument("--add", action="append", default=[], type=lambda t: _pair(t, "--add"),
                   metavar="NAME=DIR", help="a scorer folder added as NAME (repeatable)")
    p.add_argument("--config", action="append", default=[], type=lambda t: _pair(t, "--config"),
                   metavar="NAME=JSON", help="a configuration written as configs/NAME.json (repeatable)")
    args = p.parse_args(argv)
    try:
        configs = {name: json.loads(text) for name, text in args.config}
    except json.JSONDecodeError as exc:
        p.error(f"--config: not JSON ({exc})")
    try:
        build(args.out, args.base, {name: Path(d) for name, d in args.add}, configs)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
