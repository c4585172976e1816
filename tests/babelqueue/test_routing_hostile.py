"""The consumer toolkit always decides (issue 12): every message ``check`` accepts gets an
outcome from ``Router.dispatch``, and every envelope it republishes is accepted again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import redis

import envelopekit as ek
from envelopekit import ProducerError, rules
from envelopekit.babelqueue import (
    BabelEnvelope,
    DeadLetter,
    DeadLetterDecision,
    Reject,
    Release,
    Router,
)
from envelopekit.babelqueue import (
    redis as redis_binding,
)
from tests.conftest import DATA

INT64_MAX = 2**63 - 1
ORDER = orjson.loads((DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes())


def raw_message(**changes: Any) -> bytes:
    return orjson.dumps({**ORDER, **changes})


def failing(_: BabelEnvelope[Any]) -> None:
    raise RuntimeError("boom")


def accepted(envelope: BabelEnvelope[Any]) -> None:
    assert ek.check(envelope.to_json(), "babelqueue").ok


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    # The reference's client settings (babelqueue.redis_transport).
    with redis.Redis.from_url(
        redis_url, decode_responses=True, encoding_errors="surrogateescape"
    ) as connection:
        yield connection


# --- attempts at the int64 maximum -------------------------------------------------------------


def test_a_failing_handler_at_the_maximum_attempts_dead_letters_it() -> None:
    raw = raw_message(attempts=INT64_MAX)
    assert ek.check(raw, "babelqueue").ok
    router = Router(max_attempts=INT64_MAX)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(raw, queue="orders")
    assert isinstance(outcome, DeadLetterDecision)
    assert outcome.rule == rules.ATTEMPTS_AT_MAXIMUM
    assert outcome.queue == "orders.dlq"
    assert outcome.envelope.attempts == INT64_MAX
    assert outcome.envelope.dead_letter.reason == "failed"  # type: ignore[union-attr]
    accepted(outcome.envelope)


def test_an_unknown_urn_under_fail_at_the_maximum_attempts_dead_letters_it() -> None:
    outcome = Router("fail").dispatch(raw_message(attempts=INT64_MAX))
    assert isinstance(outcome, DeadLetterDecision)
    assert outcome.rule == rules.ATTEMPTS_AT_MAXIMUM
    assert outcome.envelope.dead_letter.reason == "unknown_urn"  # type: ignore[union-attr]
    accepted(outcome.envelope)


def test_one_below_the_maximum_is_retried_to_it() -> None:
    router = Router(max_attempts=INT64_MAX)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(raw_message(attempts=INT64_MAX - 1))
    assert outcome.envelope.attempts == INT64_MAX  # type: ignore[union-attr]
    assert outcome.rule == rules.HANDLER_FAILED  # type: ignore[union-attr]
    accepted(outcome.envelope)  # type: ignore[union-attr]


def test_retried_refuses_to_count_past_int64() -> None:
    envelope = BabelEnvelope.model_validate_json(raw_message(attempts=INT64_MAX))
    with pytest.raises(ProducerError, match="signed 64-bit maximum"):
        envelope.retried()


# --- handler text that is not Unicode ----------------------------------------------------------


def test_a_lone_surrogate_in_the_handler_error_still_encodes() -> None:
    path = os.fsdecode(b"/srv/spool/\xff\xfe.json")

    def handler(_: BabelEnvelope[Any]) -> None:
        raise FileNotFoundError(f"cannot open {path}")

    router = Router(max_attempts=1)
    router.register(ORDER["job"], handler)
    outcome = router.dispatch(raw_message())
    assert isinstance(outcome, DeadLetterDecision)
    wire = orjson.loads(outcome.envelope.to_json())
    assert wire["dead_letter"]["error"] == "cannot open /srv/spool/\\udcff\\udcfe.json"
    assert wire["dead_letter"]["exception"] == "FileNotFoundError"
    accepted(outcome.envelope)


def test_a_handler_exception_whose_text_cannot_be_read_is_dead_lettered() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    def handler(_: BabelEnvelope[Any]) -> None:
        raise Unprintable

    router = Router(max_attempts=1)
    router.register(ORDER["job"], handler)
    outcome = router.dispatch(raw_message())
    assert isinstance(outcome, DeadLetterDecision)
    block = outcome.envelope.dead_letter
    assert isinstance(block, DeadLetter)
    assert block.error == "<str() of Unprintable raised ValueError>"
    assert block.exception == "Unprintable"
    accepted(outcome.envelope)


# --- str elements from redis-py ----------------------------------------------------------------


def test_a_non_utf8_element_read_as_str_is_rejected_with_its_bytes(client: redis.Redis) -> None:
    sent = raw_message().replace(b'"php"', b'"\xff\xfe"')
    client.rpush("orders", sent)
    element = client.lpop("orders")
    assert isinstance(element, str)
    reserved = redis_binding.reserve(element)
    assert reserved.body == sent
    outcome = Router().dispatch(element)
    assert isinstance(outcome, Reject)
    assert outcome.raw == sent
    assert [v.rule for v in outcome.violations] == [rules.JSON_INVALID]


def test_a_valid_element_read_as_str_is_dispatched(client: redis.Redis) -> None:
    client.rpush("orders", redis_binding.element(raw_message(), {"traceparent": "00-x"}))
    element = client.lpop("orders")
    assert isinstance(element, str)
    reserved = redis_binding.reserve(element)
    assert reserved.body == raw_message()
    assert reserved.headers == {"traceparent": "00-x"}


def test_a_lone_surrogate_no_decoder_made_is_kept_as_its_utf8_form() -> None:
    outcome = Router().dispatch('{"job":"\ud800"}')
    assert isinstance(outcome, Reject)
    assert outcome.raw == '{"job":"\ud800"}'.encode("utf-8", "surrogatepass")


# --- frame spoofing ----------------------------------------------------------------------------


def test_an_envelope_carrying_the_frame_keys_is_never_a_frame(client: redis.Redis) -> None:
    inner = raw_message(job="urn:babel:payments:refund").decode()
    spoof = raw_message(__bq_frame=1, body=inner, headers={"traceparent": "00-x"})
    verdict = ek.check(spoof, "babelqueue")
    assert verdict.ok  # unknown keys are kept, as the spec requires
    stored = verdict.envelope.to_json()  # type: ignore[union-attr]
    assert b'"__bq_frame":1' in stored
    client.rpush("orders", redis_binding.element(stored))
    reserved = redis_binding.reserve(client.lpop("orders"))  # type: ignore[arg-type]
    assert reserved == redis_binding.Reserved(stored, {})
    seen: list[str] = []
    router = Router()
    router.register(ORDER["job"], lambda env: seen.append(env.job))
    router.register("urn:babel:payments:refund", lambda env: seen.append(env.job))
    router.dispatch(reserved.body)
    assert seen == [ORDER["job"]]


@pytest.mark.parametrize(
    "frame",
    [
        {"__bq_frame": 2, "headers": {}, "body": "{}"},
        {"__bq_frame": True, "body": "{}"},
        {"__bq_frame": 1.0, "body": "{}"},
        {"__bq_frame": "1", "body": "{}"},
    ],
    ids=["version-2", "true", "float", "string"],
)
def test_a_frame_of_another_version_is_the_body_as_stored(frame: dict[str, Any]) -> None:
    stored = orjson.dumps({**frame, "body": raw_message().decode()})
    assert redis_binding.reserve(stored) == redis_binding.Reserved(stored, {})
    assert isinstance(Router().dispatch(stored), Reject)


def test_a_version_1_frame_is_unwrapped() -> None:
    stored = orjson.dumps(
        {"__bq_frame": 1, "headers": {"traceparent": "00-x"}, "body": raw_message().decode()}
    )
    assert redis_binding.reserve(stored) == redis_binding.Reserved(
        raw_message(), {"traceparent": "00-x"}
    )


# --- Release carries the bytes -----------------------------------------------------------------


def test_release_carries_the_bytes_as_received() -> None:
    # `timestamp` is a forbidden key: dropped from the envelope, kept in the bytes.
    raw = raw_message(timestamp=1, attempts=2)
    outcome = Router("release").dispatch(raw)
    assert isinstance(outcome, Release)
    assert outcome.raw == raw
    assert b"timestamp" not in outcome.envelope.to_json()
