"""A BabelQueue envelope instance given to another envelope class is read as the message it is.

A user's subclass (``class Orders(BabelEnvelope[Order])``) refused a plain ``BabelEnvelope``
whole (``message-envelope.type``), and through ``from_attributes`` (FastAPI's
``response_model``) read its attributes alone: the message's unknown top-level keys, which a
consumer keeps and re-emits, were dropped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict

import envelopekit as ek
from envelopekit.babelqueue import BabelEnvelope
from tests._instances import disagreements, doors, part_disagreements


class Order(BaseModel):
    order_id: int


class Named(BaseModel):
    name: str


class DatedOrder(TypedDict):
    order_id: int
    at: str


class Orders(BabelEnvelope[Order]):
    """A user's subclass of a typed envelope."""


class DatedOrders(BabelEnvelope[DatedOrder]):
    """A user's subclass whose ``data`` is typed by no model (read as its JSON text)."""


def _wire() -> dict[str, Any]:
    sent = BabelEnvelope.create("urn:shop:order:created", {"order_id": 7, "at": "2026-01-01"})
    # An unknown top-level key and an unknown `meta` key, kept and re-emitted by consumers.
    wire: dict[str, Any] = json.loads(sent.to_json())
    return {**wire, "x_route": "eu", "meta": {**wire["meta"], "x_hop": 2}}


WIRE = _wire()


def test_an_envelope_instance_is_read_as_its_message_by_every_door() -> None:
    instances = [
        BabelEnvelope.model_validate(WIRE),
        BabelEnvelope[Order].model_validate(WIRE),
        Orders.model_validate(WIRE),
        DatedOrders.model_validate(WIRE),
    ]
    targets = [BabelEnvelope, BabelEnvelope[Order], BabelEnvelope[Named], Orders, DatedOrders]
    pairs = [(target, instance) for target in targets for instance in instances]
    assert disagreements(pairs) == []


def test_fastapi_s_door_keeps_the_unknown_keys_of_a_plain_envelope_given_to_a_subclass() -> None:
    for target in (Orders, DatedOrders):
        read = doors(target)["from_attributes"](BabelEnvelope.model_validate(WIRE))
        assert isinstance(read, target)
        assert read.model_extra == {"x_route": "eu"}
        assert read.to_json() == target.model_validate(WIRE).to_json()


_NOT_AN_ID: Any = "x"


class MyOrder(Order):
    """A user's model deriving from another."""

    note: str = ""


class MyOrders(BabelEnvelope[MyOrder]):
    """A user's subclass typed by it."""


def test_a_base_model_s_instance_as_data_in_a_dict_is_read_as_its_wire_data() -> None:
    # `BabelEnvelope[MyOrder]` given `data=Order(...)` (a dict built by hand) refused it as
    # `message-envelope.type` at /data, where an envelope holding that instance is read.
    parts = [Order(order_id=7), MyOrder(order_id=7, note="x")]
    # Read as its data by a class that does not keep it: refused where its JSON is.
    wrong = Order.model_construct(order_id=_NOT_AN_ID)
    found: list[str] = []
    for target in (BabelEnvelope[MyOrder], MyOrders):
        for part in [*parts, wrong]:
            found += part_disagreements(target, WIRE, "data", part)
    for root in (BabelEnvelope[Order], Orders):
        found += part_disagreements(root, WIRE, "data", parts[0])
    assert found == []
    with pytest.raises(ValidationError) as caught:
        MyOrders.model_validate({**WIRE, "data": wrong})
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [
        ("message-envelope.type", "/data/order_id")
    ]


@pytest.mark.parametrize("door", ["model_validate", "type_adapter", "held"])
def test_an_unrelated_model_s_instance_as_data_is_refused_as_pydantic_refuses_it(
    door: str,
) -> None:
    with pytest.raises(ValidationError) as caught:
        doors(MyOrders)[door]({**WIRE, "data": Named(name="x")})
    found = ek.violations(caught.value, model=MyOrders)
    assert [(v.rule, v.pointer) for v in found] == [("message-envelope.type", "/data")]
