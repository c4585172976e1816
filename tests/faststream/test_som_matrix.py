"""SOM and Matrix consumers: typed handlers, quarantine with rule ids, Matrix request/reply."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any, Optional, Union

import orjson
import pydantic
import pytest
import redis
from faststream import Context, StreamMessage
from faststream.kafka import KafkaBroker, TestKafkaBroker
from faststream.rabbit import RabbitBroker, TestRabbitBroker
from faststream.redis import RedisBroker, TestRedisBroker

from envelopekit.babelqueue import redis as binding
from envelopekit.faststream import (
    RULES_HEADER,
    MatrixConsumer,
    SomConsumer,
    matrix_subscriber,
    som_subscriber,
)
from envelopekit.matrix import MxErrorCode, MxRequest, MxResponse
from envelopekit.som import SomEnvelope, StoryContext, TellingEvent
from tests.som._corpus import DATA

STORY = (
    b'{"som_version":"1.0.0","message_id":"01920000-0000-7000-8000-000000000001",'
    b'"correlation_id":"01920000-0000-7000-8000-000000000002","message_type":"story.context",'
    b'"timestamp":"2026-09-11T16:41:00Z","originating_system":{"system_id":"cms",'
    b'"system_type":"ncs"},"topic":"som.story.context","payload":{"story_id":"s-1",'
    b'"slug":"S-1","headline":"Storm","story_type":"PLANNED","sequence_number":1,'
    b'"updated_at":"2026-09-11T13:00:00Z"}}'
)
BAD_ID = STORY.replace(b"01920000-0000-7000-8000-000000000001", b"not-a-uuid")


class ListArgs(pydantic.BaseModel):
    path: str


BROKERS = {
    "redis": (RedisBroker, TestRedisBroker, "list"),
    "rabbit": (RabbitBroker, TestRabbitBroker, "queue"),
    "kafka": (KafkaBroker, TestKafkaBroker, "topic"),
}


@pytest.mark.parametrize("kind", list(BROKERS))
def test_som_typed_by_family_and_refusals_quarantined(kind: str) -> None:
    broker_type, test_broker, destination = BROKERS[kind]
    broker: Any = broker_type()
    stories: list[tuple[str, str]] = []

    def on_story(env: SomEnvelope, story: StoryContext) -> None:
        stories.append((env.message_type, story.headline))

    som_subscriber(broker, "som", on_story, family=StoryContext)
    quarantined: list[tuple[bytes, str]] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        quarantined.append((bytes(message.body), message.headers[RULES_HEADER]))

    if destination == "list":
        broker.subscriber(list="som.quarantine")(capture)
    else:
        broker.subscriber("som.quarantine")(capture)
    other = orjson.loads(STORY)
    other["message_type"], other["topic"] = "weather.update", "som.weather.update"  # valid

    async def scenario() -> None:
        async with test_broker(broker) as br:
            for body in (STORY, BAD_ID, b"[]", orjson.dumps(other)):
                await br.publish(body, **{destination: "som"})

    asyncio.run(scenario())
    assert stories == [("story.context", "Storm")]
    rules_by_body = dict(quarantined)
    assert rules_by_body[BAD_ID] == "envelope.format.uuid"
    assert rules_by_body[b"[]"] == "envelope.type"
    assert rules_by_body[orjson.dumps(other)] == "subscriber.unexpected"
    assert len(quarantined) == 3


def test_som_without_a_family_takes_every_family() -> None:
    broker = RabbitBroker()
    seen: list[type] = []
    som_subscriber(broker, "som", lambda env, payload: seen.append(type(payload)))

    async def scenario() -> None:
        async with TestRabbitBroker(broker) as br:
            await br.publish(STORY, queue="som")

    asyncio.run(scenario())
    assert seen == [StoryContext]


def test_matrix_request_reply_through_faststream() -> None:
    broker = RabbitBroker()

    async def on_list(req: MxRequest[ListArgs]) -> MxResponse[Any]:
        if req.payload.path == "/missing":
            return req.fail(MxErrorCode.NOT_FOUND, "no such directory")
        if req.payload.path == "/boom":
            raise RuntimeError("disk on fire")
        return req.reply({"ok": True, "count": 1, "items": [req.payload.path]})

    matrix_subscriber(broker, "fs", on_list, request_model=MxRequest[ListArgs])
    quarantined: list[str] = []

    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        quarantined.append(message.headers[RULES_HEADER])

    broker.subscriber("fs.quarantine")(capture)

    async def scenario() -> list[tuple[Any, dict[str, Any]]]:
        answers: list[tuple[Any, dict[str, Any]]] = []
        async with TestRabbitBroker(broker) as br:
            for path in ("/", "/missing", "/boom"):
                req = MxRequest.create("fs.list", {"path": path}, expect_reply=True)
                reply = await br.request(req.to_json(), queue="fs")
                answers.append((req.correlation_id, orjson.loads(reply.body)))
            wrong = MxRequest.create("fs.list", {"path": 3}, expect_reply=True)
            await br.publish(wrong.to_json(), queue="fs")
            await br.publish(b'{"op": ""}', queue="fs")
        return answers

    answers = asyncio.run(scenario())
    (cid0, ok), (cid1, missing), (cid2, boom) = answers
    assert ok["correlationId"] == cid0 and ok["payload"]["items"] == ["/"]
    assert missing["correlationId"] == cid1 and missing["payload"]["code"] == "NOT_FOUND"
    assert boom["correlationId"] == cid2 and boom["payload"]["code"] == "INTERNAL"
    assert "disk on fire" in boom["payload"]["error"]
    assert len(quarantined) == 2 and all(quarantined)


@pytest.mark.parametrize(
    "answer",
    [{"ok": True}, "done", b'{"op":"$reply","correlationId":"c","payload":{"ok":true}}'],
    ids=["a-payload", "a-string", "reply-bytes"],
)
def test_a_handler_that_returns_no_reply_model_answers_with_an_error_reply(answer: object) -> None:
    # A reply expected and none given as MxResponse: the caller gets an INTERNAL error reply
    # that says what to return, not an empty body.
    broker = RedisBroker()

    def handler(req: MxRequest[Any]) -> Any:
        return answer

    matrix_subscriber(broker, "fs", handler)

    async def scenario() -> tuple[object, Any]:
        async with TestRedisBroker(broker) as br:
            req = MxRequest.create("fs.list", {}, expect_reply=True)
            reply = await br.request(req.to_json(), list="fs")
            return req.correlation_id, orjson.loads(reply.body)

    correlation_id, reply = asyncio.run(scenario())
    assert reply["correlationId"] == correlation_id
    assert reply["payload"]["code"] == "INTERNAL"
    assert reply["payload"]["error"] == (
        f"the handler returned {type(answer).__name__}, not an MxResponse: "
        "return req.reply(...) or req.fail(...)"
    )


def test_redis_end_to_end_quarantine_and_matrix_reply_to(redis_url: str) -> None:
    req = MxRequest.create("fs.list", {"path": "/"}, expect_reply=True)
    with redis.Redis.from_url(redis_url) as client:
        client.rpush("som", STORY, BAD_ID)
        client.rpush("fs", req.to_json(), b"\x00garbage")
    headlines: list[str] = []
    held: list[str | None] = []

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        som = som_subscriber(
            broker, "som", lambda e, s: headlines.append(s.headline), family=StoryContext
        )
        held.append(som.processing)
        matrix_subscriber(
            broker, "fs", lambda r: r.reply({"ok": True}), reply_to_field=True, worker_id="a"
        )
        async with broker:
            await broker.start()
            with redis.Redis.from_url(redis_url) as client:
                for _ in range(500):
                    if (
                        client.llen("som.quarantine")
                        and client.llen("fs.quarantine")
                        and client.llen(str(req.reply_to))
                    ):
                        break
                    await asyncio.sleep(0.02)

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        som_q = [binding.reserve(e) for e in client.lrange("som.quarantine", 0, -1)]
        fs_q = client.lrange("fs.quarantine", 0, -1)
        replies = client.lrange(str(req.reply_to), 0, -1)
        assert held[0] is not None and held[0].startswith("som:processing:")
        assert client.llen(held[0]) == 0 and client.llen("fs:processing:a") == 0
    assert headlines == ["Storm"]
    assert [(r.body, r.headers) for r in som_q] == [
        (BAD_ID, {RULES_HEADER: "envelope.format.uuid"})
    ]
    assert [binding.reserve(e) for e in fs_q] == [(b"\x00garbage", {RULES_HEADER: "json.invalid"})]
    (reply,) = replies  # the Matrix convention's replyTo, bare
    answer = MxResponse.model_validate_json(reply)
    assert answer.correlation_id == req.correlation_id


@pytest.mark.parametrize("kind", ["som", "matrix"])
def test_a_sync_handler_leaves_the_loop_to_other_subscribers(redis_url: str, kind: str) -> None:
    other_ran = threading.Event()
    waited: list[bool] = []

    def wait_for_the_other() -> None:
        with redis.Redis.from_url(redis_url) as client:
            client.rpush("other", STORY)
        waited.append(other_ran.wait(5))  # consumed meanwhile, by the same broker's loop

    async def on_other(env: SomEnvelope, story: object) -> None:
        other_ran.set()

    request = MxRequest.create("fs.list", {"path": "/"}).to_json()
    with redis.Redis.from_url(redis_url) as client:
        client.rpush(kind, STORY if kind == "som" else request)

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        som_subscriber(broker, "other", on_other)
        consumer: SomConsumer | MatrixConsumer
        if kind == "som":
            consumer = som_subscriber(broker, kind, lambda env, story: wait_for_the_other())
        else:
            consumer = matrix_subscriber(broker, kind, lambda req: wait_for_the_other())
        assert consumer.processing is not None
        async with broker:
            await broker.start()
            with redis.Redis.from_url(redis_url) as client:
                for _ in range(1000):
                    if waited and not client.llen(consumer.processing):
                        break
                    await asyncio.sleep(0.02)

    asyncio.run(scenario())
    assert waited == [True]


@pytest.mark.parametrize(
    "family", [int, dict, SomEnvelope], ids=["int", "a-mapping", "the-envelope"]
)
def test_a_family_that_is_no_som_payload_model_is_refused_when_the_subscriber_is_declared(
    family: type[Any],
) -> None:
    # It would quarantine every message as `subscriber.unexpected`.
    with pytest.raises(TypeError, match=r"^family must be one of SOM's payload models \("):
        som_subscriber(RedisBroker(), "som", lambda envelope, payload: None, family=family)


TELLING = orjson.dumps(
    {
        **orjson.loads(STORY),
        "message_type": "telling.started",
        "topic": "som.telling.started",
        "payload": {
            "message_type": "telling.started",
            "telling_id": "0190a000-0000-7000-8000-00000000aaa2",
            "link_id": "0190a000-0000-7000-8000-00000000aaa1",
            "exposure_start": "2026-06-12T18:00:00Z",
        },
    }
)
# The valid message of a family neither subscriber below takes.
AUDIT = orjson.dumps(
    {
        **orjson.loads(STORY),
        "message_type": "system.audit",
        "topic": "som.system.audit",
        "payload": orjson.loads((DATA / "examples/system-audit/suppressed.json").read_bytes()),
    }
)


@pytest.mark.parametrize(
    "family",
    [StoryContext | TellingEvent, Union[StoryContext, TellingEvent], (StoryContext, TellingEvent)],  # noqa: UP007
    ids=["union", "typing-union", "tuple"],
)
def test_som_of_several_families_takes_each_and_quarantines_the_others(family: Any) -> None:
    # A union raised TypeError when the subscriber was declared; a tuple did too.
    broker = RabbitBroker()
    seen: list[tuple[str, type]] = []
    som_subscriber(
        broker,
        "som",
        lambda env, payload: seen.append((env.message_type, type(payload))),
        family=family,
    )
    quarantined: list[tuple[bytes, str]] = []

    @broker.subscriber("som.quarantine")
    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        quarantined.append((bytes(message.body), message.headers[RULES_HEADER]))

    async def scenario() -> None:
        async with TestRabbitBroker(broker) as br:
            for body in (STORY, TELLING, AUDIT):
                await br.publish(body, queue="som")

    asyncio.run(scenario())
    assert seen == [("story.context", StoryContext), ("telling.started", TellingEvent)]
    assert quarantined == [(AUDIT, "subscriber.unexpected")]


@pytest.mark.parametrize(
    ("family", "named"),
    [
        (StoryContext | int, "int"),
        (Optional[StoryContext], "NoneType"),  # noqa: UP045
        ((StoryContext, dict), "dict"),
    ],
    ids=["union", "optional", "tuple"],
)
def test_a_family_of_several_names_the_member_that_is_no_payload_model(
    family: Any, named: str
) -> None:
    with pytest.raises(
        TypeError,
        match=rf"^family must be one of SOM's payload models \(.*\), or a union or tuple of "
        rf"them, not {re.escape(named)} \(in ",
    ):
        som_subscriber(RedisBroker(), "som", lambda envelope, payload: None, family=family)


def test_a_family_of_no_member_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^family must name at least one of SOM's payload mod"):
        som_subscriber(RedisBroker(), "som", lambda envelope, payload: None, family=())


class DeskStories(SomEnvelope[StoryContext]):
    """A user's envelope: a field of its own, a validator, a method."""

    desk: str = "news"

    @pydantic.field_validator("topic")
    @classmethod
    def _on_the_desk_s_topic(cls, topic: str) -> str:
        if topic.endswith(".draft"):
            raise ValueError("drafts are not published")
        return topic

    def shouted(self) -> str:
        return self.payload.headline.upper()


