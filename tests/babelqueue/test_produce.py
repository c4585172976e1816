"""Producer rules: create, child, retried, dead_lettered."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import math
import re
import time
import uuid
from functools import partial
from typing import Any, Generic, TypeVar

import orjson
import pytest
import typing_extensions
from pydantic import BaseModel, Field, ValidationError

import envelopekit as ek
from envelopekit import ProducerError
from envelopekit._compat import MISSING
from envelopekit.babelqueue import BabelEnvelope, DeadLetter

UUID4 = re.compile(r"\A[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")


def test_create_defaults() -> None:
    before = int(time.time() * 1000)
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1})
    after = int(time.time() * 1000)
    assert env.job == "urn:babel:orders:created"
    assert env.meta.lang == "python"
    assert env.meta.schema_version == 1
    assert env.meta.queue == "default"
    assert env.attempts == 0
    assert before <= env.meta.created_at <= after
    assert UUID4.match(env.meta.id) and UUID4.match(env.trace_id)
    assert env.meta.id != env.trace_id
    assert list(orjson.loads(env.to_json())) == ["job", "trace_id", "data", "meta", "attempts"]
    assert list(orjson.loads(env.to_json())["meta"]) == [
        "id",
        "queue",
        "lang",
        "schema_version",
        "created_at",
    ]


def test_create_takes_the_queue_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_BABELQUEUE_QUEUE", "orders")
    ek.get_settings.cache_clear()
    assert BabelEnvelope.create("urn:babel:a:b", {}).meta.queue == "orders"
    assert BabelEnvelope.create("urn:babel:a:b", {}, queue="q").meta.queue == "q"


@pytest.mark.parametrize("urn", ["", "   ", "\t\n"], ids=["empty", "spaces", "tab-newline"])
def test_blank_urn_raises(urn: str) -> None:
    with pytest.raises(ProducerError):
        BabelEnvelope.create(urn, {})


def test_urn_is_stripped() -> None:
    assert BabelEnvelope.create("  urn:babel:a:b \n", {}).job == "urn:babel:a:b"


def test_trace_id_is_reused_or_minted() -> None:
    trace = str(uuid.uuid4())
    assert BabelEnvelope.create("urn:babel:a:b", {}, trace_id=trace).trace_id == trace
    assert UUID4.match(BabelEnvelope.create("urn:babel:a:b", {}, trace_id="  ").trace_id)
    with pytest.raises(ProducerError) as caught:
        BabelEnvelope.create("urn:babel:a:b", {}, trace_id="trace-xyz")
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("message-envelope.format.uuid", "/trace_id")
    ]


def test_ids_are_fresh_per_message() -> None:
    ids = {BabelEnvelope.create("urn:babel:a:b", {}).meta.id for _ in range(200)}
    assert len(ids) == 200


def test_data_is_copied_and_checked() -> None:
    data: dict[str, Any] = {"a": 1}
    env = BabelEnvelope.create("urn:babel:a:b", data)
    data["a"] = 2
    assert env.data == {"a": 1}
    with pytest.raises(ProducerError) as caught:
        BabelEnvelope.create("urn:babel:a:b", {"x": float("nan")})
    assert [(v.rule, v.pointer) for v in caught.value.violations] == [
        ("number.non_finite", "/data/x")
    ]
    with pytest.raises(ProducerError, match=r"^/data/x: "):
        BabelEnvelope.create("urn:babel:a:b", {"x": 2**64})


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"at": datetime.datetime(2026, 1, 2, 3, 4, 5)}, "/data/at"),
        ({"amount": decimal.Decimal("9.90")}, "/data/amount"),
        ({"lines": [1, {"raw": b"x"}]}, "/data/lines/1/raw"),
        ({"tags": {"a"}}, "/data/tags"),
        ({"id": uuid.uuid4()}, "/data/id"),
        ({7: "seven"}, "/data"),
        ({"a/b": {"text": "\ud800"}}, "/data/a~1b/text"),
    ],
    ids=["datetime", "decimal", "bytes", "set", "uuid", "int-key", "lone-surrogate"],
)
def test_create_refuses_data_that_is_not_pure_json(data: dict[Any, Any], where: str) -> None:
    # orjson would spell a datetime or UUID its own way, the reference encoders raise: neither
    # may reach the wire (GR-3), so the producer hears of it, with the place.
    with pytest.raises(ProducerError, match=f"^{re.escape(where)}: "):
        BabelEnvelope.create("urn:babel:orders:created", data)


def test_create_takes_tuples_and_models_inside_data_as_json() -> None:
    class Line(BaseModel):
        sku: str

    env = BabelEnvelope.create("urn:babel:orders:created", {"pair": (1, 2), "line": Line(sku="A")})
    assert env.data == {"pair": [1, 2], "line": {"sku": "A"}}
    assert b'"data":{"pair":[1,2],"line":{"sku":"A"}}' in env.to_json()


def test_child_continues_the_trace() -> None:
    parent = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    child = parent.child("urn:babel:billing:invoice.requested", {"order_id": 1})
    assert child.trace_id == parent.trace_id
    assert child.meta.id != parent.meta.id
    assert child.job == "urn:babel:billing:invoice.requested"
    assert child.attempts == 0


def test_retried_changes_only_attempts() -> None:
    raw = (
        b'{"job":"urn:babel:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{},'
        b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"go",'
        b'"schema_version":1,"created_at":1749132727000,"x":1},"attempts":2,"top":[1]}'
    )
    env = BabelEnvelope.model_validate_json(raw)
    again = env.retried()
    assert again.attempts == 3
    assert again.to_json() == raw.replace(b'"attempts":2', b'"attempts":3')
    assert env.attempts == 2


def test_dead_lettered_adds_the_block_and_keeps_the_rest() -> None:
    env = BabelEnvelope.create("urn:babel:orders:created", {"order_id": 1}, queue="orders")
    env = env.retried().retried().retried()
    dlq = env.dead_lettered("failed", error=TimeoutError("gateway timeout"))
    block = dlq.dead_letter
    assert isinstance(block, DeadLetter)
    assert block.reason == "failed"
    assert block.error == "gateway timeout"
    assert block.exception == "TimeoutError"
    assert block.original_queue == "orders"
    assert block.attempts == 3
    assert block.lang == "python"
    out = orjson.loads(dlq.to_json())
    assert list(out) == ["job", "trace_id", "data", "meta", "attempts", "dead_letter"]
    assert list(out["dead_letter"]) == [
        "reason",
        "error",
        "exception",
        "failed_at",
        "original_queue",
        "attempts",
        "lang",
    ]
    del out["dead_letter"]
    assert out == orjson.loads(env.to_json())
    assert env.dead_letter is MISSING


def test_dead_lettered_with_no_cause_writes_nulls() -> None:
    env = BabelEnvelope[dict[str, Any]].create("urn:babel:a:b", {})
    block = orjson.loads(env.dead_lettered("unknown_urn", original_queue="in").to_json())
    assert block["dead_letter"]["error"] is None
    assert block["dead_letter"]["exception"] is None
    assert block["dead_letter"]["original_queue"] == "in"


def test_dead_lettered_refuses_an_unknown_reason() -> None:
    env = BabelEnvelope[dict[str, Any]].create("urn:babel:a:b", {})
    with pytest.raises(ProducerError):
        env.dead_lettered("max_attempts")  # type: ignore[arg-type]


def test_meta_is_immutable() -> None:
    env = BabelEnvelope[dict[str, Any]].create("urn:babel:a:b", {})
    with pytest.raises(ValidationError):
        env.meta.queue = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        env.attempts = 5  # type: ignore[misc]


class OrderCreated(BaseModel):
    order_id: int
    amount_cents: int


def test_typed_create_round_trips() -> None:
    env = BabelEnvelope[OrderCreated].create(
        "urn:babel:orders:created", OrderCreated(order_id=1, amount_cents=9990)
    )
    again = BabelEnvelope[OrderCreated].model_validate_json(env.to_json())
    assert again.data == env.data
    assert again.data.amount_cents == 9990


def test_a_mutated_extra_never_emits_a_canonical_or_forbidden_key() -> None:
    raw = (
        b'{"job":"urn:babel:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{},'
        b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"go",'
        b'"schema_version":1,"created_at":1749132727000,"m":1},"attempts":0,"x":1}'
    )
    env = BabelEnvelope.model_validate_json(raw)
    assert env.model_extra is not None and env.meta.model_extra is not None
    env.model_extra.update({"timestamp": 5, "job": "urn:evil", "urn": "u"})
    env.meta.model_extra.update({"ts": 5, "id": "other", "source": "x"})
    out = orjson.loads(env.to_json())
    assert out["job"] == "urn:babel:a:b" and "timestamp" not in out and "urn" not in out
    assert out["meta"]["id"] == "f1e2d3c4-b5a6-4789-90ab-cdef01234567"
    assert "ts" not in out["meta"] and "source" not in out["meta"]
    assert out["x"] == 1 and out["meta"]["m"] == 1


def test_create_refuses_a_trace_id_that_is_not_a_string() -> None:
    with pytest.raises(ProducerError):
        BabelEnvelope.create("urn:babel:a:b", {"n": 1}, trace_id=123)  # type: ignore[call-overload]


class _Sku(BaseModel):
    sku: str


@dataclasses.dataclass
class _Ratio:
    x: float


@dataclasses.dataclass
class _Blob:
    b: bytes


@dataclasses.dataclass
class _Count:
    n: int


@pytest.mark.parametrize(
    ("data_type", "data", "refused"),
    [
        (_Ratio, _Ratio(math.nan), [("number.non_finite", "/data/x")]),
        (_Ratio, _Ratio(math.inf), [("number.non_finite", "/data/x")]),
        (_Count, _Count(2**70), [("number.out_of_range", "/data/n")]),
        (_Blob, _Blob(b"\xff"), [("json.invalid", "/data")]),
        (list[_Ratio], [_Ratio(1.0)], [("message-envelope.type", "/data")]),
        (datetime.datetime, datetime.datetime(2026, 1, 1), [("message-envelope.type", "/data")]),
        (_Ratio, _Ratio(1.5), []),
        (_Blob, _Blob(b"ok"), []),
        (dict[str, _Sku], {"a": _Sku(sku="x")}, []),
        (dict[str, _Sku], {"a": {"sku": "x"}}, []),
    ],
    ids=[
        "nan",
        "inf",
        "beyond-int64",
        "bytes-not-utf8",
        "list-not-object",
        "datetime-not-object",
        "dataclass",
        "bytes-utf8",
        "dict-of-models",
        "dict-of-model-data",
    ],
)
def test_typed_data_is_produced_only_as_check_accepts_it(
    data_type: Any, data: Any, refused: list[tuple[str, str]]
) -> None:
    # A parametrised data that is no model: its values are read as its type writes them.
    try:
        made = BabelEnvelope[data_type].create("urn:babel:orders:created", data)
    except ProducerError as exc:
        assert [(v.rule, v.pointer) for v in exc.violations] == refused
        return
    assert refused == []
    assert ek.check(made.to_json(), spec="babelqueue").ok


class _UsersEnvelope(BabelEnvelope):
    """A user's subclass, still generic in its data."""


