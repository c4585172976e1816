"""RedisSeenStore and its asyncio twin against the real server: ADR-0022, leases, outages."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
import redis.asyncio
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry as SyncRetry

from envelopekit.babelqueue import (
    AsyncClaimingSeenStore,
    AsyncRedisSeenStore,
    BabelEnvelope,
    ClaimingSeenStore,
    Done,
    Lease,
    RedisSeenStore,
    Retry,
    Router,
    SeenStore,
    SeenStoreUnavailable,
    async_idempotent,
    idempotent,
)


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_url) as found:
        yield found


def _envelope(order_id: int = 1) -> BabelEnvelope:
    return BabelEnvelope.create("urn:babel:orders:created", {"order_id": order_id}, queue="orders")


def _dead_client() -> redis.Redis:
    import socket

    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # No retries: redis-py's default backoff only slows the test down.
    return redis.Redis(host="127.0.0.1", port=port, retry=SyncRetry(NoBackoff(), 0))


def test_it_is_a_claiming_seen_store(client: redis.Redis) -> None:
    store = RedisSeenStore(client)
    assert isinstance(store, SeenStore)
    assert isinstance(store, ClaimingSeenStore)
    assert isinstance(AsyncRedisSeenStore(redis.asyncio.Redis()), AsyncClaimingSeenStore)


def test_keys_carry_the_prefix_and_the_expiry(client: redis.Redis) -> None:
    store = RedisSeenStore(client, prefix="shop:", ttl=timedelta(hours=1))
    assert not store.seen("f1e2")
    store.remember("f1e2")
    assert store.seen("f1e2")
    assert client.keys("*") == [b"shop:seen:f1e2"]
    assert 3_590_000 < client.pttl("shop:seen:f1e2") <= 3_600_000
    store.forget("f1e2")
    assert not store.seen("f1e2") and client.keys("*") == []
    RedisSeenStore(client, ttl=None).remember("forever")
    assert client.pttl("envelopekit:idempotency:seen:forever") == -1


@pytest.mark.parametrize("setting", ["ttl", "lease"])
@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("inf"), ValueError),
        (float("-inf"), ValueError),
        (float("nan"), ValueError),
        (1e16, ValueError),  # seconds past what the server takes: every remember would fail
        (10**30, ValueError),
        (timedelta(0), ValueError),
        (0.0004, ValueError),
        (True, TypeError),
        ("10", TypeError),
    ],
    ids=["inf", "-inf", "nan", "1e16-s", "10e30-s", "zero", "0.4-ms", "bool", "str"],
)
def test_an_expiry_the_server_cannot_keep_is_refused_at_once(
    client: redis.Redis, setting: str, value: object, error: type[Exception]
) -> None:
    with pytest.raises(error, match=setting):
        RedisSeenStore(client, **{setting: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("setting", ["ttl", "lease"])
def test_the_longest_expiry_a_timedelta_holds_is_kept(client: redis.Redis, setting: str) -> None:
    store = RedisSeenStore(client, **{setting: timedelta.max})  # type: ignore[arg-type]
    env = _envelope()
    ran: list[BabelEnvelope] = []
    assert idempotent(store, ran.append)(env) == "run"
    assert store.seen(env.meta.id) and ran == [env]


def test_an_expired_id_runs_again(client: redis.Redis) -> None:
    ran: list[str] = []
    guarded = idempotent(RedisSeenStore(client, ttl=0.05), ran.append, key=lambda s: s)
    assert guarded("a") == "run" and guarded("a") == "skip"
    time.sleep(0.15)
    assert guarded("a") == "run" and ran == ["a", "a"]


@pytest.mark.parametrize("lease", [None, 5.0], ids=["no-lease", "lease"])
def test_adr_0022_sequences(client: redis.Redis, lease: float | None) -> None:
    store = RedisSeenStore(client, lease=lease)
    ran: list[str] = []

    def handler(env: BabelEnvelope) -> None:
        ran.append(env.meta.id)
        if env.data.get("fail"):
            raise RuntimeError("boom")

    guarded = idempotent(store, handler)
    env = _envelope()
    assert [guarded(env), guarded(env), guarded(env)] == ["run", "skip", "skip"]
    failing = BabelEnvelope.create("urn:babel:x:y", {"fail": True}, queue="q")
    for _ in range(3):  # a throw leaves the id unmarked (and any claim released)
        with pytest.raises(RuntimeError):
            guarded(failing)
    assert not store.seen(failing.meta.id)
    assert client.keys("*claim*") == []
    no_id = env.model_copy(update={"meta": env.meta.model_copy(update={"id": ""})})
    assert [guarded(no_id), guarded(no_id)] == ["run", "run"]  # fails open
    store.forget(env.meta.id)
    assert guarded(env) == "run"
    assert ran.count(env.meta.id) == 2 and ran.count(failing.meta.id) == 3


def test_the_seen_set_is_shared_across_processes(client: redis.Redis, redis_url: str) -> None:
    env = _envelope()
    script = (
        "import sys, redis\n"
        "from envelopekit.babelqueue import BabelEnvelope, RedisSeenStore, idempotent\n"
        "env = BabelEnvelope.model_validate_json(sys.argv[2])\n"
        "guard = idempotent(RedisSeenStore(redis.Redis.from_url(sys.argv[1])), lambda e: None)\n"
        "print(guard(env))\n"
    )
    run = [sys.executable, "-c", script, redis_url, env.to_json().decode()]
    first = subprocess.run(run, capture_output=True, text=True, check=True, timeout=60)
    assert first.stdout.strip() == "run"
    ran: list[object] = []
    assert idempotent(RedisSeenStore(client), ran.append)(env) == "skip" and ran == []
    second = subprocess.run(run, capture_output=True, text=True, check=True, timeout=60)
    assert second.stdout.strip() == "skip"


def test_two_workers_handed_the_same_message_at_once_run_it_once(client: redis.Redis) -> None:
    env = _envelope()
    started, finish = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(e: BabelEnvelope) -> None:
        ran.append(e.meta.id)
        started.set()
        finish.wait(5)

    first = idempotent(RedisSeenStore(client, lease=10), slow)
    with redis.Redis(connection_pool=client.connection_pool) as other_client:
        second = idempotent(RedisSeenStore(other_client, lease=10), slow)
        effects: list[str] = []
        worker = threading.Thread(target=lambda: effects.append(first(env)))
        worker.start()
        assert started.wait(5)
        assert second(env) == "held"  # another worker runs it right now
        finish.set()
        worker.join(5)
        assert effects == ["run"]
        assert second(env) == "skip"
    assert ran == [env.meta.id]


def test_a_worker_killed_mid_handle_leaves_it_runnable_after_the_lease(
    client: redis.Redis, redis_url: str
) -> None:
    env = _envelope()
    script = (
        "import sys, time, redis\n"
        "from envelopekit.babelqueue import BabelEnvelope, RedisSeenStore, idempotent\n"
        "env = BabelEnvelope.model_validate_json(sys.argv[2])\n"
        "store = RedisSeenStore(redis.Redis.from_url(sys.argv[1]), lease=0.5)\n"
        "def hang(e):\n"
        "    print('handling', flush=True)\n"
        "    time.sleep(60)\n"
        "idempotent(store, hang)(env)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, redis_url, env.to_json().decode()],
        stdout=subprocess.PIPE,
        text=True,
    ) as worker:
        try:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "handling"
        finally:
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(10)
    ran: list[object] = []
    guarded = idempotent(RedisSeenStore(client, lease=0.5), ran.append)
    assert guarded(env) == "held"  # its claim outlives it, for the lease only
    deadline = time.monotonic() + 5
    while guarded(env) == "held" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ran == [env] and RedisSeenStore(client).seen(env.meta.id)


def test_a_lapsed_lease_taken_by_another_is_not_released_by_the_first(
    client: redis.Redis,
) -> None:
    store = RedisSeenStore(client, lease=0.05)
    first = store.claim("m")
    assert isinstance(first, Lease) and first.token is not None
    time.sleep(0.1)
    second = store.claim("m")
    assert isinstance(second, Lease) and second.token != first.token
    store.release(first)  # late: must not end the second worker's claim
    assert store.claim("m") == "held"
    store.release(second)
    assert isinstance(store.claim("m"), Lease)


def test_a_claim_is_renewed_only_by_its_holder(client: redis.Redis) -> None:
    store = RedisSeenStore(client, lease=0.3)
    first = store.claim("m")
    assert isinstance(first, Lease) and first.renew_every == pytest.approx(0.1)
    client.pexpire("envelopekit:idempotency:claim:m", 50)
    assert store.renew(first)  # back to the whole lease
    assert 250 < client.pttl("envelopekit:idempotency:claim:m") <= 300
    time.sleep(0.35)
    second = store.claim("m")  # lapsed: taken by another
    assert isinstance(second, Lease)
    assert not store.renew(first)  # the first holder cannot take it back
    assert store.claim("m") == "held"
    assert RedisSeenStore(client).claim("n") == Lease("n", None)  # no lease: nothing to renew
    assert not store.renew(Lease("n", None))


def test_a_live_handler_keeps_its_claim_past_the_lease(client: redis.Redis) -> None:
    """The lease bounds how long a dead worker's message waits, not how long a handler runs."""
    env = _envelope()
    started, finish = threading.Event(), threading.Event()

    def slow(e: BabelEnvelope) -> None:
        started.set()
        finish.wait(10)

    first = idempotent(RedisSeenStore(client, lease=0.6), slow)
    second = idempotent(RedisSeenStore(client, lease=0.6), _boom)
    effects: list[str] = []
    worker = threading.Thread(target=lambda: effects.append(first(env)))
    worker.start()
    try:
        assert started.wait(5)
        for _ in range(4):  # 1.6 s in all: more than twice the lease
            time.sleep(0.4)
            assert second(env) == "held"
    finally:
        finish.set()
        worker.join(5)
    assert effects == ["run"] and second(env) == "skip"
    assert list(client.scan_iter("*claim*")) == []  # no keeper outlives the handler


