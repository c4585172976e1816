"""One consumed destination on a FastStream broker, and how a message taken from it is settled.

Settling is the broker's: on RabbitMQ and Kafka a republish goes through ``broker.publish`` and
FastStream acknowledges when the handler returns; on Redis the reservation is removed from the
worker's processing list and the republish pushed in one ``MULTI`` (the push first, in one
script, so a push the server refuses removes nothing): neither a crash nor a target key of the
wrong type can lose the message or leave it both settled and in flight. A Redis delivery that
was not reserved (FastStream's in-memory ``TestRedisBroker`` calls the handler directly) is
republished through ``broker.publish``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Final, Literal

import anyio.to_thread
from faststream import StreamMessage

from ..babelqueue import BabelEnvelope, kafka, rabbitmq
from ..babelqueue._bindings import redis as redis_binding

# `._redis` is imported where a Redis endpoint needs it: it extends faststream.redis, which needs
# redis-py, and a consumer on RabbitMQ or Kafka has neither (faststream[rabbit], [kafka]).

__all__ = [
    "RULES_HEADER",
    "Broker",
    "Endpoint",
    "broker_kind",
    "call_store",
    "cancelled_by_handler",
    "in_thread",
    "maybe",
    "run_handler",
]

RULES_HEADER: Final = "x-envelopekit-rules"
"""The header naming the rule ids a dead-lettered or quarantined message was refused for."""

Broker = Literal["redis", "rabbit", "kafka"]
"""The FastStream brokers supported: Redis lists, RabbitMQ queues and Kafka topics."""


def broker_kind(broker: object) -> Broker:
    """Which of the supported FastStream brokers ``broker`` is.

    Raises:
        TypeError: for anything but a ``RedisBroker``, ``RabbitBroker`` or ``KafkaBroker``.
    """
    module = type(broker).__module__
    if module.startswith("faststream.redis."):
        return "redis"
    if module.startswith("faststream.rabbit."):
        return "rabbit"
    if module.startswith("faststream.kafka."):
        return "kafka"
    raise TypeError(
        f"a FastStream RedisBroker, RabbitBroker or KafkaBroker is needed, not {type(broker)!r}"
    )


async def maybe(value: object) -> Any:
    """``value``, awaited when it is awaitable (sync and async handlers and stores alike)."""
    return await value if inspect.isawaitable(value) else value


async def run_handler(handler: Callable[..., object], call: Callable[[], object]) -> Any:
    """``call()``, which calls ``handler``: on the loop when it is async, else in a thread.

    As FastStream runs a sync handler of its own (anyio's worker threads, the context
    variables copied): on the loop, a sync handler would block every other subscriber of the
    broker and the renewal of its seen-store claim for as long as it runs. Its exceptions
    propagate; what it returns is awaited when awaitable. A worker stopped meanwhile raises
    ``CancelledError`` at once; the thread runs on to its end, its result dropped, and the
    process exits only then (anyio's threads are joined at exit).
    """
    if _is_async(handler):
        if _TELLS_CANCELLING:
            return await maybe(call())
        return await _in_own_task(call)
    return await in_thread(call)


async def in_thread(call: Callable[[], object]) -> Any:
    """``call()`` in anyio's worker threads (the context variables copied), awaited if need be."""
    return await maybe(await anyio.to_thread.run_sync(call))


async def call_store(method: Callable[..., object], *args: Any) -> Any:
    """``method(*args)`` of a seen-store: on the loop when it is async, else in a thread.

    A sync store's network round trip on the loop would stall every subscriber of the broker
    and the renewal of the claims their handlers hold, as a sync handler would.
    """
    if _is_async(method):
        return await maybe(method(*args))
    return await in_thread(functools.partial(method, *args))


# Python 3.11's `Task.cancelling` tells a task being stopped from a handler raising
# `CancelledError` of its own (awaiting a task something else cancelled); 3.10 has no such count.
_TELLS_CANCELLING: Final = hasattr(asyncio.Task, "cancelling")
_CANCELLED_BY_HANDLER: Final[ContextVar[bool]] = ContextVar(
    "envelopekit_cancelled_by_handler", default=False
)


async def _in_own_task(call: Callable[[], object]) -> Any:
    """Python 3.10: ``call()`` awaited in a task of its own, which tells the two apart.

    A stop cancels this task, whose wait then raises: the handler's task is cancelled with it.
    A handler's own ``CancelledError`` ends its own task alone, and is noted for
    :func:`cancelled_by_handler`.
    """
    own = asyncio.ensure_future(maybe(call()))
    try:
        await asyncio.wait({own})
    except asyncio.CancelledError:
        own.cancel()
        raise
    if own.cancelled():
        _CANCELLED_BY_HANDLER.set(True)
    return own.result()


def cancelled_by_handler() -> bool:
    """Whether the ``CancelledError`` being handled was the handler's own, not a stop.

    Read once per error (the note is cleared). On 3.11 and later the task's own count tells;
    on 3.10, what :func:`run_handler` noted.
    """
    cancelling: Callable[[], int] | None = getattr(asyncio.current_task(), "cancelling", None)
    if cancelling is not None:
        return cancelling() == 0
    noted = _CANCELLED_BY_HANDLER.get()
    _CANCELLED_BY_HANDLER.set(False)
    return noted


def _is_async(handler: Callable[..., object]) -> bool:
    # As FastStream tells them apart: a coroutine function, or an object whose __call__ is one.
    if inspect.isclass(handler):
        return False
    dunder_call = getattr(handler, "__call__", None)  # noqa: B004
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(dunder_call)


class Endpoint:
    """The subscriber for ``source`` on ``broker``, and the settling of what it delivers."""

    def __init__(
        self,
        broker: Any,
        source: str,
        worker_id: str | None,
        subscriber_options: Mapping[str, Any],
    ) -> None:
        self.broker = broker
        self.kind = broker_kind(broker)
        self.source = source
        if self.kind == "redis":
            from ._redis import BareFormat, reliable

            self.subscriber = broker.subscriber(
                list=source, message_format=BareFormat, **subscriber_options
            )
            reliable(self.subscriber, source, worker_id or None)
        else:
            self.subscriber = broker.subscriber(source, **subscriber_options)

    @property
    def processing(self) -> str | None:
        """The key of this worker's processing list on Redis (``None`` on other brokers)."""
        if self.kind != "redis":
            return None
        from ._redis import processing_of

        return processing_of(self.subscriber)

    async def settle(
        self,
        message: StreamMessage[Any],
        target: str | None,
        body: bytes,
        headers: Mapping[str, str],
        envelope: BabelEnvelope[Any] | None = None,
        also: Callable[[Any], None] | None = None,
    ) -> None:
        """Acknowledge ``message``, first publishing ``body`` to ``target`` when there is one.

        ``envelope`` (a BabelQueue message) adds its binding's projection: the AMQP properties
        and ``x-*`` headers on RabbitMQ, the ``bq-*`` headers on Kafka. ``also`` (Redis only)
        queues more writes on the settling ``MULTI``.
        """
        if self.kind == "redis":
            await self._settle_redis(message, target, body, headers, also)
        elif target is None:
            return  # FastStream acknowledges when the handler returns
        elif self.kind == "rabbit":
            props: dict[str, Any] = dict(rabbitmq.project(envelope)) if envelope else {}
            merged = {**props.pop("headers", {}), **headers}
            await self.broker.publish(
                body,
                queue=target,
                headers=merged,
                # Persistent, as the official transport publishes every message (delivery mode
                # 2): a retry or dead letter must outlive a broker restart as the original did.
                persist=True,
                message_id=props.get("message_id"),
                correlation_id=props.get("correlation_id"),
                message_type=props.get("type"),
                content_type=props.get("content_type"),
            )
        else:
            projected = kafka.project(envelope)["headers"] if envelope else []
            merged = {name: value.decode() for name, value in projected}
            merged.update(headers)
            await self.broker.publish(body, topic=target, headers=merged)

    async def _settle_redis(
        self,
        message: StreamMessage[Any],
        target: str | None,
        body: bytes,
        headers: Mapping[str, str],
        also: Callable[[Any], None] | None,
    ) -> None:
        from ._redis import RESERVED_IN, TRANSFER

        raw = message.raw_message["data"]
        processing = message.raw_message.get(RESERVED_IN)
        if processing is None:
            # Delivered without a reservation (FastStream's in-memory TestRedisBroker calls
            # the handler directly): nothing to remove, the republish goes through FastStream.
            if target is not None:
                await self.broker.publish(body, list=target, headers=dict(headers) or None)
            return
        try:
            element = redis_binding.element(body, headers)
        except UnicodeDecodeError:  # a frame carries text: bytes that are not UTF-8 go bare
            element = body
        client = self.subscriber._client
        async with client.pipeline(transaction=True) as pipe:
            if target is None:
                pipe.lrem(processing, 1, raw)
            else:
                pipe.eval(TRANSFER, 2, processing, target, raw, element)
            if also is not None:
                also(pipe)
            await pipe.execute()

    def same_server(self, client: Any) -> bool:
        """Whether redis-py ``client`` talks to the server this Redis endpoint consumes from."""
        if self.kind != "redis":
            return False
        ours = self.subscriber._client.connection_pool.connection_kwargs
        theirs = client.connection_pool.connection_kwargs
        fields = ("host", "port", "db", "path")
        return all(ours.get(f) == theirs.get(f) for f in fields)
