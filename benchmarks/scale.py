"""Scale benchmark of batch compression on Dask: 1 and 2 local worker processes against one process.

Input: the first ``--limit`` (2,000) sentences of ``data/corpora/eval.train.jsonl`` (the Google eval
corpus; ``eval.dev.jsonl`` has only 968), compressed with the embedded default model at free length,
``--deterministic``, chunks of ``--batch-size`` (64, the CLI's default) lines. In the same run:

* ``"kind": "single"`` — ``run_batch`` in this process (model loaded before the clock starts; spaCy's
  and numba's first-use costs are inside, as for a CLI run);
* ``"kind": "dask"`` per worker count — a fresh ``LocalCluster`` (processes, one thread each): seconds to
  start it, then ``run_distributed_batch`` (inside the clock: every worker loads the model and spaCy and
  compiles its numba kernels), throughput, its ratio to the single-process throughput of this run, and
  whether the output bytes equal the single-process output;
* ``"kind": "chunk_overhead"`` — per chunk, the round trip of a task that ships a chunk of the same input
  items to a worker and returns rows of the same size without compressing (the scheduler, serialisation
  and client-side journal cost the distributed path adds per chunk), measured one chunk at a time and
  with all chunks in flight;
* CPU seconds (this process; the workers' sum) beside every wall-clock time: on a shared machine the
  wall-clock ratios include the other users' load, the CPU ratios do not;
* peak resident memory (MiB) of this process and, per run, of the workers;
* ``"kind": "model"`` — a MODEL (not a measurement) of throughput for 1 to 100 workers, from this run's
  measurements and stated assumptions (:func:`scaling_model`).

Run ``python benchmarks/scale.py [--limit N] [--workers 1 2] [--batch-size K]``; ``--model-from FILE``
prints only the model lines from the JSON lines of an earlier run.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from dualdecomp.app.batch import BatchOptions, read_input, run_batch
from dualdecomp.app.cluster import cluster_client
from dualdecomp.app.compressor import Compressor
from dualdecomp.app.distributed import run_distributed_batch

ROOT = Path(__file__).resolve().parents[1]


def emit(row: dict, log: list | None = None) -> None:
    print(json.dumps(row, allow_nan=False), flush=True)
    if log is not None:
        log.append(row)


def peak_mib() -> float:
    """Peak resident memory of this process, MiB (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def echo_chunk(chunk: list) -> list:
    """A chunk's round trip without work: rows of the input's size (id, text, keep)."""
    return [(i, {"id": it.id, "text": " ".join(it.text), "keep": [True] * len(it.text)}) for i, it in chunk]


def chunk_overhead(client, items: list, batch_size: int) -> dict:
    """Seconds per chunk of echo tasks: one at a time, then all in flight."""
    chunks = [list(enumerate(items))[k:k + batch_size] for k in range(0, len(items), batch_size)]
    start = time.perf_counter()
    for chunk in chunks:
        client.submit(echo_chunk, chunk, pure=False).result()
    serial = (time.perf_counter() - start) / len(chunks)
    start = time.perf_counter()
    client.gather([client.submit(echo_chunk, chunk, pure=False) for chunk in chunks])
    flight = (time.perf_counter() - start) / len(chunks)
    return {"chunks": len(chunks), "seconds_per_chunk_serial": round(serial, 5),
            "seconds_per_chunk_in_flight": round(flight, 5)}


WORKER_COUNTS = (1, 2, 4, 8, 16, 32, 64, 100)
NETWORK_BYTES_PER_S = 125e6  # assumption: 1 Gbit/s into the client, which receives every result row
LATENCY_S = 0.5e-3  # assumption: per task round trip on a LAN, hidden while >= 2 chunks per worker are queued


def scaling_model(rows: list[dict]) -> list[dict]:
    """Throughput vs workers from one run's measurements (a model, not a measurement).

    Assumptions: every worker has a dedicated core and decodes at the rate ``r`` of the 1-worker run's
    worker measured in CPU seconds (model, spaCy and numba loading included: a lower bound on the
    steady rate; on a shared machine wall-clock rates measure the other users' load); the central cost
    per chunk (the client's journal write and fsync, deserialisation, the scheduler's bookkeeping) is the
    measured
    in-flight echo round trip ``o`` and does not grow with workers (one client, one scheduler); each
    sentence moves ``in_bytes + out_bytes`` through the client's network link of ``NETWORK_BYTES_PER_S``;
    latency is hidden by the in-flight window (4 chunks per worker thread). Then, for W workers and chunk
    size B, throughput = min(W · r, B / o, NETWORK_BYTES_PER_S / bytes per sentence), and a corpus of N
    sentences takes start-up + N / throughput (start-up: cluster start plus the 1-worker run's excess
    CPU seconds over the single process, i.e. model, spaCy and numba loading on each worker, in
    parallel, and the per-task costs).
    """
    setup = next(r for r in rows if r["kind"] == "setup")
    single = next(r for r in rows if r["kind"] == "single")
    one = next(r for r in rows if r["kind"] == "dask" and r["workers"] == 1)
    over = max(r["seconds_per_chunk_in_flight"] for r in rows if r["kind"] == "chunk_overhead")
    # a worker on a dedicated core: its CPU seconds per sentence (model loading included); without a CPU
    # measurement, the 1-worker wall-clock rate (a lower bound on a shared machine)
    rate = setup["sentences"] / one["workers_cpu_seconds"] if "workers_cpu_seconds" in one \
        else one["sentences_per_s"]
    single_rate = setup["sentences"] / single["cpu_seconds"] if "cpu_seconds" in single \
        else single["sentences_per_s"]
    excess = (one["workers_cpu_seconds"] - single["cpu_seconds"]) if "cpu_seconds" in single \
        else one["seconds"] - single["seconds"]
    startup = one["cluster_start_s"] + max(0.0, excess)
    per_sentence = round(setup.get("bytes_in_per_sentence", 0) + setup.get("bytes_out_per_sentence", 0), 1)
    out = []
    for batch in (setup["batch_size"], 512):
        for workers in WORKER_COUNTS:
            limits = {"workers": workers * rate, "central": batch / over,
                      "network": NETWORK_BYTES_PER_S / per_sentence if per_sentence else float("inf")}
            bound = min(limits, key=limits.get)
            thr = limits[bound]
            out.append({"kind": "model", "workers": workers, "batch_size": batch,
                        "sentences_per_s": round(thr, 1),
                        "speedup_vs_single": round(thr / single_rate, 1), "bound": bound,
                        "hours_200k": round((startup + 2e5 / thr) / 3600, 3),
                        "hours_10M": round((startup + 1e7 / thr) / 3600, 2),
                        "assumed": {"worker_rate": round(rate, 3), "central_s_per_chunk": over,
                                    "startup_s": round(startup, 1),
                                    "network_bytes_per_s": NETWORK_BYTES_PER_S,
                                    "bytes_per_sentence": per_sentence, "latency_s": LATENCY_S}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--model-from", metavar="FILE", help="print the model lines of an earlier run's output")
    ap.add_argument("--bytes-out", type=float, metavar="B",
                    help="with --model-from: output bytes per sentence, where that run did not record them")
    args = ap.parse_args(argv)
    lines = (ROOT / "data" / "corpora" / "eval.train.jsonl").read_text(encoding="utf-8").splitlines()
    if args.model_from:
        rows = [json.loads(line) for line in Path(args.model_from).read_text().splitlines() if line.strip()]
        setup = next(r for r in rows if r["kind"] == "setup")
        if "bytes_in_per_sentence" not in setup:
            first = lines[:setup["sentences"]]
            setup["bytes_in_per_sentence"] = round(sum(len(x.encode()) + 1 for x in first) / len(first), 1)
        for row in rows:
            if row["kind"] == "output":
                setup["bytes_out_per_sentence"] = row["bytes_out_per_sentence"]
        if "bytes_out_per_sentence" not in setup:
            if args.bytes_out is None:
                ap.error("that run did not record its output size: give --bytes-out")
            setup["bytes_out_per_sentence"] = args.bytes_out
        for row in scaling_model(rows):
            emit(row)
        return 0
    measured: list[dict] = []
    lines = lines[:args.limit]
    options = BatchOptions(deterministic=True, batch_size=args.batch_size)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
        n = len(lines)
        emit({"kind": "setup", "corpus": "eval.train.jsonl", "sentences": n, "batch_size": args.batch_size,
              "model": "embedded default", "length": "free", "cpus": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()],
              "bytes_in_per_sentence": round(source.stat().st_size / n, 1)}, measured)
        compressor = Compressor()
        single_out = Path(tmp) / "single.jsonl"
        start, cpu = time.perf_counter(), time.process_time()
        run_batch(source, single_out, compressor, options)
        single_s = time.perf_counter() - start
        single_cpu = time.process_time() - cpu
        single_rate = n / single_s
        emit({"kind": "single", "seconds": round(single_s, 2), "sentences_per_s": round(single_rate, 3),
              "cpu_seconds": round(single_cpu, 2), "sentences_per_cpu_s": round(n / single_cpu, 3),
              "peak_mib": peak_mib()}, measured)
        reference = single_out.read_bytes()
        measured[0]["bytes_out_per_sentence"] = round(len(reference) / n, 1)
        emit({"kind": "output", "bytes_out_per_sentence": measured[0]["bytes_out_per_sentence"]})
        items = [it for it in read_input(source) if not isinstance(it, dict)]
        for workers in args.workers:
            start = time.perf_counter()
            with cluster_client(workers=workers) as client:
                startup = time.perf_counter() - start
                out = Path(tmp) / f"dask{workers}.jsonl"
                before = client.run(cpu_seconds)
                start, cpu = time.perf_counter(), time.process_time()
                run_distributed_batch(source, out, client, compressor, options)
                run_s = time.perf_counter() - start
                client_cpu = time.process_time() - cpu
                after = client.run(cpu_seconds)
                workers_cpu = sum(after[w] - before[w] for w in after)
                rate = n / run_s
                worker_peak = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
                overhead = chunk_overhead(client, items, args.batch_size)
            emit({"kind": "dask", "workers": workers, "cluster_start_s": round(startup, 2),
                  "seconds": round(run_s, 2), "sentences_per_s": round(rate, 3),
                  "ratio_to_single": round(rate / single_rate, 3),
                  "ratio_to_single_with_start": round(single_s / (run_s + startup), 3),
                  "workers_cpu_seconds": round(workers_cpu, 2), "client_cpu_seconds": round(client_cpu, 2),
                  "cpu_ratio_to_single": round((workers_cpu + client_cpu) / single_cpu, 3),
                  "chunks": -(-n // args.batch_size),
                  "identical_output": out.read_bytes() == reference,
                  "peak_mib": peak_mib(),
                  "worker_peak_mib": sorted(round(v, 1) for v in worker_peak.values())}, measured)
            emit({"kind": "chunk_overhead", "workers": workers, "batch_size": args.batch_size, **overhead},
                 measured)
    emit({"kind": "end", "load_average": [round(x, 2) for x in os.getloadavg()]})
    if 1 in args.workers:
        for row in scaling_model(measured):
            emit(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
