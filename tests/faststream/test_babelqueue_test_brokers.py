"""The BabelQueue consumer on FastStream's in-memory test brokers for Redis, RabbitMQ and Kafka."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pydantic
import pytest
from faststream import Context, StreamMessage
from faststream.exceptions import NackMessage
from faststream.kafka import KafkaBroker, TestKafkaBroker
from faststream.rabbit import RabbitBroker, TestRabbitBroker
from faststream.redis import RedisBroker, TestRedisBroker

from envelopekit.babelqueue import (
    BabelEnvelope,
    DeadLetterDecision,
    InMemorySeenStore,
    Router,
    is_replay,
)
from envelopekit.faststream import RULES_HEADER, babelqueue_subscriber


class OrderCreated(pydantic.BaseModel):
    order_id: int


BROKERS = {
    "redis": (RedisBroker, TestRedisBroker, "list"),
    "rabbit": (RabbitBroker, TestRabbitBroker, "queue"),
    "kafka": (KafkaBroker, TestKafkaBroker, "topic"),
}


@pytest.mark.parametrize("kind", list(BROKERS))
def test_typed_handler_retry_dead_letter_and_poison(kind: str) -> None:
    broker_type, test_broker, destination = BROKERS[kind]
    broker: Any = broker_type()
    seen = InMemorySeenStore()
    handled: list[tuple[int, int]] = []
    router = Router(unknown_urn="dead_letter", max_attempts=2)

    @router.on("urn:babel:orders:created", OrderCreated)
    def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        if env.data.order_id == 7 and env.attempts == 0:
            raise RuntimeError("fails once")
        handled.append((env.data.order_id, env.attempts))

    @router.on("urn:babel:orders:broken")
    async def broken(env: BabelEnvelope) -> None:
        raise RuntimeError("always")

    babelqueue_subscriber(broker, "orders", router, seen=seen)
    dead: list[tuple[bytes, dict[str, Any]]] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        dead.append((bytes(message.body), dict(message.headers)))

    if destination == "list":
        broker.subscriber(list="orders.dlq")(capture)
    else:
        broker.subscriber("orders.dlq")(capture)

    good = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    flaky = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}, queue="orders")
    failing: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:broken", {}, queue="orders")
    unknown: BabelEnvelope = BabelEnvelope.create("urn:babel:who:knows", {}, queue="orders")

    async def scenario() -> None:
        async with test_broker(broker) as br:
            for body in (
                good.to_json(),
                good.to_json(),  # a duplicate delivery: skipped
                flaky.to_json(),
                failing.to_json(),
                unknown.to_json(),
                b"{not json",
            ):
                await br.publish(body, **{destination: "orders"})

    asyncio.run(scenario())
    assert sorted(handled) == [(1, 0), (7, 1)]
    assert seen.seen(good.meta.id) and seen.seen(flaky.meta.id)
    rules_by_job: dict[str, str] = {}
    for body, headers in dead:
        try:
            job = orjson.loads(body)["job"]
        except orjson.JSONDecodeError:
            assert body == b"{not json"
            job = "<poison>"
        rules_by_job[job] = headers[RULES_HEADER]
    assert rules_by_job == {
        "urn:babel:orders:broken": "handler.failed",
        "urn:babel:who:knows": "urn.unknown",
        "<poison>": "json.invalid",
    }
    broken_dl = next(orjson.loads(b) for b, _ in dead if b"orders:broken" in b)
    assert broken_dl["attempts"] == 2 and broken_dl["dead_letter"]["reason"] == "failed"


def test_kafka_retries_carry_the_authoritative_attempts_header() -> None:
    broker = KafkaBroker()
    attempts_seen: list[tuple[int, str | None]] = []
    router = Router(max_attempts=3)

    @router.on("urn:babel:x:y")
    def fail(env: BabelEnvelope) -> None:
        raise RuntimeError("no")

    babelqueue_subscriber(broker, "jobs", router)

    @broker.subscriber("jobs")
    async def watch(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        attempts_seen.append(
            (orjson.loads(message.body)["attempts"], message.headers.get("bq-attempts"))
        )

    async def scenario() -> None:
        async with TestKafkaBroker(broker) as br:
            await br.publish(
                BabelEnvelope.create("urn:babel:x:y", {}, queue="jobs").to_json(), topic="jobs"
            )

    asyncio.run(scenario())
    # Each republish carries bq-attempts, the header Kafka consumers take as authoritative.
    assert sorted(attempts_seen, key=lambda seen: seen[0]) == [(0, None), (1, "1"), (2, "2")]


def test_kafka_schema_version_gate_rejects_without_decoding() -> None:
    broker = KafkaBroker()
    router = Router()
    ran: list[object] = []
    router.register("urn:babel:x:y", ran.append)
    babelqueue_subscriber(broker, "jobs", router)
    dead: list[dict[str, Any]] = []

    @broker.subscriber("jobs.dlq")
    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        dead.append(dict(message.headers))

    async def scenario() -> None:
        async with TestKafkaBroker(broker) as br:
            env: BabelEnvelope = BabelEnvelope.create("urn:babel:x:y", {}, queue="jobs")
            await br.publish(env.to_json(), topic="jobs", headers={"bq-schema-version": "2"})

    asyncio.run(scenario())
    assert ran == [] and dead[0][RULES_HEADER] == "transport.schema_version_unsupported"


@pytest.mark.parametrize("kind", list(BROKERS))
def test_a_replaying_redrive_runs_the_handler_as_a_replay(kind: str) -> None:
    broker_type, test_broker, destination = BROKERS[kind]
    broker: Any = broker_type()
    router = Router()
    replays: list[bool] = []

    @router.on("urn:babel:x:y")
    async def record(env: BabelEnvelope) -> None:
        await asyncio.sleep(0)  # the replay scope spans the handler's awaits
        replays.append(is_replay())

    babelqueue_subscriber(broker, "jobs", router)

    async def scenario() -> None:
        async with test_broker(broker) as br:
            env: BabelEnvelope = BabelEnvelope.create("urn:babel:x:y", {}, queue="jobs")
            await br.publish(
                env.to_json(), headers={"bq-replay-bypass": "1"}, **{destination: "jobs"}
            )
            await br.publish(env.to_json(), **{destination: "jobs"})

    asyncio.run(scenario())
    assert replays == [True, False]


def test_an_unreachable_seen_store_leaves_the_message_unacknowledged() -> None:
    import redis.asyncio
    from redis.asyncio.retry import Retry as AsyncRetry
    from redis.backoff import NoBackoff

    from envelopekit.babelqueue import AsyncRedisSeenStore

    broker = RabbitBroker()
    router = Router()
    ran: list[object] = []
    router.register("urn:babel:x:y", ran.append)
    dead = redis.asyncio.Redis(host="127.0.0.1", port=1, retry=AsyncRetry(NoBackoff(), 0))
    consumer = babelqueue_subscriber(broker, "jobs", router, seen=AsyncRedisSeenStore(dead))
    republished: list[bytes] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        republished.append(bytes(message.body))

    broker.subscriber("jobs.dlq")(capture)
    nacked: list[BaseException] = []

    async def scenario() -> None:
        async with TestRabbitBroker(broker):
            env: BabelEnvelope = BabelEnvelope.create("urn:babel:x:y", {}, queue="jobs")
            message: Any = type("Message", (), {"body": env.to_json(), "headers": {}})()
            try:
                await consumer.handle(message)
            except NackMessage as exc:
                nacked.append(exc)
        await dead.aclose()

    asyncio.run(scenario())
    assert ran == [] and republished == [] and len(nacked) == 1


@pytest.mark.parametrize(
    ("strategy", "body"),
    [
        ("fail", None),  # the handler fails: a retry
        ("dead_letter", None),
        ("fail", b"not json"),  # poison: the bytes to the DLQ
    ],
    ids=["retry", "dead-letter", "poison"],  # a release publishes as a retry does
)
def test_what_the_rabbit_consumer_republishes_is_persistent(
    monkeypatch: pytest.MonkeyPatch, strategy: str, body: bytes | None
) -> None:
    # A retry, a release or a dead letter outlives a broker restart, as the official transport
    # publishes every message (delivery mode 2). The in-memory broker keeps no delivery mode,
    # so what the consumer asks FastStream for is read at RabbitBroker.publish, then published.
    asked: list[dict[str, Any]] = []
    publish = RabbitBroker.publish

    async def recorded(self: RabbitBroker, message: Any = None, *args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return await publish(self, message, *args, **kwargs)

    monkeypatch.setattr(RabbitBroker, "publish", recorded)
    broker = RabbitBroker()
    router = Router(unknown_urn=strategy, max_attempts=3)  # type: ignore[arg-type]

    def fails(env: BabelEnvelope) -> None:
        raise RuntimeError("retried")

    router.register("urn:babel:x:fails", fails)
    consumer = babelqueue_subscriber(broker, "jobs", router)
    broker.subscriber("jobs.dlq")(lambda: None)
    urn = "urn:babel:x:fails" if strategy == "fail" else "urn:babel:x:nobody"

    async def scenario() -> None:
        async with TestRabbitBroker(broker):
            raw = body or BabelEnvelope.create(urn, {}, queue="jobs").to_json()
            message: Any = type("Message", (), {"body": raw, "headers": {}})()
            await consumer.handle(message)

    asyncio.run(scenario())
    # The retries are delivered to the consumer again, in memory, until the dead letter.
    republished = [a.get("persist") for a in asked if a.get("queue") in {"jobs", "jobs.dlq"}]
    assert republished and set(republished) == {True}


def test_the_outcome_names_the_dead_letter_queue_given() -> None:
    """A dead letter goes to the consumer's queue, and ``handle`` says so."""
    broker = RabbitBroker()
    consumer = babelqueue_subscriber(
        broker, "jobs", Router(unknown_urn="dead_letter"), dead_letter_queue="dead"
    )
    dead: list[bytes] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        dead.append(bytes(message.body))

    broker.subscriber("dead")(capture)
    outcomes: list[object] = []

    async def scenario() -> None:
        async with TestRabbitBroker(broker):
            env: BabelEnvelope = BabelEnvelope.create("urn:babel:x:nobody", {}, queue="jobs")
            message: Any = type("Message", (), {"body": env.to_json(), "headers": {}})()
            outcomes.append(await consumer.handle(message))

    asyncio.run(scenario())
    (outcome,) = outcomes
    assert isinstance(outcome, DeadLetterDecision)
    assert outcome.queue == "dead"
    assert len(dead) == 1


