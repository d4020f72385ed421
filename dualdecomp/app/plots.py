"""Pictures of the engine and of evaluations, drawn off-screen with matplotlib (Agg).

* :func:`plot_convergence` — one decode's trace (``dualdecomp compress --trace``): the dual bound and the
  best primal per iteration, the gap ``dual − primal`` on a log axis, and the length multiplier λ during
  its bisection (a third panel, only when the trace has λ; a dotted line where branch and bound starts a
  new node, whose bisection starts again).
* :func:`plot_curve` — quality against compression rate, one line per system: token F1 and bigram F1
  over a sweep of length ratios (:mod:`dualdecomp.app.curve`).

Figures are made with :class:`matplotlib.figure.Figure` (whose canvas is Agg), never with pyplot, so no
global backend or figure state is touched and nothing needs a display.
"""

from __future__ import annotations

import json
import logging
import math
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from dualdecomp.core.errors import InputError
from dualdecomp.core.result import CERTIFICATE_RTOL

# A font matplotlib falls back from (a stale font cache, a missing STIX font) is not the user's business:
# the commands print one summary line on stderr, not findfont warnings.
logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)

__all__ = ["CurvePoint", "TraceRow", "plot_convergence", "plot_curve", "read_trace", "undrawn_values"]

DPI = 120
DRAWN_LIMIT = 1e100
"""Trace values beyond ±this are not drawn (the axes' ranges would overflow); nor are NaN and infinities."""
MAX_ITERATION = 2**53
"""The largest iteration number (and branch-and-bound node) a trace may give: an exact float."""
SERIES = ("dual", "primal", "lam")
MARKERS = ("o", "s", "^", "D", "v", "P")
LINESTYLES = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class TraceRow:
    """One decode's trace read from a ``compress --trace`` JSONL line.

    Attributes
    ----------
    id : str
        The line's ``id`` (with ``#L`` appended for the reference of length L in ``--length gold`` rows).
    steps : tuple of dict
        The trace entries (``iteration``, ``dual``, ``primal``, ``step``, ``disagreements``, ``lam``).
    certified : bool or None
        The line's certificate.
    """

    id: str
    steps: tuple[dict, ...]
    certified: bool | None = None


@dataclass(frozen=True)
class CurvePoint:
    """One (system, ratio) point of a quality/compression-rate curve.

    Attributes
    ----------
    system : str
        The system's label (one line per system).
    ratio : float
        The requested length ratio.
    cr : float
        Measured compression rate (kept / source tokens, macro-averaged).
    token_f1, bigram_f1 : float
        Quality against the references (fractions in 0..1).
    certified : float or None
        Fraction of certified decodes.
    """

    system: str
    ratio: float
    cr: float
    token_f1: float
    bigram_f1: float
    certified: float | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-safe dict."""
        return {"system": self.system, "ratio": self.ratio, "cr": self.cr, "token_f1": self.token_f1,
                "bigram_f1": self.bigram_f1, "certified": self.certified}


def read_trace(path: str | os.PathLike[str], row_id: str | None = None) -> TraceRow:
    """The trace of one line of a ``dualdecomp compress --trace --json`` (or ``--output``) JSONL file.

    Parameters
    ----------
    path : path
        The JSONL file.
    row_id : str, optional
        The ``id`` of the line (``ID#L`` for the reference of length L of a ``--length gold`` line);
        default: the first line with a trace.

    Returns
    -------
    TraceRow

    Raises
    ------
    InputError
        Unreadable file, invalid JSON (an integer of more than 4,300 digits and nesting too deep
        included), a trace entry without a non-negative integer ``iteration`` or with a value that is not
        a number, no line with a trace, or no line with that id.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"trace file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: unreadable ({exc})") from None
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long integer, nesting
            raise InputError(f"{p}:{lineno}: not valid JSON ({getattr(exc, 'msg', None) or exc})") from None
        if not isinstance(row, dict):
            raise InputError(f"{p}:{lineno}: a line must be a JSON object")
        for candidate in _rows_of(row):
            if row_id is None or candidate.id == row_id:
                return candidate
    if row_id is not None:
        raise InputError(f"{p}: no line with id {row_id!r} and a trace")
    raise InputError(f"{p}: no line has a trace (run `dualdecomp compress --trace --json`)")


