"""The BabelQueue consumer on a real FastStream RedisBroker against the real server."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from typing import Any

import orjson
import pydantic
import pytest
import redis
import redis.asyncio
from babelqueue.redis_transport import RedisTransport
from faststream.redis import RedisBroker

from babelqueue import BabelQueue
from envelopekit.babelqueue import (
    AsyncRedisSeenStore,
    BabelEnvelope,
    Lease,
    Router,
    SeenStoreUnavailable,
)
from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import RULES_HEADER, BareFormat, _redis, babelqueue_subscriber
from envelopekit.faststream._babelqueue import HELD_BACKOFF


class OrderCreated(pydantic.BaseModel):
    order_id: int


def _push(url: str, queue: str, *elements: bytes) -> None:
    with redis.Redis.from_url(url) as client:
        client.rpush(queue, *elements)


async def _drain(url: str, queue: str, processing: str, until: Any, timeout: float = 20) -> None:
    async with redis.asyncio.Redis.from_url(url) as client:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if not await client.llen(queue) and not await client.llen(processing) and until():
                return
            await asyncio.sleep(0.02)
    raise AssertionError(f"{queue} not drained in {timeout}s")


def test_end_to_end_typed_retry_dead_letter_poison_and_official_sdk(redis_url: str) -> None:
    handled: list[tuple[str, int, int]] = []
    failed_once: set[str] = set()
    router = Router(unknown_urn="dead_letter", max_attempts=3)

    @router.on("urn:babel:orders:created", OrderCreated)
    async def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        assert isinstance(env.data, OrderCreated)
        if env.data.order_id == 7 and env.meta.id not in failed_once:
            failed_once.add(env.meta.id)
            raise RuntimeError("gateway timeout")
        handled.append((env.meta.id, env.data.order_id, env.attempts))

    @router.on("urn:babel:orders:always-fails")
    def always_fails(env: BabelEnvelope) -> None:
        raise RuntimeError("never works")

    ours = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    flaky = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}, queue="orders")
    hopeless: BabelEnvelope = BabelEnvelope.create(
        "urn:babel:orders:always-fails", {}, queue="orders"
    )
    unknown = BabelEnvelope.create("urn:babel:orders:nobody", {"k": [1, {}]}, queue="orders")
    wrong_model = BabelEnvelope.create("urn:babel:orders:created", {"order_id": "x"}, queue="q")
    v2 = orjson.loads(ours.to_json())
    v2["meta"]["schema_version"] = 2
    wrong_version = orjson.dumps(v2)
    poison = b"\xff not json at all"

    official = BabelQueue(transport=RedisTransport(redis_url), queue="orders")
    official_id = official.publish("urn:babel:orders:created", {"order_id": 42})
    official_traced = official.publish_with_headers(
        "urn:babel:orders:created",
        {"order_id": 43},
        {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
    )
    _push(
        redis_url,
        "orders",
        ours.to_json(),
        flaky.to_json(),
        hopeless.to_json(),
        unknown.to_json(),
        wrong_model.to_json(),
        wrong_version,
        poison,
    )

    async def scenario() -> str:
        broker = RedisBroker(redis_url)
        async with redis.asyncio.Redis.from_url(redis_url) as store_client:
            consumer = babelqueue_subscriber(
                broker,
                "orders",
                router,
                seen=AsyncRedisSeenStore(store_client, lease=30),
                worker_id="w1",
            )
            async with broker:
                await broker.start()
                assert consumer.processing is not None
                await _drain(redis_url, "orders", consumer.processing, lambda: len(handled) >= 4)
            return consumer.processing

    processing = asyncio.run(scenario())
    assert processing == "orders:processing:w1"
    ids = {h[0]: h for h in handled}
    assert ids[ours.meta.id] == (ours.meta.id, 1, 0)
    assert ids[flaky.meta.id] == (flaky.meta.id, 7, 1)  # retried once, attempts + 1
    assert ids[official_id][1:] == (42, 0) and ids[official_traced][1:] == (43, 0)
    assert len(handled) == 4
    with redis.Redis.from_url(redis_url) as client:  # remembered in the acknowledging MULTI
        assert all(client.exists(f"envelopekit:idempotency:seen:{i}") for i in ids)
        assert client.keys("envelopekit:idempotency:claim:*") == []

    with redis.Redis.from_url(redis_url) as client:
        dlq = [binding.reserve(e) for e in client.lrange("orders.dlq", 0, -1)]
        assert client.llen("orders") == 0 and client.llen(processing) == 0
    by_body: dict[bytes, dict[str, str]] = {r.body: r.headers for r in dlq}
    assert by_body[poison] == {}  # not UTF-8: the bytes go bare, exactly as received
    assert by_body[wrong_version] == {RULES_HEADER: "schema_version.unsupported"}
    lettered = {
        orjson.loads(r.body)["job"]: (orjson.loads(r.body), r.headers)
        for r in dlq
        if r.body not in (poison, wrong_version)
    }
    hopeless_dl, hopeless_headers = lettered["urn:babel:orders:always-fails"]
    assert hopeless_dl["attempts"] == 3 and hopeless_dl["dead_letter"]["reason"] == "failed"
    assert hopeless_dl["dead_letter"]["original_queue"] == "orders"
    assert hopeless_headers == {RULES_HEADER: "handler.failed"}
    unknown_dl, unknown_headers = lettered["urn:babel:orders:nobody"]
    assert unknown_dl["attempts"] == 0 and unknown_dl["dead_letter"]["reason"] == "unknown_urn"
    assert unknown_dl["data"] == {"k": [1, {}]}
    assert unknown_headers == {RULES_HEADER: "urn.unknown"}
    wrong_dl, wrong_headers = lettered["urn:babel:orders:created"]
    assert wrong_dl["data"] == {"order_id": "x"} and wrong_headers == {RULES_HEADER: "data.invalid"}
    assert len(dlq) == 5


def test_what_we_dead_letter_the_official_sdk_reads(redis_url: str) -> None:
    router = Router(unknown_urn="dead_letter")
    env = BabelEnvelope.create("urn:babel:nobody:home", {"n": 1}, queue="inbox")
    _push(redis_url, "inbox", env.to_json())

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        consumer = babelqueue_subscriber(broker, "inbox", router)
        async with broker:
            await broker.start()
            assert consumer.processing is not None
            await _drain(redis_url, "inbox", consumer.processing, lambda: True)
            async with redis.asyncio.Redis.from_url(redis_url) as client:
                deadline = asyncio.get_running_loop().time() + 10
                while not await client.llen("inbox.dlq"):
                    assert asyncio.get_running_loop().time() < deadline
                    await asyncio.sleep(0.02)

    asyncio.run(scenario())
    transport = RedisTransport(redis_url)
    got = transport.pop("inbox.dlq", timeout=1)
    assert got is not None
    assert got.headers == {RULES_HEADER: "urn.unknown"}
    decoded = orjson.loads(got.body)
    assert (
        decoded["meta"]["id"] == env.meta.id and decoded["dead_letter"]["reason"] == "unknown_urn"
    )


@pytest.mark.parametrize("max_workers", [1, 3])
def test_a_restarted_worker_recovers_what_it_held(redis_url: str, max_workers: int) -> None:
    # A worker killed mid-handle left its reservation in its processing list.
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 5}, queue="orders")
    _push(redis_url, "orders:processing:w9", env.to_json())
    handled: list[str] = []
    router = Router()
    router.register("urn:babel:orders:created", lambda e: handled.append(e.meta.id))

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        consumer = babelqueue_subscriber(
            broker, "orders", router, worker_id="w9", max_workers=max_workers
        )
        async with broker:
            await broker.start()
            assert consumer.processing == "orders:processing:w9"
            await _drain(redis_url, "orders", consumer.processing, lambda: bool(handled))

    asyncio.run(scenario())
    assert handled == [env.meta.id]


def test_bare_format_publishes_what_the_binding_prescribes(redis_url: str) -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 9}, queue="orders")

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        bare = broker.publisher(list="out", message_format=BareFormat)
        async with broker:
            await broker.start()
            await bare.publish(env.to_json())
            await bare.publish(env.to_json(), headers={"traceparent": "00-ab-cd-01"})

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        first, second = client.lrange("out", 0, -1)
    assert first == env.to_json()  # byte for byte, no FastStream frame
    assert second == binding.element(env, {"traceparent": "00-ab-cd-01"})
    assert BareFormat.parse(second) == (env.to_json(), {"traceparent": "00-ab-cd-01"})


def test_an_unreachable_seen_store_leaves_the_message_reserved(redis_url: str) -> None:
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff

    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 3}, queue="orders")
    _push(redis_url, "orders", env.to_json())
    ran: list[object] = []
    router = Router()
    router.register("urn:babel:orders:created", ran.append)

    async def scenario() -> None:
        dead = redis.asyncio.Redis(host="127.0.0.1", port=1, retry=AsyncRetry(NoBackoff(), 0))
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(
            broker, "orders", router, seen=AsyncRedisSeenStore(dead), worker_id="w2"
        )
        async with broker, redis.asyncio.Redis.from_url(redis_url) as client:
            await broker.start()
            for _ in range(500):
                if not await client.llen("orders"):
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
        await dead.aclose()

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        assert client.lrange("orders:processing:w2", 0, -1) == [env.to_json()]  # not acked
        assert client.llen("orders") == 0 and client.llen("orders.dlq") == 0
    assert ran == []


async def _until(url: str, done: Any, timeout: float = 20) -> None:
    async with redis.asyncio.Redis.from_url(url) as client:
        deadline = asyncio.get_running_loop().time() + timeout
        while not await done(client):
            assert asyncio.get_running_loop().time() < deadline, "not settled in time"
            await asyncio.sleep(0.02)


def _consume_until(
    redis_url: str, routers: dict[str, Router], settled: Any, **options: Any
) -> None:
    """A worker ``w`` consuming each queue with its router until ``settled(client)`` holds."""

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        for queue, router in routers.items():
            babelqueue_subscriber(broker, queue, router, worker_id="w", **options)
        async with broker:
            await broker.start()
            await _until(redis_url, settled)

    asyncio.run(scenario())


def _failing(env: BabelEnvelope) -> None:
    raise RuntimeError("never works")


@pytest.mark.parametrize(
    "element",
    [
        BabelEnvelope.create("urn:babel:jobs:nobody", {}, queue="jobs").to_json(),
        BabelEnvelope.create("urn:babel:jobs:fails", {}, queue="jobs").to_json(),
        b"poison",
    ],
    ids=["unknown-urn", "failed", "not-json"],
)
def test_a_dead_letter_the_server_refuses_stays_reserved(redis_url: str, element: bytes) -> None:
    # Someone else's hash under the DLQ's name: the push fails, and the reservation must stay.
    ok: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:ok", {}, queue="jobs")
    handled: list[str] = []
    router = Router(unknown_urn="dead_letter", max_attempts=1)
    router.register("urn:babel:jobs:fails", _failing)
    router.register("urn:babel:jobs:ok", lambda env: handled.append(env.meta.id))
    with redis.Redis.from_url(redis_url) as client:
        client.hset("jobs.dlq", "owner", "someone else")
    _push(redis_url, "jobs", element, ok.to_json())

    async def settled(client: redis.asyncio.Redis) -> bool:
        return not await client.llen("jobs") and bool(handled)

    _consume_until(redis_url, {"jobs": router}, settled)
    assert handled == [ok.meta.id]  # the worker went on
    with redis.Redis.from_url(redis_url) as client:
        assert client.lrange("jobs:processing:w", 0, -1) == [element]
        assert client.hgetall("jobs.dlq") == {b"owner": b"someone else"}


def test_a_given_dead_letter_queue_receives_every_dead_letter(redis_url: str) -> None:
    router = Router(unknown_urn="dead_letter", max_attempts=1)
    router.register("urn:babel:jobs:fails", _failing)
    failed = BabelEnvelope.create("urn:babel:jobs:fails", {}, queue="jobs").to_json()
    unknown = BabelEnvelope.create("urn:babel:jobs:nobody", {}, queue="jobs").to_json()
    _push(redis_url, "jobs", failed, unknown, b"poison")

    async def settled(client: redis.asyncio.Redis) -> bool:
        return await client.llen("dead") + await client.llen("jobs.dlq") == 3

    _consume_until(redis_url, {"jobs": router}, settled, dead_letter_queue="dead")
    with redis.Redis.from_url(redis_url) as client:
        dead = [binding.reserve(e) for e in client.lrange("dead", 0, -1)]
        assert client.llen("jobs.dlq") == 0
    assert sorted(r.headers[RULES_HEADER] for r in dead) == [
        "handler.failed",
        "json.invalid",
        "urn.unknown",
    ]


def test_a_cancelled_error_of_the_handler_own_is_a_failure(redis_url: str) -> None:
    # Awaiting a task something else cancelled raises CancelledError in a handler that nobody
    # is stopping: a failure to retry and dead-letter, not the end of the consuming task.
    router = Router(max_attempts=2)
    handled: list[int] = []

    @router.on("urn:babel:jobs:job")
    async def job(env: BabelEnvelope) -> None:
        if env.data["n"] == 0:
            inner = asyncio.ensure_future(asyncio.sleep(10))
            await asyncio.sleep(0)
            inner.cancel()
            await inner
        handled.append(env.data["n"])

    jobs = [BabelEnvelope.create("urn:babel:jobs:job", {"n": n}, queue="jobs") for n in range(3)]
    _push(redis_url, "jobs", *(env.to_json() for env in jobs))

    async def settled(client: redis.asyncio.Redis) -> bool:
        return bool(await client.llen("jobs.dlq")) and len(handled) == 2

    _consume_until(redis_url, {"jobs": router}, settled)
    assert sorted(handled) == [1, 2]
    with redis.Redis.from_url(redis_url) as client:
        (dead,) = [binding.reserve(e) for e in client.lrange("jobs.dlq", 0, -1)]
        assert client.llen("jobs:processing:w") == 0 and client.llen("jobs") == 0
    letter = orjson.loads(dead.body)
    assert letter["meta"]["id"] == jobs[0].meta.id and letter["attempts"] == 2
    assert letter["dead_letter"]["exception"] == "CancelledError"
    assert dead.headers == {RULES_HEADER: "handler.failed"}


@pytest.mark.parametrize("handler", ["async", "sync"])
def test_a_worker_stopped_mid_handle_keeps_the_message_reserved(
    redis_url: str, handler: str
) -> None:
    router = Router()
    started, stopped = threading.Event(), threading.Event()

    async def slow(env: BabelEnvelope) -> None:
        started.set()
        await asyncio.sleep(30)

    def slow_sync(env: BabelEnvelope) -> None:  # its thread runs on once the worker stopped
        started.set()
        stopped.wait(10)

    router.register("urn:babel:jobs:slow", slow if handler == "async" else slow_sync)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:slow", {}, queue="jobs")
    _push(redis_url, "jobs", env.to_json())

    async def scenario() -> None:
        broker = RedisBroker(redis_url, graceful_timeout=0.1)
        babelqueue_subscriber(broker, "jobs", router, worker_id="w")
        async with broker:
            await broker.start()
            while not started.is_set():
                await asyncio.sleep(0.01)
        # Leaving the block stopped the broker, cancelling the handler mid-await.

    try:
        asyncio.run(scenario())
    finally:
        stopped.set()
    with redis.Redis.from_url(redis_url) as client:
        assert client.lrange("jobs:processing:w", 0, -1) == [env.to_json()]
        assert client.llen("jobs") == 0 and client.llen("jobs.dlq") == 0


def test_a_sync_handler_past_its_lease_keeps_the_claim(redis_url: str) -> None:
    # A sync handler runs in a thread: the loop renews the claim meanwhile, so a second worker
    # handed the same message puts it back (idempotency.held) instead of running it too.
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:slow", {}, queue="jobs")
    claim = f"t:claim:{env.meta.id}"
    started, first_done = threading.Event(), threading.Event()
    runs: list[str] = []
    pttls: list[int] = []
    router = Router()

    @router.on("urn:babel:jobs:slow")
    def slow(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        started.set()
        with redis.Redis.from_url(redis_url) as watch:
            for _ in range(8):  # 2 s, four leases
                time.sleep(0.25)
                pttls.append(watch.pttl(claim))

    async def worker(worker_id: str, until: Any) -> None:
        async with redis.asyncio.Redis.from_url(redis_url) as client:
            broker = RedisBroker(redis_url)
            seen = AsyncRedisSeenStore(client, prefix="t:", lease=0.5)
            babelqueue_subscriber(broker, "jobs", router, seen=seen, worker_id=worker_id)
            async with broker:
                await broker.start()
                await until()

    async def settled(client: redis.asyncio.Redis) -> bool:
        lists = ("jobs", "jobs:processing:a", "jobs:processing:b")
        return not any([await client.llen(name) for name in lists]) and first_done.is_set()

    def second() -> None:  # its own loop: a worker the first one's handler cannot block
        assert started.wait(20)
        _push(redis_url, "jobs", env.to_json())  # the same message, redelivered
        asyncio.run(worker("b", lambda: _until(redis_url, settled)))

    async def first() -> None:
        async def handled() -> None:
            while len(pttls) < 8:
                await asyncio.sleep(0.02)
            first_done.set()
            while other.is_alive():
                await asyncio.sleep(0.02)

        await worker("a", handled)

    _push(redis_url, "jobs", env.to_json())
    other = threading.Thread(target=second)
    other.start()
    asyncio.run(first())
    other.join(30)
    assert min(pttls) > 0  # renewed throughout, though the handler held the claim for 4 leases
    assert runs == [env.meta.id]
    with redis.Redis.from_url(redis_url) as client:
        assert client.exists(f"t:seen:{env.meta.id}") and not client.exists(claim)
        assert client.llen("jobs.dlq") == 0


def test_a_sync_handler_leaves_the_loop_to_other_subscribers(redis_url: str) -> None:
    other_ran = threading.Event()
    waited: list[bool] = []
    router, others = Router(), Router()
    nudge = BabelEnvelope.create("urn:babel:other:nudge", {}, queue="other").to_json()

    @router.on("urn:babel:jobs:slow")
    def slow(env: BabelEnvelope) -> None:
        _push(redis_url, "other", nudge)
        waited.append(other_ran.wait(5))  # consumed meanwhile, by the same broker's loop

    @others.on("urn:babel:other:nudge")
    async def nudged(env: BabelEnvelope) -> None:
        other_ran.set()

    _push(redis_url, "jobs", BabelEnvelope.create("urn:babel:jobs:slow", {}).to_json())

    async def settled(client: redis.asyncio.Redis) -> bool:
        return bool(waited) and not await client.llen("jobs:processing:w")

    _consume_until(redis_url, {"jobs": router, "other": others}, settled)
    assert waited == [True]


def test_workers_started_without_an_id_never_take_each_other_s_messages(redis_url: str) -> None:
    # Worker a holds a message in flight; b starts meanwhile (as a restart would): b must not
    # take a's reservation back and run the message a second time.
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:slow", {}, queue="jobs")
    runs: list[str] = []
    started, release = threading.Event(), threading.Event()
    router = Router()

    @router.on("urn:babel:jobs:slow")
    def slow(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        started.set()
        release.wait(10)

    async def scenario() -> tuple[str | None, str | None]:
        first, second = RedisBroker(redis_url), RedisBroker(redis_url)
        a = babelqueue_subscriber(first, "jobs", router)
        b = babelqueue_subscriber(second, "jobs", router)
        async with first, redis.asyncio.Redis.from_url(redis_url) as client:
            await first.start()
            await client.rpush("jobs", env.to_json())
            while not started.is_set():
                await asyncio.sleep(0.01)
            async with second:
                await second.start()
                for _ in range(25):  # half a second of b's consuming, a still running
                    await asyncio.sleep(0.02)
                    assert await client.llen("jobs") == 0
                release.set()
                await _until(redis_url, lambda c: _empty(c, a.processing, b.processing))
        return a.processing, b.processing

    try:
        a, b = asyncio.run(scenario())
    finally:
        release.set()
    assert runs == [env.meta.id]
    assert a != b and a is not None and b is not None
    assert a.startswith("jobs:processing:") and b.startswith("jobs:processing:")
    with redis.Redis.from_url(redis_url) as client:  # both stopped with nothing reserved
        assert client.scard("jobs:workers") == 0 and client.keys("jobs:alive:*") == []


@pytest.mark.parametrize("worker_id", [None, "w7"], ids=["default-id", "stable-id"])
def test_what_a_dead_worker_held_is_put_back_once_its_heartbeat_lapses(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, worker_id: str | None
) -> None:
    monkeypatch.setattr(_redis, "HEARTBEAT_SECONDS", 0.3)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    started = asyncio.Event()
    runs: list[str] = []
    dying, living = Router(), Router()

    @dying.on("urn:babel:jobs:job")
    async def hang(env: BabelEnvelope) -> None:
        started.set()
        await asyncio.sleep(30)

    living.register("urn:babel:jobs:job", lambda e: runs.append(e.meta.id))

    async def scenario() -> str | None:
        # A worker stopped mid-handle keeps its reservation, as a killed one does, and is
        # never started again under its id.
        gone = RedisBroker(redis_url, graceful_timeout=0.1)
        held = babelqueue_subscriber(gone, "jobs", dying, worker_id=worker_id).processing
        async with gone:
            await gone.start()
            _push(redis_url, "jobs", env.to_json())
            await started.wait()
        assert held is not None
        async with redis.asyncio.Redis.from_url(redis_url) as client:
            assert await client.lrange(held, 0, -1) == [env.to_json()]
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(broker, "jobs", living)
        async with broker:
            await broker.start()
            await _until(redis_url, lambda c: _empty(c, "jobs", held), timeout=10)
            while not runs:
                await asyncio.sleep(0.02)
        return held

    held = asyncio.run(scenario())
    assert runs == [env.meta.id]
    with redis.Redis.from_url(redis_url) as client:
        assert client.llen("jobs.dlq") == 0 and held is not None and client.llen(held) == 0
        assert client.scard("jobs:workers") == 0 and client.keys("jobs:alive:*") == []


def _dead_lettered(redis_url: str, router: Router) -> binding.Reserved:
    """Run ``router`` on the ``jobs`` queue until one message is dead-lettered, and read it.

    The queue and its worker's processing list are empty by then.
    """

    async def settled(client: redis.asyncio.Redis) -> bool:
        return bool(await client.llen("jobs.dlq"))

    _consume_until(redis_url, {"jobs": router}, settled)
    with redis.Redis.from_url(redis_url) as client:
        (dead,) = [binding.reserve(e) for e in client.lrange("jobs.dlq", 0, -1)]
        assert client.llen("jobs:processing:w") == 0 and client.llen("jobs") == 0
    return dead


async def _empty(client: redis.asyncio.Redis, *lists: str | None) -> bool:
    return not any([await client.llen(name) for name in lists if name is not None])


class _UnreachableRegistry:
    def schema_for(self, urn: str) -> Any:
        raise ConnectionError("schema registry unreachable")


def test_a_schema_registry_that_raises_retries_then_dead_letters(redis_url: str) -> None:
    router = Router(schemas=_UnreachableRegistry(), max_attempts=2)
    ran: list[object] = []
    router.register("urn:babel:jobs:job", ran.append)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    _push(redis_url, "jobs", env.to_json())
    dead = _dead_lettered(redis_url, router)
    letter = orjson.loads(dead.body)
    assert dead.headers == {RULES_HEADER: "payload_schema.failed"}
    assert letter["meta"]["id"] == env.meta.id and letter["attempts"] == 2
    assert letter["dead_letter"]["exception"] == "ConnectionError"
    assert ran == []


class _Tenanted(BabelEnvelope[OrderCreated]):
    """A user's envelope class with a member of its own."""

    tenant: str


