"""Redrive (ADR-0026) and the replay-bypass header (ADR-0027), against the official Python SDK."""

from __future__ import annotations

import logging
from typing import Any

import orjson
import pytest
import redis
from babelqueue.redis_transport import RedisTransport
from babelqueue.redrive import redrive as official_redrive
from babelqueue.transport import InMemoryTransport
from hypothesis import given, settings
from hypothesis import strategies as st

from envelopekit.babelqueue import (
    REPLAY_BYPASS_HEADER,
    BabelEnvelope,
    Kept,
    Redriven,
    redrive,
)
from envelopekit.babelqueue import redis as redis_binding
from tests.babelqueue.test_interop import payloads, queues, urns
from tests.conftest import DATA

logging.getLogger("babelqueue.codec").setLevel(logging.ERROR)

FIXTURES = DATA / "babelqueue" / "fixtures"
DEAD = FIXTURES / "dead-lettered.json"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _official(
    bodies: list[bytes], **options: Any
) -> tuple[dict[str, list[tuple[bytes, dict[str, str]]]], list[bytes]]:
    """What the official redrive publishes, per queue (with headers), and what it restores."""
    transport = InMemoryTransport()
    for body in bodies:
        transport.publish("orders.dlq", body.decode("utf-8"))
    official_redrive(transport, "orders.dlq", **options)
    published: dict[str, list[tuple[bytes, dict[str, str]]]] = {}
    for queue in list(transport._queues):
        if queue == "orders.dlq":
            continue
        while (message := transport.pop(queue)) is not None:
            published.setdefault(queue, []).append((message.body.encode(), message.headers))
    restored = []
    while (message := transport.pop("orders.dlq")) is not None:
        restored.append(message.body.encode())
    return published, restored


def _ours(
    bodies: list[bytes], **options: Any
) -> tuple[dict[str, list[tuple[bytes, dict[str, str]]]], list[bytes]]:
    published: dict[str, list[tuple[bytes, dict[str, str]]]] = {}
    restored = []
    for body in bodies:
        decision = redrive(body, **options)
        if isinstance(decision, Redriven):
            published.setdefault(decision.queue, []).append(
                (decision.body(), dict(decision.headers))
            )
        else:
            assert decision.raw == body
            restored.append(decision.raw)
    return published, restored


def _dead(env: BabelEnvelope[Any], original_queue: str | None = None) -> bytes:
    return (
        env.retried().dead_lettered("failed", error="boom", original_queue=original_queue).to_json()
    )


# --- the envelope operation ------------------------------------------------------------------


def test_redriven_removes_dead_letter_and_resets_attempts_only() -> None:
    raw = (
        b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
        b'"data":{"order_id":1042,"note":null},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",'
        b'"queue":"orders","lang":"go","schema_version":1,"created_at":1749132727000,'
        b'"vendor":{"k":[1,true]}},"attempts":3,"dead_letter":{"reason":"max_attempts",'
        b'"error":null,"failed_at":1749132730000,"original_queue":"orders-eu","attempts":3,'
        b'"extra_dl":1},"x_top":1.0}'
    )
    env = BabelEnvelope.model_validate_json(raw)
    again = env.redriven()
    wire = orjson.loads(again.to_json())
    expected = orjson.loads(raw)
    del expected["dead_letter"]
    expected["attempts"] = 0
    assert wire == expected
    assert again.to_json().endswith(b',"attempts":0,"x_top":1.0}')  # 1.0 stays a float
    assert again.meta.id == env.meta.id and again.trace_id == env.trace_id
    assert env.redrive_queue() == "orders-eu"
    assert again.redrive_queue() == "orders"  # no dead_letter block left: meta.queue


def test_redrive_queue_precedence() -> None:
    env: BabelEnvelope[dict[str, Any]] = BabelEnvelope.create("urn:babel:a:b", {}, queue="orders")
    assert env.redrive_queue() == "orders"
    assert env.redrive_queue("sandbox") == "sandbox"
    dead = env.dead_lettered("failed", original_queue="orders-eu")
    assert dead.redrive_queue() == "orders-eu"
    assert dead.redrive_queue("sandbox") == "sandbox"
    assert dead.redrive_queue("") == "orders-eu"
    blank = env.dead_lettered("failed", original_queue="")
    assert blank.redrive_queue() == "orders"


