"""The idempotency guard with real envelopes, and the store contract."""

from __future__ import annotations

import threading

import pytest

from envelopekit.babelqueue import (
    BabelEnvelope,
    Done,
    InMemorySeenStore,
    Retry,
    Router,
    SeenStore,
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
