"""Where a batch may write: never over its input, never a regular file over a device or a symlink.

- :func:`check_paths` refuses an output that is the input (``os.path.samefile``, so hard links and other
  spellings count) and an input that is the output's journal ``OUT.partial``.
- :func:`resolve_output` says how to write: a regular (or new) file is written atomically (temporary file
  beside it, then rename) at the path a symlink points to, so the symlink itself stays; anything else (a
  device such as ``/dev/null``, a FIFO) is written directly, with no journal.
- :func:`clean_stale_temporaries` removes the ``.OUT.*.tmp`` files an earlier, killed run of ours left in
  the rename window (only regular files owned by this user; called while holding the journal lock).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from dualdecomp.app.journal import journal_path
from dualdecomp.core.errors import InputError

__all__ = ["OutputTarget", "check_paths", "clean_stale_temporaries", "resolve_output"]


@dataclass(frozen=True)
class OutputTarget:
    """How to write one output.

    Attributes
    ----------
    path : Path
        The output as given (its journal is ``path.partial``).
    target : Path
        The file to replace atomically (the symlink's target for a symlink), or the special file.
    regular : bool
        True for a regular or new file (journal + atomic rename); False for a device, FIFO, socket
        (written directly, no journal, no resume).
    """

    path: Path
    target: Path
    regular: bool


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_paths(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str]) -> None:
    """Refuse an output that would destroy the input.

    Raises
    ------
    InputError
        When the output is the input, or the input is the output's journal (which a run truncates and
        deletes).
    """
    inp, out = Path(input_path), Path(output_path)
    if str(input_path) == "-" or str(output_path) == "-":  # standard input or output
        return
    if _same(inp, out):
        raise InputError(f"the output {out} is the input file; choose another --output")
    journal = journal_path(out)
    if _same(inp, journal) or Path(os.path.abspath(inp)) == Path(os.path.abspath(journal)):
        raise InputError(f"the input {inp} is the journal of the output {out} (runs truncate and delete "
                         f"{journal.name}); rename the input or choose another --output")


def resolve_output(output_path: str | os.PathLike[str]) -> OutputTarget:
    """How to write ``output_path`` (see the module docstring).

    Raises
    ------
    InputError
        When the output is a directory or its symlink cannot be resolved.
    """
    out = Path(output_path)
    try:
        st = os.stat(out)  # follows symlinks
    except FileNotFoundError:
        if out.is_symlink():  # dangling: create the file it points to
            return OutputTarget(out, Path(os.path.realpath(out)), True)
        return OutputTarget(out, out, True)
    except OSError as exc:
        raise InputError(f"{out}: cannot use as output: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"output is a directory: {out}")
    target = Path(os.path.realpath(out)) if out.is_symlink() else out
    return OutputTarget(out, target, stat.S_ISREG(st.st_mode))


def clean_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporaries ``.NAME.XXXXXXXX.tmp`` of an atomic write of ``target`` left by a killed run.

    Only regular files (not symlinks) owned by the current user are removed. Returns the removed paths.
    """
    directory = target.parent if str(target.parent) else Path(".")
    pattern = re.compile(r"\." + re.escape(target.name) + r"\.[A-Za-z0-9_]{8}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed
