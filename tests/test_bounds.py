"""Every producer refuses what default ``check`` refuses for its size or depth (_bounds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field

import envelopekit as ek
from envelopekit import ProducerError, Settings, _text
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorCode, MxRequest
from envelopekit.som import SomEnvelope

SYSTEM = {"system_id": "ncs-nyc-01", "system_type": "ncs"}
MIB = 1_048_576


def nested(levels: int) -> Any:
    """A value of ``levels`` arrays, one in another, around 1."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def bq_create(data: dict[str, Any], settings: Settings | None = None) -> BabelEnvelope[Any]:
    return BabelEnvelope.create("urn:babel:orders:created", data, settings=settings)


def bq_child(data: dict[str, Any], settings: Settings | None = None) -> BabelEnvelope[Any]:
    return bq_create({}).child("urn:babel:orders:shipped", data, settings=settings)


def som_create(data: dict[str, Any], settings: Settings | None = None) -> SomEnvelope[Any]:
    return SomEnvelope.create(
        "custom.event", data, originating_system=SYSTEM, allow_unknown=True, settings=settings
    )


def som_follow_up(data: dict[str, Any], settings: Settings | None = None) -> SomEnvelope[Any]:
    return som_create({}).follow_up(
        "custom.event", data, originating_system=SYSTEM, allow_unknown=True, settings=settings
    )


def mx_create(data: dict[str, Any], settings: Settings | None = None) -> MxRequest[Any]:
    return MxRequest.create("fs.list", data, expect_reply=True, settings=settings)


def mx_reply(data: dict[str, Any], settings: Settings | None = None) -> Any:
    return mx_create({}).reply(data, settings=settings)


def mx_fail(data: dict[str, Any], settings: Settings | None = None) -> Any:
    return mx_create({}).fail(MxErrorCode.INTERNAL, "boom", details=data, settings=settings)


Producer = Callable[..., Any]
PRODUCERS: dict[str, Producer] = {
    "babelqueue-create": bq_create,
    "babelqueue-child": bq_child,
    "som-create": som_create,
    "som-follow_up": som_follow_up,
    "matrix-create": mx_create,
    "matrix-reply": mx_reply,
    "matrix-fail": mx_fail,
}


def refused(produce: Callable[[], Any]) -> list[tuple[str, str]]:
    with pytest.raises(ProducerError) as caught:
        produce()
    return [(v.rule, v.pointer) for v in caught.value.violations]


def refused_rules(produce: Callable[[], Any]) -> list[str]:
    return [rule for rule, _ in refused(produce)]


@pytest.mark.parametrize("produce", PRODUCERS.values(), ids=PRODUCERS.keys())
@pytest.mark.parametrize(
    ("data", "rule"),
    [
        ({"text": "x" * MIB}, ek.rules.MESSAGE_TOO_LARGE),
        ({"items": nested(70)}, ek.rules.MESSAGE_TOO_DEEP),
        ({"items": nested(150)}, ek.rules.MESSAGE_TOO_DEEP),
    ],
    ids=["past-max_message_bytes", "past-max_depth", "far-past-max_depth"],
)
def test_a_producer_refuses_a_message_check_refuses(
    produce: Producer, data: dict[str, Any], rule: str
) -> None:
    assert refused_rules(lambda: produce(data)) == [rule]


@pytest.mark.parametrize(
    ("produce", "at"),
    [(bq_create, "/data/items"), (som_create, "/payload/items"), (mx_create, "/payload/items")],
    ids=["babelqueue", "som", "matrix"],
)
def test_a_producer_names_the_first_array_past_the_depth(produce: Producer, at: str) -> None:
    # The message is level 1, its data 2, the arrays 3 on: the one 62 below the first is 65th.
    assert refused(lambda: produce({"items": nested(70)})) == [
        (ek.rules.MESSAGE_TOO_DEEP, at + "/0" * 62)
    ]


@pytest.mark.parametrize("produce", PRODUCERS.values(), ids=PRODUCERS.keys())
def test_a_producer_keeps_to_the_settings_given(produce: Producer) -> None:
    data = {"items": nested(10), "text": "x" * 100}
    text = produce(data).to_json()
    size = len(text)
    depth = next(d for d in range(1, 64) if ek.check(text, settings=Settings(max_depth=d)).ok)
    # The same message at the settings' limits is made; a byte or a level past them is not.
    produce(data, Settings(max_message_bytes=size, max_depth=depth))
    too_large = Settings(max_message_bytes=size - 1)
    assert refused(lambda: produce(data, too_large)) == [(ek.rules.MESSAGE_TOO_LARGE, "")]
    too_deep = Settings(max_depth=depth - 1)
    assert refused_rules(lambda: produce(data, too_deep)) == [ek.rules.MESSAGE_TOO_DEEP]


@pytest.mark.parametrize("produce", PRODUCERS.values(), ids=PRODUCERS.keys())
def test_a_producer_refuses_past_the_parsers_depth_whatever_the_settings(
    produce: Producer,
) -> None:
    deep = Settings(max_depth=500)
    data = {"items": nested(205)}
    assert refused_rules(lambda: produce(data, deep)) == [ek.rules.MESSAGE_TOO_DEEP]


