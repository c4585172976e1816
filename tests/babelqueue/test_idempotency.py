"""The idempotency guard with real envelopes, and the store contract."""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import pytest
import redis

from envelopekit.babelqueue import (
    BabelEnvelope,
    Done,
    Effect,
    InMemorySeenStore,
    Lease,
    Retry,
    Router,
    SeenStore,
    async_idempotent,
    idempotent,
    message_id,
)


def test_in_memory_store_is_a_seen_store() -> None:
    store = InMemorySeenStore()
    assert isinstance(store, SeenStore)
    assert not store.seen("a")
    store.remember("a")
    assert store.seen("a") and len(store) == 1
    store.forget("a")
    store.forget("never-there")
    assert not store.seen("a") and len(store) == 0


def test_a_retried_message_that_finally_succeeds_is_remembered_once() -> None:
    store = InMemorySeenStore()
    calls: list[int] = []

    def flaky(env: BabelEnvelope) -> None:
        calls.append(env.attempts)
        if env.attempts < 1:
            raise RuntimeError("first time fails")

    router = Router()
    router.register("urn:babel:orders:created", idempotent(store, flaky))
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    retry = router.dispatch(env)
    assert isinstance(retry, Retry) and not store.seen(env.meta.id)
    assert isinstance(router.dispatch(retry.envelope), Done)
    assert isinstance(router.dispatch(retry.envelope), Done)  # a redelivery: skipped
    assert calls == [0, 1]
    assert store.seen(env.meta.id) and len(store) == 1


def test_custom_key() -> None:
    store = InMemorySeenStore()
    ran: list[str] = []
    guarded = idempotent(store, ran.append, key=lambda s: s.split(":")[0] or None)
    assert [guarded("a:1"), guarded("a:2"), guarded(":3"), guarded(":3")] == [
        "run",
        "skip",
        "run",
        "run",
    ]
    assert ran == ["a:1", ":3", ":3"]


@pytest.mark.parametrize(
    "message",
    [{}, {"meta": None}, {"meta": {"id": 7}}, {"meta": {"id": ""}}, "not-a-message", None],
)
def test_no_usable_id(message: object) -> None:
    assert message_id(message) is None


def test_the_store_is_thread_safe() -> None:
    store = InMemorySeenStore()

    def work(offset: int) -> None:
        for i in range(500):
            store.remember(f"{offset}-{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) == 4000


class AsyncInMemorySeenStore:
    """:class:`InMemorySeenStore` behind the asyncio protocol."""

    def __init__(self) -> None:
        self.ids = InMemorySeenStore()

    async def seen(self, message_id: str) -> bool:
        return self.ids.seen(message_id)

    async def remember(self, message_id: str) -> None:
        self.ids.remember(message_id)

    async def forget(self, message_id: str) -> None:
        self.ids.forget(message_id)


@pytest.mark.parametrize("key", ["", 7, b"order-1", ("order", 1), ["order"]], ids=repr)
@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_key_that_gives_no_usable_id_runs_every_delivery(key: Any, form: str) -> None:
    """As for a message without ``meta.id``: run, and remember nothing (spec: fail open)."""
    ran: list[BabelEnvelope] = []
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
    if form == "sync":
        store = InMemorySeenStore()
        guarded = idempotent(store, ran.append, key=lambda _: key)
        effects = [guarded(env), guarded(env)]
    else:
        async_store = AsyncInMemorySeenStore()
        store = async_store.ids

        async def handle(message: BabelEnvelope) -> None:
            ran.append(message)

        guarded_async = async_idempotent(async_store, handle, key=lambda _: key)

        async def twice() -> list[Effect]:
            return [await guarded_async(env), await guarded_async(env)]

        effects = asyncio.run(twice())
    assert effects == ["run", "run"] and ran == [env, env] and len(store) == 0


@pytest.mark.parametrize(
    "every", [0, -1.0, math.nan, math.inf, threading.TIMEOUT_MAX * 2], ids=repr
)
def test_a_lease_renewed_without_pause_or_past_any_wait_is_refused(every: float) -> None:
    with pytest.raises(ValueError, match="renew_every"):
        Lease("id", "token", every)


@pytest.mark.parametrize("every", ["5", True, b"5"], ids=repr)
def test_a_lease_renewed_every_non_number_is_refused(every: Any) -> None:
    with pytest.raises(TypeError, match="renew_every"):
        Lease("id", "token", every)


@pytest.mark.parametrize("every", [None, 0.001, 30, threading.TIMEOUT_MAX], ids=repr)
def test_a_lease_renewal_period_within_bounds_is_kept(every: float | None) -> None:
    assert Lease("id", "token", every).renew_every == every


@pytest.mark.parametrize("guard", [idempotent, async_idempotent], ids=["sync", "async"])
@pytest.mark.parametrize(
    "store",
    [redis.Redis(), "redis://127.0.0.1:6379/0", InMemorySeenStore, None],
    ids=["a-redis-client", "a-url", "the-store-class", "none"],
)
def test_what_is_no_seen_store_is_refused_when_the_guard_is_built(guard: Any, store: Any) -> None:
    # Not at each message, where the Router would retry, then dead-letter, every one of them.
    with pytest.raises(TypeError, match=r"^store must be a seen-store \(SeenStore or "):
        guard(store, lambda env: None)
