"""Consumer idempotency (ADR-0022): run a handler once per ``meta.id``, however often it arrives.

Post-success seen-set dedupe, not exactly-once delivery and not an in-flight lock:

* a message whose id was remembered is skipped (the worker acks it);
* otherwise the handler runs and the id is remembered only when it returns, so a raising
  handler leaves the id unmarked and retry / dead-lettering still apply;
* a message with no usable id (absent, not a string, or ``""``) cannot be deduped and always
  runs: the guard fails open rather than drop work it cannot identify.

The key is ``meta.id`` verbatim, never ``trace_id`` (which spans a whole causal chain).

A store that can also *claim* an id (:class:`ClaimingSeenStore`, such as a
:class:`~envelopekit.babelqueue.RedisSeenStore` with a lease) adds an in-flight claim on top: a
delivery whose id another worker is running right now is not run (effect ``held``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from .._arguments import implementing
from .._errors import SeenStoreUnavailable

__all__ = [
    "AsyncClaimingSeenStore",
    "AsyncIdempotent",
    "AsyncSeenStore",
    "ClaimingSeenStore",
    "Effect",
    "Idempotent",
    "InMemorySeenStore",
    "Lease",
    "SeenStore",
    "SeenStoreUnavailable",
    "async_idempotent",
    "idempotent",
    "message_id",
    "require_store",
]

M = TypeVar("M")

Effect = Literal["run", "skip", "held"]
"""What the guard did with one delivery: ran the handler, skipped a remembered id, or (only with
a claiming store) left alone an id another worker holds a claim on: do not ack it as done, put
it back (it is skipped or run once the claim ends)."""


@runtime_checkable
class SeenStore(Protocol):
    """The ids of messages already handled successfully (back it with Redis, SQL ... in a fleet)."""

    def seen(self, message_id: str) -> bool:
        """Whether ``message_id`` was remembered."""
        ...

    def remember(self, message_id: str) -> None:
        """Record ``message_id`` as handled."""
        ...

    def forget(self, message_id: str) -> None:
        """Evict ``message_id`` (a manual replay, or a backend's expiry), so it runs again."""
        ...


@dataclass(frozen=True, slots=True)
class Lease:
    """An in-flight claim on ``message_id``; ``token`` is ``None`` when the store takes none.

    ``renew_every`` (seconds) is set by a store that can renew the claim (``renew(lease)``): the
    guards then renew it at that period while the handler runs, so a live handler keeps its
    claim however long it takes, and only a dead worker's claim lapses.
    """

    message_id: str
    token: str | None
    renew_every: float | None = None

    def __post_init__(self) -> None:
        every = self.renew_every
        if every is None:
            return
        if isinstance(every, bool) or not isinstance(every, (int, float)):
            raise TypeError(f"renew_every must be a number of seconds, not {every!r}")
        # 0 or less (or NaN) would renew without pause, hammering the store; past the longest
        # wait a thread can make, the renewing thread raises and the claim lapses unnoticed.
        if not 0 < every <= threading.TIMEOUT_MAX:
            raise ValueError(
                f"renew_every must be above 0 and at most {threading.TIMEOUT_MAX} seconds, "
                f"not {every!r}"
            )


@runtime_checkable
class ClaimingSeenStore(SeenStore, Protocol):
    """A :class:`SeenStore` that can claim an id while its handler runs (a lease that lapses)."""

    def claim(self, message_id: str) -> Lease | Literal["seen", "held"]:
        """``"seen"``, ``"held"`` by another worker, or the :class:`Lease` now held."""
        ...

    def release(self, lease: Lease) -> None:
        """End ``lease`` without remembering the id (its handler failed)."""
        ...


@runtime_checkable
class AsyncSeenStore(Protocol):
    """The asyncio form of :class:`SeenStore`."""

    async def seen(self, message_id: str) -> bool:
        """Whether ``message_id`` was remembered."""
        ...

    async def remember(self, message_id: str) -> None:
        """Record ``message_id`` as handled."""
        ...

    async def forget(self, message_id: str) -> None:
        """Evict ``message_id``, so it runs again."""
        ...


@runtime_checkable
class AsyncClaimingSeenStore(AsyncSeenStore, Protocol):
    """The asyncio form of :class:`ClaimingSeenStore`."""

    async def claim(self, message_id: str) -> Lease | Literal["seen", "held"]:
        """``"seen"``, ``"held"`` by another worker, or the :class:`Lease` now held."""
        ...

    async def release(self, lease: Lease) -> None:
        """End ``lease`` without remembering the id (its handler failed)."""
        ...


def _renewal(store: object, lease: Lease | None) -> tuple[Callable[[], Any], float] | None:
    """One renewal of ``lease`` and its period, when the store can renew it."""
    renew = getattr(store, "renew", None)
    if lease is None or lease.token is None or lease.renew_every is None or renew is None:
        return None
    return functools.partial(renew, lease), lease.renew_every


def _kept(renewal: Callable[[], object]) -> bool:
    """Whether one renewal kept the claim; a store error counts as lost (it lapses by itself)."""
    try:
        return bool(renewal())
    except Exception:
        return False


@contextlib.contextmanager
def renewing(store: object, lease: Lease | None) -> Generator[None, None, None]:
    """Renew ``lease`` from a thread while the block runs (a sync handler), if it can be."""
    found = _renewal(store, lease)
    if found is None:
        yield
        return
    renew, every = found
    stop = threading.Event()

    def keep() -> None:
        while not stop.wait(every) and _kept(renew):
            pass

    keeper = threading.Thread(target=keep, name="envelopekit-lease", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join()


@contextlib.asynccontextmanager
async def async_renewing(
    store: object,
    lease: Lease | None,
    call: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None,
) -> AsyncGenerator[None, None]:
    """Renew ``lease`` from a task while the block runs (an async handler), if it can be.

    The store's ``renew`` may be sync or async. ``call`` runs one renewal (the FastStream
    consumers run a sync one in a worker thread); without it, a renewal runs on the loop.
    """
    found = _renewal(store, lease)
    if found is None:
        yield
        return
    renew, every = found
    # Cancelling the renewals is not enough to end them: a cancellation landing in a redis-py
    # call is absorbed there, and the renewals would go on, their end awaited for ever.
    done = asyncio.Event()

    async def keep() -> None:
        while not done.is_set():
            await asyncio.sleep(every)
            if done.is_set():
                return
            try:
                kept = renew() if call is None else await call(renew)
                if inspect.isawaitable(kept):
                    kept = await kept
            except Exception:  # the claim lapses by itself; the handler goes on
                return
            if not kept:
                return  # lost (lapsed and taken): nothing left to keep

    keeper = asyncio.ensure_future(keep())
    try:
        yield
    finally:
        done.set()
        keeper.cancel()
        # Waited for, not awaited: its cancellation is not raised here, a stop of this task is.
        await asyncio.wait({keeper})


class InMemorySeenStore:
    """A thread-safe, process-local :class:`SeenStore`: for tests and single-process workers.

    Unbounded and not shared between processes; a fleet needs a shared store with expiry.
    """

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def seen(self, message_id: str) -> bool:
        """Whether ``message_id`` was remembered."""
        with self._lock:
            return message_id in self._ids

    def remember(self, message_id: str) -> None:
        """Record ``message_id`` as handled."""
        with self._lock:
            self._ids.add(message_id)

    def forget(self, message_id: str) -> None:
        """Evict ``message_id``; a no-op when it is not there."""
        with self._lock:
            self._ids.discard(message_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)


def message_id(message: object) -> str | None:
    """The dedupe key of a message: its ``meta.id`` verbatim, or ``None`` when it has no usable one.

    Accepts a :class:`~envelopekit.babelqueue.BabelEnvelope` (any model with ``meta.id``) or a
    decoded JSON object (for messages kept raw, such as ones a strict decode refused).
    """
    meta: Any
    if isinstance(message, BaseModel):
        meta = getattr(message, "meta", None)
        found = getattr(meta, "id", None)
    elif isinstance(message, Mapping):
        meta = cast("Mapping[str, Any]", message).get("meta")
        found = cast("Mapping[str, Any]", meta).get("id") if isinstance(meta, Mapping) else None
    else:
        found = None
    return _usable(found)


def require_store(store: object, name: str) -> None:
    """Refuse what is no seen-store where it is given, not at each message it would fail.

    Raises:
        TypeError: ``store`` (the argument ``name``) has no ``seen`` and ``remember`` methods,
            or is a class (``InMemorySeenStore`` rather than ``InMemorySeenStore()``).
    """
    implementing(
        name,
        store,
        ("seen", "remember"),
        "a seen-store (SeenStore or AsyncSeenStore, such as InMemorySeenStore() or "
        "AsyncRedisSeenStore(client))",
    )


def _usable(found: object) -> str | None:
    """``found`` when it can key a message (a non-empty string), else ``None``: run, unkept."""
    return found if isinstance(found, str) and found else None


class Idempotent(Generic[M]):
    """A handler guarded by a :class:`SeenStore`; calling it returns the :data:`Effect`.

    Exceptions from the handler propagate unchanged, with the id left unmarked.
    """

    def __init__(
        self,
        store: SeenStore,
        handler: Callable[[M], object],
        *,
        key: Callable[[M], str | None] = message_id,
    ) -> None:
        require_store(store, "store")
        self.store = store
        self.handler = handler
        self.key = key
        self._claims = isinstance(store, ClaimingSeenStore)

    def __call__(self, message: M) -> Effect:
        """Run the handler unless the message's id was already handled (or is held).

        A ``key`` that gives no usable id (``None``, ``""``, not a string) runs the handler and
        remembers nothing, as for a message without ``meta.id``.
        """
        found = _usable(self.key(message))
        if found is None:
            self.handler(message)
            return "run"
        if self._claims:
            return self._claimed(message, found)
        if self.store.seen(found):
            return "skip"
        self.handler(message)
        # Only after success: a raise above leaves the id unmarked, so a redelivery runs again.
        self.store.remember(found)
        return "run"

    def _claimed(self, message: M, found: str) -> Effect:
        store: ClaimingSeenStore = self.store  # type: ignore[assignment]
        lease = store.claim(found)
        if lease == "seen":
            return "skip"
        if lease == "held":
            return "held"
        try:
            with renewing(store, lease):
                self.handler(message)
        except BaseException:
            # The claim lapses by itself: a failed release must not hide the handler's error.
            with contextlib.suppress(Exception):
                store.release(lease)
            raise
        store.remember(found)
        return "run"


class AsyncIdempotent(Generic[M]):
    """The asyncio form of :class:`Idempotent`: an async handler guarded by an async store."""

    def __init__(
        self,
        store: AsyncSeenStore,
        handler: Callable[[M], Awaitable[object]],
        *,
        key: Callable[[M], str | None] = message_id,
    ) -> None:
        require_store(store, "store")
        self.store = store
        self.handler = handler
        self.key = key
        self._claims = isinstance(store, AsyncClaimingSeenStore)

    async def __call__(self, message: M) -> Effect:
        """Run the handler unless the message's id was already handled (or is held).

        A ``key`` that gives no usable id runs the handler and remembers nothing.
        """
        found = _usable(self.key(message))
        if found is None:
            await self.handler(message)
            return "run"
        if not self._claims:
            if await self.store.seen(found):
                return "skip"
            await self.handler(message)
            await self.store.remember(found)
            return "run"
        store: AsyncClaimingSeenStore = self.store  # type: ignore[assignment]
        lease = await store.claim(found)
        if lease == "seen":
            return "skip"
        if lease == "held":
            return "held"
        try:
            async with async_renewing(store, lease):
                await self.handler(message)
        except BaseException:
            with contextlib.suppress(Exception):
                await store.release(lease)
            raise
        await store.remember(found)
        return "run"


def async_idempotent(
    store: AsyncSeenStore,
    handler: Callable[[M], Awaitable[object]],
    *,
    key: Callable[[M], str | None] = message_id,
) -> AsyncIdempotent[M]:
    """The asyncio form of :func:`idempotent`: ``await guarded(envelope)`` gives the effect."""
    return AsyncIdempotent(store, handler, key=key)


def idempotent(
    store: SeenStore,
    handler: Callable[[M], object],
    *,
    key: Callable[[M], str | None] = message_id,
) -> Idempotent[M]:
    """Wrap ``handler`` so each ``meta.id`` runs it at most once successfully.

    ```python
    from envelopekit.babelqueue import BabelEnvelope, InMemorySeenStore, idempotent

    handled = []
    seen = InMemorySeenStore()
    on_order = idempotent(seen, handled.append)   # on_order(envelope) -> "run" | "skip"
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1042})
    assert on_order(env) == "run" and on_order(env.retried()) == "skip"  # the same meta.id
    assert handled == [env]
    ```

    Args:
        store: the seen-set.
        handler: takes one message (usually a ``BabelEnvelope``); its return value is ignored.
        key: how to read the id; :func:`message_id` (``meta.id`` verbatim) by default.
    """
    return Idempotent(store, handler, key=key)
