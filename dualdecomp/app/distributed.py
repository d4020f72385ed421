"""Batch compression on a Dask cluster: chunks parsed and decoded on workers, the batch journal kept.

The client opens the same :class:`~dualdecomp.app.batch.BatchSession` as
:func:`dualdecomp.app.batch.run_batch` (path checks, input hashes, the locked journal ``OUT.partial``, the
rows a previous run finished from the same lines, options and model with ``resume``), and submits
the other lines in chunks of ``batch_size`` to the cluster. A worker parses its chunk with spaCy and
decodes it with a model it loaded once (:class:`ProcessorPlugin`, a Dask worker plugin: the model is
never shipped with a task, and a worker that dies and is restarted loads it again). Every chunk's rows
are appended to the journal by the client as soon as the chunk completes (flushed and fsynced), so a
killed worker (Dask reschedules its chunks) or a killed client (rerun with ``resume``) loses no finished
line. The output is written whole, in input order, by the same atomic rename; with ``deterministic`` it
is byte-identical to the single-process output. At most ``window`` chunks are in flight, so a corpus of
millions of lines does not become millions of pending tasks.

The cluster is either a :class:`~dask.distributed.LocalCluster` of worker processes on this machine
(no dashboard, bound to the loopback interface: it starts offline) or an existing scheduler.

Any batch processor runs here (:class:`dualdecomp.app.batch.BatchProcessor`): a
:class:`~dualdecomp.app.compressor.Compressor` is loaded on the workers by :class:`CompressorPlugin`;
another processor says how with ``worker_factory()``, a picklable callable without arguments that loads
it (e.g. ``functools.partial(Rewriter, model_dir, max_states=...)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from dask.distributed import Client, WorkerPlugin, as_completed, get_worker

from dualdecomp.app.batch import BatchOptions, BatchSession, BatchSummary, process_chunk
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.user_components import factory_name
from dualdecomp.core.errors import InputError, SolverError
from dualdecomp.core.progress import set_progress_total
from dualdecomp.data.jsonl import CorpusItem


class ProcessorPlugin(WorkerPlugin):
    """Loads a batch processor once per worker process (and again on a worker that replaces a dead one).

    Parameters
    ----------
    factory : callable
        Picklable, without arguments: loads the processor on the worker.
    name : str
        The plugin's name on the cluster (one per model and settings).
    """

    def __init__(self, factory: Callable[[], Any], name: str) -> None:
        self.factory = factory
        self.name = name
        self.processor: Any = None

    @property
    def compressor(self) -> Any:
        """The loaded processor (its older name)."""
        return self.processor

    def setup(self, worker) -> None:
        """Load the processor on the worker."""
        self.processor = self.factory()


class CompressorPlugin(ProcessorPlugin):
    """Loads the model once per worker process (and again on a worker that replaces a dead one).

    Parameters
    ----------
    model : str or None
        Model directory (None: the embedded default model), as for :class:`Compressor`.
    config : str or None
        Configuration name of the model directory.
    max_tokens : int or None
        As for :class:`Compressor` (None: the configuration's own default limit).
    extra_components : tuple of callables
        As for :class:`Compressor`: your own component factories (sent to the workers: a factory defined
        at the top level of a module they can import).
    """

    def __init__(self, model: str | None, config: str | None, max_tokens: int | None = None,
                 extra_components: tuple = ()) -> None:
        self.model = None if model is None else str(Path(model).resolve())
        self.config = config
        self.max_tokens = max_tokens
        names = ",".join(factory_name(f) for f in extra_components)
        super().__init__(partial(Compressor, self.model, self.config, max_tokens=max_tokens,
                                 extra_components=list(extra_components)),
                         f"dualdecomp-compressor:{self.model}:{self.config}:{max_tokens}:{names}")


def decode_chunk(plugin: str, chunk: list[tuple[int, CorpusItem]],
                 options: BatchOptions) -> list[tuple[int, dict, int]]:
    """On a worker: parse one chunk and give each line its row with the worker's processor.

    Parameters
    ----------
    plugin : str
        Name of the :class:`ProcessorPlugin` holding the model.
    chunk : list of (int, CorpusItem)
        Input line index and item.
    options : BatchOptions
        The batch's options.

    Returns
    -------
    list of (int, dict, int)
        The output row of every line of the chunk, with its exit code (0 unless it failed).
    """
    processor = get_worker().plugins[plugin].processor
    return [(i, *row_code) for i, row_code in process_chunk(chunk, processor, options).items()]


def chunk_rows(future, result: Any) -> list[tuple[int, dict, int]] | None:
    """The rows of a chunk that ``as_completed(with_results=True, raise_errors=False)`` yielded, or None
    when the chunk failed.

    A chunk whose rows arrived is kept even when its future no longer says ``"finished"``: a worker
    killed just after it sent them makes the scheduler mark their data lost (to recompute it), though
    the rows are already here. A failed chunk yields its exception (or ``(type, exception, traceback)``),
    never a list.

    Parameters
    ----------
    future : distributed.Future
    result : object
        What ``as_completed`` yielded with ``future``.

    Returns
    -------
    list of (int, dict, int) or None
        :func:`decode_chunk`'s rows, or None.
    """
    if future.status == "finished" or isinstance(result, list):
        return result
    return None


def _plugin(processor) -> ProcessorPlugin:
    """The worker plugin that loads ``processor`` on every worker."""
    factory = getattr(processor, "worker_factory", None)
    if factory is None:  # a compressor
        return CompressorPlugin(str(processor.directory), processor.config_name,
                                processor.requested_max_tokens, processor.extra_components)
    load = factory()
    return ProcessorPlugin(load, f"dualdecomp-{type(processor).__name__.lower()}:{load!r}")


def run_distributed_batch(input_path: str | os.PathLike[str], output_path: str | os.PathLike[str] | None,
                          client: Client, compressor: Compressor, options: BatchOptions,
                          progress: Callable[[int], None] | None = None,
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
    compressor : Compressor or BatchProcessor
        The model: its directory and configuration are loaded once on every worker; the client uses it
        only for the run's fingerprint (a model given in memory cannot be distributed: InputError).
        Another processor is loaded on the workers by its ``worker_factory()`` (module docstring).
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
    if getattr(compressor, "directory", None) is None:
        raise InputError("a distributed run needs a model directory (the workers load it)")
    with BatchSession(input_path, output_path, compressor, options, emit) as session:
        set_progress_total(progress, len(session.items))
        plugin = _plugin(compressor)
        client.register_plugin(plugin, name=plugin.name)
        items, done = session.items, session.done
        final: dict[int, dict] = dict(done)
        codes: list[int] = []
        for i, it in enumerate(items):
            if isinstance(it, dict) and i not in done:  # unreadable lines: their error rows
                final[i] = it
                codes.append(InputError.exit_code)
        todo = [(i, it) for i, it in enumerate(items) if i not in final]
        chunks = [todo[k:k + options.batch_size] for k in range(0, len(todo), options.batch_size)]
        if window is None:
            window = max(4, 4 * sum(client.nthreads().values()))
        # results arrive with their futures (no blocking `result()` call for Ctrl-C to interrupt mid-way)
        pending = as_completed(loop=client.loop, with_results=True, raise_errors=False)
        next_row = 0

        def record(rows: list[tuple[int, dict, int]]) -> None:
            for i, row, code in rows:
                session.record(i, row)
                final[i] = row
                if code:
                    codes.append(code)
            if progress is not None:
                progress(len(rows))

        def release() -> None:
            nonlocal next_row
            while next_row in final:
                row = final[next_row]
                if "error" in row and options.on_error == "fail":
                    raise session.failure(next_row, row, next_row, max(codes, default=0))
                if session.emit is not None:
                    session.emit(row)
                next_row += 1

        try:
            for i in sorted(final):  # reused and unreadable lines are final from the start
                if i not in done:
                    session.record(i, final[i])
            if progress is not None and final:
                progress(len(final))
            release()
            queue = iter(chunks)
            for chunk in queue:
                pending.add(client.submit(decode_chunk, plugin.name, chunk, options, pure=False))
                if pending.count() >= window:
                    break
            for future, result in pending:
                rows = chunk_rows(future, result)
                if rows is None:  # a task lost with its workers, or a bug on the worker
                    exc = result[1] if isinstance(result, tuple) else result
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
        rows = [final[i] for i in range(len(items))]
        return rows, session.finish(rows, codes)
