"""Examples of the Markdown pages that show output, read from their fenced blocks (test_doc_examples.py).

What runs
---------
- A ```` ```console ```` block: lines starting with ``$ `` are shell commands (a line ending in ``\\``
  continues on the next one; ``$ # ...`` is a comment), the lines after a command up to the next one are
  what it prints (stdout and stderr, in order). The commands of one page run in order in one temporary
  directory (where ``data`` and ``tests`` link to the repository's), in one ``bash`` per block, so a block
  sees the files an earlier block of its page wrote, and ``$?`` is the previous command's exit status.
- A ```` ```python ```` block followed by an ```` ```output ```` block: the code runs in a fresh Python
  process in that directory and its standard output is compared with the output block. A Python block
  without an output block runs too, and must exit 0.
- Every other block is text: a block with a ``$ `` line must therefore be ``console``, so that no example
  showing output escapes (``test_every_output_example_is_marked``).

Markers, an HTML comment on the lines just before the fence (the site does not show them):

- ``<!-- doc-example: skip — REASON -->``: not executed; the reason is required.
- ``<!-- doc-example: setup`` ... ``-->``: the shell lines inside run first (hidden input files).

Comparison: trailing spaces and trailing empty lines are ignored, timings (``5.7 ms``, ``in 12.7 s``)
are masked on both sides, ``...`` in the expected output matches anything within its line, and a line
that is only ``...`` matches any number of lines (paths and run-dependent numbers are written so).
Numbers are compared as printed, except two kinds whose last digits are float rounding that differs
between CPUs (float32 matrix products sum in another order with AVX2 than with AVX-512): a number printed
with a decimal point or exponent and at least :data:`PRECISE_DIGITS` significant digits (a primal, a dual)
matches one within :data:`RELATIVE` of it, and a printed ``0`` matches a decimal number within
:data:`ZERO` of it (a duality gap of 1e-14). Scores, rates and counts printed to fewer digits must match
exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```([\w-]*)\s*$")
MARKER = re.compile(r"<!--\s*doc-example:\s*(?P<body>.*?)-->", re.S)
NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
NUMBER_IN_TEXT = re.compile(rf"(?<![\w.-]){NUMBER}(?!\w)")
PRECISE_DIGITS = 5
RELATIVE = 2e-5
"""One unit in the fifth significant digit: a primal of 73.3779 on one CPU prints 73.3778 on another."""
ZERO = 1e-9
TIMING = [(re.compile(r"\b\d+(?:\.\d+)? ms\b"), "<ms>"), (re.compile(r"\bin \d+(?:\.\d+)? s\b"), "in <s>")]


@dataclass(frozen=True)
class Step:
    """One shell command of a console block and the output the page shows for it."""

    command: str
    expected: str
    line: int


@dataclass(frozen=True)
class Block:
    """A fenced block of a page, with its marker and (for Python) the output block after it."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip: str | None = None
    setup: str = ""
    output: str | None = None
    steps: tuple[Step, ...] = field(default_factory=tuple)

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def _marker_before(lines: list[str], fence: int) -> str | None:
    """The body of the doc-example comment ending on the line just before ``fence`` (0-based), if any."""
    end = fence - 1
    if end < 0 or not lines[end].rstrip().endswith("-->"):
        return None
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    match = MARKER.search("\n".join(lines[max(start, 0):end + 1]))
    return match.group("body").strip() if match else None