TRACE = {
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tracestate": "vendor=opaque",
}


@pytest.mark.parametrize("kind", list(BROKERS))
@pytest.mark.parametrize("poison", [False, True], ids=["failed", "not-json"])
def test_a_dead_letter_keeps_the_trace_context_it_arrived_with(kind: str, poison: bool) -> None:
    broker_type, test_broker, destination = BROKERS[kind]
    broker: Any = broker_type()
    router = Router(max_attempts=1)

    @router.on("urn:babel:orders:broken")
    def broken(env: BabelEnvelope) -> None:
        raise RuntimeError("always")

    babelqueue_subscriber(broker, "orders", router)
    dead: list[dict[str, Any]] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        dead.append(dict(message.headers))

    if destination == "list":
        broker.subscriber(list="orders.dlq")(capture)
    else:
        broker.subscriber("orders.dlq")(capture)
    failing: BabelEnvelope = BabelEnvelope.create("urn:babel:orders:broken", {}, queue="orders")

    async def scenario() -> None:
        async with test_broker(broker) as br:
            body = b"{not json" if poison else failing.to_json()
            await br.publish(
                body, headers={**TRACE, "bq-replay-bypass": "1"}, **{destination: "orders"}
            )

    asyncio.run(scenario())
    (headers,) = dead
    assert {k: headers[k] for k in TRACE} == TRACE
    assert "bq-replay-bypass" not in headers
    assert headers[RULES_HEADER] == ("json.invalid" if poison else "handler.failed")