def _with(body: bytes, **members: Any) -> bytes:
    return orjson.dumps({**orjson.loads(body), **members})


@pytest.mark.parametrize("family", [None, StoryContext], ids=["no-family", "its-family"])
def test_som_validates_with_the_user_s_envelope_class_and_hands_it_over(family: Any) -> None:
    # The handler got a plain SomEnvelope (no way to give the class), and `family=DeskStories`
    # was refused as no payload model.
    broker = RabbitBroker()
    got: list[tuple[type, str, str]] = []

    def on_story(env: DeskStories, story: StoryContext) -> None:
        got.append((type(env), env.desk, env.shouted()))

    consumer = som_subscriber(broker, "som", on_story, envelope_model=DeskStories, family=family)
    assert consumer.envelope_model is DeskStories
    quarantined: list[tuple[bytes, str]] = []

    @broker.subscriber("som.quarantine")
    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        quarantined.append((bytes(message.body), message.headers[RULES_HEADER]))

    own_field = _with(STORY, desk="sport")
    wrong_topic = _with(STORY, topic="som.story.context.draft")
    wrong_type = _with(STORY, desk=3)

    async def scenario() -> None:
        async with TestRabbitBroker(broker) as br:
            for body in (STORY, own_field, BAD_ID, wrong_topic, wrong_type, TELLING):
                await br.publish(body, queue="som")

    asyncio.run(scenario())
    assert got == [(DeskStories, "news", "STORM"), (DeskStories, "sport", "STORM")]
    assert quarantined == [
        (BAD_ID, "envelope.format.uuid"),
        (wrong_topic, "envelope.invalid"),
        (wrong_type, "envelope.type"),
        (TELLING, "payload.family_unexpected"),
    ]