def test_an_envelope_its_route_class_refuses_is_dead_lettered_at_once_as_poison(
    redis_url: str,
) -> None:
    # It was retried to `max_attempts`, then dead-lettered as `data.invalid`, reason `failed`,
    # its error "data for ... does not match its URN schema: /tenant: Field required".
    router = Router(max_attempts=3)
    ran: list[object] = []
    router.register("urn:babel:jobs:job", ran.append, _Tenanted)
    env = BabelEnvelope.create("urn:babel:jobs:job", {"order_id": 1}, queue="jobs")
    _push(redis_url, "jobs", env.to_json())
    dead = _dead_lettered(redis_url, router)
    letter = orjson.loads(dead.body)
    assert dead.headers == {RULES_HEADER: "envelope.refused"}
    assert letter["meta"]["id"] == env.meta.id and letter["attempts"] == 0
    assert {k: letter["dead_letter"][k] for k in ("reason", "error", "exception")} == {
        "reason": "poison",
        "error": "the envelope for 'urn:babel:jobs:job' is refused by _Tenanted: "
        "message-envelope.required at /tenant: Field required",
        "exception": "InvalidEnvelopeError",
    }
    assert ran == []


class _Counting(Router):
    """A Router counting the deliveries it decides."""

    routed = 0

    def route(self, *args: Any, **kwargs: Any) -> Any:
        self.routed += 1
        return super().route(*args, **kwargs)