@pytest.mark.parametrize(
    "seen",
    ["redis://127.0.0.1:6379/0", object(), InMemorySeenStore],
    ids=["a-url", "an-object", "the-store-class"],
)
def test_what_is_no_seen_store_is_refused_when_the_subscriber_is_declared(
    seen: object,
) -> None:
    # Not at the first message, inside the broker's loop, where it would fail every delivery.
    with pytest.raises(TypeError, match=r"^seen must be a seen-store \(SeenStore or "):
        babelqueue_subscriber(RedisBroker(), "orders", Router(), seen=seen)  # type: ignore[arg-type]


def test_a_handler_given_for_the_router_is_refused_saying_what_is_needed() -> None:
    def charge(env: BabelEnvelope) -> None: ...

    with pytest.raises(TypeError, match=r"^router must be a babelqueue Router\b.* not function$"):
        babelqueue_subscriber(RedisBroker(), "orders", charge)  # type: ignore[arg-type]


class TenantOrders(BabelEnvelope[OrderCreated]):
    """A user's envelope: a member of its own, a validator, a method."""

    tenant: str

    @pydantic.field_validator("tenant")
    @classmethod
    def _known_tenant(cls, tenant: str) -> str:
        if tenant == "nobody":
            raise ValueError("unknown tenant")
        return tenant

    def label(self) -> str:
        return f"{self.tenant}/{self.data.order_id}"


