"""Length requests: ``N``, ``gold``, ``ratio:R``, ``file:PATH`` (docs/architecture.md §4)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from dualdecomp.core.errors import InputError


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
    """

    mode: str = "free"
    value: float | None = None
    lengths: tuple[int, ...] = ()

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
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read length file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"length file {path} is not UTF-8 text") from exc
    out = []
    for i, line in enumerate(lines, start=1):
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
        return LengthSpec("file", None, _read_length_file(text[5:]))
    try:
        m = int(text)
    except ValueError:
        msg = f"invalid length {text!r}: expected an integer, gold, ratio:R or file:PATH"
        raise InputError(msg) from None
    if m < 0:
        raise InputError(f"length must be >= 0, got {m}")
    return LengthSpec("fixed", m)