def test_a_typed_envelope_redrives_its_data_as_received() -> None:
    from pydantic import BaseModel

    class Order(BaseModel):
        order_id: int

    raw = DEAD.read_bytes()
    env = BabelEnvelope[Order].model_validate_json(raw)
    done = redrive(env)
    assert isinstance(done, Redriven)
    assert orjson.loads(done.body())["data"] == {"order_id": 1042}


# --- byte for byte against the official redrive ----------------------------------------------


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_fixture_redrives_as_the_official(fixture: str) -> None:
    body = orjson.dumps(orjson.loads((FIXTURES / fixture).read_bytes()))
    decision = redrive(body)
    if isinstance(decision, Kept):
        # What no consumer of ours would accept is kept, never replayed into a loop (the
        # official replays any body with a string `job`, e.g. schema_version 2).
        assert decision.reason == "invalid"
        assert fixture in {
            "data-array-rejected.json",
            "invalid-missing-urn.json",
            "invalid-unknown-schema-version.json",
        }
        return
    assert _ours([body]) == _official([body])


@settings(max_examples=100, deadline=None)
@given(
    urn=urns,
    data=payloads,
    queue=queues,
    original=st.none() | queues,
    extra=st.dictionaries(
        st.sampled_from(["x_a", "x_b", "vendor"]), st.integers(-(2**63), 2**63 - 1) | st.text()
    ),
    to_queue=st.none() | st.just("sandbox"),
    bypass=st.booleans(),
)
def test_generated_dead_letters_redrive_as_the_official(
    urn: str,
    data: dict[str, Any],
    queue: str,
    original: str | None,
    extra: dict[str, Any],
    to_queue: str | None,
    bypass: bool,
) -> None:
    env = BabelEnvelope.create(urn, data, queue=queue)
    wire = orjson.loads(_dead(env, original))
    wire.update(extra)
    body = orjson.dumps(wire)
    options = {"to_queue": to_queue, "bypass": bypass}
    assert _ours([body], **options) == _official([body], **options)


def test_select_and_dry_run_keep_the_bytes_as_the_official() -> None:
    a = _dead(BabelEnvelope.create("urn:babel:orders:created", {"n": 1}, queue="orders"))
    b = _dead(BabelEnvelope.create("urn:babel:users:registered", {"n": 2}, queue="users"))
    bodies = [a, b, b"not json", b'{"job":"urn:babel:x:y"}']

    def wanted(env: Any) -> bool:
        urn = env.job if isinstance(env, BabelEnvelope) else env["job"]
        return bool(urn == "urn:babel:orders:created")

    ours = _ours(bodies, select=wanted)
    assert ours == _official(bodies, select=wanted)
    reset = orjson.loads(a)
    del reset["dead_letter"]
    reset["attempts"] = 0
    assert ours[0] == {"orders": [(orjson.dumps(reset), {})]}
    assert ours[1] == bodies[1:]
    dry = _ours(bodies, dry_run=True)
    assert dry == _official(bodies, dry_run=True)
    assert dry == ({}, bodies)
    plan = redrive(a, dry_run=True)
    assert isinstance(plan, Kept) and plan.reason == "dry_run" and plan.queue == "orders"


def test_a_replaying_redrive_carries_the_header_never_an_envelope_field() -> None:
    done = redrive(DEAD.read_bytes(), bypass=True)
    assert isinstance(done, Redriven)
    assert done.headers == {REPLAY_BYPASS_HEADER: "1"} and done.replay
    assert REPLAY_BYPASS_HEADER.encode() not in done.body()
    plain = redrive(DEAD.read_bytes())
    assert isinstance(plain, Redriven) and not plain.replay and plain.headers == {}


