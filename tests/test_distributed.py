"""Batches on a Dask LocalCluster of 2 worker processes: same bytes, journal, resume, a killed worker."""

from __future__ import annotations

import os
import signal

import pytest

from dualdecomp.app.batch import BatchOptions, journal_path, run_batch
from dualdecomp.app.cli import main
from dualdecomp.app.cluster import cluster_client
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.distributed import chunk_rows, run_distributed_batch
from dualdecomp.core.errors import InputError

OPTIONS = BatchOptions(deterministic=True, batch_size=3)


@pytest.fixture(scope="module")
def client():
    with cluster_client(workers=2) as c:
        yield c


@pytest.fixture(scope="module")
def source(corpora, tmp_path_factory):
    path = tmp_path_factory.mktemp("dist") / "in.jsonl"
    lines = (corpora / "written.dev.jsonl").read_text().splitlines()[:11]
    lines.insert(4, "{broken json")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def single(tiny_model, source, tmp_path_factory):
    """The single-process output (the reference bytes)."""
    out = tmp_path_factory.mktemp("single") / "out.jsonl"
    run_batch(source, out, Compressor(tiny_model), OPTIONS)
    return out.read_bytes()


def test_two_worker_processes_give_the_single_process_bytes(client, tiny_model, source, single, tmp_path):
    assert len(client.scheduler_info()["workers"]) == 2
    out = tmp_path / "out.jsonl"
    emitted = []
    rows, summary = run_distributed_batch(source, out, client, Compressor(tiny_model), OPTIONS,
                                          emit=emitted.append)
    assert out.read_bytes() == single
    assert not journal_path(out).exists()
    assert emitted == rows and summary.lines == 12 and summary.failed == 1  # the broken line
    # the model was loaded by the workers' plugin, once each: both workers hold it
    held = client.run(lambda dask_worker: any(getattr(p, "compressor", None) is not None
                                              for p in dask_worker.plugins.values()))
    assert list(held.values()) == [True, True]


class Stop(Exception):
    pass


def test_killed_client_then_resume_gives_the_same_bytes(client, tiny_model, source, single, tmp_path):
    out = tmp_path / "out.jsonl"
    seen = []

    def progress(k):
        seen.append(k)
        if len(seen) == 3:  # the error row + the first two chunks to complete: the client "dies"
            raise Stop

    with pytest.raises(Stop):
        run_distributed_batch(source, out, client, Compressor(tiny_model), OPTIONS, progress)
    assert not out.exists()
    journaled = journal_path(out).read_text().splitlines()
    # chunks complete in any order: the last chunk (lines 10-11) has two lines, the others three
    assert seen[0] == 1 and all(k in (2, 3) for k in seen[1:])
    assert len(journaled) == sum(seen)
    resumed = BatchOptions(deterministic=True, batch_size=3, resume=True)
    _, summary = run_distributed_batch(source, out, client, Compressor(tiny_model), resumed)
    assert summary.reused == sum(seen) - 1  # error rows are never reused
    assert out.read_bytes() == single


def test_cli_on_an_existing_scheduler(client, tiny_model, source, single, tmp_path):
    out = tmp_path / "out.jsonl"
    code = main(["compress", "--input", str(source), "--output", str(out), "--model", str(tiny_model),
                 "--scheduler", client.scheduler.address, "--deterministic", "--batch-size", "3", "--quiet"])
    assert code == 2  # one broken line, as without a cluster
    assert out.read_bytes() == single


def test_cli_rejects_bad_worker_counts(capsys):
    assert main(["compress", "some text", "--workers", "2"]) == 2
    assert main(["compress", "--input", "x.jsonl", "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_fail_policy_stops_at_the_first_bad_line_in_input_order(client, tiny_model, source, tmp_path):
    out = tmp_path / "out.jsonl"
    options = BatchOptions(deterministic=True, batch_size=3, on_error="fail")
    with pytest.raises(InputError, match="line 5"):
        run_distributed_batch(source, out, client, Compressor(tiny_model), options)
    assert not out.exists()


class _Future:
    """A stand-in for a Dask future: only its status."""

    def __init__(self, status: str) -> None:
        self.status = status


def test_a_chunk_whose_rows_arrived_is_kept_though_its_worker_died_after():
    rows = [(0, {"id": "a", "compression": "a"}, 0), (1, {"id": "b", "error": "bad"}, 2)]
    assert chunk_rows(_Future("finished"), rows) == rows
    for status in ("lost", "pending"):  # the scheduler marks the data of a dead worker lost
        assert chunk_rows(_Future(status), rows) == rows
    error = ValueError("boom")
    assert chunk_rows(_Future("error"), (ValueError, error, None)) is None
    assert chunk_rows(_Future("cancelled"), error) is None


def test_a_worker_killed_mid_run_loses_nothing(client, tiny_model, source, single, tmp_path):
    pids = client.run(os.getpid)
    out = tmp_path / "out.jsonl"
    killed = []

    def progress(k):
        if k == 3 and not killed:  # after the first chunk: kill a worker process (its nanny restarts it)
            victim = next(iter(pids.values()))
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    rows, summary = run_distributed_batch(source, out, client, Compressor(tiny_model), OPTIONS, progress)
    assert killed
    assert out.read_bytes() == single
    assert summary.lines == 12
