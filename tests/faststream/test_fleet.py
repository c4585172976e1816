"""A fleet on the real server: 3 worker processes, 20,000 messages, one worker SIGKILLed.

Input: 18,600 distinct valid jobs (2,000 of them produced by the official ``babelqueue``
package's Redis transport, 1,860 failing their first try), 1,000 duplicate deliveries of them,
and 400 poison elements (200 not JSON, 200 with ``schema_version`` 2). Worker ``w1`` is killed
with SIGKILL mid-run and started again under the same id.

The accounting at the end is exact: every distinct valid job completed once; every poison
element dead-lettered once with its bytes; the queue, every processing list and every in-flight
claim empty. A handler may run a second time only for the message the killed worker held when it
died, read from its processing list before its restart (ADR-0022 is at-least-once execution): the
test counts that, it does not hide it. Every live worker renews its claim while its handler runs,
so a slow machine makes no other job run twice.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import orjson
import pytest
import redis
from babelqueue.redis_transport import RedisTransport

from babelqueue import BabelQueue
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import RULES_HEADER

WORKER = Path(__file__).with_name("fleet_worker.py")
QUEUE = "fleet"
JOB = "urn:babel:fleet:job"
TOTAL = 20_000
POISON = TOTAL * 2 // 100
DUPLICATES = TOTAL * 5 // 100
DISTINCT = TOTAL - POISON - DUPLICATES
OFFICIAL = 2_000
# A green run takes 60-120 s on an idle 2-core machine. A hung fleet is one that stops making
# progress, so it fails after STALL_SECONDS without any; a slow machine only makes it wait
# longer, up to DEADLINE_SECONDS in all.
STALL_SECONDS = 60
DEADLINE_SECONDS = 900


class Worker:
    def __init__(self, url: str, worker_id: str, log: IO[bytes]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), url, worker_id, "fleet"],
            stdout=subprocess.PIPE,
            stderr=log,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:  # FastStream's own start-up lines come first
            if line.strip() == b"ready":
                break
        else:
            raise AssertionError(f"worker {worker_id} exited before it was ready")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def _inputs(url: str) -> tuple[list[bytes], list[str], set[str], Counter[str]]:
    """Push the input; return the poison, every distinct id, the flaky ids, the duplicates."""
    rng = random.Random(14)
    ours: list[bytes] = []
    flaky: set[str] = set()
    for n in range(DISTINCT - OFFICIAL):
        is_flaky = n % 10 == 0
        env = BabelEnvelope.create(JOB, {"n": n, "flaky": is_flaky}, queue=QUEUE)
        ours.append(env.to_json())
        if is_flaky:
            flaky.add(env.meta.id)
    poison: list[bytes] = []
    for n in range(POISON // 2):
        poison.append(b"not json %d" % n if n % 2 else b"\xffnot UTF-8 %d" % n)
        wrong = orjson.loads(ours[n])
        wrong["meta"]["schema_version"] = 2
        wrong["meta"]["id"] = f"00000000-0000-4000-8000-{n:012d}"
        poison.append(orjson.dumps(wrong))
    copies = rng.choices(ours, k=DUPLICATES)
    duplicated = Counter(orjson.loads(e)["meta"]["id"] for e in copies)
    elements = ours + copies + poison
    rng.shuffle(elements)
    official = BabelQueue(transport=RedisTransport(url), queue=QUEUE)
    ids = [orjson.loads(e)["meta"]["id"] for e in ours]
    with redis.Redis.from_url(url) as client:
        step = len(elements) // OFFICIAL
        for i in range(OFFICIAL):  # the official producer interleaved with ours
            client.rpush(QUEUE, *elements[i * step : (i + 1) * step])
            flaky_one = i % 10 == 0
            found = official.publish(JOB, {"n": 10**6 + i, "flaky": flaky_one}, queue=QUEUE)
            ids.append(found)
            if flaky_one:
                flaky.add(found)
        rest = elements[OFFICIAL * step :]
        if rest:
            client.rpush(QUEUE, *rest)
        assert client.llen(QUEUE) == TOTAL
    return poison, ids, flaky, duplicated


def _wait(
    done: Callable[[], bool], progress: Callable[[], object], what: str, deadline: float
) -> None:
    """Wait for ``done``; fail when ``progress`` stands still STALL_SECONDS, or at ``deadline``."""
    last, moved = progress(), time.monotonic()
    while not done():
        now = time.monotonic()
        if now >= deadline:
            raise AssertionError(f"the fleet did not get {what} within {DEADLINE_SECONDS} s")
        current = progress()
        if current != last:
            last, moved = current, now
        elif now - moved > STALL_SECONDS:
            raise AssertionError(f"the fleet stopped short of {what}: stuck at {current}")
        time.sleep(0.05)


def _progress(client: redis.Redis) -> tuple[int, int, int]:
    """What moves while the fleet works: runs, completions, dead letters."""
    return (
        client.hlen("fleet:runs"),
        client.hlen("fleet:completed"),
        client.llen(f"{QUEUE}.dlq"),
    )


def _settled(client: redis.Redis, poison: int, distinct: int) -> bool:
    in_flight = sum(client.llen(k) for k in client.scan_iter(f"{QUEUE}:processing:*"))
    return (
        client.llen(QUEUE) == 0
        and in_flight == 0
        and client.hlen("fleet:completed") == distinct
        and client.llen(f"{QUEUE}.dlq") == poison
    )


def _ids(elements: list[bytes]) -> set[str]:
    """The ``meta.id`` of each element that is an envelope (poison has none)."""
    found: set[str] = set()
    for element in elements:
        try:
            found.add(orjson.loads(binding.reserve(element).body)["meta"]["id"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
    return found


def _workers(url: str, log: IO[bytes]) -> Iterator[Worker]:
    for i in range(3):
        yield Worker(url, f"w{i}", log)


# Its own deadline, past the suite's per-test timeout: its failure says what the fleet did not do.
@pytest.mark.timeout(DEADLINE_SECONDS + 120)
def test_fleet_loses_nothing_and_completes_each_job_once(redis_url: str) -> None:
    poison, ids, flaky, duplicated = _inputs(redis_url)
    assert len(set(ids)) == DISTINCT
    deadline = time.monotonic() + DEADLINE_SECONDS
    with (
        redis.Redis.from_url(redis_url) as client,
        tempfile.TemporaryFile() as log,
        ExitStack() as stack,
    ):
        workers = list(_workers(redis_url, log))
        for worker in workers:
            stack.callback(worker.stop)
        _wait(
            lambda: client.hlen("fleet:runs") > DISTINCT // 4,
            lambda: _progress(client),
            "going",
            deadline,
        )
        workers[1].stop(signal.SIGKILL)  # mid-run, whatever it holds
        killed_at = client.hlen("fleet:runs")
        # What it held, before its restart moves it back: the only message it may have run
        # part of (an effect written, the settle not), so the only one allowed an extra run.
        interrupted = _ids(client.lrange(f"{QUEUE}:processing:w1", 0, -1))
        restarted = Worker(redis_url, "w1", log)
        stack.callback(restarted.stop)
        _wait(
            lambda: _settled(client, POISON, DISTINCT),
            lambda: _progress(client),
            "settled",
            deadline,
        )
        time.sleep(0.3)  # nothing arrives late: the state below is final
        assert _settled(client, POISON, DISTINCT)
        assert killed_at < DISTINCT  # the kill came mid-run
        completed = {k.decode(): v.decode() for k, v in client.hgetall("fleet:completed").items()}
        runs = {k.decode(): int(v) for k, v in client.hgetall("fleet:runs").items()}
        successes = {k.decode(): int(v) for k, v in client.hgetall("fleet:successes").items()}
        failures = {k.decode(): int(v) for k, v in client.hgetall("fleet:failures").items()}
        dlq = [binding.reserve(e) for e in client.lrange(f"{QUEUE}.dlq", 0, -1)]
        claims = list(client.scan_iter("fleet:idem:claim:*"))
        seen = sum(1 for _ in client.scan_iter("fleet:idem:seen:*", count=1000))
        log.seek(0)
        worker_log = log.read().decode(errors="replace")

    # Every distinct valid job completed exactly once, flaky ones on their second attempt.
    assert set(completed) == set(ids), worker_log[-3000:]
    assert seen == DISTINCT
    assert all(completed[i].endswith(":1") for i in flaky)
    assert all(completed[i].endswith(":0") for i in set(ids) - flaky)
    # Each job succeeded once; only the job the killed worker held may have run to success
    # twice (killed after its effect, before its acknowledgement). A live worker keeps its
    # claim however long its handler takes, so no other job ran twice, even on a slow machine.
    twice = {i for i in ids if successes.get(i) != 1}
    assert set(successes) == set(ids)
    assert twice <= interrupted and all(successes[i] == 2 for i in twice), (twice, interrupted)
    # A flaky job fails once, plus once for each duplicate copy delivered before its success
    # was remembered (a raise leaves the id unmarked, so a redelivery runs again), plus once
    # if the killed worker held it after counting a failure; every run is one or the other.
    assert set(failures) == flaky
    over = {
        i: failures[i]
        for i in flaky
        if not 1 <= failures[i] <= 1 + duplicated[i] + (i in interrupted)
    }
    assert not over, (over, interrupted)
    assert all(runs[i] == failures.get(i, 0) + successes[i] for i in ids)
    # Every poison element dead-lettered once, with its bytes, and why.
    assert Counter(r.body for r in dlq) == Counter(poison)
    for reserved in dlq:
        assert reserved.headers in (
            {},  # not UTF-8: no frame can carry it, so its bytes go bare
            {RULES_HEADER: "json.invalid"},
            {RULES_HEADER: "schema_version.unsupported"},
        ), reserved
    # Nothing in flight: no claim is left once every job is remembered.
    assert claims == []