@pytest.mark.parametrize(
    "headers",
    [{"x-envelopekit-rules": "handler.failed"}, {"traceparent": TRACEPARENT}],
    ids=["rules", "traceparent"],
)
def test_a_redis_dead_letter_frame_redrives_as_the_official_over_redis(
    redis_url: str, headers: dict[str, str]
) -> None:
    # On Redis a dead letter with headers is a frame: the official redrive pops its body.
    framed = redis_binding.element(DEAD.read_bytes(), headers)
    with redis.Redis.from_url(redis_url) as client:
        client.rpush("orders.dlq", framed)
    official_redrive(RedisTransport(redis_url), "orders.dlq")
    published = RedisTransport(redis_url).pop("orders", timeout=1)
    assert published is not None
    done = redrive(framed)
    assert isinstance(done, Redriven)
    assert (done.queue, done.body()) == ("orders", published.body.encode())
    kept = redrive(framed, dry_run=True)
    assert isinstance(kept, Kept) and kept.raw == framed  # written back as it was read


@pytest.mark.parametrize(
    "element", [b"\xff poison", b'{"job":"\xfe"}'], ids=["not-json", "not-utf8-json"]
)
def test_a_non_utf8_element_read_as_str_is_kept_with_its_bytes(
    redis_url: str, element: bytes
) -> None:
    # The reference's client settings hand invalid UTF-8 over as lone surrogates.
    with redis.Redis.from_url(
        redis_url, decode_responses=True, encoding_errors="surrogateescape"
    ) as client:
        client.rpush("orders.dlq", element)
        read = client.lpop("orders.dlq")
    assert isinstance(read, str)
    kept = redrive(read)
    assert isinstance(kept, Kept) and kept.reason == "invalid"
    assert kept.raw == element  # written back as it was sent
    assert kept.violations[0].rule == "json.invalid"


def test_undecodable_messages_are_kept_with_why() -> None:
    kept = redrive(b'{"job":"urn:babel:x:y","data":[]}')
    assert isinstance(kept, Kept) and kept.reason == "invalid"
    assert kept.raw == b'{"job":"urn:babel:x:y","data":[]}'
    assert kept.violations and kept.violations[0].rule


def test_member_order_and_forbidden_keys_as_the_official() -> None:
    body = (
        b'{"trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","x_first":[1,{"a":null}],'
        b'"dead_letter":{"reason":"unknown_urn","failed_at":1,"original_queue":"eu","attempts":1},'
        b'"timestamp":5,"meta":{"queue":"orders","id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",'
        b'"ts":1,"schema_version":1,"lang":"node","created_at":1749132727000},"attempts":1,'
        b'"urn":"urn:babel:orders:created","data":{"b":1,"a":"\\u00e9\\u2028"}}'
    )
    ours = _ours([body])
    assert ours == _official([body])
    ((published, _headers),) = ours[0]["eu"]
    assert b"timestamp" not in published and b'"ts"' not in published
    assert published.endswith(
        b'"attempts":0,"data":{"b":1,"a":"\xc3\xa9\xe2\x80\xa8"},"job":"urn:babel:orders:created"}'
    )


def test_wide_integers_and_float_spellings_as_the_official() -> None:
    env = BabelEnvelope.create("urn:babel:a:b", {"n": 1}, queue="q").dead_lettered("failed")
    for data in (b'{"n":123456789012345678901234567890,"f":1.5e-7}', b'{"x":-0.0,"y":1E+2}'):
        body = env.to_json().replace(b'{"n":1}', data)
        assert isinstance(redrive(body), Redriven)
        assert _ours([body]) == _official([body])


def test_hostile_bodies_are_kept_under_the_consumer_limits() -> None:
    from envelopekit import Settings

    small = Settings(max_message_bytes=300, max_depth=8)
    dead = DEAD.read_bytes()
    big = redrive(dead, settings=small)
    assert isinstance(big, Kept) and big.raw == dead
    assert [v.rule for v in big.violations] == ["message.too_large"]
    env = BabelEnvelope.create("urn:babel:a:b", {"n": 1}, queue="q").dead_lettered("failed")
    deep = env.to_json().replace(b'{"n":1}', b'{"n":' + b"[" * 50 + b"]" * 50 + b"}")
    kept = redrive(deep, settings=Settings(max_depth=8))
    assert isinstance(kept, Kept) and kept.violations[0].rule == "message.too_deep"
    assert isinstance(redrive(deep), Redriven)  # within the default limits