def _rows_of(row: Mapping[str, Any]) -> list[TraceRow]:
    rid = str(row.get("id", ""))
    out = []
    if isinstance(row.get("trace"), list) and row["trace"]:
        out.append(TraceRow(rid, tuple(_check_steps(row["trace"], rid)), _certificate(row)))
    references = row.get("references")
    for ref in references if isinstance(references, list) else []:
        if isinstance(ref, dict) and isinstance(ref.get("trace"), list) and ref["trace"]:
            out.append(TraceRow(f"{rid}#{ref.get('length')}", tuple(_check_steps(ref["trace"], rid)),
                                _certificate(ref)))
    return out


def _certificate(row: Mapping[str, Any]) -> bool | None:
    value = row.get("certified")
    return value if isinstance(value, bool) else None


def _count(x: Any) -> bool:
    """Whether ``x`` is an iteration or node number a trace may give."""
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_ITERATION


def _check_steps(steps: list, rid: str) -> list[dict]:
    for s in steps:
        if not isinstance(s, dict) or not isinstance(s.get("iteration"), int) or "dual" not in s:
            raise InputError(f"line {rid!r}: every trace entry needs 'iteration' and 'dual'")
        if not _count(s["iteration"]):
            raise InputError(f"line {rid!r}: an iteration must be an integer from 0 to 2^53, not "
                             f"{_short(s['iteration'])}")
        if s.get("node") is not None and not _count(s["node"]):
            raise InputError(f"line {rid!r}, iteration {s['iteration']}: a node must be an integer from 0 to "
                             f"2^53, not {_short(s['node'])}")
        for name in SERIES:
            value = s.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                raise InputError(f"line {rid!r}, iteration {s['iteration']}: {name!r} must be a number or "
                                 f"null, not {_short(value)}")
    return steps


def _short(value: Any) -> str:
    """``repr(value)``, cut to 40 characters (an integer too long to write is described instead)."""
    try:
        text = repr(value)
    except ValueError:  # an integer of more than 4,300 digits
        return "an integer too long to write"
    return text if len(text) <= 40 else text[:37] + "..."


def _drawn(x: Any) -> float:
    """A trace value as drawn: NaN (a gap in the line) for null, NaN, infinities and beyond ±DRAWN_LIMIT."""
    if x is None:
        return math.nan
    try:
        value = float(x)
    except OverflowError:  # an integer beyond the floats
        return math.nan
    return value if abs(value) <= DRAWN_LIMIT else math.nan


def undrawn_values(trace: TraceRow) -> str | None:
    """What :func:`plot_convergence` leaves out of a trace: its values (not null) that are NaN, infinite or
    beyond ±DRAWN_LIMIT, as one line (None when there are none).

    Parameters
    ----------
    trace : TraceRow

    Returns
    -------
    str or None
        E.g. ``"not drawn (NaN, infinite or beyond ±1e+100): dual at 2 iterations (0, 1), lam at 1 (1)"``.
    """
    parts = []
    for name in SERIES:
        where = [s["iteration"] for s in trace.steps
                 if s.get(name) is not None and math.isnan(_drawn(s[name]))]
        if where:
            shown = ", ".join(str(i) for i in where[:5]) + (", ..." if len(where) > 5 else "")
            parts.append(f"{name} at {len(where)} iteration{'s' if len(where) > 1 else ''} ({shown})")
    if not parts:
        return None
    return f"not drawn (NaN, infinite or beyond ±{DRAWN_LIMIT:g}): " + ", ".join(parts)


@contextmanager
def _quiet() -> Iterator[None]:
    """Matplotlib's (and numpy's) warnings while drawing stay off stderr: what a trace leaves out is said
    by :func:`undrawn_values` instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _legend(ax) -> None:
    """The panel's legend, when something in it has a label (matplotlib warns otherwise)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=9)


def _save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    out = Path(path)
    if out.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise InputError(f"{out}: the picture must be a .png, .pdf or .svg file")
    if out.parent and not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such directory")
    tmp = out.with_name(f".{out.name}.partial{out.suffix}")
    fig.savefig(tmp, dpi=DPI)
    os.replace(tmp, out)
    return out


def plot_convergence(trace: TraceRow, path: str | os.PathLike[str], title: str | None = None) -> Path:
    """Draw one decode's convergence: bounds, gap (log axis) and, if any, λ per iteration.

    Parameters
    ----------
    trace : TraceRow
        From :func:`read_trace`.
    path : path
        Output picture (.png, .pdf or .svg; written atomically).
    title : str, optional
        Figure title (default: the line's id and certificate).

    Returns
    -------
    pathlib.Path
    """
    with _quiet():
        return _draw_convergence(trace, path, title)