_Data = TypeVar("_Data")


class _UsersGenericEnvelope(BabelEnvelope[_Data], Generic[_Data]):
    """A user's subclass generic in a type variable of its own, which no default binds."""


@pytest.mark.parametrize("any_", [Any, typing_extensions.Any], ids=["typing", "typing_extensions"])
@pytest.mark.parametrize(
    "envelope",
    [BabelEnvelope, _UsersEnvelope, _UsersGenericEnvelope],
    ids=["BabelEnvelope", "subclass", "generic subclass"],
)
def test_an_envelope_of_any_data_is_the_plain_envelope(envelope: Any, any_: Any) -> None:
    # As a data type `Any` took any JSON value: `create` wrote `"data": [1]`, which `check`
    # (and every official SDK) refuses, and both doors read it back.
    assert envelope[any_] is envelope
    with pytest.raises(ProducerError) as refused:
        envelope[any_].create("urn:a:b", [1])
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("message-envelope.type", "/data")
    ]
    raw = BabelEnvelope.create("urn:a:b", {"k": 1}).to_json().replace(b'{"k":1}', b"[1]")
    assert not ek.check(raw).ok
    for read in (
        partial(envelope[any_].model_validate_json, raw),
        partial(envelope[any_].model_validate, orjson.loads(raw)),
    ):
        with pytest.raises(ValidationError) as caught:
            read()
        assert [(v.rule, v.pointer) for v in ek.violations(caught.value, model=envelope)] == [
            ("message-envelope.type", "/data")
        ]


