"""A BabelQueue consumer on a FastStream broker: Router's decisions acted on, never raised.

The subscriber takes the raw message, lets :class:`~envelopekit.babelqueue.Router` decide, runs
the handler with its typed envelope (an async one on the event loop, a sync one in a worker
thread, as FastStream runs its own), and settles the outcome on the broker:

* done, deleted, or skipped as already seen: acknowledged;
* retry: the envelope republished to the queue with ``attempts + 1``, then acknowledged;
* dead letter: the envelope with its ``dead_letter`` block to the dead-letter queue
  (``<queue>.dlq`` unless given), the rule id in the :data:`RULES_HEADER` header;
* not a v1 envelope (bad JSON, wrong ``schema_version``): its bytes as received to the DLQ, the
  rule ids in the header;
* a retry, a release and a dead letter keep the W3C ``traceparent`` and ``tracestate`` headers
  the message arrived with (ADR-0028), so the next hop continues its trace;
* released (unknown URN with ``release``, or another worker holds the id's claim): the message
  republished as received, after the Router's ``unknown_urn_release_delay`` (0 s by default),
  or :data:`HELD_BACKOFF` for a held claim; the delivery is held meanwhile (one of the
  subscriber's ``max_workers``): a worker stopped in the wait leaves it reserved (Redis) or
  unacknowledged.

A refusal never raises into the broker loop. The one exception that does is
:class:`~envelopekit.babelqueue.SeenStoreUnavailable`: the message is then not acknowledged
(RabbitMQ and Kafka: nacked; Redis: it stays in the worker's processing list, which the worker
puts back on the queue a heartbeat renewal or two later).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final, Literal, cast

from faststream import Context, StreamMessage
from faststream.exceptions import NackMessage

from .. import rules
from ..babelqueue import (
    AsyncSeenStore,
    DeadLetterDecision,
    Delete,
    Done,
    Fail,
    Handle,
    Lease,
    Outcome,
    Reject,
    Release,
    Retry,
    Router,
    SeenStore,
    SeenStoreUnavailable,
    kafka,
    message_id,
    rabbitmq,
    replay_scope,
)
from ..babelqueue._bindings import redis as redis_binding
from ..babelqueue._idempotency import async_renewing, require_store
from ..babelqueue._replay import REPLAY_BYPASS_HEADER
from ..babelqueue._traceparent import TRACEPARENT, TRACESTATE
from ._endpoint import (
    RULES_HEADER,
    Endpoint,
    call_store,
    cancelled_by_handler,
    run_handler,
)

__all__ = ["HELD_BACKOFF", "BabelQueueConsumer", "babelqueue_subscriber"]

HELD_BACKOFF: Final = 0.25
"""Seconds a delivery whose ``meta.id`` another worker holds the claim on waits to be put back."""


class BabelQueueConsumer:
    """Consumes one queue (a Redis list, a RabbitMQ queue or a Kafka topic) through a Router.

    Build it with :func:`babelqueue_subscriber`. Attributes: ``queue``, ``dead_letter_queue``,
    ``subscriber`` (the FastStream subscriber) and, on Redis, ``processing`` (the key of this
    worker's reservation list).
    """

    def __init__(
        self,
        broker: Any,
        queue: str,
        router: Router,
        *,
        seen: SeenStore | AsyncSeenStore | None = None,
        worker_id: str | None = None,
        dead_letter_queue: str | None = None,
        **subscriber_options: Any,
    ) -> None:
        self.broker = broker
        self.queue = queue
        self.router = router
        if not isinstance(router, Router):
            raise TypeError(
                "router must be a babelqueue Router, the handlers registered on it "
                f"(router.register(urn, handler)), not {type(router).__name__}"
            )
        if seen is not None:
            require_store(seen, "seen")  # here, not in the broker's loop at each delivery
        self.seen = seen
        self.dead_letter_queue = dead_letter_queue or queue + router.dlq_suffix
        self.endpoint = Endpoint(broker, queue, worker_id, subscriber_options)
        self.subscriber = subscriber = self.endpoint.subscriber
        self._on_ack: bool | None = None  # known once the broker is connected

        async def consume(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
            await self.handle(message)

        consume.__name__ = f"babelqueue_{queue}"
        subscriber(consume)

    @property
    def processing(self) -> str | None:
        """On Redis, the key of this worker's reservation list; ``None`` on other brokers."""
        return self.endpoint.processing

    async def handle(self, message: StreamMessage[Any]) -> Outcome:
        """Decide, run and settle one message; returns what was done with it."""
        body = bytes(message.body)
        headers: Mapping[str, Any] = message.headers
        try:
            outcome, remember = await self._outcome(body, headers)
            if isinstance(outcome, DeadLetterDecision) and outcome.queue != self.dead_letter_queue:
                # The consumer's dead-letter queue: the Router's `<queue><suffix>` unless one
                # was given, where it is settled and what the outcome says.
                outcome = replace(outcome, queue=self.dead_letter_queue)
            await self._settle(outcome, message, body, headers, remember)
        except SeenStoreUnavailable:
            if self.endpoint.kind == "redis":
                raise  # it stays reserved; this worker takes it back at a renewal or two
            raise NackMessage() from None
        return outcome

    async def _outcome(self, body: bytes, headers: Mapping[str, Any]) -> tuple[Outcome, str | None]:
        """The outcome, and the id to remember when it is acknowledged (after a success)."""
        if self.endpoint.kind == "kafka" and (refused := kafka.gate(headers)) is not None:
            return Reject(body, [refused]), None
        reconcile: Callable[[Any], Any] | None = None
        if self.endpoint.kind == "kafka":

            def reconcile_kafka(env: Any) -> Any:
                return kafka.reconcile(env, headers)

            reconcile = reconcile_kafka

        decision = self.router.route(
            body, queue=self.queue, reconcile=reconcile, replay=self._replay(body, headers)
        )
        if isinstance(decision, Fail):
            return decision.settle(), None
        if not isinstance(decision, Handle):
            return decision, None
        lease: Lease | None = None
        found = message_id(decision.received) if self.seen is not None else None
        if found is not None:
            claimed = await self._claim(found)
            if claimed == "seen":
                return Done(decision.envelope), None
            if claimed == "held":
                # Put back after a pause: a worker alone with a duplicate would otherwise
                # take it, find the claim held and put it back as fast as Redis answers.
                held = Release(decision.received, rules.IDEMPOTENCY_HELD, body, HELD_BACKOFF)
                return held, None
            lease = claimed
        try:
            # The claim is renewed while the handler runs (a sync one in a thread, the loop
            # free to renew): only a dead worker's lapses.
            with replay_scope(decision.replay):  # also around an async handler's await
                async with async_renewing(self.seen, lease, call_store):
                    await run_handler(decision.handler, decision.run)
        except SeenStoreUnavailable:
            raise
        except (Exception, asyncio.CancelledError) as exc:  # any handler failure is retried
            if isinstance(exc, asyncio.CancelledError) and not cancelled_by_handler():
                raise  # the worker stops: the message stays reserved (Redis) or unacknowledged
            if lease is not None and lease.token is not None:
                with contextlib.suppress(Exception):  # the lease lapses by itself
                    await call_store(self.seen.release, lease)  # type: ignore[union-attr]
            return decision.failed(exc).settle(), None
        if found is not None and not self._remember_on_ack():
            await call_store(self.seen.remember, found)  # type: ignore[union-attr]
            found = None
        return Done(decision.envelope), found

    def _replay(self, body: bytes, headers: Mapping[str, Any]) -> bool:
        """Whether the delivery carries ``bq-replay-bypass`` (a replaying redrive, ADR-0027)."""
        kind = self.endpoint.kind
        if kind == "kafka":
            return kafka.is_replay(headers)
        if kind == "rabbit":
            return rabbitmq.is_replay(headers)
        return redis_binding.is_replay(redis_binding.Reserved(body, dict(headers)))

    def _remember_on_ack(self) -> bool:
        # On Redis, a seen-store on the same server remembers in the acknowledging MULTI.
        if self._on_ack is None:
            client = getattr(self.seen, "client", None)
            self._on_ack = bool(
                hasattr(self.seen, "remember_on")
                and client is not None
                and self.endpoint.same_server(client)
            )
        return self._on_ack

    async def _claim(self, found: str) -> Lease | Literal["seen", "held"]:
        store: Any = self.seen
        if hasattr(store, "claim"):
            return cast("Lease | Literal['seen', 'held']", await call_store(store.claim, found))
        if await call_store(store.seen, found):
            return "seen"
        return Lease(found, None)

    async def _settle(
        self,
        outcome: Outcome,
        message: StreamMessage[Any],
        body: bytes,
        headers: Mapping[str, Any],
        remember: str | None,
    ) -> None:
        if isinstance(outcome, (Done, Delete)):
            also: Callable[[Any], None] | None = None
            if remember is not None:
                store: Any = self.seen

                def remember_in(pipe: Any) -> None:
                    store.remember_on(pipe, remember)

                also = remember_in

            await self.endpoint.settle(message, None, b"", {}, also=also)
        elif isinstance(outcome, Release):
            if outcome.delay:
                # Held, not yet put back: a stop meanwhile leaves it reserved or unacknowledged.
                await asyncio.sleep(outcome.delay)
            await self.endpoint.settle(
                message, self.queue, body, _carried(headers), outcome.envelope
            )
        elif isinstance(outcome, Retry):
            await self.endpoint.settle(
                message, self.queue, outcome.envelope.to_json(), _carried(headers), outcome.envelope
            )
        elif isinstance(outcome, DeadLetterDecision):
            await self.endpoint.settle(
                message,
                outcome.queue,
                outcome.envelope.to_json(),
                {**_carried(headers, _TRACE), RULES_HEADER: outcome.rule},
                outcome.envelope,
            )
        else:
            rule_ids = ",".join(sorted({v.rule for v in outcome.violations}))
            await self.endpoint.settle(
                message,
                self.dead_letter_queue,
                outcome.raw,
                {**_carried(headers, _TRACE), RULES_HEADER: rule_ids},
            )


# Out-of-band headers the message keeps on its way on: the W3C trace context (ADR-0028) on a
# retry, a release and a dead letter, so every hop continues the producer's span; a replay's
# marker on a retry and a release only (a redrive out of the DLQ decides anew whether it
# replays). The transport's own and FastStream's are rebuilt, not copied.
_TRACE: Final = (TRACEPARENT, TRACESTATE)
_REDELIVERED: Final = (*_TRACE, REPLAY_BYPASS_HEADER)


def _carried(headers: Mapping[str, Any], names: tuple[str, ...] = _REDELIVERED) -> dict[str, str]:
    return {k: v for k, v in headers.items() if isinstance(v, str) and k in names}


def babelqueue_subscriber(
    broker: Any,
    queue: str,
    router: Router,
    *,
    seen: SeenStore | AsyncSeenStore | None = None,
    worker_id: str | None = None,
    dead_letter_queue: str | None = None,
    **subscriber_options: Any,
) -> BabelQueueConsumer:
    """Declare a subscriber on ``broker`` that consumes ``queue`` through ``router``.

    ```python
    import redis.asyncio
    from faststream.redis import RedisBroker
    from envelopekit.babelqueue import AsyncRedisSeenStore, Router
    from envelopekit.faststream import babelqueue_subscriber

    url = "redis://127.0.0.1:6379"
    broker, client, router = RedisBroker(url), redis.asyncio.Redis.from_url(url), Router()
    consumer = babelqueue_subscriber(
        broker, "orders", router, seen=AsyncRedisSeenStore(client, lease=30)
    )
    assert consumer.router is router
    ```

    Args:
        broker: a FastStream ``RedisBroker`` (a list), ``RabbitBroker`` (a queue) or
            ``KafkaBroker`` (a topic).
        queue: what to consume; the DLQ is ``queue + router.dlq_suffix`` unless given.
        router: decides each message; its handlers may be sync or async. A sync handler runs
            in a worker thread (anyio's, as FastStream runs its own; the context variables
            copied), so it blocks neither the other subscribers nor the claim's renewal.
        seen: a seen-store (sync or async; a claiming one takes the in-flight claim). A sync
            store's calls run in worker threads as a sync handler does, so a slow one stalls
            neither the other subscribers nor the renewal of the claim.
        worker_id: Redis only: names this worker's processing list
            (``<queue>:processing:<worker_id>``), which no other running worker may share.
            ``None``: an id unique to this worker (``<host>-<pid>-<random hex>``). What a
            dead worker held is put back by the other workers once its heartbeat lapses
            (15 s), and at once when a worker of its stable id starts again.
        dead_letter_queue: where dead letters (with their ``dead_letter`` block) and messages
            that are not a v1 envelope (as received) go.
        subscriber_options: passed to ``broker.subscriber`` (a Kafka ``group_id`` ...).
    """
    return BabelQueueConsumer(
        broker,
        queue,
        router,
        seen=seen,
        worker_id=worker_id,
        dead_letter_queue=dead_letter_queue,
        **subscriber_options,
    )