@pytest.mark.parametrize(("delay", "most"), [(0.25, 6), (0.5, 3)], ids=["0.25s", "0.5s"])
def test_the_release_strategy_honours_its_delay(redis_url: str, delay: float, most: int) -> None:
    # A worker alone with a URN nobody handles: released and taken again, at most once per
    # delay (a second's window, so 1/delay deliveries and the one under way).
    router = _Counting(unknown_urn="release", unknown_urn_release_delay=delay)
    stranger = BabelEnvelope.create("urn:babel:jobs:nobody", {}, queue="jobs").to_json()
    _push(redis_url, "jobs", stranger)
    window: list[int] = []

    async def scenario() -> None:
        broker = RedisBroker(redis_url, graceful_timeout=0.1)
        consumer = babelqueue_subscriber(broker, "jobs", router)
        async with broker:
            await broker.start()
            while not router.routed:
                await asyncio.sleep(0.01)
            first = router.routed
            await asyncio.sleep(1.0)
            window.append(router.routed - first)
        held.append(consumer.processing)

    held: list[str | None] = []
    asyncio.run(scenario())
    assert 1 <= window[0] <= most
    with redis.Redis.from_url(redis_url) as client:  # never lost, never doubled
        assert held[0] is not None
        assert client.lrange("jobs", 0, -1) + client.lrange(held[0], 0, -1) == [stranger]


