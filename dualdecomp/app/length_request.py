"""Length requests: ``N``, ``gold``, ``ratio:R``, ``file:PATH`` (docs/architecture.md §4).

A length file is read with a bound: it must be a regular file or a pipe/FIFO (not a device such as
``/dev/zero``), each line at most :data:`MAX_LENGTH_LINE_BYTES` bytes and the whole file at most
:data:`MAX_LENGTH_FILE_BYTES`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from dualdecomp.core.errors import InputError
from dualdecomp.data.line_reader import open_lines, read_bounded_lines

MAX_LENGTH_LINE_BYTES = 64
"""The longest line of a length file (one integer): a longer one is refused at once."""
MAX_LENGTH_FILE_BYTES = 64 << 20
"""The largest length file (64 MiB: about 16 million lengths of up to three digits)."""


@dataclass(frozen=True)
class LengthSpec:
    """How the number of kept tokens is chosen for each sentence.

    Attributes
    ----------
    mode : {"free", "fixed", "ratio", "gold", "file"}
    value : int or float or None
        The fixed length or the ratio.
    lengths : tuple of int
        The per-line lengths of ``file`` mode.
    path : str or None
        The length file of ``file`` mode (so that a batch refuses to write its output over it); not part of
        the request (not compared, not in a journal's fingerprint: its lengths are).
    """

    mode: str = "free"
    value: float | None = None
    lengths: tuple[int, ...] = ()
    path: str | None = field(default=None, compare=False)

    def for_sentence(self, n: int, index: int, gold: list[int] | None = None) -> list[int | None]:
        """The length(s) to decode sentence number ``index`` (0-based) with ``n`` tokens.

        Returns one entry, or one per reference in ``gold`` mode. Raises InputError when the request
        cannot be met (length > n).
        """
        if self.mode == "free":
            return [None]
        if self.mode == "fixed":
            lengths = [int(self.value)]
        elif self.mode == "ratio":
            lengths = [min(n, max(1 if n else 0, math.floor(self.value * n + 0.5)))]
        elif self.mode == "file":
            if index >= len(self.lengths):
                raise InputError(f"the length file has {len(self.lengths)} lines, no length for line "
                                 f"{index + 1}")
            lengths = [self.lengths[index]]
        else:  # gold
            if not gold:
                raise InputError("--length gold needs gold compressions in the input")
            lengths = list(gold)
        for m in lengths:
            if m > n:
                raise InputError(f"requested length {m} exceeds the sentence's {n} tokens")
        return lengths


def _read_length_file(path: str) -> tuple[int, ...]:
    """The lengths of a length file, one non-negative integer per line (read with the module's bounds)."""
    out = []
    total = 0
    with open_lines(path, "length file", streams=False) as stream:
        for raw in read_bounded_lines(stream, MAX_LENGTH_LINE_BYTES, MAX_LENGTH_LINE_BYTES, where=path):
            total += raw.size + 1
            if total > MAX_LENGTH_FILE_BYTES:
                raise InputError(f"length file {path} is larger than {MAX_LENGTH_FILE_BYTES} bytes")
            i = raw.number
            if raw.data is None:
                raise InputError(f"{path}:{i}: a line of {raw.size} bytes: expected one non-negative integer "
                                 "per line")
            try:
                line = raw.data.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"length file {path} is not UTF-8 text (line {i})") from None
            try:
                m = int(line.strip())
            except ValueError:
                msg = f"{path}:{i}: expected one non-negative integer per line, got {line!r}"
                raise InputError(msg) from None
            if m < 0:
                raise InputError(f"{path}:{i}: length must be >= 0, got {m}")
            out.append(m)
    return tuple(out)


def parse_length(length: str | int | None = None, ratio: float | str | None = None,
                 length_file: str | os.PathLike[str] | None = None) -> LengthSpec:
    """Build a :class:`LengthSpec` from the CLI options (at most one may be given).

    ``length`` may be an integer, ``"gold"``, ``"ratio:R"`` or ``"file:PATH"``.
    """
    given = [x for x in (length, ratio, length_file) if x is not None]
    if len(given) > 1:
        raise InputError("give at most one of --length, --ratio and --length-file")
    if ratio is not None:
        length = f"ratio:{ratio}"
    if length_file is not None:
        length = f"file:{os.fspath(length_file)}"
    if length is None:
        return LengthSpec()
    if isinstance(length, int) and not isinstance(length, bool):
        text = str(length)
    elif isinstance(length, str):
        text = length.strip()
    else:
        raise InputError(f"invalid length {length!r}")
    if text == "gold":
        return LengthSpec("gold")
    if text.startswith("ratio:"):
        try:
            r = float(text[6:])
        except ValueError:
            raise InputError(f"invalid ratio {text[6:]!r}: expected a number in (0, 1]") from None
        if not (0 < r <= 1) or math.isnan(r):
            raise InputError(f"ratio must be in (0, 1], got {text[6:]}")
        return LengthSpec("ratio", r)
    if text.startswith("file:"):
        return LengthSpec("file", None, _read_length_file(text[5:]), path=text[5:])
    try:
        m = int(text)
    except ValueError:
        msg = f"invalid length {text!r}: expected an integer, gold, ratio:R or file:PATH"
        raise InputError(msg) from None
    if m < 0:
        raise InputError(f"length must be >= 0, got {m}")
    return LengthSpec("fixed", m)
