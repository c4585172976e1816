"""The consumer toolkit always decides (issue 12): every message ``check`` accepts gets an
outcome from ``Router.dispatch``, and every envelope it republishes is accepted again."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pydantic
import pytest
import redis
from babelqueue.codec import EnvelopeCodec
from babelqueue.redis_transport import _unframe

import envelopekit as ek
from envelopekit import ProducerError, rules
from envelopekit.babelqueue import (
    BabelEnvelope,
    DeadLetter,
    DeadLetterDecision,
    Reject,
    Release,
    Retry,
    Router,
)
from envelopekit.babelqueue import (
    redis as redis_binding,
)
from envelopekit.babelqueue._dead_letter import ERROR_TEXT_CHARS
from tests.conftest import DATA

logging.getLogger("babelqueue.codec").setLevel(logging.ERROR)

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


# --- a data model whose own code raises --------------------------------------------------------


def _model_raising(error: Exception) -> type[pydantic.BaseModel]:
    class Order(pydantic.BaseModel):
        order_id: int

        @pydantic.field_validator("order_id")
        @classmethod
        def looked_up(cls, value: int) -> int:
            raise error  # pydantic makes a ValidationError of ValueError only

    return Order


@pytest.mark.parametrize(
    "error",
    [KeyError("region"), TypeError("not a str"), ZeroDivisionError("by zero")],
    ids=["KeyError", "TypeError", "ZeroDivisionError"],
)
def test_a_model_validator_that_raises_is_retried_then_dead_lettered(error: Exception) -> None:
    router = Router(max_attempts=2)
    router.register(ORDER["job"], lambda _: None, _model_raising(error))
    retry = router.dispatch(raw_message(), queue="orders")
    assert isinstance(retry, Retry)
    assert retry.rule == rules.HANDLER_FAILED and retry.envelope.attempts == 1
    dead = router.dispatch(retry.envelope.to_json(), queue="orders")
    assert isinstance(dead, DeadLetterDecision)
    block = dead.envelope.dead_letter
    assert isinstance(block, DeadLetter)
    assert (block.reason, block.exception, block.attempts) == ("failed", type(error).__name__, 2)
    assert block.error == str(error)
    accepted(dead.envelope)


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


@pytest.mark.parametrize(
    "stored",
    [
        raw_message(__bq_frame=1, body=raw_message(job="urn:babel:payments:refund").decode()),
        orjson.dumps({"__bq_frame": 2, "headers": {}, "body": raw_message().decode()}),
    ],
    ids=["envelope-with-frame-keys", "version-2"],
)
def test_the_reference_unwraps_what_reserve_keeps_as_stored(stored: bytes) -> None:
    # The decision is ours, against the reference's: its `_unframe` takes any object with a
    # truthy `__bq_frame` and a string `body` for a frame (the README and the binding's
    # docstring say so). Pinned here, so that a change in the reference shows.
    body = orjson.loads(stored)["body"]
    assert _unframe(stored.decode()) == (body, {})
    assert redis_binding.reserve(stored) == redis_binding.Reserved(stored, {})


# --- Release carries the bytes -----------------------------------------------------------------


def test_release_carries_the_bytes_as_received() -> None:
    # `timestamp` is a forbidden key: dropped from the envelope, kept in the bytes.
    raw = raw_message(timestamp=1, attempts=2)
    outcome = Router("release").dispatch(raw)
    assert isinstance(outcome, Release)
    assert outcome.raw == raw
    assert b"timestamp" not in outcome.envelope.to_json()


# --- what is republished keeps within the size limit ------------------------------------------

LIMIT = 1 << 20  # Settings.max_message_bytes, envelopekit's own default (the spec sets none)
MARKER = re.compile(r"\.\.\. \[(\d+) more characters cut\]\Z")


def sized(size: int, **changes: Any) -> bytes:
    """The order fixture with ``data.pad`` grown so that the message is ``size`` bytes."""
    base = raw_message(**changes, data={**ORDER["data"], "pad": ""})
    raw = raw_message(**changes, data={**ORDER["data"], "pad": "y" * (size - len(base))})
    assert len(raw) == size
    return raw


def through_redis(client: redis.Redis, queue: str, body: bytes) -> bytes:
    """``body`` published to ``queue`` and consumed from it, as a worker reserves it."""
    client.rpush(queue, redis_binding.element(body))
    element = client.lpop(queue)
    assert isinstance(element, str)
    return redis_binding.reserve(element).body


def read_by_everyone(body: bytes) -> dict[str, Any]:
    """``body`` is what the next consumer's ``check`` and the official SDK accept."""
    assert len(body) <= LIMIT
    verdict = ek.check(body, "babelqueue")
    assert verdict.ok, verdict.violations
    decoded = EnvelopeCodec.decode(body.decode("utf-8"))
    assert EnvelopeCodec.accepts(decoded)
    return decoded