def test_the_release_strategy_without_delay_puts_back_at_once(redis_url: str) -> None:
    router = _Counting(unknown_urn="release")
    _push(redis_url, "jobs", BabelEnvelope.create("urn:babel:jobs:nobody", {}).to_json())

    async def settled(client: redis.asyncio.Redis) -> bool:
        return router.routed >= 20  # the other SDKs' default: no wait

    _consume_until(redis_url, {"jobs": router}, settled)


def test_a_duplicate_of_a_held_claim_is_put_back_after_a_pause(redis_url: str) -> None:
    # Worker a runs a message and holds its claim; worker b, alone with the duplicate, must not
    # take it and put it back as fast as Redis answers for as long as a runs.
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    runs: list[str] = []
    started, done = asyncio.Event(), asyncio.Event()
    running, duplicates = Router(), _Counting()

    @running.on("urn:babel:jobs:job")
    async def slow(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        started.set()
        await done.wait()

    duplicates.register("urn:babel:jobs:job", lambda e: runs.append(e.meta.id))
    window: list[int] = []

    async def scenario() -> None:
        async with redis.asyncio.Redis.from_url(redis_url) as client:
            first, second = RedisBroker(redis_url), RedisBroker(redis_url)
            seen = AsyncRedisSeenStore(client, prefix="t:", lease=5)
            babelqueue_subscriber(first, "jobs", running, seen=seen)
            babelqueue_subscriber(second, "jobs", duplicates, seen=seen)
            async with first:
                await first.start()
                await client.rpush("jobs", env.to_json())
                await started.wait()
                async with second:
                    await second.start()
                    await client.rpush("jobs", env.to_json())  # the duplicate
                    while not duplicates.routed:
                        await asyncio.sleep(0.01)
                    taken = duplicates.routed
                    await asyncio.sleep(1.0)
                    window.append(duplicates.routed - taken)
                    done.set()
                    await _until(redis_url, lambda c: _settled_jobs(c, env.meta.id))

    asyncio.run(scenario())
    assert 1 <= window[0] <= 1 / HELD_BACKOFF + 2
    assert runs == [env.meta.id]  # the duplicate skipped once the first run was remembered


async def _settled_jobs(client: redis.asyncio.Redis, seen_id: str) -> bool:
    lists = [b"jobs", *await client.keys("jobs:processing:*")]
    left = [await client.llen(name) for name in lists]
    return bool(await client.exists(f"t:seen:{seen_id}")) and not any(left)


class _SlowStore:
    """A sync seen-store whose ``slow`` method waits for another subscriber of the broker.

    Run on the event loop, that method would stop the loop, and the other subscriber with it.
    """

    def __init__(self, slow: str, url: str, nudge: bytes, other_ran: threading.Event) -> None:
        self.slow, self.url, self.nudge, self.other_ran = slow, url, nudge, other_ran
        self.waited: list[bool] = []

    def _maybe_wait(self, name: str) -> None:
        if name == self.slow and not self.waited:
            _push(self.url, "other", self.nudge)
            self.waited.append(self.other_ran.wait(5))

    def seen(self, message_id: str) -> bool:
        self._maybe_wait("seen")
        return False

    def remember(self, message_id: str) -> None:
        self._maybe_wait("remember")

    def forget(self, message_id: str) -> None:
        self._maybe_wait("forget")


class _SlowClaimingStore(_SlowStore):
    def claim(self, message_id: str) -> Lease:
        self._maybe_wait("claim")
        return Lease(message_id, "token", renew_every=0.05)

    def renew(self, lease: Lease) -> bool:
        self._maybe_wait("renew")
        return True

    def release(self, lease: Lease) -> None:
        self._maybe_wait("release")


@pytest.mark.parametrize("slow", ["seen", "remember", "claim", "renew", "release"])
def test_a_sync_seen_store_leaves_the_loop_to_other_subscribers(redis_url: str, slow: str) -> None:
    other_ran = threading.Event()
    nudge = BabelEnvelope.create("urn:babel:other:nudge", {}, queue="other").to_json()
    kind = _SlowStore if slow in ("seen", "remember") else _SlowClaimingStore
    store = kind(slow, redis_url, nudge, other_ran)
    router, others = Router(max_attempts=1), Router()

    @router.on("urn:babel:jobs:job")
    async def job(env: BabelEnvelope) -> None:
        if slow == "renew":  # long enough for a renewal, which waits for the other
            while not store.waited:
                await asyncio.sleep(0.01)
        if slow == "release":
            raise RuntimeError("fails, so its claim is released")

    @others.on("urn:babel:other:nudge")
    async def nudged(env: BabelEnvelope) -> None:
        other_ran.set()

    _push(redis_url, "jobs", BabelEnvelope.create("urn:babel:jobs:job", {}).to_json())

    async def settled(client: redis.asyncio.Redis) -> bool:
        return bool(store.waited) and not await client.llen("jobs:processing:w")

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(broker, "jobs", router, seen=store, worker_id="w")
        babelqueue_subscriber(broker, "other", others, worker_id="w")
        async with broker:
            await broker.start()
            await _until(redis_url, settled)

    asyncio.run(scenario())
    assert store.waited == [True]


class _UnavailableOnce:
    """A seen-store out of reach for its first call, as a Redis restart makes one."""

    def __init__(self) -> None:
        self.calls = 0

    async def seen(self, message_id: str) -> bool:
        self.calls += 1
        if self.calls == 1:
            raise SeenStoreUnavailable("seen", message_id, ConnectionError("Redis restarts"))
        return False

    async def remember(self, message_id: str) -> None:
        return None

    async def forget(self, message_id: str) -> None:
        return None


@pytest.mark.parametrize("max_workers", [1, 3])
@pytest.mark.parametrize("cause", ["seen-store", "dead-letter-push"])
def test_a_reservation_a_failed_settle_left_is_taken_back_by_the_running_worker(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, cause: str, max_workers: int
) -> None:
    # A transient error leaves the message reserved with nobody handling it: the running
    # worker puts it back a renewal or two later, without waiting for its restart.
    monkeypatch.setattr(_redis, "HEARTBEAT_SECONDS", 0.3)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    runs: list[str] = []
    router = Router(max_attempts=1)

    @router.on("urn:babel:jobs:job")
    def job(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        if cause == "dead-letter-push":
            raise RuntimeError("fails, to be dead-lettered")

    if cause == "dead-letter-push":
        with redis.Redis.from_url(redis_url) as client:  # refused until it is deleted
            client.hset("jobs.dlq", "owner", "someone else")
    _push(redis_url, "jobs", env.to_json())
    seen = _UnavailableOnce() if cause == "seen-store" else None

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(
            broker, "jobs", router, seen=seen, worker_id="w", max_workers=max_workers
        )
        async with broker, redis.asyncio.Redis.from_url(redis_url) as client:
            await broker.start()
            while await client.llen("jobs"):
                await asyncio.sleep(0.01)
            if cause == "dead-letter-push":
                while not runs:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)  # the refused push went
                # Reserved, or already taken back (a renewal may come first on a busy
                # machine), never lost nor doubled: each move is one atomic step.
                async with client.pipeline(transaction=True) as both:
                    both.lrange("jobs:processing:w", 0, -1)
                    both.lrange("jobs", 0, -1)
                    left, queued = await both.execute()
                assert left + queued == [env.to_json()]
                await client.delete("jobs.dlq")  # the error passes
                done = "jobs.dlq"
            else:
                while seen is not None and seen.calls == 0:
                    await asyncio.sleep(0.01)
                done = "jobs"

            async def settled(c: redis.asyncio.Redis) -> bool:
                finished = bool(await c.llen(done)) if done == "jobs.dlq" else bool(runs)
                return finished and await _empty(c, "jobs", "jobs:processing:w")

            await _until(redis_url, settled, timeout=10)

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        assert client.llen("jobs") == 0 and client.llen("jobs:processing:w") == 0
        if cause == "dead-letter-push":
            (dead,) = [binding.reserve(e) for e in client.lrange("jobs.dlq", 0, -1)]
            assert orjson.loads(dead.body)["meta"]["id"] == env.meta.id
            assert runs == [env.meta.id, env.meta.id]  # at-least-once: run again once put back
        else:
            assert runs == [env.meta.id]


def test_a_settle_after_its_reservation_was_put_back_pushes_nothing(redis_url: str) -> None:
    # A worker taken for dead (its loop stalled past its heartbeat) had its reservation put
    # back by another: its own late settle must not push the message a second time.
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    runs: list[int] = []
    started, go_on = threading.Event(), threading.Event()
    router = Router(max_attempts=3)

    @router.on("urn:babel:jobs:job")
    def job(env: BabelEnvelope) -> None:
        runs.append(env.attempts)
        started.set()
        go_on.wait(10)
        raise RuntimeError("fails: a retry to republish")

    _push(redis_url, "jobs", env.to_json())

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(broker, "jobs", router, worker_id="w")
        async with broker, redis.asyncio.Redis.from_url(redis_url) as client:
            await broker.start()
            while not started.is_set():
                await asyncio.sleep(0.01)
            # As a sweep does, elsewhere here so that this worker does not take it again.
            await client.lmove("jobs:processing:w", "swept", "RIGHT", "LEFT")
            go_on.set()
            while runs and await client.llen("jobs:processing:w"):
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)  # a retry pushed would be taken and run by now

    try:
        asyncio.run(scenario())
    finally:
        go_on.set()
    assert runs == [0]
    with redis.Redis.from_url(redis_url) as client:
        assert client.lrange("swept", 0, -1) == [env.to_json()]
        assert client.llen("jobs") == 0 and client.llen("jobs:processing:w") == 0


