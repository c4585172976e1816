"""Fleet throughput on a real Redis-protocol server: messages per second for 1, 2 and 4 workers.

Run with ``make bench`` (or ``python bench/fleet.py [--messages N] [--out FILE]``). Each row
starts a fresh server on 127.0.0.1 (the tests' own, ``tests/support/redis_server.py``), starts
the worker processes of the fleet test (``tests/faststream/fleet_worker.py``) on an empty queue,
then pushes N valid BabelQueue jobs in one ``RPUSH`` and times until every one was handled.

* ``envelopekit``: ``babelqueue_subscriber`` (``check`` + typed ``data`` + Router +
  ``AsyncRedisSeenStore`` with a lease, the reliable ``BLMOVE`` reservation, settled in one
  ``MULTI``), the handler counting its run;
* ``bare FastStream``: a plain FastStream list subscriber (``BLPOP``, no validation, no
  idempotency) doing the same count: the floor.

The overhead column is the bare rate over ours at the same worker count. Numbers depend on the
machine's load (this one is shared); the ratios are what to read.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.redis_server import RedisServer  # noqa: E402

from envelopekit.babelqueue import BabelEnvelope  # noqa: E402

WORKER = ROOT / "tests" / "faststream" / "fleet_worker.py"
JOB = "urn:babel:fleet:job"


def _start(url: str, count: int, mode: str) -> list[subprocess.Popen[bytes]]:
    workers = []
    for i in range(count):
        worker = subprocess.Popen(
            [sys.executable, str(WORKER), url, f"w{i}", mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert worker.stdout is not None
        for line in worker.stdout:
            if line.strip() == b"ready":
                break
        else:
            raise RuntimeError(f"worker w{i} did not start")
        workers.append(worker)
    return workers


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        os.kill(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(10)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        if worker.stdout is not None:
            worker.stdout.close()


def _handled(client: redis.Redis, mode: str) -> int:
    if mode == "bare":
        return int(client.hget("fleet:runs", "bare") or 0)
    return int(client.hlen("fleet:successes"))


def rate(count: int, mode: str, messages: list[bytes]) -> float:
    """Messages per second for ``count`` workers in ``mode`` (``fleet`` or ``bare``)."""
    with RedisServer() as server, redis.Redis.from_url(server.url) as client:
        workers = _start(server.url, count, mode)
        try:
            start = time.perf_counter()
            client.rpush("fleet", *messages)
            deadline = start + 600
            while _handled(client, mode) < len(messages):
                if time.perf_counter() > deadline:
                    raise RuntimeError("the fleet did not finish in 10 minutes")
                time.sleep(0.01)
            return len(messages) / (time.perf_counter() - start)
        finally:
            _stop(workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=6000)
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    messages = [
        BabelEnvelope.create(JOB, {"n": n}, queue="fleet").to_json() for n in range(args.messages)
    ]
    lines = [
        f"{args.messages} BabelQueue jobs per row, fresh server each row, {os.cpu_count()} cores",
        "",
        "| workers | envelopekit msg/s | bare FastStream msg/s | overhead (bare / ours) |",
        "|---:|---:|---:|---:|",
    ]
    print("\n".join(lines), flush=True)
    for count in (1, 2, 4):
        ours = rate(count, "fleet", messages)
        bare = rate(count, "bare", messages)
        row = f"| {count} | {ours:,.0f} | {bare:,.0f} | {bare / ours:.2f}x |"
        print(row, flush=True)
        lines.append(row)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
