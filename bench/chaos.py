"""A BabelQueue fleet under chaos on a real Redis: kills, stops, failures, a redrive, the books.

Run by hand (not part of ``make test``; about 1-2 minutes a campaign):

```
.venv/bin/python bench/chaos.py [--seed N] [--workers 3] [--messages 3000] [--chaos-seconds 60]
                                [--blips]
```

It starts a fresh server on 127.0.0.1 (the tests' own, ``tests/support/redis_server.py``) and
worker processes (this file with ``worker``: ``babelqueue_subscriber`` on two lists, ``chaos``
with an ``AsyncRedisSeenStore`` holding a 1 s lease, ``chaos.plain`` without one; every other
worker takes four messages at once, FastStream's ``graceful_timeout`` is 2 s). The input:
SDK-made jobs (a quarter framed with a W3C ``traceparent``), the vendored corpus's bodies
exactly as the other SDKs wrote them (each copy with a ``meta.id`` of its own), 5 % duplicate
deliveries, and poison (not JSON, not UTF-8, ``schema_version`` 2). Each message's fate is in
the hash ``chaos:fate``: ``ok``, ``flaky`` (fails its first run), ``doomed`` (fails until
healed), ``random`` (fails 40 % of its runs until healed), ``slow`` (runs past its lease),
``stuck`` (past the grace too: a stop cuts it short), ``cancel`` (raises its own
``CancelledError`` on its first run); half the ``random``, ``slow`` and ``stuck`` ones have a
sync handler (a thread). Meanwhile a worker is SIGKILLed or SIGTERMed every 1-4 s and started
again, half the time under its id and half under a new one (what the old one held then waits
for the heartbeat sweep); ``--blips`` also closes every connection of the workers' runtime
(``CLIENT KILL``) as often. Once drained, the handlers are healed, the DLQ is redriven through
the ``envelopekit redrive`` CLI (``--records``), and the fleet drains again.

The books, checked at the end (a miss is printed, and the exit status is 1):

* an idempotent message succeeded once, or once more for each time a stopped worker held it
  (a handler's effect done before the kill, its settle not: ADR-0022 is at-least-once); a
  plain one at least once; none lost;
* a dead letter at most once per delivery of a ``meta.id``, with ``reason: failed``,
  ``attempts`` (top level and block) as the retries made, the handler's exception and text,
  the original queue; unknown keys and every value as received (type-strict), its trace
  headers kept;
* a redriven SDK-made body byte-identical to what was produced (any other, its values); poison
  in the DLQ byte for byte, before and after the redrive;
* a dead worker swept, and no reservation, heartbeat, worker listing or claim left once the
  fleet stopped; a SIGTERM ends a worker within ``STOP_BOUND``; no error in a worker's log
  but FastStream's own at a stop that cut a handler short (the cancellation logged with its
  traceback, its supervisor restarting the consuming task; a plain FastStream subscriber logs
  the same) and, with ``--blips``, its fetch loop's blocked read that a cut ended.

A sync handler still running at a SIGTERM holds the process until it returns (Python joins
anyio's worker threads at exit, as for any FastStream sync handler): the ``stuck`` ones (3 s)
stay within ``STOP_BOUND``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.redis_server import RedisServer  # noqa: E402

from envelopekit import check  # noqa: E402
from envelopekit.babelqueue import BabelEnvelope  # noqa: E402
from envelopekit.babelqueue import redis as binding  # noqa: E402
from envelopekit.babelqueue._forbidden import (  # noqa: E402
    FORBIDDEN_META_KEYS,
    FORBIDDEN_TOP_LEVEL_KEYS,
)
from envelopekit.babelqueue._payload_schema import same_json  # noqa: E402

IDEM, PLAIN = "chaos", "chaos.plain"
QUEUES = (IDEM, PLAIN)
JOB_ASYNC, JOB_SYNC = "urn:babel:chaos:async", "urn:babel:chaos:sync"
LEASE = 1.0
GRACE = 2.0  # FastStream's graceful_timeout: a slow handler may be cut short by a stop
STOP_BOUND = 12.0  # the grace, the heartbeat's last wait (5 s), and room for a loaded machine
SLOW = 1.6  # past the lease: the claim must be renewed
STUCK = 3.0  # past the grace too: a stop cuts it short
CORPUS = ROOT / "tests" / "data" / "babelqueue" / "encoding" / "expected-bytes.newest.json"
EFFECTS = "chaos-effects"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Doomed(ValueError):
    """A handler that fails until the fleet is healed."""


class Unlucky(KeyError):
    """A random failure."""


# --- the worker --------------------------------------------------------------------------------


def worker(url: str, worker_id: str, concurrency: int) -> None:
    """One worker process: both queues until SIGTERM."""
    import redis.asyncio
    from faststream.redis import RedisBroker

    from envelopekit.babelqueue import AsyncRedisSeenStore, Router
    from envelopekit.faststream import babelqueue_subscriber

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    rng = random.Random()

    async def run() -> None:
        # The effects' own connections are named, so a blip (--blips) cuts only the runtime's.
        client = redis.asyncio.Redis.from_url(url, client_name=EFFECTS)
        sync_client = redis.Redis.from_url(url, client_name=EFFECTS)
        store_client = redis.asyncio.Redis.from_url(url)

        async def effect(queue: str, env: BabelEnvelope[Any]) -> None:
            """The job's effect: counted per run, failing as its fate says, counted on success."""
            mid = env.meta.id
            runs = await client.hincrby(f"chaos:runs:{queue}", mid, 1)
            fate = _text(await client.hget("chaos:fate", mid) or b"ok")
            healed = await client.exists("chaos:healed")
            if fate == "flaky" and runs == 1:
                raise RuntimeError("flaky")
            if fate == "doomed" and not healed:
                raise Doomed(f"doomed {mid}")
            if fate == "random" and not healed and rng.random() < 0.4:
                raise Unlucky(mid)
            if fate == "cancel" and runs == 1:
                raise asyncio.CancelledError("its own")
            if fate == "slow":
                await asyncio.sleep(SLOW)
            if fate == "stuck":
                await asyncio.sleep(STUCK)
            await client.hincrby(f"chaos:ok:{queue}", mid, 1)

        def sync_effect(queue: str, env: BabelEnvelope[Any]) -> None:
            mid = env.meta.id
            sync_client.hincrby(f"chaos:runs:{queue}", mid, 1)
            fate = _text(sync_client.hget("chaos:fate", mid) or b"ok")
            if fate == "random" and not sync_client.exists("chaos:healed") and rng.random() < 0.4:
                raise Unlucky(mid)
            if fate in ("slow", "stuck"):
                time.sleep(SLOW if fate == "slow" else STUCK)
            sync_client.hincrby(f"chaos:ok:{queue}", mid, 1)

        # FastStream's own logger writes to standard output, which nobody reads past "ready":
        # its errors go to the log with everything else (its lines per message stay out).
        logger = logging.getLogger("chaos.faststream")
        logger.setLevel(logging.WARNING)
        broker = RedisBroker(url, graceful_timeout=GRACE, logger=logger)
        for queue in QUEUES:
            router = Router(unknown_urn="dead_letter", max_attempts=3)
            for urn in _urns():

                async def on_async(env: BabelEnvelope[Any], queue: str = queue) -> None:
                    await effect(queue, env)

                router.register(urn, on_async)

            def on_sync(env: BabelEnvelope[Any], queue: str = queue) -> None:
                sync_effect(queue, env)

            router.register(JOB_SYNC, on_sync)
            seen = AsyncRedisSeenStore(store_client, prefix="chaos:idem:", lease=LEASE)
            babelqueue_subscriber(
                broker,
                queue,
                router,
                seen=seen if queue == IDEM else None,
                worker_id=worker_id,
                max_workers=concurrency,
            )
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        async with broker:
            await broker.start()
            print("ready", flush=True)
            await stop.wait()
        await client.aclose()
        await store_client.aclose()
        sync_client.close()

    asyncio.run(run())