TRACE = {
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tracestate": "vendor=opaque",
}


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        (
            BabelEnvelope.create("urn:babel:jobs:fails", {}, queue="jobs").to_json(),
            "handler.failed",
        ),
        (BabelEnvelope.create("urn:babel:jobs:nobody", {}, queue="jobs").to_json(), "urn.unknown"),
        (b"{not json", "json.invalid"),
    ],
    ids=["failed", "unknown-urn", "not-json"],
)
def test_a_dead_letter_keeps_the_trace_context_it_arrived_with(
    redis_url: str, body: bytes, rule: str
) -> None:
    router = Router(unknown_urn="dead_letter", max_attempts=1)
    router.register("urn:babel:jobs:fails", _failing)
    arrived = {**TRACE, "bq-replay-bypass": "1"}  # a replay's marker stays behind
    _push(redis_url, "jobs", binding.element(body, arrived))

    async def settled(client: redis.asyncio.Redis) -> bool:
        return bool(await client.llen("jobs.dlq"))

    _consume_until(redis_url, {"jobs": router}, settled)
    with redis.Redis.from_url(redis_url) as client:
        (dead,) = [binding.reserve(e) for e in client.lrange("jobs.dlq", 0, -1)]
    assert dead.headers == {**TRACE, RULES_HEADER: rule}


