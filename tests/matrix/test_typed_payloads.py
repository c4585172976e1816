"""A typed payload (``MxRequest[Model]``, ``MxResponse[Model]``) is held to the number rules.

The JSON payload's rules (NaN and Infinity refused, integers outside signed 64-bit refused,
those beyond 2^53-1 warned of), as ``check`` applies them and ``BabelEnvelope[Model]`` applies
its own to a typed ``data``: a model's float field took ``NaN`` and ``1e400`` and an int field
2^63, silently, where ``check`` refuses the very message.
"""

from __future__ import annotations

import json
from typing import Any, Generic

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import TypeVar

from envelopekit import ProducerError, check, violations
from envelopekit._json import needs_scan, written_plain
from envelopekit.matrix import MxRequest, MxResponse
from tests._calls import python_calls


class Numbers(BaseModel):
    n: int = 0
    f: float = 0.0
    a: Any = None
    items: list[int] = []
    s: str = ""


_REQUEST = json.loads(MxRequest.create("fs.list", {}, expect_reply=True).to_json())
_RESPONSE = json.loads(MxRequest.model_validate(_REQUEST).reply({}).to_json())
_LARGE = '"s":"' + "x" * 20_000 + '",'  # past the 16 KiB a large message is read past

REFUSED = {
    "float-nan": ('{"f":NaN}', "number.non_finite", "/payload/f"),
    "float-1e400": ('{"f":1e400}', "number.non_finite", "/payload/f"),
    "float-minus-infinity": ('{"f":-Infinity}', "number.non_finite", "/payload/f"),
    "any-nan": ('{"a":{"k":[NaN]}}', "number.non_finite", "/payload/a/k/0"),
    "int-2^63": ('{"n":9223372036854775808}', "number.out_of_range", "/payload/n"),
    "int-below-int64": ('{"n":-9223372036854775809}', "number.out_of_range", "/payload/n"),
    "list-2^64": ('{"items":[1,18446744073709551616]}', "number.out_of_range", "/payload/items/1"),
    "any-2^70": ('{"a":1180591620717411303424}', "number.out_of_range", "/payload/a"),
    "large-float-nan": ("{" + _LARGE + '"f":NaN}', "number.non_finite", "/payload/f"),
}
WARNED = {
    "int-2^53+1": ('{"n":9007199254740993}', ["/payload/n"]),
    "any-2^53+1": ('{"a":{"k":9007199254740993}}', ["/payload/a/k"]),
    "list-both": (
        '{"items":[9007199254740993,-9007199254740993]}',
        ["/payload/items/0", "/payload/items/1"],
    ),
}


def _text(kind: str, payload: str) -> str:
    message = _REQUEST if kind == "request" else _RESPONSE
    return json.dumps({**message, "payload": "@"}).replace('"@"', payload)


def _typed(kind: str) -> type[MxRequest[Numbers]] | type[MxResponse[Numbers]]:
    return MxRequest[Numbers] if kind == "request" else MxResponse[Numbers]


@pytest.mark.parametrize("door", ["json", "python"])
@pytest.mark.parametrize("kind", ["request", "response"])
@pytest.mark.parametrize(("payload", "rule", "pointer"), REFUSED.values(), ids=list(REFUSED))
def test_a_typed_payload_refuses_what_check_refuses(
    payload: str, rule: str, pointer: str, kind: str, door: str
) -> None:
    text = _text(kind, payload)
    verdict = check(text, "matrix")
    assert [(v.rule, v.pointer) for v in verdict.violations][:1] == [(rule, pointer)]
    with pytest.raises(ValidationError) as refused:
        if door == "json":
            _typed(kind).model_validate_json(text)
        else:
            _typed(kind).model_validate(json.loads(text))
    assert [(v.rule, v.pointer) for v in violations(refused.value)] == [(rule, pointer)]


@pytest.mark.parametrize("door", ["json", "python"])
@pytest.mark.parametrize("kind", ["request", "response"])
@pytest.mark.parametrize(("payload", "pointers"), WARNED.values(), ids=list(WARNED))
def test_a_typed_payload_warns_of_what_check_warns_of(
    payload: str, pointers: list[str], kind: str, door: str
) -> None:
    text = _text(kind, payload)
    expected = [(w.rule, w.pointer) for w in check(text, "matrix").warnings]
    assert expected == [("number.unsafe_integer", at) for at in pointers]
    typed = _typed(kind)
    read = (
        typed.model_validate_json(text)
        if door == "json"
        else typed.model_validate(json.loads(text))
    )
    assert [(w.rule, w.pointer) for w in read.envelope_warnings()] == expected


@pytest.mark.parametrize("kind", ["request", "response"])
def test_a_typed_payload_of_plain_numbers_is_read_with_no_finding(kind: str) -> None:
    text = _text(kind, '{"n":9007199254740991,"f":1e308,"items":[-1,0],"a":{"k":0.5}}')
    read = _typed(kind).model_validate_json(text)
    assert isinstance(read.payload, Numbers) and read.envelope_warnings() == []


@pytest.mark.parametrize(
    ("given", "rule", "pointer"),
    [
        (Numbers(f=float("nan")), "number.non_finite", "/payload/f"),
        (Numbers(a={"k": [float("-inf")]}), "number.non_finite", "/payload/a/k/0"),
        (Numbers(n=2**63), "number.out_of_range", "/payload/n"),
    ],
    ids=["nan", "any-minus-infinity", "int-2^63"],
)
@pytest.mark.parametrize("producer", ["create", "typed-create", "reply"])
def test_a_model_payload_is_refused_by_its_producer_as_its_reader_refuses_it(
    given: Numbers, rule: str, pointer: str, producer: str
) -> None:
    with pytest.raises(ProducerError) as refused:
        if producer == "create":
            MxRequest.create("fs.list", given)
        elif producer == "typed-create":
            MxRequest[Numbers].create("fs.list", given)
        else:
            MxRequest.model_validate(_REQUEST).reply(given)
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [(rule, pointer)]