def _urns() -> set[str]:
    """The async handlers' URNs: the SDK-made job's and every corpus body's."""
    return {JOB_ASYNC} | {u for u, _ in _corpus_templates()}


def _corpus_templates() -> list[tuple[str, bytes]]:
    """Every valid corpus body as some SDK wrote it, once per distinct byte string, by URN."""
    found: dict[bytes, str] = {}
    for case in json.loads(CORPUS.read_text()).values():
        for text in case["by_sdk"].values():
            if not text.startswith("{"):
                continue
            raw = text.encode()
            verdict = check(raw, "babelqueue")
            if verdict.envelope is None:
                continue
            found.setdefault(raw, verdict.envelope.job)
    return sorted((urn, raw) for raw, urn in found.items())


# --- the probe ---------------------------------------------------------------------------------


@dataclass
class Sent:
    """One message pushed: its queue, bytes as produced, fate and framed headers."""

    queue: str
    raw: bytes
    fate: str
    headers: dict[str, str]
    sdk_made: bool
    attempts: int


@dataclass
class Books:
    """What happened, and what went wrong."""

    kills: int = 0
    blips: int = 0
    terms: int = 0
    restarts: int = 0
    fresh_ids: int = 0
    stop_seconds: list[float] = field(default_factory=list[float])
    # Messages a stopped worker held (its processing lists right after it exited).
    held_at_stop: Counter[str] = field(default_factory=Counter[str])
    problems: list[str] = field(default_factory=list[str])
    # Per log, the byte ranges written between a SIGTERM and the worker's exit.
    stopping: defaultdict[str, list[tuple[int, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    # FastStream's own error records at a stop that cut a handler short, by signature.
    stop_noise: Counter[str] = field(default_factory=Counter[str])

    def miss(self, text: str) -> None:
        self.problems.append(text)


class Fleet:
    """The worker processes, started and stopped by id."""

    def __init__(self, url: str, count: int, logs: Path, books: Books) -> None:
        self.url, self.logs, self.books = url, logs, books
        self.procs: dict[int, tuple[str, subprocess.Popen[bytes]]] = {}
        self.generation = Counter[int]()
        for slot in range(count):
            self.start(slot, f"w{slot}")

    def start(self, slot: int, worker_id: str) -> None:
        log = (self.logs / f"{worker_id}.log").open("ab")
        proc = subprocess.Popen(
            [sys.executable, __file__, "worker", self.url, worker_id, str(1 + 3 * (slot % 2))],
            stdout=subprocess.PIPE,
            stderr=log,
        )
        log.close()
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == b"ready":
                break
        else:
            raise RuntimeError(f"worker {worker_id} exited before it was ready")
        self.procs[slot] = (worker_id, proc)

    def stop(self, slot: int, sig: int) -> str:
        worker_id, proc = self.procs.pop(slot)
        log = self.logs / f"{worker_id}.log"
        began, from_byte = time.monotonic(), log.stat().st_size
        os.kill(proc.pid, sig)
        try:
            proc.wait(STOP_BOUND if sig == signal.SIGTERM else 10)
        except subprocess.TimeoutExpired:
            self.books.miss(f"{worker_id} did not end {STOP_BOUND} s after SIGTERM")
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if sig == signal.SIGTERM:
            self.books.stop_seconds.append(time.monotonic() - began)
            self.books.stopping[log.name].append((from_byte, log.stat().st_size))
            if proc.returncode != 0:
                self.books.miss(f"{worker_id} exited {proc.returncode} on SIGTERM")
        assert proc.stdout is not None
        proc.stdout.close()
        with redis.Redis.from_url(self.url) as client:
            for queue in QUEUES:
                for element in client.lrange(f"{queue}:processing:{worker_id}", 0, -1):
                    found = _id_of(binding.reserve(element).body)
                    if found is not None:
                        self.books.held_at_stop[f"{queue} {found}"] += 1
        return worker_id

    def stop_all(self) -> None:
        for slot in list(self.procs):
            self.stop(slot, signal.SIGTERM)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _id_of(body: bytes) -> str | None:
    try:
        decoded = json.loads(body)
        return str(decoded["meta"]["id"])
    except (ValueError, KeyError, TypeError):
        return None


def _inputs(rng: random.Random, messages: int) -> tuple[list[Sent], list[bytes]]:
    fates = ["ok"] * 10 + ["flaky"] * 3 + ["doomed"] * 2 + ["random"] * 3
    fates += ["slow", "cancel", "stuck"]
    sent: list[Sent] = []
    for n in range(messages):
        queue = IDEM if n % 4 else PLAIN
        fate = rng.choice(fates)
        job = JOB_SYNC if fate in ("random", "slow", "stuck") and n % 2 else JOB_ASYNC
        env = BabelEnvelope.create(job, {"n": n, "big": 2**62 + n, "f": 1.0}, queue=queue)
        headers = {"traceparent": TRACEPARENT, "tracestate": f"k=v{n}"} if n % 4 == 1 else {}
        sent.append(Sent(queue, env.to_json(), fate, headers, True, 0))
    templates = _corpus_templates()
    for n in range(messages // 15):
        _, raw = templates[n % len(templates)]
        meta = json.loads(raw)["meta"]
        mine = raw.replace(meta["id"].encode(), str(uuid.uuid4()).encode())
        mine = mine.replace(f'"queue":"{meta["queue"]}"'.encode(), f'"queue":"{IDEM}"'.encode())
        attempts = json.loads(mine)["attempts"]
        sent.append(Sent(IDEM, mine, rng.choice(fates), {}, False, attempts))
    poison: list[bytes] = []
    for n in range(messages // 30):
        if n % 3 == 0:
            poison.append(b"not json %d" % n)
        elif n % 3 == 1:
            poison.append(b"\xffnot UTF-8 %d" % n)
        else:
            wrong = json.loads(sent[n].raw)
            wrong["meta"]["schema_version"] = 2
            wrong["meta"]["id"] = str(uuid.uuid4())
            poison.append(json.dumps(wrong, separators=(",", ":")).encode())
    return sent, poison


def _expected_body(raw: bytes) -> dict[str, Any]:
    """What a re-emitting hop keeps of ``raw``: all of it but the forbidden keys."""
    document = json.loads(raw)
    for key in FORBIDDEN_TOP_LEVEL_KEYS:
        document.pop(key, None)
    for key in FORBIDDEN_META_KEYS:
        document["meta"].pop(key, None)
    if "urn" in document:  # an inbound alias only: written as `job` (README, "urn-alias")
        alias = document.pop("urn")
        if not str(document.get("job", "")).strip():
            document["job"] = alias
    return dict(document)


def _wait_drained(client: redis.Redis, seconds: float) -> bool:
    """Until every queue and processing list is empty (``seconds`` at most)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        busy = sum(client.llen(q) for q in QUEUES)
        busy += sum(client.llen(k) for k in client.scan_iter("*:processing:*"))
        if not busy:
            return True
        time.sleep(0.5)
    return False


# The exception a dead letter of each failing fate names.
RAISED = {
    "doomed": "Doomed",
    "random": "Unlucky",
    "flaky": "RuntimeError",
    "cancel": "CancelledError",
}


def _check_dead_letters(
    elements: list[bytes],
    by_id: dict[str, Sent],
    poison: list[bytes],
    copies: Counter[str],
    books: Books,
) -> Counter[str]:
    """Check every DLQ element against what was sent; the dead-lettered ids counted."""
    seen = Counter[str]()
    stray = Counter(poison)
    for element in elements:
        body, headers = binding.reserve(element)
        if body in stray and stray[body] > 0:
            stray[body] -= 1
            continue
        found = _id_of(body)
        sent = by_id.get(found or "")
        if sent is None:
            books.miss(f"a DLQ element that was never sent: {element[:200]!r}")
            continue
        seen[found or ""] += 1
        got = json.loads(body)
        block = got.pop("dead_letter", None)
        if not isinstance(block, dict):
            books.miss(f"{found}: no dead_letter block")
            continue
        block_: dict[str, Any] = block  # pyright: ignore[reportUnknownVariableType]
        want_attempts = max(sent.attempts + 1, 3)
        wrong = {
            "reason": block_.get("reason") != "failed",
            "attempts": block_.get("attempts") != want_attempts
            or got.get("attempts") != want_attempts,
            "original_queue": block_.get("original_queue") != sent.queue,
            "lang": block_.get("lang") != "python",
            "exception": block_.get("exception") != RAISED.get(sent.fate),
            "error": not isinstance(block_.get("error"), str)
            or (sent.fate in ("doomed", "random") and found not in block_["error"]),
            "failed_at": not isinstance(block_.get("failed_at"), int),
        }
        for name, bad in wrong.items():
            if bad:
                books.miss(f"{found} ({sent.fate}): dead_letter {name} wrong: {block_}")
        want = _expected_body(sent.raw)
        want["attempts"] = want_attempts
        want.pop("dead_letter", None)  # one the message arrived with is replaced
        if not same_json(got, want):
            books.miss(f"{found}: the dead letter's body changed: {body[:300]!r}")
        for name, value in sent.headers.items():
            if headers.get(name) != value:
                books.miss(f"{found}: header {name} lost on the way to the DLQ: {headers}")
    for body, left in stray.items():
        if left:
            books.miss(f"poison not in the DLQ byte for byte: {body!r}")
    for found, count in seen.items():
        if count > copies[found]:
            books.miss(f"{found}: dead-lettered {count} times, sent {copies[found]}")
    return seen


def _redrive(client: redis.Redis, work: Path, books: Books) -> tuple[list[dict[str, Any]], int]:
    """The DLQ through ``envelopekit redrive --records``; redriven pushed, kept put back."""
    dlq = f"{IDEM}.dlq", f"{PLAIN}.dlq"
    feed = work / "dlq.ndjson"
    lines: list[bytes] = []
    for name in dlq:
        taken = client.lrange(name, 0, -1)
        client.ltrim(name, len(taken), -1)
        lines.extend(_raw(e) for e in taken)
    feed.write_bytes(b"".join(e + b"\n" for e in lines))
    out, kept = work / "out.ndjson", work / "kept.ndjson"
    cli = Path(sys.executable).with_name("envelopekit")
    done = subprocess.run(
        [str(cli), "redrive", str(feed), "--records", "--out", str(out), "--kept", str(kept)],
        capture_output=True,
        check=False,
    )
    if done.returncode not in (0, 1):
        books.miss(f"envelopekit redrive exited {done.returncode}: {done.stderr[-500:]!r}")
    records = [json.loads(line) for line in out.read_bytes().splitlines()]
    for record in records:
        element = binding.element(record["body"].encode(), record["headers"])
        client.rpush(record["queue"], element)
    back = kept.read_bytes().splitlines()
    if back:
        client.rpush(f"{IDEM}.dlq", *back)
    return records, len(back)


def _blip(client: redis.Redis) -> int:
    """Close every connection of the runtime (the workers' brokers and seen-stores)."""
    cut = 0
    for info in client.client_list():
        if info.get("name") != EFFECTS and info["id"] != str(client.client_id()):
            cut += int(client.client_kill_filter(_id=info["id"]))
    return cut


def probe(seed: int, workers: int, messages: int, chaos_seconds: float, blips: bool) -> int:
    rng = random.Random(seed)
    books = Books()
    sent, poison = _inputs(rng, messages)
    by_id = {_id_of(s.raw) or "": s for s in sent}
    began = time.monotonic()
    with (
        RedisServer() as server,
        redis.Redis.from_url(server.url) as client,
        tempfile.TemporaryDirectory(prefix="chaos-") as tmp,
    ):
        work = Path(tmp)
        client.hset("chaos:fate", mapping={i: s.fate for i, s in by_id.items()})
        fleet = Fleet(server.url, workers, work, books)
        elements = [(s.queue, binding.element(s.raw, s.headers)) for s in sent]
        elements += [(IDEM, p) for p in poison]
        # Duplicate deliveries (a producer's retry): an idempotent handler still runs once.
        twice = rng.sample([s for s in sent if s.queue == IDEM], len(sent) // 20)
        elements += [(s.queue, binding.element(s.raw, s.headers)) for s in twice]
        copies = Counter(_id_of(s.raw) or "" for s in [*sent, *twice])
        rng.shuffle(elements)
        pushed = 0
        while time.monotonic() - began < chaos_seconds:
            if pushed < len(elements):  # the input arrives over the first half of the chaos
                step = max(1, len(elements) * 2 // max(1, int(chaos_seconds / 2.5)))
                for queue, element in elements[pushed : pushed + step]:
                    client.rpush(queue, element)
                pushed += step
            time.sleep(rng.uniform(1.0, 4.0))
            if blips:
                books.blips += _blip(client)
            slot = rng.randrange(workers)
            sig = rng.choice((signal.SIGKILL, signal.SIGTERM))
            worker_id = fleet.stop(slot, sig)
            books.kills += sig == signal.SIGKILL
            books.terms += sig == signal.SIGTERM
            if rng.random() < 0.5:
                worker_id = f"w{slot}-{fleet.generation[slot] + 1}"
                fleet.generation[slot] += 1
                books.fresh_ids += 1
            fleet.start(slot, worker_id)
            books.restarts += 1
        for queue, element in elements[pushed:]:
            client.rpush(queue, element)
        # What a worker under a dropped id held waits for its heartbeat (15 s) and a sweep.
        if not _wait_drained(client, 90):
            books.miss("the fleet did not drain after the chaos")
        dead = client.lrange(f"{IDEM}.dlq", 0, -1) + client.lrange(f"{PLAIN}.dlq", 0, -1)
        dead_ids = _check_dead_letters(dead, by_id, poison, copies, books)
        client.set("chaos:healed", b"1")
        records, kept = _redrive(client, work, books)
        for record in records:
            body = record["body"].encode()
            sent_one = by_id[_id_of(body) or ""]
            if sent_one.sdk_made and body != sent_one.raw:
                books.miss(f"a redriven body is not what was produced: {body[:300]!r}")
            want = {**_expected_body(sent_one.raw), "attempts": 0}
            want.pop("dead_letter", None)
            if not same_json(json.loads(body), want):
                books.miss(f"a redriven body's values changed: {body[:300]!r}")
        if not _wait_drained(client, 60):
            books.miss("the fleet did not drain after the redrive")
        # A worker killed under an id no longer used is swept once its heartbeat lapses (15 s,
        # and a renewal of a live worker's: 5 s).
        if not _wait_swept(client, {worker_id for worker_id, _ in fleet.procs.values()}, 30):
            books.miss("a dead worker is still listed 30 s after the drain")
        fleet.stop_all()
        time.sleep(LEASE * 1.5)  # a killed worker's claim lapses by itself
        again = _check_end(client, sent, poison, books)
        logged = _logs(work, books, blips)
        runs = sum(int(v) for q in QUEUES for v in client.hvals(f"chaos:runs:{q}"))
        successes = sum(int(v) for q in QUEUES for v in client.hvals(f"chaos:ok:{q}"))
    print(
        f"seed {seed}: {len(sent)} jobs ({sum(s.sdk_made for s in sent)} SDK-made, "
        f"{sum(not s.sdk_made for s in sent)} corpus bodies, {copies.total() - len(sent)} "
        f"duplicates) + {len(poison)} poison, "
        f"{workers} workers; {books.blips} connections cut; {books.kills} SIGKILL, "
        f"{books.terms} SIGTERM, {books.restarts} "
        f"restarts ({books.fresh_ids} under a new id); {runs} runs, {runs - successes} failed "
        f"(retried or dead-lettered); {sum(dead_ids.values())} dead letters, "
        f"{len(records)} redriven, {kept} kept; SIGTERM stop max "
        f"{max(books.stop_seconds, default=0):.1f} s; held at a stop {len(books.held_at_stop)}, "
        f"of which {again} ran to success twice; "
        f"{logged} error records in the logs, FastStream's own {dict(books.stop_noise)}; "
        f"{time.monotonic() - began:.0f} s"
    )
    for problem in books.problems:
        print("MISS", problem)
    return 1 if books.problems else 0


def _wait_swept(client: redis.Redis, running: set[str], seconds: float) -> bool:
    """Until no worker but the running ones is listed (a dead one's heartbeat lapsed, swept)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        listed = {_text(m) for q in QUEUES for m in client.smembers(f"{q}:workers")}
        if listed <= running:
            return True
        time.sleep(0.5)
    return False


def _check_end(client: redis.Redis, sent: list[Sent], poison: list[bytes], books: Books) -> int:
    """Check the end state; how many idempotent messages succeeded more than once (excused)."""
    again = 0
    for queue in QUEUES:
        ok = {_text(k): int(v) for k, v in client.hgetall(f"chaos:ok:{queue}").items()}
        for s in sent:
            if s.queue != queue:
                continue
            mid = _id_of(s.raw) or ""
            count = ok.get(mid, 0)
            if count == 0:
                books.miss(f"{queue} {mid} ({s.fate}) never succeeded")
            elif queue == IDEM and count > 1:
                held = books.held_at_stop[f"{queue} {mid}"]
                again += count <= 1 + held
                if count > 1 + held:
                    books.miss(f"{mid} ({s.fate}) succeeded {count} times, held at a stop {held}")
    left = sorted(
        _text(k)
        for pattern in ("*:processing:*", "*:alive:*", "*:workers", "chaos:idem:claim:*")
        for k in client.scan_iter(pattern)
    )
    if left:
        books.miss(f"keys left behind: {left[:20]}")
    dlq = client.lrange(f"{IDEM}.dlq", 0, -1) + client.lrange(f"{PLAIN}.dlq", 0, -1)
    bodies = Counter(binding.reserve(e).body for e in dlq)
    if bodies != Counter(poison):
        books.miss(f"the DLQ after the redrive is not the poison: {len(dlq)} elements")
    return again


# What FastStream itself logs when a stop cuts a handler short (its graceful_timeout over): the
# handler's cancellation as an error, its supervisor restarting the consuming task, that task
# then finding its stream closed, a blocked read ended by the closing connection. A plain
# FastStream list subscriber logs the same; anything else, or any of these while not stopping,
# is a miss.
STOP_NOISE = (
    "CancelledError",
    "raised an exception, retrying",
    "ClosedResourceError",
    "Connection closed by server",
)


# With --blips: FastStream's fetch loop logs the blocked read a cut connection ended, and reads on.
BLIP_NOISE = "Message fetch error"
CUT = "redis.exceptions.ConnectionError: Connection closed by server."


def _logs(work: Path, books: Books, blips: bool) -> int:
    """Every error record in the workers' logs; how many records were read."""
    records = 0
    for log in sorted(work.glob("*.log")):
        windows = books.stopping.get(log.name, [])
        offset = 0
        record: list[str] = []
        start = 0
        for line in [*log.read_bytes().splitlines(keepends=True), b"END:"]:
            text = line.decode(errors="replace").rstrip("\n")
            if text.split(":", 1)[0] in ("ERROR", "WARNING", "CRITICAL", "END") and record:
                records += 1
                joined = "\n".join(record)
                stopping = any(a <= start < b for a, b in windows)
                noise = next((n for n in STOP_NOISE if n in joined), None)
                if stopping and noise is not None:
                    books.stop_noise[noise] += 1
                elif blips and BLIP_NOISE in joined and record[-1].startswith(CUT):
                    books.stop_noise["a blocked read cut by a blip"] += 1
                else:
                    books.miss(f"{log.name}: {joined[:1500]}")
                record = []
            if not record:
                start = offset
            record.append(text)
            offset += len(line)
    return records


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--chaos-seconds", type=float, default=60.0)
    parser.add_argument(
        "--blips", action="store_true", help="also cut the workers' Redis connections at random"
    )
    args = parser.parse_args()
    sys.exit(probe(args.seed, args.workers, args.messages, args.chaos_seconds, args.blips))


if __name__ == "__main__":
    main()