@pytest.mark.parametrize(
    ("model", "named"),
    [
        (StoryContext, "StoryContext"),
        (MxRequest, "MxRequest"),
        (int, "int"),
        ("DeskStories", "'DeskStories'"),
    ],
    ids=["a-payload-model", "another-spec-s-envelope", "int", "a-string"],
)
def test_an_envelope_model_that_is_no_som_envelope_is_refused_when_declared(
    model: Any, named: str
) -> None:
    with pytest.raises(
        TypeError,
        match=rf"^envelope_model must be SomEnvelope or a subclass of it .*, not {named}: ",
    ):
        som_subscriber(RedisBroker(), "som", lambda env, payload: None, envelope_model=model)


def test_a_family_the_user_s_envelope_never_takes_is_refused_when_declared() -> None:
    # Every message of it would be refused by the class: quarantined, silently.
    with pytest.raises(
        TypeError,
        match=r"^family names TellingEvent, which envelope_model DeskStories never takes "
        r"\(it takes StoryContext\)$",
    ):
        som_subscriber(
            RedisBroker(),
            "som",
            lambda env, payload: None,
            envelope_model=DeskStories,
            family=(StoryContext, TellingEvent),
        )


class Tenanted(MxRequest[ListArgs]):
    """A user's request: a field of its own (no unknown key to it) and a validator."""

    tenant: str

    @pydantic.field_validator("tenant")
    @classmethod
    def _known_tenant(cls, tenant: str) -> str:
        if tenant == "nobody":
            raise ValueError("unknown tenant")
        return tenant