@pytest.mark.parametrize("produce", PRODUCERS.values(), ids=PRODUCERS.keys())
def test_a_producer_measures_floats_as_to_json_spells_them(produce: Producer) -> None:
    # orjson writes 1e-7 as `1e-7`, the reference encoder (to_json) as `1e-07`: a message
    # whose orjson text is within the limit while its own is not is refused, as check does.
    data = {"floats": [1e-7] * 2000}
    size = len(produce(data).to_json())
    assert refused(lambda: produce(data, Settings(max_message_bytes=size - 1))) == [
        (ek.rules.MESSAGE_TOO_LARGE, "")
    ]
    assert produce(data, Settings(max_message_bytes=size))


def test_som_create_refuses_past_the_bus_limit_within_max_message_bytes() -> None:
    made = som_create({"text": ""})
    room = 240_000 - len(made.to_json())
    at_limit = som_create({"text": "x" * room})
    assert len(at_limit.to_json()) == 240_000
    assert ek.check(at_limit.to_json()).ok
    assert not ek.check(som_create({"text": "x" * room}).to_json()[:-1] + b" }").ok
    assert refused(lambda: som_create({"text": "x" * (room + 1)})) == [
        (ek.rules.MESSAGE_TOO_LARGE, "")
    ]


class Wide(BaseModel):
    """A model whose wire name is longer than its Python name."""

    model_config = ConfigDict(populate_by_name=True)
    v: list[str] = Field(alias="a_much_longer_wire_name_for_v")


def test_a_typed_babelqueue_message_is_measured_by_its_wire_names() -> None:
    values = ["x"] * 10
    typed = BabelEnvelope[Wide]
    size = len(typed.create("urn:babel:x", Wide(v=values)).to_json())
    assert refused(
        lambda: typed.create(
            "urn:babel:x", Wide(v=values), settings=Settings(max_message_bytes=size - 1)
        )
    ) == [(ek.rules.MESSAGE_TOO_LARGE, "")]
    typed.create("urn:babel:x", Wide(v=values), settings=Settings(max_message_bytes=size))


def near_limit(extra: int) -> BabelEnvelope[Any]:
    """A BabelQueue message ``extra`` bytes short of the default limit."""
    shell = bq_create({"text": ""})
    room = MIB - len(shell.to_json()) - extra
    made = bq_create({"text": "x" * room}, Settings(max_message_bytes=2 * MIB))
    assert len(made.to_json()) == MIB - extra
    return made


def test_retried_refuses_a_message_its_count_takes_past_the_limit() -> None:
    at_nine = near_limit(0).model_copy(update={"attempts": 9})
    assert ek.check(at_nine.to_json()).ok
    assert refused(at_nine.retried) == [(ek.rules.MESSAGE_TOO_LARGE, "")]
    assert near_limit(1).model_copy(update={"attempts": 9}).retried().attempts == 10


def test_dead_lettered_refuses_a_dead_letter_past_the_limit() -> None:
    message = near_limit(1000)
    assert ek.check(message.to_json()).ok
    assert refused(lambda: message.dead_lettered("failed", error="e" * 1000)) == [
        (ek.rules.MESSAGE_TOO_LARGE, "")
    ]
    assert message.dead_lettered("failed", error="e").dead_letter


class _CountedOrjson:
    """``orjson``, counting what ``dumps`` writes."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    def dumps(self, value: Any, **options: Any) -> bytes:
        self.written.append(value)
        return orjson.dumps(value, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(orjson, name)


class Entry(BaseModel):
    name: str


ITEMS = {"items": [{"sku": "a-1", "qty": 2}], "note": "x"}
# (what is produced, the probes its validation writes of Python data: `_text.refuse_unreadable`)
WRITTEN_ONCE: dict[str, tuple[Callable[[MxRequest[Any]], Any], int]] = {
    "babelqueue-create": (lambda _: bq_create(ITEMS), 0),
    "som-create": (lambda _: som_create(ITEMS), 0),
    "matrix-create": (lambda _: mx_create(ITEMS), 0),
    "matrix-reply": (lambda request: request.reply(ITEMS), 0),
    # A model payload's text is its serializer's: its members are probed as before (an error
    # payload's once more, as `MxErrorPayload.of` validates it first).
    "matrix-model-reply": (lambda request: request.reply(Entry(name="a")), 1),
    "matrix-fail": (lambda request: request.fail(MxErrorCode.INTERNAL, "boom"), 2),
}


@pytest.mark.parametrize(("produce", "probes"), WRITTEN_ONCE.values(), ids=WRITTEN_ONCE.keys())
def test_a_producer_hands_its_text_to_validation_not_written_again(
    produce: Callable[[MxRequest[Any]], Any], probes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The text the bounds read is the one orjson wrote of the data validated: validation is
    # told so, and does not write it again to probe it (Matrix's create wrote it twice).
    request = mx_create({})
    counted = _CountedOrjson()
    monkeypatch.setattr(_text, "orjson", counted)
    made = produce(request)
    assert len(counted.written) == probes
    assert ek.check(made.to_json()).ok