def dead_lettered_by(handler: Any, raw: bytes, client: redis.Redis, **options: Any) -> Any:
    """``raw`` consumed off Redis by a Router whose handler is ``handler``, max_attempts 1."""
    router = Router(max_attempts=1, **options)
    router.register(ORDER["job"], handler)
    return router.dispatch(through_redis(client, "orders", raw), queue="orders")


def test_a_5mb_exception_text_is_cut_in_the_dead_letter(client: redis.Redis) -> None:
    text = "é" * 5_000_000

    def handler(_: BabelEnvelope[Any]) -> None:
        raise RuntimeError(text)

    outcome = dead_lettered_by(handler, raw_message(), client)
    assert isinstance(outcome, DeadLetterDecision)
    body = through_redis(client, "orders.dlq", outcome.envelope.to_json())
    assert len(body) < len(raw_message()) + 10_000  # it was 10 MB
    decoded = read_by_everyone(body)
    error = decoded["dead_letter"]["error"]
    assert (
        error
        == "é" * ERROR_TEXT_CHARS + f"... [{5_000_000 - ERROR_TEXT_CHARS} more characters cut]"
    )
    assert decoded["dead_letter"]["exception"] == "RuntimeError"


def test_an_exception_type_name_is_cut_as_its_text_is(client: redis.Redis) -> None:
    loud = type("E" * 10_000, (Exception,), {})

    def handler(_: BabelEnvelope[Any]) -> None:
        raise loud("boom")

    outcome = dead_lettered_by(handler, raw_message(), client)
    assert isinstance(outcome, DeadLetterDecision)
    decoded = read_by_everyone(outcome.envelope.to_json())
    assert decoded["dead_letter"]["error"] == "boom"
    found = MARKER.search(decoded["dead_letter"]["exception"])
    assert found is not None and int(found[1]) == 10_000 - ERROR_TEXT_CHARS


def test_an_unknown_urn_of_900_kb_does_not_double_the_dead_letter(client: redis.Redis) -> None:
    urn = "urn:babel:orders:" + "x" * 900_000
    raw = through_redis(client, "orders", raw_message(job=urn))
    assert ek.check(raw, "babelqueue").ok
    outcome = Router("dead_letter").dispatch(raw, queue="orders")
    assert isinstance(outcome, DeadLetterDecision)
    decoded = read_by_everyone(through_redis(client, "orders.dlq", outcome.envelope.to_json()))
    assert decoded["job"] == urn
    assert MARKER.search(decoded["dead_letter"]["error"]) is not None


@pytest.mark.parametrize("gap", [300, 1_000, 4_000])
def test_a_message_near_the_limit_dead_letters_within_it(client: redis.Redis, gap: int) -> None:
    raw = sized(LIMIT - gap)
    outcome = dead_lettered_by(lambda _: 1 / 0, raw, client)  # ZeroDivisionError
    assert isinstance(outcome, DeadLetterDecision), outcome
    decoded = read_by_everyone(through_redis(client, "orders.dlq", outcome.envelope.to_json()))
    block = decoded["dead_letter"]
    assert (block["reason"], block["exception"], block["original_queue"]) == (
        "failed",
        "ZeroDivisionError",
        "orders",
    )
    assert decoded["data"] == orjson.loads(raw)["data"]