def test_async_handler_keeps_its_claim_past_the_lease(redis_url: str) -> None:
    async def scenario() -> list[str]:
        async with redis.asyncio.Redis.from_url(redis_url) as aclient:
            env = _envelope()

            async def slow(e: BabelEnvelope) -> None:
                await asyncio.sleep(1.6)  # more than twice the lease

            async def other(e: BabelEnvelope) -> None:
                raise AssertionError("must not run while the first holds it")

            first = async_idempotent(AsyncRedisSeenStore(aclient, lease=0.6), slow)
            second = async_idempotent(AsyncRedisSeenStore(aclient, lease=0.6), other)
            running = asyncio.ensure_future(first(env))
            effects: list[str] = []
            for _ in range(3):
                await asyncio.sleep(0.45)
                effects.append(await second(env))
            effects.append(await running)
            effects.append(await second(env))
            return effects

    assert asyncio.run(scenario()) == ["held", "held", "held", "run", "skip"]


def test_unreachable_redis_is_a_clear_error_and_nothing_is_run_or_marked() -> None:
    ran: list[object] = []
    for lease in (None, 5.0):
        guarded = idempotent(RedisSeenStore(_dead_client(), lease=lease), ran.append)
        with pytest.raises(SeenStoreUnavailable, match="was not run") as caught:
            guarded(_envelope())
        assert isinstance(caught.value, ConnectionError)
        assert caught.value.operation == "claim"  # one script: seen check and claim together
    store = RedisSeenStore(_dead_client())
    for operation in ("seen", "remember", "forget"):
        with pytest.raises(SeenStoreUnavailable) as caught:
            getattr(store, operation)("m")
        assert caught.value.operation == operation and caught.value.message_id == "m"
    assert ran == []