@pytest.mark.parametrize(
    "model", [TenantOrders, BabelEnvelope[OrderCreated]], ids=["own-class", "parametrised"]
)
def test_a_route_given_an_envelope_class_validates_with_it_and_hands_it_over(
    model: type[BabelEnvelope[OrderCreated]],
) -> None:
    # The class was taken as the model of `data`: every message was dead-lettered as
    # `data.invalid` (its data is no envelope), and the handler never ran.
    broker = RabbitBroker()
    got: list[tuple[type, int]] = []
    router = Router(max_attempts=1)

    @router.on("urn:babel:orders:created", model)
    def order_created(env: BabelEnvelope[OrderCreated]) -> None:
        got.append((type(env), env.data.order_id))

    assert router.data_model("urn:babel:orders:created") is OrderCreated
    babelqueue_subscriber(broker, "orders", router)
    dead: list[tuple[str, str, str]] = []

    @broker.subscriber("orders.dlq")
    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        letter = orjson.loads(message.body)["dead_letter"]
        dead.append((message.headers[RULES_HEADER], letter["reason"], letter["error"]))

    order = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 7}).to_json()
    of_acme = orjson.dumps({**orjson.loads(order), "tenant": "acme"})
    of_nobody = orjson.dumps({**orjson.loads(order), "tenant": "nobody"})

    async def scenario() -> None:
        async with TestRabbitBroker(broker) as br:
            for body in (of_acme, order, of_nobody):
                await br.publish(body, queue="orders")

    asyncio.run(scenario())
    if model is TenantOrders:
        assert got == [(TenantOrders, 7)]
        # Refused by the class, outside `data`: dead-lettered at once as poison (max_attempts
        # is 1 here; the router test holds that no retry comes first), naming the class and
        # its rule ids and pointers. It was `data.invalid`, reason `failed`, "data for ...
        # does not match its URN schema: /tenant: Field required".
        said = "the envelope for 'urn:babel:orders:created' is refused by TenantOrders: "
        assert dead == [
            (
                "envelope.refused",
                "poison",
                said + "message-envelope.required at /tenant: Field required",
            ),
            (
                "envelope.refused",
                "poison",
                said + "message-envelope.invalid at /tenant: Value error, unknown tenant",
            ),
        ]
    else:
        assert got == [(model, 7)] * 3 and not dead
