"""Consumer rules of the envelope page, beyond the conformance manifest."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError, field_validator, model_validator
from typing_extensions import TypedDict

import envelopekit as ek
from envelopekit import rules
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.babelqueue._urn import ASCII_WHITESPACE, is_blank

BASE: dict[str, Any] = {
    "job": "urn:babel:orders:created",
    "trace_id": "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",
    "data": {"order_id": 1042},
    "meta": {
        "id": "f1e2d3c4-b5a6-4789-90ab-cdef01234567",
        "queue": "orders",
        "lang": "php",
        "schema_version": 1,
        "created_at": 1749132727000,
    },
    "attempts": 0,
}


def message(**changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = orjson.loads(orjson.dumps(BASE))
    for path, value in changes.items():
        node = out
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
    return out


DELETE = object()


def verdict_of(document: dict[str, Any] | bytes) -> ek.Verdict[BabelEnvelope]:
    raw = document if isinstance(document, bytes) else orjson.dumps(document)
    return ek.check(raw, spec="babelqueue")


def found(document: dict[str, Any] | bytes) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in verdict_of(document).violations]


@pytest.mark.parametrize(
    "value", [2, 0, True, 1.0, "1", None, [1]], ids=["2", "0", "true", "1.0", "str", "null", "list"]
)
def test_schema_version_must_be_the_integer_one(value: object) -> None:
    raw = orjson.dumps(message(meta__schema_version=value)).replace(b"1.0", b"1.0")
    assert found(raw) == [(rules.SCHEMA_VERSION_UNSUPPORTED, "/meta/schema_version")]


def test_schema_version_one_point_zero_on_the_wire() -> None:
    raw = orjson.dumps(BASE).replace(b'"schema_version":1', b'"schema_version":1.0')
    assert found(raw) == [(rules.SCHEMA_VERSION_UNSUPPORTED, "/meta/schema_version")]


def test_missing_schema_version_is_required() -> None:
    assert found(message(meta__schema_version=DELETE)) == [
        ("message-envelope.required", "/meta/schema_version")
    ]


@pytest.mark.parametrize(
    ("job", "urn", "expected"),
    [
        (DELETE, "urn:babel:a:b", "urn:babel:a:b"),
        ("", "urn:babel:a:b", "urn:babel:a:b"),
        ("  \t", "urn:babel:a:b", "urn:babel:a:b"),
        ("urn:babel:job:wins", "urn:babel:a:b", "urn:babel:job:wins"),
    ],
    ids=["absent-job", "empty-job", "blank-job", "job-wins"],
)
def test_urn_alias(job: object, urn: str, expected: str) -> None:
    verdict = verdict_of(message(job=job, urn=urn))
    assert verdict.envelope is not None
    assert verdict.envelope.job == expected
    assert b'"urn"' not in verdict.envelope.to_json()


@pytest.mark.parametrize(
    "changes",
    [{"job": DELETE}, {"job": ""}, {"job": " \n"}, {"job": DELETE, "urn": "  "}],
    ids=["absent", "empty", "blank", "blank-alias"],
)
def test_no_urn_is_refused(changes: dict[str, Any]) -> None:
    assert found(message(**changes)) == [(rules.URN_MISSING, "/job")]


def test_unicode_space_is_not_blank() -> None:
    # Only ASCII whitespace is blank, as in every official SDK.
    verdict = verdict_of(message(job="\u00a0"))
    assert verdict.ok


@given(st.text(alphabet=" \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0\u2000a"))
def test_blank_is_the_six_ascii_spaces_and_nothing_else(text: str) -> None:
    """``is_blank`` (a table's ``isspace``, not ``strip(chars)``: 3.6 ms a MiB of spaces) is
    the blank set every SDK shares."""
    assert is_blank(text) is (not text.strip(ASCII_WHITESPACE))


@pytest.mark.parametrize("value", [123, True, None, ["x"]], ids=["int", "bool", "null", "list"])
def test_urn_is_never_coerced(value: object) -> None:
    assert found(message(job=value)) == [("message-envelope.type", "/job")]


@pytest.mark.parametrize(
    "value", [[1, 2], [], None, "x", 1], ids=["array", "empty-array", "null", "string", "int"]
)
def test_data_must_be_an_object(value: object) -> None:
    assert found(message(data=value)) == [("message-envelope.type", "/data")]


def test_data_missing_is_required() -> None:
    assert found(message(data=DELETE)) == [("message-envelope.required", "/data")]


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        (-1, "message-envelope.minimum"),
        (True, "message-envelope.type"),
        ("0", "message-envelope.type"),
        (None, "message-envelope.type"),
    ],
    ids=["negative", "bool", "string", "null"],
)
def test_attempts(value: object, rule: str) -> None:
    assert found(message(attempts=value)) == [(rule, "/attempts")]


def test_attempts_float_is_refused() -> None:
    raw = orjson.dumps(BASE).replace(b'"attempts":0', b'"attempts":1.0')
    assert found(raw) == [("message-envelope.type", "/attempts")]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("trace_id", "not-a-uuid"),
        ("trace_id", ""),
        ("trace_id", "7b3f9c2ae41d4f889b2a1c0d5e6f7a8b"),
        ("trace_id", "{7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b}"),
        ("meta__id", "urn:uuid:f1e2d3c4-b5a6-4789-90ab-cdef01234567"),
        ("meta__id", "f1e2d3c4-b5a6-4789-90ab-cdef01234567\n"),
    ],
    ids=["text", "empty", "hex32", "braces", "urn-prefix", "newline"],
)
def test_ids_are_canonical_uuids(field: str, value: str) -> None:
    pointer = "/" + field.replace("__", "/")
    assert found(message(**{field: value})) == [("message-envelope.format.uuid", pointer)]


def test_uppercase_uuid_is_kept_as_sent() -> None:
    upper = "7B3F9C2A-E41D-4F88-9B2A-1C0D5E6F7A8B"
    env = verdict_of(message(trace_id=upper)).envelope
    assert env is not None
    assert env.trace_id == upper
    assert upper.encode() in env.to_json()


def test_created_at_integer_milliseconds() -> None:
    raw = orjson.dumps(BASE).replace(b"1749132727000", b"1749132727000.0")
    assert found(raw) == [("message-envelope.type", "/meta/created_at")]
    assert found(message(meta__created_at=-5)) == [("message-envelope.minimum", "/meta/created_at")]


def test_created_at_in_seconds_warns() -> None:
    verdict = verdict_of(message(meta__created_at=1749132727))
    assert verdict.ok
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.CREATED_AT_SECONDS, "/meta/created_at")
    ]


@pytest.mark.parametrize(
    "token", [b"NaN", b"Infinity", b"-Infinity"], ids=["nan", "inf", "minus-inf"]
)
@pytest.mark.parametrize("where", ["data", "extra", "meta"])
def test_non_finite_numbers_are_refused(token: bytes, where: str) -> None:
    if where == "data":
        raw = orjson.dumps(BASE).replace(b'"order_id":1042', b'"order_id":' + token)
        pointer = "/data/order_id"
    elif where == "extra":
        raw = orjson.dumps(message(extra=0)).replace(b'"extra":0', b'"extra":' + token)
        pointer = "/extra"
    else:
        raw = orjson.dumps(message(meta__vendor=[0])).replace(b"[0]", b"[" + token + b"]")
        pointer = "/meta/vendor/0"
    assert found(raw) == [(rules.NUMBER_NON_FINITE, pointer)]
    with pytest.raises(ValidationError):
        BabelEnvelope.model_validate_json(raw)


def test_integers_beyond_int64_are_read_in_data_and_refused_elsewhere() -> None:
    # Decisions §6: inside `data` only (tests/babelqueue/test_wide_integers.py has the rest).
    raw = orjson.dumps(message(data={"n": [0]})).replace(b"[0]", b"[9223372036854775808]")
    verdict = verdict_of(raw)
    assert verdict.ok
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.NUMBER_BEYOND_INT64, "/data/n/0")
    ]
    raw = orjson.dumps(message(extra=[0])).replace(b"[0]", b"[9223372036854775808]")
    assert found(raw) == [(rules.NUMBER_OUT_OF_RANGE, "/extra/0")]


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**63 - 1, -(2**63)])
def test_integers_beyond_js_safe_range_warn(value: int) -> None:
    verdict = verdict_of(message(data={"big": value}))
    assert verdict.ok
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.NUMBER_UNSAFE_INTEGER, "/data/big")
    ]
    assert verdict.envelope is not None
    assert str(value).encode() in verdict.envelope.to_json()


def test_unknown_keys_keep_their_json_types_and_order() -> None:
    extras = {"z_flag": True, "a_num": 1, "m_float": 1.0, "obj": {}, "arr": [], "nul": None}
    document = message(**extras, meta__vendor={"k": [1, 2.5]})
    env = verdict_of(document).envelope
    assert env is not None
    out = env.retried().to_json()
    assert out.endswith(
        b'"attempts":1,"z_flag":true,"a_num":1,"m_float":1.0,"obj":{},"arr":[],"nul":null}'
    )
    assert b'"created_at":1749132727000,"vendor":{"k":[1,2.5]}}' in out


def test_unknown_lang_is_accepted_and_kept() -> None:
    env = verdict_of(message(meta__lang="cobol")).envelope
    assert env is not None
    assert b'"lang":"cobol"' in env.to_json()


def test_dead_letter_is_modelled_with_any_reason() -> None:
    block = {
        "reason": "max_attempts",
        "error": None,
        "failed_at": 1749132730000,
        "original_queue": "orders",
        "attempts": 3,
        "vendor": 1,
    }
    env = verdict_of(message(dead_letter=block)).envelope
    assert env is not None
    assert orjson.loads(env.to_json())["dead_letter"] == block
    assert found(message(dead_letter={**block, "failed_at": "x"})) == [
        ("message-envelope.type", "/dead_letter/failed_at")
    ]
    assert found(message(dead_letter={"reason": "failed"})) == [
        ("message-envelope.required", "/dead_letter/failed_at"),
        ("message-envelope.required", "/dead_letter/original_queue"),
        ("message-envelope.required", "/dead_letter/attempts"),
    ]


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b"null", b"1", b'"job"', b"\xff\xfe", b'{"job": "\\ud800"}'],
    ids=["empty", "truncated", "array", "null", "number", "string", "not-utf8", "surrogate"],
)
def test_not_an_object(raw: bytes) -> None:
    verdict = verdict_of(raw)
    assert not verdict.ok
    assert verdict.violations[0].pointer == ""
    assert verdict.violations[0].rule in {rules.JSON_INVALID, "message-envelope.type"}


def test_too_large_and_too_deep() -> None:
    small = ek.Settings(max_message_bytes=100)
    assert ek.check(orjson.dumps(BASE), spec="babelqueue", settings=small).rules() == [
        rules.MESSAGE_TOO_LARGE
    ]
    deep = orjson.dumps(message(data={"x": [[[[[[1]]]]]]}))
    shallow = ek.Settings(max_depth=5)
    assert ek.check(deep, spec="babelqueue", settings=shallow).rules() == [rules.MESSAGE_TOO_DEEP]
    assert ek.check(b"[" * 300 + b"]" * 300, spec="babelqueue").rules() == [rules.MESSAGE_TOO_DEEP]


def test_model_validate_json_reports_the_same_rules() -> None:
    raw = orjson.dumps(message(meta__schema_version=2, attempts=-1))
    with pytest.raises(ValidationError) as info:
        BabelEnvelope.model_validate_json(raw)
    assert [(v.rule, v.pointer) for v in ek.violations(info.value)] == found(raw)


class Order(BaseModel):
    order_id: int


def test_typed_payload() -> None:
    env = BabelEnvelope[Order].model_validate_json(orjson.dumps(BASE))
    assert env.data == Order(order_id=1042)
    assert env.to_json() == BabelEnvelope.model_validate_json(orjson.dumps(BASE)).to_json()
    with pytest.raises(ValidationError) as info:
        BabelEnvelope[Order].model_validate_json(orjson.dumps(message(data={"order_id": "x"})))
    assert [(v.rule, v.pointer) for v in ek.violations(info.value)] == [
        ("message-envelope.type", "/data/order_id")
    ]


def test_violations_refuses_foreign_errors() -> None:
    with pytest.raises(ValidationError) as info:
        Order.model_validate_json(b"{}")
    with pytest.raises(TypeError):
        ek.violations(info.value)


@pytest.mark.parametrize("path", ["attempts", "meta__created_at"], ids=["attempts", "created_at"])
def test_integer_fields_fit_signed_64_bit(path: str) -> None:
    pointer = "/" + path.replace("__", "/")
    assert found(message(**{path: 2**63})) == [("message-envelope.maximum", pointer)]
    assert verdict_of(message(**{path: 2**63 - 1})).ok


def test_dead_letter_unknown_keys_follow_the_number_rules() -> None:
    block = {"reason": "failed", "failed_at": 1, "original_queue": "q", "attempts": 1, "x": [0]}
    raw = orjson.dumps(message(dead_letter=block)).replace(b'"x":[0]', b'"x":[NaN]')
    assert found(raw) == [(rules.NUMBER_NON_FINITE, "/dead_letter/x/0")]
    verdict = verdict_of(message(dead_letter={**block, "x": 2**60}))
    assert verdict.ok
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.NUMBER_UNSAFE_INTEGER, "/dead_letter/x")
    ]


class _Sku(BaseModel):
    sku: str


@dataclasses.dataclass
class _Line:
    x: float
    item: _Sku
    when: datetime.datetime


class _Dated(TypedDict):
    n: int
    when: datetime.datetime


_LINE = {"x": 1.5, "item": {"sku": "y"}, "when": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("data_type", "data", "refused"),
    [
        (_Line, _LINE, []),
        (_Dated, {"n": 1, "when": "2026-01-01T00:00:00Z"}, []),
        (dict[str, _Sku], {"a": {"sku": "x"}}, []),
        (dict[str, list[int]], {"x": [1]}, []),
        (_Line, {**_LINE, "x": "1.5"}, [("message-envelope.type", "/data/x")]),
        (_Dated, {"n": 1, "when": "yesterday"}, [("message-envelope.type", "/data/when")]),
        (dict[str, list[int]], {"x": ["1"]}, [("message-envelope.type", "/data/x/0")]),
    ],
    ids=[
        "dataclass",
        "typeddict",
        "dict-of-models",
        "dict-of-lists",
        "dataclass-refused",
        "typeddict-refused",
        "dict-of-lists-refused",
    ],
)
def test_typed_data_reads_alike_through_every_door(
    data_type: Any, data: dict[str, Any], refused: list[tuple[str, str]]
) -> None:
    # pydantic's strict Python mode takes a dataclass only as an instance and a date-time only
    # as a datetime: json.loads output (FastAPI's, FastStream's) is read as its text is.
    raw = BabelEnvelope.create("urn:babel:orders:created", data).to_json()
    model = BabelEnvelope[data_type]
    adapter = TypeAdapter(model)
    verdicts = _read_by_each(
        raw,
        model.model_validate_json,
        lambda raw: model.model_validate(orjson.loads(raw)),
        lambda raw: adapter.validate_python(orjson.loads(raw)),
        lambda raw: model(**orjson.loads(raw)),
    )
    assert verdicts == [refused or raw] * 4


@pytest.mark.filterwarnings("error")  # pydantic warns of an __init__ left with another instance
def test_typed_init_builds_the_envelope_the_text_reads() -> None:
    # An `__init__` fills its own instance: the envelope its text is read into is copied in,
    # with what that reading noted (the forbidden key it dropped, the alias it resolved).
    members = message(job=DELETE, urn="urn:babel:orders:created", data={"x": [2**53]})
    members["timestamp"] = 1749132727  # forbidden: dropped with a warning
    model = BabelEnvelope[dict[str, list[int]]]
    built = model(**orjson.loads(orjson.dumps(members)))
    read = model.model_validate_json(orjson.dumps(members))
    assert built.to_json() == read.to_json()
    assert built.job == "urn:babel:orders:created"
    assert built.model_fields_set == read.model_fields_set
    assert built.envelope_warnings() == read.envelope_warnings()
    assert {w.rule for w in built.envelope_warnings()} == {
        rules.FORBIDDEN_KEY,
        rules.NUMBER_UNSAFE_INTEGER,
    }


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"extra": "forbid"}, [("message-envelope.additionalProperties", "/note")]),
        ({"strict": False}, []),
    ],
    ids=["extra-forbid", "lax"],
)
def test_typed_dict_door_keeps_run_time_options(
    options: dict[str, Any], refused: list[tuple[str, str]]
) -> None:
    # The text's reading would not see them: the dict is read as Python data, under them.
    members = {**message(data={"x": [1]}), "note": 1}
    model = BabelEnvelope[dict[str, list[int]]]
    verdicts: list[object] = []
    reads: list[Callable[[], BabelEnvelope[dict[str, list[int]]]]] = [
        lambda: model.model_validate(members, **options),
        lambda: model.model_validate_json(orjson.dumps(members), **options),
    ]
    for read in reads:
        try:
            verdicts.append(read().to_json())
        except ValidationError as exc:
            verdicts.append([(v.rule, v.pointer) for v in ek.violations(exc)])
    assert verdicts == [refused or orjson.dumps(members)] * 2


_X = TypeVar("_X")


class _Mine(BabelEnvelope[_X], Generic[_X]):
    """A user's envelope still generic in its own type variable."""


@pytest.mark.parametrize(
    ("model", "like"),
    [(_Mine, BabelEnvelope), (_Mine[Any], BabelEnvelope), (_Mine[Order], BabelEnvelope[Order])],
    ids=["unparametrised", "any", "model"],
)
@pytest.mark.parametrize("data", [[1], "x", {"order_id": 1}, {"order_id": "1"}])
def test_generic_subclass_reads_data_as_the_envelope_does(
    model: type[BabelEnvelope[Any]], like: type[BabelEnvelope[Any]], data: object
) -> None:
    # Its own type variable, unbound, was `Any` to pydantic: any JSON value was `data`.
    raw = orjson.dumps(message(data=data))
    verdicts = _read_by_each(
        raw,
        model.model_validate_json,
        like.model_validate_json,
        lambda raw: model.model_validate(orjson.loads(raw)),
        lambda raw: model(**orjson.loads(raw)),
    )
    assert verdicts == [verdicts[1]] * 4


def test_generic_subclass_unparametrised_is_itself() -> None:
    assert _Mine[Any] is _Mine
    assert _Mine.model_json_schema()["properties"]["data"]["type"] == "object"
    assert _Mine[Order].model_fields["data"].annotation is Order


class _Counted(BabelEnvelope[dict[str, list[int]]]):
    """A user's envelope whose validators change what they read, and count their calls."""

    @field_validator("data")
    @classmethod
    def _bumped(cls, data: dict[str, list[int]]) -> dict[str, list[int]]:
        _CALLS.append("field")
        return {key: [n + 1 for n in numbers] for key, numbers in data.items()}

    @model_validator(mode="before")
    @classmethod
    def _before(cls, value: Any) -> Any:
        _CALLS.append("before")
        return value

    @model_validator(mode="after")
    def _after(self) -> _Counted:
        _CALLS.append("after")
        return self


_CALLS: list[str] = []


@pytest.mark.filterwarnings("error")
def test_typed_subclass_validators_run_once_through_every_door() -> None:
    members = message(data={"x": [1]})
    raw = orjson.dumps(members)
    adapter = TypeAdapter(_Counted)
    read: list[tuple[bytes, list[str]]] = []
    doors: list[Callable[[], _Counted]] = [
        lambda: _Counted.model_validate_json(raw),
        lambda: _Counted.model_validate(orjson.loads(raw)),
        lambda: adapter.validate_python(orjson.loads(raw)),
        lambda: _Counted(**orjson.loads(raw)),
    ]
    for door in doors:
        _CALLS.clear()
        read.append((door().to_json(), list(_CALLS)))
    expected = orjson.dumps({**members, "data": {"x": [2]}})
    assert read == [(expected, ["before", "field", "after"])] * 4


def test_typed_dict_door_reads_a_large_message_as_the_json_door() -> None:
    # Over 16 KiB the JSON door stops each array at its first failing item; the dict doors
    # (model_validate, a TypeAdapter, FastAPI's body) reported every item of it.
    model = BabelEnvelope[dict[str, list[int]]]
    raw = orjson.dumps(message(data={"x": ["s"] * 5_000, "y": [1, "t"]}))
    found: list[object] = []
    adapter = TypeAdapter(model)
    reads: list[Callable[[], object]] = [
        lambda: model.model_validate_json(raw),
        lambda: model.model_validate(orjson.loads(raw)),
        lambda: adapter.validate_python(orjson.loads(raw)),
    ]
    for read in reads:
        with pytest.raises(ValidationError) as refused:
            read()
        found.append([(v.rule, v.pointer) for v in ek.violations(refused.value)])
    assert (
        found
        == [[("message-envelope.type", "/data/x/0"), ("message-envelope.type", "/data/y/1")]] * 3
    )


def _read_by_each(raw: bytes, *reads: Callable[[bytes], BabelEnvelope[Any]]) -> list[object]:
    """What each door makes of ``raw``: the envelope's JSON, or the rule ids and pointers."""
    verdicts: list[object] = []
    for read in reads:
        try:
            verdicts.append(read(raw).to_json())
        except ValidationError as exc:
            verdicts.append([(v.rule, v.pointer) for v in ek.violations(exc)])
    return verdicts