def _steps(text: str, first_line: int) -> tuple[Step, ...]:
    steps: list[Step] = []
    command: list[str] | None = None
    output: list[str] = []
    start = 0
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("$ "):
            if command is not None:
                steps.append(Step("\n".join(command), "\n".join(output), start))
            start, command, output = first_line + k, [line[2:]], []
            while command[-1].endswith("\\") and k + 1 < len(lines):
                k += 1
                command.append(lines[k])
        elif command is not None:
            output.append(line)
        k += 1
    if command is not None:
        steps.append(Step("\n".join(command), "\n".join(output), start))
    return tuple(s for s in steps if not s.command.lstrip().startswith("#"))


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown page, Python blocks paired with the ``output`` block after them."""
    lines = path.read_text(encoding="utf-8").split("\n")
    raw: list[tuple[int, str, str, str | None]] = []
    k = 0
    while k < len(lines):
        match = FENCE.match(lines[k])
        if not match:
            k += 1
            continue
        end = k + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        raw.append((k, match.group(1), "\n".join(lines[k + 1:end]), _marker_before(lines, k)))
        k = end + 1
    blocks: list[Block] = []
    for i, (start, lang, text, marker) in enumerate(raw):
        if lang == "output":
            continue
        skip, setup = None, ""
        if marker is not None:
            if marker.startswith("skip"):
                skip = marker[4:].strip(" —-:\n") or None
                if skip is None:
                    raise ValueError(f"{path.name}:{start + 1}: a skip marker needs a reason")
            elif marker.startswith("setup"):
                setup = marker[5:].strip()
            else:
                raise ValueError(f"{path.name}:{start + 1}: unknown doc-example marker {marker!r}")
        output = None
        if lang == "python" and i + 1 < len(raw) and raw[i + 1][1] == "output":
            between = lines[start + text.count("\n") + 3:raw[i + 1][0]]
            if all(not b.strip() for b in between):
                output = raw[i + 1][2]
        steps = _steps(text, start + 2) if lang == "console" else ()
        blocks.append(Block(path, start + 1, lang, text, skip, setup, output, steps))
    return blocks


def orphan_outputs(path: Path) -> list[int]:
    """Lines of ``output`` blocks that follow no Python block (so nothing would check them)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    paired = {b.line + b.text.count("\n") + 2 for b in read_blocks(path) if b.output is not None}
    found = []
    prev_python_end = None
    in_block, lang, start = False, "", 0
    for k, line in enumerate(lines):
        match = FENCE.match(line)
        if not in_block and match:
            in_block, lang, start = True, match.group(1), k
        elif in_block and line.rstrip() == "```":
            in_block = False
            if lang == "output" and prev_python_end not in paired:
                found.append(start + 1)
            prev_python_end = k + 1 if lang == "python" else None
    return found


def _normalise(text: str) -> str:
    for pattern, mask in TIMING:
        text = pattern.sub(mask, text)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _rounding_only(printed: str) -> bool:
    """Whether a number printed so may differ between CPUs in its last digits (see the docstring)."""
    if printed.lstrip("-") == "0":
        return True
    mantissa = re.split("[eE]", printed.lstrip("-"))[0]
    return "." in mantissa and len(mantissa.replace(".", "").lstrip("0")) >= PRECISE_DIGITS


def _close(printed: str, found: str) -> bool:
    a, b = float(printed), float(found)
    if printed.lstrip("-") == "0":
        return found.lstrip("-") == "0" or (("." in found or "e" in found.lower()) and abs(b) <= ZERO)
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b))


def _pattern(text: str, numbers: list[str]) -> str:
    """``text`` as a regular expression; each number :func:`_rounding_only` becomes a group (its printed
    form appended to ``numbers``)."""
    out, at = [], 0
    for match in NUMBER_IN_TEXT.finditer(text):
        if _rounding_only(match.group()):
            out += [re.escape(text[at:match.start()]), f"({NUMBER})"]
            numbers.append(match.group())
            at = match.end()
    return "".join(out) + re.escape(text[at:])


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, after masking (see the module's docstring)."""
    parts: list[str] = []
    numbers: list[str] = []
    for line in _normalise(expected).split("\n") if expected.strip() else []:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append("[^\n]*".join(_pattern(p, numbers) for p in line.split("...")) + r"\n")
    actual_text = _normalise(actual)
    found = re.fullmatch("".join(parts), actual_text + "\n" if actual_text else "")
    return found is not None and all(_close(a, b) for a, b in zip(numbers, found.groups(), strict=True))