@pytest.mark.parametrize("kind", ["request", "response"])
@pytest.mark.parametrize(
    ("last", "rule"),
    [("1e400", "number.non_finite"), ("9223372036854775808", "number.out_of_range")],
    ids=["non-finite", "beyond-int64"],
)
def test_a_large_typed_payload_whose_proof_failed_is_scanned_without_a_walk_first(
    kind: str, last: str, rule: str
) -> None:
    """Over 16 KiB the door proves the text's numbers plain by C passes; where that failed, the
    typed payload was walked (its MiB of numbers written out as text) before the scan that
    finds where: 11.9x ``orjson.loads`` for one refusal after 1 MiB of small integers, 7.4x now."""
    text = _text(kind, '{"a":[' + "-1," * 10_000 + last + "]}")
    refused: list[ValidationError] = []

    def door() -> None:
        try:
            _typed(kind).model_validate_json(text)
        except ValidationError as exc:
            refused.append(exc)

    entered = python_calls(door)
    assert needs_scan.__code__ not in entered
    assert written_plain.__code__ not in entered
    assert [(v.rule, v.pointer) for v in violations(refused[0])] == [(rule, "/payload/a/10000")]


# --- a free payload: `MxRequest[Any]`, a user's subclass generic in its own TypeVar ------------

X = TypeVar("X")


class Unbound(MxRequest[X], Generic[X]):
    """A user's request still generic in a TypeVar of its own (no bound, no default)."""


class UnboundReply(MxResponse[X], Generic[X]):
    """A user's response still generic in a TypeVar of its own."""


FREE = {
    "request-subclass": Unbound,
    "response-subclass": UnboundReply,
    "request-any": MxRequest[Any],
    "response-any": MxResponse[Any],
}
NOT_JSON = {
    "object": ({"x": object()}, "/payload/x"),
    "int-key": ({1: 2}, "/payload"),
    "set": ({1, 2}, "/payload"),
    "bytes": (b"x", "/payload"),
    "nested-set": ({"a": [{1}]}, "/payload/a/0"),
}


def _members(model: type[Any], payload: object) -> dict[str, Any]:
    if issubclass(model, MxResponse):
        return {"op": "$reply", "correlation_id": "c-1", "payload": payload}
    return {"op": "fs.list", "payload": payload}


@pytest.mark.parametrize("door", ["keywords", "dict", "type-adapter"])
@pytest.mark.parametrize("model", FREE.values(), ids=list(FREE))
@pytest.mark.parametrize(("payload", "pointer"), NOT_JSON.values(), ids=list(NOT_JSON))
def test_a_free_payload_refuses_what_no_json_text_holds(
    payload: object, pointer: str, model: type[Any], door: str
) -> None:
    """Typed ``Any``, it held an object (``to_json()`` raised PydanticSerializationError), a
    set, bytes, an integer key (written as others, silently), which the unparametrised class
    refuses."""
    members = _members(model, payload)
    wire = {("correlationId" if k == "correlation_id" else k): v for k, v in members.items()}
    with pytest.raises(ValidationError) as refused:
        if door == "keywords":
            model(**members)
        elif door == "dict":
            model.model_validate(wire)
        else:
            TypeAdapter(model).validate_python(wire)
    assert [(v.rule, v.pointer) for v in violations(refused.value)] == [("json.invalid", pointer)]


@pytest.mark.parametrize("model", [Unbound, MxRequest[Any]], ids=["subclass", "any"])
def test_a_free_payload_is_refused_by_its_producer(model: type[MxRequest[Any]]) -> None:
    with pytest.raises(ProducerError) as refused:
        model.create("fs.list", {"when": {"x": object()}})  # type: ignore[dict-item]
    assert [(v.rule, v.pointer) for v in refused.value.violations] == [
        ("json.invalid", "/payload/when/x")
    ]


@pytest.mark.parametrize("model", FREE.values(), ids=list(FREE))
def test_a_free_payload_takes_json_data_and_a_model(model: type[Any]) -> None:
    for payload in ({"n": [1, 2.5, None, "s", True]}, 3, None, Numbers(n=2**60)):
        read = model(**_members(model, payload))
        again = type(read).model_validate_json(read.to_json())
        assert again.to_json() == read.to_json()
    assert [(w.rule, w.pointer) for w in read.envelope_warnings()] == [
        ("number.unsafe_integer", "/payload/n")
    ]


Y = TypeVar("Y")


class TwoParameters(MxRequest[X], Generic[Y, X]):
    """A user's request generic in more than its payload type: no one class fills it."""


def test_a_model_given_to_a_class_of_two_parameters_keeps_the_class() -> None:
    # `create` parametrised the class by the model's class alone: TypeError (too few
    # arguments). The class is kept: its free payload takes a model, as from keywords.
    made = TwoParameters.create("fs.list", Numbers(n=1))
    assert type(made) is TwoParameters
    assert made.payload == Numbers(n=1)
    assert check(made.to_json(), spec="matrix").ok
    assert type(Unbound.create("fs.list", Numbers(n=1))) is Unbound[Numbers]