class _Paid(BabelEnvelope[OrderCreated]):
    """A user's subclass typed by a model."""


class _Objects(BabelEnvelope[dict[str, Any]]):
    """A user's subclass typed by a JSON object, which no model is."""


_Other = TypeVar("_Other")


class _TwoParameters(BabelEnvelope[_Data], Generic[_Other, _Data]):
    """A user's subclass generic in more than its data type: no one class fills it."""


class _Aliased(BaseModel):
    order_id: int = Field(alias="orderId")
    big: int = 0


@pytest.mark.parametrize(
    "envelope",
    [BabelEnvelope, _UsersEnvelope, _UsersGenericEnvelope],
    ids=["BabelEnvelope", "subclass", "generic subclass"],
)
def test_a_model_makes_a_class_generic_in_its_data_typed_by_the_model(envelope: Any) -> None:
    # `BabelEnvelope.create(urn, Model(...))` raised ProducerError (`message-envelope.type` at
    # /data: a JSON object is no model) though the type checkers typed it `BabelEnvelope[Model]`.
    made = envelope.create("urn:babel:orders:created", OrderCreated(order_id=1, amount_cents=5))
    assert type(made) is envelope[OrderCreated]
    assert made.data == OrderCreated(order_id=1, amount_cents=5)
    wire = made.to_json()
    assert orjson.loads(wire)["data"] == {"order_id": 1, "amount_cents": 5}
    assert ek.check(wire, spec="babelqueue").ok
    assert BabelEnvelope[OrderCreated].model_validate_json(wire).data == made.data


