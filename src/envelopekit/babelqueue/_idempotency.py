"""Consumer idempotency (ADR-0022): run a handler once per ``meta.id``, however often it arrives.

Post-success seen-set dedupe, not exactly-once delivery and not an in-flight lock:

* a message whose id was remembered is skipped (the worker acks it);
* otherwise the handler runs and the id is remembered only when it returns, so a raising
  handler leaves the id unmarked and retry / dead-lettering still apply;
* a message with no usable id (absent, not a string, or ``""``) cannot be deduped and always
  runs: the guard fails open rather than drop work it cannot identify.

The key is ``meta.id`` verbatim, never ``trace_id`` (which spans a whole causal chain).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

__all__ = ["Effect", "Idempotent", "InMemorySeenStore", "SeenStore", "idempotent", "message_id"]

M = TypeVar("M")

Effect = Literal["run", "skip"]
"""What the guard did with one delivery: ran the handler, or skipped a remembered id."""


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
        meta = message.get("meta")
        found = meta.get("id") if isinstance(meta, Mapping) else None
    else:
        found = None
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
        self.store = store
        self.handler = handler
        self.key = key

    def __call__(self, message: M) -> Effect:
        """Run the handler unless the message's id was already handled."""
        found = self.key(message)
        if found is None:
            self.handler(message)
            return "run"
        if self.store.seen(found):
            return "skip"
        self.handler(message)
        # Only after success: a raise above leaves the id unmarked, so a redelivery runs again.
        self.store.remember(found)
        return "run"


def idempotent(
    store: SeenStore,
    handler: Callable[[M], object],
    *,
    key: Callable[[M], str | None] = message_id,
) -> Idempotent[M]:
    """Wrap ``handler`` so each ``meta.id`` runs it at most once successfully.

    ```python
    seen = InMemorySeenStore()
    on_order = idempotent(seen, handle_order)   # on_order(envelope) -> "run" | "skip"
    ```

    Args:
        store: the seen-set.
        handler: takes one message (usually a ``BabelEnvelope``); its return value is ignored.
        key: how to read the id; :func:`message_id` (``meta.id`` verbatim) by default.
    """
    return Idempotent(store, handler, key=key)