def test_a_long_error_is_cut_shorter_to_fit_the_limit(client: redis.Redis) -> None:
    def handler(_: BabelEnvelope[Any]) -> None:
        raise RuntimeError("z" * 3_000)

    outcome = dead_lettered_by(handler, sized(LIMIT - 2_000), client)
    assert isinstance(outcome, DeadLetterDecision)
    body = outcome.envelope.to_json()
    assert LIMIT - 100 <= len(body) <= LIMIT  # cut as much as needed, no more
    error = read_by_everyone(body)["dead_letter"]["error"]
    found = MARKER.search(error)
    assert found is not None
    assert error == "z" * (3_000 - int(found[1])) + found[0]


@pytest.mark.parametrize("gap", [0, 1, 150])
def test_a_message_too_near_the_limit_is_quarantined_as_received(
    client: redis.Redis, gap: int
) -> None:
    raw = sized(LIMIT - gap)
    outcome = dead_lettered_by(failing, raw, client)
    assert isinstance(outcome, Reject)
    assert outcome.raw == raw
    assert [v.rule for v in outcome.violations] == [rules.MESSAGE_TOO_LARGE, rules.HANDLER_FAILED]
    assert outcome.violations[0].message.endswith(f"over {LIMIT}: quarantined as received.")
    assert outcome.violations[1].message == "RuntimeError: boom"
    # The worker quarantines the bytes as received: the next reader takes them.
    assert through_redis(client, "orders.dlq", outcome.raw) == raw
    read_by_everyone(raw)


def test_an_unknown_urn_too_near_the_limit_is_quarantined_as_received() -> None:
    raw = sized(LIMIT, job="urn:babel:nobody:listens")
    outcome = Router("dead_letter").dispatch(raw, queue="orders")
    assert isinstance(outcome, Reject)
    assert [v.rule for v in outcome.violations] == [rules.MESSAGE_TOO_LARGE, rules.URN_UNKNOWN]


def test_a_retry_that_would_pass_the_limit_is_quarantined(client: redis.Redis) -> None:
    # attempts 9 -> 10: one byte more than the limit.
    raw = sized(LIMIT, attempts=9)
    router = Router(max_attempts=20)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(through_redis(client, "orders", raw), queue="orders")
    assert isinstance(outcome, Reject)
    assert outcome.raw == raw
    assert outcome.violations[0].message == (
        f"Its retry would be {LIMIT + 1} bytes, over {LIMIT}: quarantined as received."
    )
    # One byte less and it is retried.
    outcome = router.dispatch(sized(LIMIT - 1, attempts=9), queue="orders")
    assert isinstance(outcome, Retry)
    read_by_everyone(outcome.envelope.to_json())


def test_a_retry_whose_numbers_grow_when_re_encoded_is_quarantined() -> None:
    # 1E15 is written 1000000000000000.0 by the reference encoder: 5 bytes become 19.
    numbers = b"[" + b",".join([b"1E15"] * 60_000) + b"]"
    raw = raw_message(data={"n": 0}).replace(b'"n":0', b'"n":' + numbers)
    assert len(raw) < LIMIT // 3 and ek.check(raw, "babelqueue").ok
    router = Router()
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(raw, queue="orders")
    assert isinstance(outcome, Reject)
    assert outcome.raw == raw
    assert outcome.violations[0].rule == rules.MESSAGE_TOO_LARGE


def test_the_router_takes_its_limit_from_settings() -> None:
    raw = sized(4_000)
    small = Router(max_attempts=1, settings=ek.Settings(max_message_bytes=4_100))
    small.register(ORDER["job"], failing)
    assert isinstance(small.dispatch(raw), Reject)
    roomy = Router(max_attempts=1, settings=ek.Settings(max_message_bytes=5_000))
    roomy.register(ORDER["job"], failing)
    assert isinstance(roomy.dispatch(raw), DeadLetterDecision)