def test_matrix_validates_with_the_user_s_request_class_and_hands_it_over() -> None:
    # Every request went to the quarantine as `request.additionalProperties` (/tenant): the
    # spec's closed schema was checked before the class.
    broker = RedisBroker()
    got: list[tuple[type, str, str]] = []

    def on_list(req: Tenanted) -> MxResponse[Any]:
        got.append((type(req), req.tenant, req.payload.path))
        return req.reply({"ok": True, "tenant": req.tenant})

    matrix_subscriber(broker, "fs", on_list, request_model=Tenanted)
    quarantined: list[tuple[bytes, str]] = []

    @broker.subscriber(list="fs.quarantine")
    async def capture(message: StreamMessage[Any] = Context("message")) -> None:  # noqa: B008
        quarantined.append((bytes(message.body), message.headers[RULES_HEADER]))

    asked = MxRequest.create("fs.list", {"path": "/"}, expect_reply=True)
    bare = MxRequest.create("fs.list", {"path": "/"}).to_json()
    refused = {
        _with(bare, tenant="nobody"): "request.invalid",
        bare: "request.required",
        _with(bare, tenant="t", zz=1): "request.additionalProperties",
        _with(bare, tenant="t", payload={"path": 3}): "request.type",
        asked.reply({"ok": True}).to_json(): "subscriber.unexpected",
        _with(asked.reply({"path": "/"}).to_json(), tenant="t"): "subscriber.unexpected",
    }

    async def scenario() -> Any:
        async with TestRedisBroker(broker) as br:
            reply = await br.request(_with(asked.to_json(), tenant="acme"), list="fs")
            for body in refused:
                await br.publish(body, list="fs")
            return orjson.loads(reply.body)

    reply = asyncio.run(scenario())
    assert got == [(Tenanted, "acme", "/")]
    assert reply["correlationId"] == asked.correlation_id
    assert reply["payload"] == {"ok": True, "tenant": "acme"}
    assert dict(quarantined) == refused


