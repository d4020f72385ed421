"""The comparison table of ``dualdecomp evaluate --table``: every system on every dev file at gold length.

A table specification (JSON) names the systems and the dev files::

    {"dev": ["data/corpora/broadcast.dev.jsonl", "data/corpora/written.dev.jsonl",
             "data/corpora/eval.dev.jsonl"],
     "length": "gold",          # or "free", "ratio:R", a number of tokens
     "systems": [{"name": "McDonald", "model": "data/default_model"},
                 {"name": "McDonald+LM (DD)", "model": "data/default_model", "config": "mcdonald-lm"}],
     "default": "McDonald"}

Paths are relative to the specification file. Each system is run with the batch compressor (exact length
per reference) and scored by :func:`dualdecomp.app.evaluation.evaluate_files`; the markdown table has one row
per (dev file, system) with CR, token F1, bigram F1, GR-F1, ROUGE-L, certified % and mean ms per decode,
and marks the row of the ``default`` system.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.app.batch import BatchOptions, run_batch
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.evaluation import EvaluationReport, evaluate_files
from dualdecomp.app.length_request import parse_length
from dualdecomp.core.errors import InputError


@dataclass(frozen=True)
class SystemSpec:
    """One row family of the table."""

    name: str
    model: str | None
    config: str | None = None
    limit: int | None = None


@dataclass(frozen=True)
class TableSpec:
    """What the table compares."""

    dev: tuple[str, ...]
    systems: tuple[SystemSpec, ...]
    length: str = "gold"
    default: str | None = None


def read_table_spec(path: str | os.PathLike[str]) -> TableSpec:
    """Read and validate a table specification (paths resolved against its folder)."""
    p = Path(path)
    try:
        spec = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"table specification not found: {p}") from None
    except (OSError, ValueError, RecursionError) as exc:  # also: too deep, an integer of > 4,300 digits
        raise InputError(f"{p}: unreadable or not valid JSON ({type(exc).__name__}: {exc})") from None
    base = p.parent

    def resolve(x: str | None) -> str | None:
        return None if x is None else str((base / x).resolve())

    if not isinstance(spec, dict) or not isinstance(spec.get("dev"), list) or not spec["dev"]:
        raise InputError(f"{p}: 'dev' must be a non-empty list of JSONL files")
    systems = spec.get("systems")
    if not isinstance(systems, list) or not systems:
        raise InputError(f"{p}: 'systems' must be a non-empty list")
    out = []
    for i, s in enumerate(systems):
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            raise InputError(f"{p}: system {i} needs a name")
        limit = s.get("limit")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise InputError(f"{p}: system {i} limit must be a positive integer")
        out.append(SystemSpec(s["name"], resolve(s.get("model")), s.get("config"), limit))
    return TableSpec(tuple(resolve(d) for d in spec["dev"]), tuple(out), str(spec.get("length", "gold")),
                     spec.get("default"))


def run_table(spec: TableSpec, log=None) -> list[tuple[str, str, EvaluationReport]]:
    """Compress every dev file with every system and evaluate; returns (dev name, system, report) rows."""

    rows = []
    options = BatchOptions(spec=parse_length(None if spec.length == "free" else spec.length))
    with tempfile.TemporaryDirectory() as tmp:
        for k, system in enumerate(spec.systems):
            compressor = Compressor(system.model, system.config)
            for j, dev in enumerate(spec.dev):
                src = Path(dev)
                if system.limit is not None:  # e.g. the slow ILP oracle on the first sentences only
                    lines = [ln for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
                    src = Path(tmp) / f"head-{system.limit}-{Path(dev).name}"
                    src.write_text("\n".join(lines[: system.limit]) + "\n", encoding="utf-8")
                out = Path(tmp) / f"system{k}-dev{j}.jsonl"
                run_batch(src, out, compressor, options)
                report = evaluate_files(dev, out, allow_missing=system.limit is not None)
                name = Path(dev).name.removesuffix(".jsonl")
                if system.limit is not None:
                    name += f" (first {system.limit})"
                rows.append((name, system.name, report))
                if log is not None:
                    log(f"{system.name} on {name}: bigram F1 {100 * report.bigram_f1:.1f}")
    return rows


def markdown_table(rows: list[tuple[str, str, EvaluationReport]], default: str | None = None) -> str:
    """One markdown table: dev set, system, CR, token F1, bigram F1, GR-F1, ROUGE-L, certified %, ms, and
    the references' CR on the same sentences."""
    head = ("| dev set | system | CR | token F1 | bigram F1 | GR-F1 | ROUGE-L | certified % | ms / decode "
            "| ref. CR |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [head]
    for dev, system, r in rows:
        label = f"**{system}** (default)" if system == default else system
        cert = "–" if r.certified is None else f"{100 * r.certified:.1f}"
        ms = "–" if r.mean_seconds is None else f"{1000 * r.mean_seconds:.2f}"
        cells = [dev, label, *(f"{100 * getattr(r, m):.1f}" for m in ("cr", "token_f1", "bigram_f1", "gr_f1",
                                                                       "rougeL")), cert, ms,
                 f"{100 * r.reference_cr:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