def test_a_message_received_over_the_limit_is_rejected_as_check_refuses_it() -> None:
    raw = sized(LIMIT + 10)
    router = Router(max_attempts=1)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(raw, queue="orders")
    assert isinstance(outcome, Reject)
    assert outcome.raw == raw
    assert outcome.violations == ek.check(raw, "babelqueue").violations
    assert [v.rule for v in outcome.violations] == [rules.MESSAGE_TOO_LARGE]
    # A larger limit of the router's own reads it, and settles it as any message.
    roomy = Router(max_attempts=1, settings=ek.Settings(max_message_bytes=2 * LIMIT))
    roomy.register(ORDER["job"], failing)
    assert isinstance(roomy.dispatch(raw, queue="orders"), DeadLetterDecision)


def test_an_envelope_given_over_the_limit_is_dead_lettered() -> None:
    # Nothing republished in its place could be within the limit: it goes on as decided.
    envelope = BabelEnvelope.model_validate_json(sized(LIMIT + 10))
    router = Router(max_attempts=1)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(envelope, queue="orders")
    assert isinstance(outcome, DeadLetterDecision)
    assert outcome.envelope.dead_letter.error == "boom"  # type: ignore[union-attr]


def _repeated_key() -> bytes:
    raw = raw_message()
    return raw.replace(b'"data":{', b'"data":{"k":1,"k":2,', 1)


def _too_deep() -> bytes:
    deep: list[Any] = []
    for _ in range(70):
        deep = [deep]
    return raw_message(data={"deep": deep})


# Each a message the model alone reads: only check's reading (its settings) refuses it.
@pytest.mark.parametrize(
    ("message", "rule"),
    [(_repeated_key, rules.JSON_DUPLICATE_KEY), (_too_deep, rules.MESSAGE_TOO_DEEP)],
    ids=["duplicate-keys", "too-deep"],
)
def test_the_router_refuses_what_check_refuses_under_its_settings(
    message: Callable[[], bytes], rule: str
) -> None:
    raw = message()
    BabelEnvelope.model_validate_json(raw)
    settings = ek.Settings(duplicate_keys="refuse")
    router = Router(settings=settings)
    router.register(ORDER["job"], failing)
    outcome = router.dispatch(raw)
    assert isinstance(outcome, Reject)
    assert outcome.violations == ek.check(raw, "babelqueue", settings=settings).violations
    assert rule in {v.rule for v in outcome.violations}


# --- the Router's own API called with what it does not take -----------------------------------


@pytest.mark.parametrize(
    "message",
    [10**6, [123, 125], None, {"job": "urn:babel:orders:created"}],
    ids=["int-size", "list-of-ints", "none", "dict"],
)
def test_a_message_that_is_no_bytes_or_str_is_a_type_error(message: Any) -> None:
    # `bytes(10**6)` allocated a megabyte of zeros (and `bytes([123, 125])` read as `{}`).
    with pytest.raises(TypeError, match="bytes or str"):
        Router().route(message)


@pytest.mark.parametrize(
    ("settings", "error"),
    [
        ({"max_attempts": 1.5}, TypeError),
        ({"max_attempts": float("nan")}, TypeError),  # dead-lettered every first failure
        ({"max_attempts": float("inf")}, TypeError),  # retried forever
        ({"max_attempts": True}, TypeError),
        ({"max_attempts": "3"}, TypeError),
        ({"dlq_suffix": ""}, ValueError),  # the dead-letter queue was the queue itself
        ({"dlq_suffix": 5}, TypeError),
        ({"unknown_urn": ["fail"]}, ValueError),
    ],
    ids=repr,
)
def test_a_router_configured_oddly_is_refused(settings: dict[str, Any], error: type) -> None:
    with pytest.raises(error, match=next(iter(settings))):
        Router(**settings)


@pytest.mark.parametrize(
    ("urn", "handler"),
    [
        (None, lambda env: None),
        (7, lambda env: None),
        ("urn:babel:orders:created", "not a handler"),
        ("urn:babel:orders:created", None),
    ],
    ids=["none-urn", "int-urn", "str-handler", "none-handler"],
)
def test_a_registration_of_the_wrong_types_is_a_type_error(urn: Any, handler: Any) -> None:
    router = Router()
    with pytest.raises(TypeError):
        router.register(urn, handler)
    assert router.urns() == []
