"""The BabelQueue consumer on a real FastStream RedisBroker against the real server."""

from __future__ import annotations

import asyncio
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
from envelopekit.babelqueue import AsyncRedisSeenStore, BabelEnvelope, Router
from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import RULES_HEADER, BareFormat, babelqueue_subscriber


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
