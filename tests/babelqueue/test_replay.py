"""Replay-Bypass (ADR-0027): the header in every binding that carries headers, and the Router."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from babelqueue.pika_transport import _delivery_headers
from babelqueue.redis_transport import _frame_value, _unframe
from babelqueue.redrive import redrive as official_redrive
from babelqueue.replay import HEADER_REPLAY_BYPASS
from babelqueue.sqs_transport import _message_attribute_headers
from babelqueue.transport import InMemoryTransport

from envelopekit.babelqueue import (
    REPLAY_BYPASS_HEADER,
    BabelEnvelope,
    Done,
    Redriven,
    Retry,
    Router,
    artemis,
    asb,
    bypass_external_effects,
    is_replay,
    kafka,
    pulsar,
    rabbitmq,
    redis,
    redrive,
    replay_headers,
    replay_scope,
    sqs,
)
from tests.conftest import DATA

logging.getLogger("babelqueue.codec").setLevel(logging.ERROR)

DEAD = (DATA / "babelqueue" / "fixtures" / "dead-lettered.json").read_bytes()
ENV = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")


def test_the_header_name_is_the_official() -> None:
    assert REPLAY_BYPASS_HEADER == HEADER_REPLAY_BYPASS
    assert replay_headers() == {HEADER_REPLAY_BYPASS: "1"}


def _natives(replay: bool) -> dict[str, tuple[Any, bool]]:
    """Each binding's produced metadata, and what its `is_replay` reads from it."""
    return {
        "sqs": (m := sqs.project(ENV, replay=replay), sqs.is_replay(m)),
        "asb": (a := asb.project(ENV, replay=replay), asb.is_replay(a["application_properties"])),
        "kafka": (k := kafka.project(ENV, replay=replay), kafka.is_replay(k["headers"])),
        "pulsar": (p := pulsar.project(ENV, replay=replay), pulsar.is_replay(p)),
        "artemis": (
            j := artemis.project(ENV, replay=replay),
            artemis.is_replay(j["application_properties"]),
        ),
        "rabbitmq": (r := rabbitmq.project(ENV, replay=replay), rabbitmq.is_replay(r["headers"])),
    }


@pytest.mark.parametrize("binding", ["sqs", "asb", "kafka", "pulsar", "artemis", "rabbitmq"])
def test_every_binding_sets_and_reads_the_header(binding: str) -> None:
    native, seen = _natives(replay=True)[binding]
    assert seen is True
    plain, plain_seen = _natives(replay=False)[binding]
    assert plain_seen is False
    assert "replay" not in repr(plain)  # nothing extra on a normal publish
    assert "replay" in repr(native)


def test_bindings_read_absent_empty_and_bytes_values() -> None:
    assert not sqs.is_replay(None) and not sqs.is_replay({"bq-replay-bypass": {"StringValue": ""}})
    assert not sqs.is_replay({"bq-replay-bypass": "1"})  # type: ignore[dict-item]  # not an attribute
    assert kafka.is_replay([("bq-replay-bypass", b"1")]) and not kafka.is_replay([("x", b"1")])
    assert not kafka.is_replay([("bq-replay-bypass", b"")]) and not kafka.is_replay(None)
    assert asb.is_replay({b"bq-replay-bypass": b"1"}) and not asb.is_replay({})
    assert rabbitmq.is_replay({"bq-replay-bypass": b"1"}) and not rabbitmq.is_replay(None)
    assert not pulsar.is_replay({"bq-replay-bypass": ""}) and not artemis.is_replay(None)
    assert not artemis.is_replay({"bq-replay-bypass": "1"})  # Artemis spells it bq_replay_bypass


def test_the_official_consumers_read_our_header() -> None:
    # SQS and RabbitMQ: what the official transports surface as headers from our metadata.
    attributes = {k: dict(v) for k, v in sqs.project(ENV, replay=True).items()}
    assert _message_attribute_headers(attributes)[HEADER_REPLAY_BYPASS] == "1"
    props = SimpleNamespace(headers=rabbitmq.project(ENV, replay=True)["headers"])
    assert _delivery_headers(props)[HEADER_REPLAY_BYPASS] == "1"
    # Redis: our frame is byte for byte the official frame, both ways.
    done = redrive(DEAD, bypass=True)
    assert isinstance(done, Redriven)
    element = redis.element(done.body(), done.headers)
    assert element.decode() == _frame_value(done.body().decode(), dict(done.headers))
    assert _unframe(element.decode()) == (done.body().decode(), {HEADER_REPLAY_BYPASS: "1"})
    assert redis.is_replay(redis.reserve(element))
    assert not redis.is_replay(redis.reserve(done.body()))


def test_our_redrive_stamps_what_the_official_redrive_stamps() -> None:
    transport = InMemoryTransport()
    transport.publish("orders.dlq", DEAD.decode())
    official_redrive(transport, "orders.dlq", bypass=True)
    message = transport.pop("orders")
    assert message is not None
    done = redrive(DEAD, bypass=True)
    assert isinstance(done, Redriven)
    assert (done.body().decode(), dict(done.headers)) == (message.body, message.headers)
    assert is_replay(message.headers) and not is_replay({})


# --- the consumer side: Router ----------------------------------------------------------------


def _router(effects: list[str], seen: list[bool]) -> Router:
    router = Router()

    @router.on("urn:babel:orders:created")
    def handle(env: BabelEnvelope[Any]) -> None:
        seen.append(is_replay())
        effects.append("saved")
        bypass_external_effects(lambda: effects.append("emailed"))

    return router


def test_router_skips_external_effects_on_a_replay_only() -> None:
    effects: list[str] = []
    seen: list[bool] = []
    router = _router(effects, seen)
    body = ENV.to_json()
    assert isinstance(router.dispatch(body), Done)
    assert effects == ["saved", "emailed"]
    effects.clear()
    replayed = redrive(ENV.dead_lettered("failed").to_json(), bypass=True)
    assert isinstance(replayed, Redriven)
    headers = sqs.project(replayed.envelope, replay=replayed.replay)
    outcome = router.dispatch(replayed.body(), replay=sqs.is_replay(headers))
    assert isinstance(outcome, Done)
    assert effects == ["saved"]
    assert seen == [False, True]
    assert not is_replay()  # the scope ends with the dispatch


def test_route_carries_replay_to_handle_and_the_scope_survives_a_raise() -> None:
    router = Router()
    calls: list[bool] = []

    def boom(env: BabelEnvelope[Any]) -> None:
        calls.append(is_replay())
        raise RuntimeError("down")

    router.register("urn:babel:orders:created", boom)
    decision = router.route(ENV.to_json(), replay=True)
    assert decision.replay  # type: ignore[union-attr]
    assert isinstance(router.dispatch(ENV.to_json(), replay=True), Retry)
    assert calls == [True] and not is_replay()


def test_bypass_returns_the_effect_value_or_none() -> None:
    assert bypass_external_effects(lambda: 42) == 42
    with replay_scope(True):
        assert is_replay()
        assert bypass_external_effects(lambda: 42) is None
        with replay_scope(False):
            assert bypass_external_effects(lambda: 1) == 1
        assert is_replay()
    assert not is_replay()