def test_router_does_not_settle_a_message_whose_store_is_unreachable(
    client: redis.Redis,
) -> None:
    router = Router()
    ran: list[object] = []
    router.register(
        "urn:babel:orders:created", idempotent(RedisSeenStore(_dead_client()), ran.append)
    )
    with pytest.raises(SeenStoreUnavailable):
        router.dispatch(_envelope(), queue="orders")  # not a Retry: the worker must not ack
    assert ran == []
    # While a handler's own failure still retries.
    failing = Router()
    failing.register("urn:babel:orders:created", idempotent(RedisSeenStore(client), _boom))
    assert isinstance(failing.dispatch(_envelope(), queue="orders"), Retry)


def _boom(env: BabelEnvelope) -> None:
    raise RuntimeError("handler failed")


def test_a_remember_that_fails_after_the_handler_ran_says_so(client: redis.Redis) -> None:
    store = RedisSeenStore(client)
    ran: list[object] = []

    def handler_then_outage(env: BabelEnvelope) -> None:
        ran.append(env)
        store.client = _dead_client()  # Redis goes away while the handler runs

    with pytest.raises(SeenStoreUnavailable, match="ran but its id was not marked"):
        idempotent(store, handler_then_outage)(_envelope())
    assert len(ran) == 1 and client.keys("*") == []


