"""Where a batch may write: never over its input, never a regular file over a device or a symlink.

- :func:`check_paths` refuses an output, or an output's journal ``OUT.partial``, that is a file the run
  reads: the input (also standard input redirected from a file), the length file, a file of the model
  directory (compared by device and inode, so hard links and other spellings count), or that lies inside
  the model directory.
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
import sys
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


def _stat(path: str | os.PathLike[str]) -> os.stat_result | None:
    """``os.stat`` (symlinks followed), or None when there is nothing there."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _stdin_stat() -> os.stat_result | None:
    """What standard input is (``os.fstat`` of its descriptor), or None when it has none."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    try:
        return os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _inside(path: Path, directory: Path) -> bool:
    """Whether ``path`` (resolved; it need not exist) lies in ``directory`` (resolved)."""
    real, root = os.path.realpath(path), os.path.realpath(directory)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _model_files(directory: Path) -> dict[tuple[int, int], Path]:
    """The identity of every file under a model directory (symlinks to files followed) → its path."""
    out: dict[tuple[int, int], Path] = {}
    for root, _, files in os.walk(directory):
        for name in files:
            st = _stat(os.path.join(root, name))
            if st is not None and stat.S_ISREG(st.st_mode):
                out.setdefault(_identity(st), Path(root, name))
    return out


def check_paths(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
                length_file: str | os.PathLike[str] | None = None,
                model_dir: str | os.PathLike[str] | None = None) -> None:
    """Refuse an output, or an output's journal, that is a file the run reads.

    Files are compared by identity (device and inode, symlinks followed: a hard link or another spelling
    counts), and only a regular (or new) output is checked: a device or FIFO output is written directly
    and destroys nothing. The files read are the input (``-``: whatever standard input is, e.g. a file
    redirected with ``< FILE``), the length file and every file of the model directory; an output or a
    journal inside the model directory is refused even when new (the run reads and hashes its files).

    Raises
    ------
    InputError
        When the output or its journal ``OUT.partial`` (which a run truncates and deletes) is the input,
        standard input, the length file or a file of the model directory, or lies inside the model
        directory.
    """
    if str(output_path) == "-":  # standard output
        return
    out = Path(output_path)
    out_st = _stat(out)
    if out_st is not None and not stat.S_ISREG(out_st.st_mode):
        return  # a device, a FIFO (written directly, no journal) or a directory (refused when resolved)
    journal = journal_path(out)
    targets = {"output": out_st, "journal": _stat(journal)}
    sources: list[tuple[str, str, os.stat_result | None]] = []  # (name, name as the output, identity)
    if str(input_path) == "-":
        sources.append(("standard input", "the file on standard input", _stdin_stat()))
    else:
        inp = Path(input_path)
        sources.append((f"the input {inp}", "the input file", _stat(inp)))
        if Path(os.path.abspath(inp)) == Path(os.path.abspath(journal)):
            _refuse_journal(f"the input {inp}", out, journal)
    if length_file is not None:
        sources.append((f"the length file {length_file}", "the length file", _stat(length_file)))
    for label, as_output, st in sources:
        if st is None or not stat.S_ISREG(st.st_mode):
            continue
        if out_st is not None and _identity(st) == _identity(out_st):
            raise InputError(f"the output {out} is {as_output}; choose another --output")
        if targets["journal"] is not None and _identity(st) == _identity(targets["journal"]):
            _refuse_journal(label, out, journal)
    if model_dir is not None:
        _check_model_dir(Path(model_dir), out, journal, targets)


def _refuse_journal(label: str, out: Path, journal: Path) -> None:
    raise InputError(f"{label} is the journal of the output {out} (runs truncate and delete {journal.name}); "
                     "rename it or choose another --output")


def _check_model_dir(model_dir: Path, out: Path, journal: Path,
                     targets: dict[str, os.stat_result | None]) -> None:
    """Refuse an output or journal inside the model directory or that is one of its files."""
    paths = {"output": out, "journal": journal}
    for name, path in paths.items():
        if _inside(path, model_dir):
            what = f"the output {out}" if name == "output" else f"the journal {journal} of the output {out}"
            raise InputError(f"{what} is inside the model directory {model_dir}, whose files this run "
                             "reads; choose another --output")
    files = _model_files(model_dir) if any(st is not None for st in targets.values()) else {}
    for name, st in targets.items():
        if st is not None and _identity(st) in files:
            what = f"the output {out}" if name == "output" else f"the journal {journal} of the output {out}"
            raise InputError(f"{what} is {files[_identity(st)]}, a file of the model directory; choose "
                             "another --output")


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