@pytest.mark.parametrize(
    ("model", "named"),
    [(MxResponse, "MxResponse"), (ListArgs, "ListArgs"), (SomEnvelope, "SomEnvelope")],
    ids=["a-response", "a-payload-model", "another-spec-s-envelope"],
)
def test_a_request_model_that_is_no_request_class_is_refused_when_declared(
    model: Any, named: str
) -> None:
    # Every request was validated as that class and quarantined.
    with pytest.raises(
        TypeError,
        match=rf"^request_model must be MxRequest or a subclass of it .*, not {named}: ",
    ):
        matrix_subscriber(RedisBroker(), "fs", lambda req: None, request_model=model)


def test_redis_end_to_end_with_the_user_s_envelope_class(redis_url: str) -> None:
    wrong_topic = _with(STORY, topic="som.story.context.draft")
    with redis.Redis.from_url(redis_url) as client:
        client.rpush("som", _with(STORY, desk="sport"), wrong_topic)
    got: list[tuple[type, str]] = []

    async def scenario() -> None:
        broker = RedisBroker(redis_url)
        som_subscriber(
            broker,
            "som",
            lambda env, story: got.append((type(env), env.desk)),
            envelope_model=DeskStories,
        )
        async with broker:
            await broker.start()
            with redis.Redis.from_url(redis_url) as client:
                for _ in range(500):
                    if got and client.llen("som.quarantine"):
                        break
                    await asyncio.sleep(0.02)

    asyncio.run(scenario())
    with redis.Redis.from_url(redis_url) as client:
        quarantined = [binding.reserve(e) for e in client.lrange("som.quarantine", 0, -1)]
    assert got == [(DeskStories, "sport")]
    assert [(r.body, r.headers) for r in quarantined] == [
        (wrong_topic, {RULES_HEADER: "envelope.invalid"})
    ]