def test_router_with_the_redis_store_completes_a_retried_message_once(
    client: redis.Redis,
) -> None:
    calls: list[int] = []

    def flaky(env: BabelEnvelope) -> None:
        calls.append(env.attempts)
        if env.attempts < 1:
            raise RuntimeError("first time fails")

    router = Router()
    router.register("urn:babel:orders:created", idempotent(RedisSeenStore(client, lease=5), flaky))
    retry = router.dispatch(_envelope(), queue="orders")
    assert isinstance(retry, Retry)
    assert isinstance(router.dispatch(retry.envelope), Done)
    assert isinstance(router.dispatch(retry.envelope), Done)
    assert calls == [0, 1]


def test_async_twin_shares_the_keys_and_claims(redis_url: str, client: redis.Redis) -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        async with redis.asyncio.Redis.from_url(redis_url) as aclient:
            store = AsyncRedisSeenStore(aclient, lease=10)
            ran: list[str] = []

            async def slow(env: BabelEnvelope) -> None:
                ran.append(env.meta.id)
                await asyncio.sleep(0.2)

            guarded = async_idempotent(store, slow)
            env = _envelope()
            effects = list(await asyncio.gather(guarded(env), guarded(env)))
            effects.append(await guarded(env))
            assert RedisSeenStore(client).seen(env.meta.id)  # one seen-set, sync or async
            await store.forget(env.meta.id)
            assert not await store.seen(env.meta.id)
            await store.remember("x")
            assert RedisSeenStore(client).seen("x")
            return sorted(effects), ran

    effects, ran = asyncio.run(scenario())
    assert effects == ["held", "run", "skip"] and len(ran) == 1


def test_async_twin_unreachable_and_failing_handler(client: redis.Redis) -> None:
    async def scenario() -> None:
        dead = redis.asyncio.Redis(host="127.0.0.1", port=1, retry=AsyncRetry(NoBackoff(), 0))
        with pytest.raises(SeenStoreUnavailable):
            await async_idempotent(AsyncRedisSeenStore(dead), _aboom)(_envelope())
        await dead.aclose()

    asyncio.run(scenario())


async def _aboom(env: BabelEnvelope) -> None:
    raise AssertionError("must not run")


def test_an_async_handler_s_claim_renewal_always_ends_with_it(redis_url: str) -> None:
    # Renewals every millisecond (a 3 ms lease), so the handler's end often comes while one is
    # on the wire: redis-py absorbs a cancellation landing there, and the guard must still end
    # its renewals and return, not wait on them for ever.
    async def scenario() -> int:
        ended = 0
        async with redis.asyncio.Redis.from_url(redis_url) as aclient:
            store = AsyncRedisSeenStore(aclient, prefix="r:", lease=0.003)

            async def handler(env: BabelEnvelope) -> None:
                await asyncio.sleep(0.004)

            guarded = async_idempotent(store, handler)
            for n in range(40):
                env = BabelEnvelope.create("urn:babel:jobs:job", {"n": n})
                run = asyncio.ensure_future(guarded(env))
                done, _ = await asyncio.wait({run}, timeout=2)
                if not done:
                    run.cancel()
                    break
                ended += 1
        return ended

    assert asyncio.run(scenario()) == 40


@pytest.mark.parametrize(
    ("store", "client"),
    [
        (RedisSeenStore, "redis://127.0.0.1:6379/0"),
        (AsyncRedisSeenStore, "redis://127.0.0.1:6379/0"),
        (RedisSeenStore, None),
    ],
    ids=["sync-a-url", "async-a-url", "sync-none"],
)
def test_a_store_given_no_redis_client_says_what_it_takes(store: Any, client: Any) -> None:
    refused = r"^client must be a redis-py client \(redis\.(asyncio\.)?Redis, such as .*from_url"
    with pytest.raises(TypeError, match=refused):
        store(client)
