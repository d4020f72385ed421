"""A Dask client for distributed runs: a local cluster of worker processes, or an existing scheduler."""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from dask.distributed import Client, LocalCluster, WorkerPlugin

from dualdecomp.core.errors import InputError


class IgnoreInterrupt(WorkerPlugin):
    """Local workers ignore SIGINT: Ctrl-C reaches the terminal's whole process group, and only the
    client (which keeps the journal and closes the cluster) should handle it."""

    name = "dualdecomp-ignore-interrupt"

    def setup(self, worker) -> None:
        """Ignore SIGINT in the worker process."""
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread: leave the default
            pass


@contextmanager
def cluster_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Client]:
    """A Dask client: on an existing scheduler, or on a local cluster of ``workers`` processes.

    The local cluster has one thread per worker process, no dashboard, listens on 127.0.0.1 only, logs
    only errors, and its workers leave Ctrl-C to the client.
    """
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="30s")
        except OSError as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    if workers is None or workers < 1:
        raise InputError("--workers must be >= 1")
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1", silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.register_plugin(IgnoreInterrupt())
        yield client
