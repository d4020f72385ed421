"""Batch compression on a Dask cluster: chunks parsed and decoded on workers, the batch journal kept.

The client reads the input, skips the lines a previous run finished (``resume``, the rows of the journal
``OUT.partial`` or of a complete ``OUT``, exactly as :func:`dualdecomp.app.batch.run_batch`), and submits
the other lines in chunks of ``batch_size`` to the cluster. A worker parses its chunk with spaCy and
decodes it with a model it loaded once (:class:`CompressorPlugin`, a Dask worker plugin: the model is
never shipped with a task, and a worker that dies and is restarted loads it again). Every chunk's rows
are appended to the journal by the client as soon as the chunk completes (flushed and fsynced), so a
killed worker (Dask reschedules its chunks) or a killed client (rerun with ``resume``) loses no finished
line. The output is written whole, in input order, by the same atomic rename; with ``deterministic`` it
is byte-identical to the single-process output. At most ``window`` chunks are in flight, so a corpus of
millions of lines does not become millions of pending tasks.

The cluster is either a :class:`~dask.distributed.LocalCluster` of worker processes on this machine
(no dashboard, bound to the loopback interface: it starts offline) or an existing scheduler.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from dask.distributed import Client, WorkerPlugin, as_completed, get_worker

from dualdecomp.app.batch import BatchOptions, BatchSummary, compress_item, journal_path, read_input
from dualdecomp.app.batch import _previous_rows as previous_rows
from dualdecomp.app.compressor import Compressor
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.data.jsonl import CorpusItem, write_jsonl_atomic
from dualdecomp.data.parsing import parse_tokens


class CompressorPlugin(WorkerPlugin):
    """Loads the model once per worker process (and again on a worker that replaces a dead one).

    Parameters
    ----------
    model : str or None
        Model directory (None: the embedded default model), as for :class:`Compressor`.
    config : str or None
        Configuration name of the model directory.
    """

    def __init__(self, model: str | None, config: str | None) -> None:
        self.model = None if model is None else str(Path(model).resolve())
        self.config = config
        self.name = f"dualdecomp-compressor:{self.model}:{self.config}"
        self.compressor: Compressor | None = None

    def setup(self, worker) -> None:
        """Load the model on the worker."""
        self.compressor = Compressor(self.model, self.config)


def decode_chunk(plugin: str, chunk: list[tuple[int, CorpusItem]],
                 options: BatchOptions) -> list[tuple[int, dict]]:
    """On a worker: parse one chunk and compress each line with the worker's model.

    Parameters
    ----------
    plugin : str
        Name of the :class:`CompressorPlugin` holding the model.
    chunk : list of (int, CorpusItem)
        Input line index and item.
    options : BatchOptions
        The batch's options.

    Returns
    -------
    list of (int, dict)
        The output row of every line of the chunk.
    """
    compressor = get_worker().plugins[plugin].compressor
    parsed = parse_tokens([it.text for _, it in chunk], ids=[it.id for _, it in chunk])
    return [(i, compress_item(i, it, s, compressor, options))
            for (i, it), s in zip(chunk, parsed, strict=True)]


def _open_journal(out: Path | None, resume: bool):
    if out is None:
        return None
    try:
        return open(journal_path(out), "a" if resume else "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"{out}: cannot write: {exc.strerror or exc}") from None


def run_distributed_batch(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None,
                          client: Client, model: str | os.PathLike[str] | None, config: str | None,
                          options: BatchOptions, progress: Callable[[int], None] | None = None,
                          emit: Callable[[dict], None] | None = None, window: int | None = None,
                          ) -> tuple[list[dict], BatchSummary]:
    """Compress every line of a JSONL file on a Dask cluster (same contract as ``run_batch``).

    Parameters
    ----------
    input_path : path
        JSONL input.
    output_path : path or None
        JSONL output (journal + atomic write); None to only return (and ``emit``) the rows.
    client : dask.distributed.Client
        The cluster (see :func:`dualdecomp.app.cluster.cluster_client`).
    model, config : path or None, str or None
        The model directory and configuration, loaded once on every worker.
    options : BatchOptions
        As for ``run_batch``; ``batch_size`` is the chunk (task) size.
    progress : callable, optional
        Called with the number of lines finished (as chunks complete, in any order).
    emit : callable, optional
        Called with each row once it and every row before it are final (in input order).
    window : int, optional
        Chunks in flight at once (default: 4 per worker thread, at least 4).

    Returns
    -------
    rows : list of dict
    summary : BatchSummary

    Raises
    ------
    InputError
        As ``run_batch``.
    SolverError
        A chunk failed on the cluster (e.g. its workers kept dying); finished lines stay in the journal.
    """
    if options.on_error not in ("skip", "fail"):
        raise InputError(f"--on-error must be skip or fail, not {options.on_error!r}")
    if options.batch_size < 1:
        raise InputError("the batch size must be >= 1")
    items = read_input(input_path)
    spec = options.spec
    if spec.mode == "file" and len(spec.lengths) != len(items):
        raise InputError(f"the length file has {len(spec.lengths)} lines but the input has {len(items)}")
    out = Path(output_path) if output_path is not None else None
    if out is not None and out.is_dir():
        raise InputError(f"output is a directory: {out}")
    done = previous_rows(out, items) if (out is not None and options.resume) else {}
    plugin = CompressorPlugin(None if model is None else str(model), config)
    client.register_plugin(plugin, name=plugin.name)
    final: dict[int, dict] = dict(done)
    final.update((i, it) for i, it in enumerate(items) if isinstance(it, dict) and i not in done)
    todo = [(i, it) for i, it in enumerate(items) if i not in final]
    chunks = [todo[k:k + options.batch_size] for k in range(0, len(todo), options.batch_size)]
    if window is None:
        window = max(4, 4 * sum(client.nthreads().values()))
    journal = _open_journal(out, options.resume)
    # results arrive with their futures (no blocking `result()` call for Ctrl-C to interrupt mid-way)
    pending = as_completed(loop=client.loop, with_results=True, raise_errors=False)
    next_row = 0

    def record(rows: list[tuple[int, dict]]) -> None:
        new = [(i, row) for i, row in rows if i not in done]
        if journal is not None and new:
            journal.writelines(json.dumps({"index": i, "row": row}, ensure_ascii=False) + "\n"
                               for i, row in new)
            journal.flush()
            os.fsync(journal.fileno())
        final.update(rows)
        if progress is not None:
            progress(len(rows))

    def release() -> None:
        nonlocal next_row
        while next_row in final:
            row = final[next_row]
            if "error" in row and options.on_error == "fail":
                where = f"the finished lines are kept in {journal_path(out)}; " if out else ""
                raise InputError(f"line {next_row + 1} (id {row['id']}): {row['error']} ({where}fix the "
                                 "input and rerun with --resume)")
            if emit is not None:
                emit(row)
            next_row += 1

    try:
        record(sorted(((i, r) for i, r in final.items()), key=lambda x: x[0]))
        release()
        queue = iter(chunks)
        for chunk in queue:
            pending.add(client.submit(decode_chunk, plugin.name, chunk, options, pure=False))
            if pending.count() >= window:
                break
        for future, rows in pending:
            if future.status != "finished":  # a task lost with its workers, or a bug on the worker
                exc = rows[1] if isinstance(rows, tuple) else rows
                raise SolverError(f"a chunk failed on the Dask cluster: {type(exc).__name__}: {exc} "
                                  "(finished lines are kept; rerun with --resume)")
            record(rows)
            release()
            nxt = next(queue, None)
            if nxt is not None:
                pending.add(client.submit(decode_chunk, plugin.name, nxt, options, pure=False))
    finally:
        for future in list(pending.futures):
            future.cancel()
        if journal is not None:
            journal.close()
    rows = [final[i] for i in range(len(items))]
    if out is not None:
        write_jsonl_atomic(out, rows)
        journal_path(out).unlink(missing_ok=True)
    failed = sum("error" in r for r in rows)
    certified = sum(bool(r.get("certified")) for r in rows)
    return rows, BatchSummary(len(rows), failed, certified, len(done))