@pytest.mark.parametrize("max_workers", [1, 3])
def test_a_renewal_that_fails_once_keeps_the_worker_alive(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, max_workers: int
) -> None:
    # One renewal of a's heartbeat fails with an error nobody foresaw: the next ones must still
    # come, or b takes a's message for a dead worker's and runs it while a still does. Nor
    # does a's own take-back put back what a has in hand, over these five renewals.
    monkeypatch.setattr(_redis, "HEARTBEAT_SECONDS", 0.3)
    beat = _redis._beat
    failed: list[str] = []

    async def flaky_beat(client: Any, ours: Any) -> None:
        if ours.worker_id == "a" and not failed and started.is_set():
            failed.append(ours.worker_id)
            raise ValueError("a reply the client could not read")
        await beat(client, ours)

    monkeypatch.setattr(_redis, "_beat", flaky_beat)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    runs: list[str] = []
    started, done = asyncio.Event(), asyncio.Event()
    router = Router()

    @router.on("urn:babel:jobs:job")
    async def slow(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        started.set()
        await done.wait()

    async def scenario() -> None:
        first, second = RedisBroker(redis_url), RedisBroker(redis_url)
        babelqueue_subscriber(first, "jobs", router, worker_id="a", max_workers=max_workers)
        babelqueue_subscriber(second, "jobs", router, worker_id="b")
        async with first, second:
            await first.start()
            _push(redis_url, "jobs", env.to_json())
            await started.wait()
            await second.start()
            for _ in range(15):  # five heartbeats
                await asyncio.sleep(0.1)
            done.set()
            await _until(redis_url, lambda c: _empty(c, "jobs", "jobs:processing:a"))

    asyncio.run(scenario())
    assert failed == ["a"] and runs == [env.meta.id]


def test_the_heartbeat_ends_before_the_worker_stop_returns(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A renewal under way at the stop, its cancellation absorbed as redis-py absorbs one landing
    # in its calls: the stop waits for it, and no step of a renewal runs after the stop (it
    # would reach Redis through a client the broker's close had already passed).
    monkeypatch.setattr(_redis, "HEARTBEAT_SECONDS", 0.3)
    beat, sweep = _redis._beat, _redis._sweep
    under_way = asyncio.Event()
    steps: list[str] = []

    async def absorbing_beat(client: Any, ours: Any) -> None:
        await beat(client, ours)
        if len(steps) == 2:  # the first renewal after the start: the stop lands in it
            under_way.set()
            try:
                await asyncio.sleep(0.3)
            except asyncio.CancelledError:
                await asyncio.sleep(0.05)  # absorbed: the renewal goes on
        steps.append("beat")

    async def counted_sweep(client: Any, ours: Any) -> int:
        steps.append("sweep")
        return await sweep(client, ours)

    monkeypatch.setattr(_redis, "_beat", absorbing_beat)
    monkeypatch.setattr(_redis, "_sweep", counted_sweep)
    after_stop: list[list[str]] = []

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        babelqueue_subscriber(broker, "jobs", Router(), worker_id="w")
        async with broker:
            await broker.start()
            await under_way.wait()
        after_stop.append(list(steps))
        await asyncio.sleep(0.5)  # three renewal periods
        after_stop.append(list(steps))

    asyncio.run(scenario())
    # The start's beat and sweep, the renewal's beat (ended under the stop), nothing after.
    assert after_stop == [["beat", "sweep", "beat"], ["beat", "sweep", "beat"]]


def _forked_worker(url: str, name: str, broker: RedisBroker, consumer: Any) -> None:
    """A fork of the test process running the worker built before the fork, until ``stop``."""

    async def main() -> None:
        async with broker, redis.asyncio.Redis.from_url(url) as client:
            await broker.start()
            await client.hset("procs", name, str(consumer.processing))
            while not await client.exists("stop"):
                await asyncio.sleep(0.02)

    try:
        asyncio.run(main())
    finally:
        os._exit(0)


def test_forks_of_a_worker_built_before_the_fork_never_share_its_list(redis_url: str) -> None:
    # A server preloading the app builds the subscriber once and forks its workers: each must
    # reserve into a list of its own, or the second to start takes back what the first runs.
    router = Router()

    @router.on("urn:babel:jobs:job")
    def job(env: BabelEnvelope) -> None:
        with redis.Redis.from_url(redis_url) as client:
            client.hincrby("runs", env.meta.id, 1)
            client.set("started", 1)
            while not client.exists("go"):
                time.sleep(0.02)

    broker = RedisBroker(redis_url, logger=None)  # type: ignore[arg-type]
    consumer = babelqueue_subscriber(broker, "jobs", router)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    _push(redis_url, "jobs", env.to_json())
    fork = multiprocessing.get_context("fork")
    workers = [
        fork.Process(target=_forked_worker, args=(redis_url, name, broker, consumer))
        for name in ("a", "b")
    ]
    with redis.Redis.from_url(redis_url) as client:
        try:
            workers[0].start()
            _wait_for(lambda: client.exists("started"))
            workers[1].start()
            _wait_for(lambda: client.hlen("procs") == 2)
            time.sleep(0.5)  # b consuming meanwhile
            client.set("go", 1)
            _wait_for(lambda: not client.llen("jobs") and not _held(client))
        finally:
            client.set("stop", 1)
            for worker in workers:
                worker.join(10)
                if worker.is_alive():
                    worker.kill()
        procs = {k.decode(): v.decode() for k, v in client.hgetall("procs").items()}
        assert client.hgetall("runs") == {env.meta.id.encode(): b"1"}
    assert procs["a"] != procs["b"]
    assert all(p.startswith("jobs:processing:") for p in procs.values())


def _held(client: redis.Redis) -> int:
    return sum(client.llen(k) for k in client.scan_iter("jobs:processing:*"))


def _wait_for(condition: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.02)


def test_a_worker_stopping_keeps_its_heartbeat_while_its_handler_finishes(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A graceful stop waits for the handler under way, longer here than a heartbeat: the
    # heartbeat must go on meanwhile, or b takes the message for a dead worker's and runs it.
    monkeypatch.setattr(_redis, "HEARTBEAT_SECONDS", 0.3)
    env: BabelEnvelope = BabelEnvelope.create("urn:babel:jobs:job", {}, queue="jobs")
    runs: list[str] = []
    started = asyncio.Event()
    router = Router()

    @router.on("urn:babel:jobs:job")
    async def slow(env: BabelEnvelope) -> None:
        runs.append(env.meta.id)
        started.set()
        await asyncio.sleep(1.5)  # five heartbeats

    async def scenario() -> None:
        first, second = RedisBroker(redis_url, graceful_timeout=10), RedisBroker(redis_url)
        babelqueue_subscriber(first, "jobs", router, worker_id="a")
        babelqueue_subscriber(second, "jobs", router, worker_id="b")
        async with second:
            async with first:
                await first.start()
                _push(redis_url, "jobs", env.to_json())
                await started.wait()
                await second.start()
            # a stopped once its handler finished; b went on consuming all along.
            await asyncio.sleep(0.5)
            await _until(redis_url, lambda c: _empty(c, "jobs", "jobs:processing:a"))

    asyncio.run(scenario())
    assert runs == [env.meta.id]