def test_a_model_on_the_plain_class_is_written_and_held_as_its_typed_envelope_writes_it() -> None:
    aliased = BabelEnvelope.create("urn:babel:orders:created", _Aliased(orderId=7, big=2**60))
    assert orjson.loads(aliased.to_json())["data"] == {"orderId": 7, "big": 2**60}
    assert [(v.rule, v.pointer) for v in aliased.envelope_warnings()] == [
        ("number.unsafe_integer", "/data/big")
    ]
    with pytest.raises(ProducerError) as refused:
        BabelEnvelope.create("urn:babel:orders:created", _Aliased(orderId=7, big=2**70))
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("number.out_of_range", "/data/big")
    ]


@pytest.mark.parametrize(
    "envelope",
    [
        BabelEnvelope[OrderCreated],
        _Paid,
        _UsersGenericEnvelope[OrderCreated],
        _Objects,
        BabelEnvelope[dict[str, Any]],
        _TwoParameters,
    ],
    ids=["parametrised", "subclass", "generic subclass", "objects", "object-typed", "two"],
)
def test_a_model_of_another_class_than_the_data_type_is_refused(envelope: Any) -> None:
    with pytest.raises(ProducerError) as refused:
        envelope.create("urn:babel:orders:created", _Sku(sku="x"))
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("message-envelope.type", "/data")
    ]


def test_a_model_of_the_data_type_makes_the_class_called() -> None:
    made = _Paid.create("urn:babel:orders:created", OrderCreated(order_id=1, amount_cents=5))
    assert type(made) is _Paid
    assert made.data == OrderCreated(order_id=1, amount_cents=5)