def _draw_convergence(trace: TraceRow, path: str | os.PathLike[str], title: str | None) -> Path:
    it = [int(s["iteration"]) for s in trace.steps]
    dual = [_drawn(s.get("dual")) for s in trace.steps]
    primal = [_drawn(s.get("primal")) for s in trace.steps]
    gap = [d - p for d, p in zip(dual, primal, strict=True)]
    lam = [_drawn(s.get("lam")) for s in trace.steps]
    has_lam = any(math.isfinite(x) for x in lam)
    panels = 3 if has_lam else 2
    fig = Figure(figsize=(7.5, 2.6 * panels + 0.6), layout="constrained")
    axes = fig.subplots(panels, 1, sharex=True)

    ax = axes[0]
    ax.plot(it, dual, "-o", ms=3, color="tab:blue", label="dual (upper bound)")
    ax.plot(it, primal, "-s", ms=3, color="tab:orange", label="primal (best compression so far)")
    ax.set_ylabel("objective")
    _legend(ax)
    ax.grid(alpha=0.3)

    ax = axes[1]
    positive = [(i, g) for i, g in zip(it, gap, strict=True) if math.isfinite(g) and g > 0]
    if positive:
        ax.semilogy([i for i, _ in positive], [g for _, g in positive], "-o", ms=3, color="tab:red",
                    label="gap = dual − primal")
    else:
        ax.set_yscale("log")
    closed = next((i for i, g, d in zip(it, gap, dual, strict=True)
                   if math.isfinite(g) and g <= CERTIFICATE_RTOL * max(1.0, abs(d))), None)
    if closed is not None:
        ax.axvline(closed, color="tab:green", ls="--", label=f"gap closed (certified) at iteration {closed}")
    ax.set_ylabel("gap (log)")
    _legend(ax)
    ax.grid(alpha=0.3, which="both")

    if has_lam:
        ax = axes[2]
        nodes = [int(s.get("node", 0) or 0) for s in trace.steps]
        starts = [k for k in range(len(it)) if k == 0 or nodes[k] != nodes[k - 1]]
        for j, a in enumerate(starts):  # one bisection per branch-and-bound node: draw each separately
            b = starts[j + 1] if j + 1 < len(starts) else len(it)
            ax.plot(it[a:b], lam[a:b], "-o", ms=3, drawstyle="steps-post", color="tab:purple",
                    label="λ (length multiplier)" if j == 0 else None)
        for j, a in enumerate(starts[1:]):
            ax.axvline(it[a], color="0.6", ls=":", lw=1,
                       label="new branch-and-bound node" if j == 0 else None)
        ax.set_ylabel("λ")
        _legend(ax)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("iteration")
    cert = {True: "certified", False: "not certified", None: ""}.get(trace.certified, "")
    fig.suptitle(title or f"Dual decomposition on {trace.id!r}" + (f" ({cert})" if cert else ""))
    return _save(fig, path)


def plot_curve(points: Sequence[CurvePoint], path: str | os.PathLike[str], title: str | None = None) -> Path:
    """Draw quality against compression rate, one line per system (token F1 and bigram F1 panels).

    Parameters
    ----------
    points : sequence of CurvePoint
        From :func:`dualdecomp.app.curve.run_curve`.
    path : path
        Output picture (.png, .pdf or .svg; written atomically).
    title : str, optional
        Figure title.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    InputError
        No points.
    """
    if not points:
        raise InputError("no curve points to plot")
    systems: dict[str, list[CurvePoint]] = {}
    for p in points:
        systems.setdefault(p.system, []).append(p)
    fig = Figure(figsize=(10, 4.2), layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    for ax, metric, label in ((axes[0], "token_f1", "token F1"), (axes[1], "bigram_f1", "bigram F1")):
        for k, (name, pts) in enumerate(systems.items()):
            pts = sorted(pts, key=lambda q: q.cr)
            ax.plot([100 * q.cr for q in pts], [100 * getattr(q, metric) for q in pts],
                    marker=MARKERS[k % len(MARKERS)], ls=LINESTYLES[k % len(LINESTYLES)], ms=6,
                    mfc="none", label=name)
        ax.set_xlabel("compression rate (% of tokens kept)")
        ax.set_ylabel(f"{label} (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="best", fontsize=9)
    fig.suptitle(title or "Quality against compression rate")
    return _save(fig, path)
