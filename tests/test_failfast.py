"""Large messages through the models' JSON doors: bounded as ``check`` reads them.

Over ``FULL_REPORT_BYTES`` a message model's ``model_validate_json`` validates with the same
fail-fast copy of its schema as ``check`` (one error per array), so the two agree on the same
bytes, and a list of many bad items costs one error, not one per item. Within it, every error
is still reported. Cost is measured by what is built (the errors a ``ValidationError`` holds)
and by counting calls, never by time.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

import envelopekit as ek
from envelopekit import _doors as doors
from envelopekit._check import spec_named
from envelopekit._failfast import (
    FULL_REPORT_BYTES,
    Absent,
    fail_fast_validator,
    large_validator,
    own_config,
    restored,
    stops_early,
)
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.babelqueue import _envelope as babelqueue_envelope
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse
from envelopekit.matrix._classify import MESSAGE_ADAPTER, MxMessage
from envelopekit.som import SomEnvelope, StoryContext

DATA = Path(__file__).resolve().parent / "data"
STORY = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"


def som_story_with_assets(item: bytes, size: int) -> bytes:
    """The beat-6 story with ``payload.assets`` as many copies of ``item`` as fit ``size``."""
    envelope = orjson.loads(STORY.read_bytes())
    envelope["payload"]["assets"] = []
    head, marker, rest = orjson.dumps(envelope).partition(b'"assets":[]')
    assert marker
    room = size - len(head) - len(rest) - len(b'"assets":[]')
    count = (room + 1) // (len(item) + 1)
    return head + b'"assets":[' + b",".join([item] * count) + b"]" + rest


def errors_of(model: Any, raw: bytes) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate_json(raw)
    return caught.value


def test_a_large_som_message_reports_one_error_per_array() -> None:
    """The issue's reproduction: 79,000 empty assets were 237,000 errors (three each)."""
    raw = som_story_with_assets(b"{}", 240_000)
    exc = errors_of(SomEnvelope, raw)
    assert exc.error_count() <= 3
    verdict = ek.check(raw, spec="som")
    # check reads the same bytes with the same validator: the same violations.
    assert ek.violations(exc, model=SomEnvelope, partial=True) == verdict.violations


def som_story_with_extensions(keys: list[str]) -> bytes:
    """The beat-6 story with ``payload.extensions`` holding ``keys``, each to 0."""
    envelope = orjson.loads(STORY.read_bytes())
    envelope["payload"]["extensions"] = dict.fromkeys(keys, 0)
    return orjson.dumps(envelope)


def test_a_large_som_message_reports_one_refused_key_per_map() -> None:
    """20,000 extension keys that are not namespaced were 20,000 errors from a Python validator;
    over the bound the map stops at its first, as an array at its first failing item."""
    raw = som_story_with_extensions([f"k{i}" for i in range(20_000)])
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    exc = errors_of(SomEnvelope, raw)
    assert exc.error_count() == 1
    assert exc.errors()[0]["loc"] == ("payload", "story.context", "extensions", "k0", "[key]")
    verdict = ek.check(raw, spec="som")
    assert ek.violations(exc, model=SomEnvelope, partial=True) == verdict.violations
    first, notice = verdict.violations
    assert (first.rule, first.pointer) == (
        "story-context.additionalProperties",
        "/payload/extensions/k0",
    )
    assert notice.rule == "violations.truncated" and "key of each map" in notice.message
    # Within the bound every refused key is reported; namespaced keys pass at any size.
    small = som_story_with_extensions(["a", "com.x.b", "c"])
    assert [v.pointer for v in ek.check(small, spec="som").violations] == [
        "/payload/extensions/a",
        "/payload/extensions/c",
    ]
    assert ek.check(som_story_with_extensions([f"com.x.{i}" for i in range(12_000)]), "som").ok
    # The dict door (FastStream's, ``model_validate`` of parsed JSON) reads it as the JSON door.
    with pytest.raises(ValidationError) as by_dict:
        SomEnvelope.model_validate(json.loads(raw))
    assert by_dict.value.errors(include_url=False) == exc.errors(include_url=False)


def test_an_unknown_key_named_like_a_map_s_key_says_nothing_stopped() -> None:
    """pydantic-core locates a refused map key at ``(..., key, "[key]")``; an unknown key named
    ``[key]`` is no map key, and a verdict with only it says no array or map stopped."""
    envelope = orjson.loads(STORY.read_bytes())
    raw = orjson.dumps({**envelope, "[key]": 0}) + b" " * FULL_REPORT_BYTES
    assert [(v.rule, v.pointer) for v in ek.check(raw, spec="som").violations] == [
        ("envelope.additionalProperties", "/[key]")
    ]


def test_the_bound_is_check_s() -> None:
    """Within FULL_REPORT_BYTES every error is reported; one byte over, one per array."""
    within = som_story_with_assets(b"{}", FULL_REPORT_BYTES)
    assert len(within) <= FULL_REPORT_BYTES
    items = within.count(b"{}")
    assert errors_of(SomEnvelope, within).error_count() == 3 * items
    over = within.replace(b'"assets":[{}', b'"assets":[ {}', 1)
    over += b" " * (FULL_REPORT_BYTES + 1 - len(over))
    assert len(over) == FULL_REPORT_BYTES + 1
    assert errors_of(SomEnvelope, over).error_count() <= 3


def test_a_large_valid_som_message_is_the_same_envelope() -> None:
    small = STORY.read_bytes()
    padded = small.rstrip()[:-1] + b" " * FULL_REPORT_BYTES + b"}"
    assert SomEnvelope.model_validate_json(padded) == SomEnvelope.model_validate_json(small)


class Item(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)
    sku: str
    qty: int


class Batch(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)
    items: list[Item]


def test_a_typed_matrix_request_reports_one_error_per_array() -> None:
    request = MxRequest[Batch].create("orders.import", Batch(items=[]))
    document = json.loads(request.to_json())
    document["payload"] = {"items": [{"sku": 1}] * 5_000}
    raw = orjson.dumps(document)
    assert len(raw) > FULL_REPORT_BYTES
    exc = errors_of(MxRequest[Batch], raw)
    assert exc.error_count() <= 2  # the first bad item's two errors, not 10,000
    small = orjson.dumps({**document, "payload": {"items": [{"sku": 1}] * 10}})
    assert errors_of(MxRequest[Batch], small).error_count() == 20


def test_a_large_babelqueue_message_is_read_as_check_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over the bound the fast path is not tried (issue 12: it cost more than the model)."""
    tried: list[object] = []
    fast = babelqueue_envelope.FAST_PATH

    def counted(raw: bytes) -> object:
        tried.append(raw)
        validate = fast.validator_json()
        assert validate is not None
        return validate(raw)

    # The door reads the fast validator through its module's `_parse` (FAST_PATH.parse).
    monkeypatch.setattr(babelqueue_envelope, "_parse", counted)
    small = BabelEnvelope.create("urn:x:y", {"n": 1}).to_json()
    large = BabelEnvelope.create("urn:x:y", {"k": list(range(4_000))}).to_json()
    assert len(large) > FULL_REPORT_BYTES
    assert BabelEnvelope.model_validate_json(small).data == {"n": 1}
    assert len(tried) == 1
    envelope = BabelEnvelope.model_validate_json(large)
    assert len(tried) == 1
    verdict = ek.check(large, spec="babelqueue")
    assert verdict.envelope == envelope
    refused = large.replace(b'"k":[0,', b'"k":[NaN,')
    exc = errors_of(BabelEnvelope, refused)
    assert ek.violations(exc, model=BabelEnvelope, partial=True) == (
        ek.check(refused, spec="babelqueue").violations
    )


def test_the_large_validator_is_built_once_per_model() -> None:
    assert large_validator(SomEnvelope) is large_validator(SomEnvelope)
    assert large_validator(BabelEnvelope) is not large_validator(SomEnvelope)


class _UsersSomEnvelope(SomEnvelope):
    """A user's subclass of the envelope."""


@pytest.mark.parametrize(
    "model",
    [SomEnvelope, SomEnvelope[StoryContext], _UsersSomEnvelope],
    ids=["SomEnvelope", "typed", "subclass"],
)
def test_the_dict_door_of_a_large_som_message_is_bounded_alike(model: Any) -> None:
    """``model_validate`` of a dict of plain JSON data over the bound reads as the JSON door.

    The typed envelope's and a subclass's reported every error (237,000 for these assets).
    """
    raw = som_story_with_assets(b"{}", 240_000)
    by_json = errors_of(model, raw)
    with pytest.raises(ValidationError) as caught:
        model.model_validate(json.loads(raw))
    assert caught.value.error_count() == by_json.error_count() <= 3
    assert ek.violations(caught.value, model=model) == ek.violations(by_json, model=model)


def test_the_dict_door_of_a_large_babelqueue_message_is_read_as_json_reads_it() -> None:
    large = BabelEnvelope.create("urn:x:y", {"k": list(range(4_000))}).to_json()
    document = json.loads(large)
    assert BabelEnvelope.model_validate(document) == BabelEnvelope.model_validate_json(large)
    document["data"]["k"][0] = float("nan")
    with pytest.raises(ValidationError) as caught:
        BabelEnvelope.model_validate(document)
    assert [v.rule for v in ek.violations(caught.value, model=BabelEnvelope)] == [
        "number.non_finite"
    ]


# A message of each model, wrong in a field, made large by unknown keys.
WRONG: dict[type[BaseModel], dict[str, Any]] = {
    BabelEnvelope: {"job": 1},
    SomEnvelope: {"som_version": 1},
    MxRequest: {"op": 1},
    MxResponse: {"ok": "yes"},
    MxErrorPayload: {"code": 1},
}


@pytest.mark.parametrize("model", list(WRONG), ids=lambda model: model.__name__)
@pytest.mark.parametrize("door", ["json", "str", "dict"])
def test_a_large_refusal_is_titled_by_its_model(model: type[BaseModel], door: str) -> None:
    """Over the bound the error still names its model, as pydantic's own validator does.

    It said "json-or-python[json=function-after[...], ...]": the copy was built without the
    model's own config, which carries its title.
    """
    message = {**WRONG[model], **{f"k{i}": 0 for i in range(FULL_REPORT_BYTES // 8)}}
    raw = orjson.dumps(message)
    assert len(raw) > FULL_REPORT_BYTES
    with pytest.raises(ValidationError) as caught:
        if door == "dict":
            model.model_validate(message)
        else:
            model.model_validate_json(raw if door == "json" else raw.decode())
    assert caught.value.title == model.__name__
    assert str(caught.value).split("\n", 1)[0].endswith(f" for {model.__name__}")


# --- Required members a large message lacks (check's validators default them to Absent) ---

SEEDS: dict[str, list[Path]] = {
    "babelqueue": sorted((DATA / "babelqueue" / "fixtures").glob("*.json")),
    "som": sorted(p for p in (DATA / "som" / "examples").glob("*/*.json") if "envelope" in p.name),
    "matrix": [DATA / "matrix" / "cases.json"],
}
# Over the bound: what follows the document is whitespace, so the large readers take it.
PAD = b" " * (FULL_REPORT_BYTES + 1)


def _seed_documents() -> list[tuple[str, str, Any]]:
    found: list[tuple[str, str, Any]] = []
    for spec, paths in SEEDS.items():
        for path in paths:
            if path.name == "cases.json":
                cases = orjson.loads(path.read_bytes())["cases"]
                found += [(spec, case["id"], case["doc"]) for case in cases if "doc" in case]
            else:
                found.append((spec, path.stem, orjson.loads(path.read_bytes())))
    return [item for item in found if isinstance(item[2], dict)]


def _without_members(document: Any) -> list[Any]:
    """``document`` with each member of each object removed, and each object emptied."""
    variants: list[Any] = []

    def walk(node: Any, rebuild: Any) -> None:
        if isinstance(node, dict):
            for key in node:
                variants.append(rebuild({k: v for k, v in node.items() if k != key}))
            variants.append(rebuild({}))
            variants.append(rebuild({"unknown": 1}))
            for key, value in node.items():
                walk(value, lambda v, key=key, node=node: rebuild({**node, key: v}))
        elif isinstance(node, list):
            for at, value in enumerate(node):
                walk(value, lambda v, at=at, node=node: rebuild([*node[:at], v, *node[at + 1 :]]))

    walk(document, lambda v: v)
    return variants


# The models' own fail-fast readers, without Absent: pydantic's errors for a missing member.
OWN_READERS: dict[str, tuple[Any, Any]] = {
    "babelqueue": (BabelEnvelope, lambda raw: large_validator(BabelEnvelope).validate_json(raw)),
    "som": (SomEnvelope, lambda raw: large_validator(SomEnvelope).validate_json(raw)),
    "matrix": (
        MxMessage,
        lambda raw: fail_fast_validator(MESSAGE_ADAPTER.core_schema).validate_json(
            raw, by_name=False
        ),
    ),
}
DOORS: dict[str, list[type[BaseModel]]] = {
    "babelqueue": [BabelEnvelope],
    "som": [SomEnvelope],
    "matrix": [MxRequest, MxResponse, MxErrorPayload],
}


def _own_violations(spec: str, raw: bytes) -> list[ek.Violation]:
    model, read = OWN_READERS[spec]
    try:
        read(raw)
    except ValidationError as exc:
        return ek.violations(exc, model=model, partial=True)
    return []


def _raised(validate: Any, raw: bytes) -> list[Any] | None:
    try:
        validate(raw)
    except ValidationError as exc:
        return [exc.title, exc.errors(include_url=False)]
    return None


@pytest.mark.parametrize(
    ("spec", "document"),
    [
        pytest.param(spec, document, id=f"{spec}-{name}")
        for spec, name, document in _seed_documents()
    ],
)
def test_a_large_message_lacking_members_is_read_as_pydantic_reads_it(
    spec: str, document: Any
) -> None:
    """check's readers and the doors default required fields to ``Absent``; nothing shows it.

    Every corpus message with each member of each object removed, each object emptied or
    holding only an unknown key, padded over the bound: ``check`` finds what the model's own
    fail-fast reader finds, and each door raises exactly that reader's errors (types,
    locations, messages, contexts, and the object a member is missing from as input).
    """
    for variant in _without_members(document):
        raw = orjson.dumps(variant) + PAD
        assert ek.check(raw, spec).violations == _own_violations(spec, raw), variant
        for model in DOORS[spec]:
            expected = _raised(large_validator(model).validate_json, raw)
            assert _raised(model.model_validate_json, raw) == expected, (model, variant)


@pytest.mark.parametrize("spec", ["babelqueue", "som", "matrix"])
def test_a_large_message_lacking_members_is_built_once(spec: str) -> None:
    """Each missing member's error held the whole document, built again as Python objects.

    pydantic-core gives a missing field's error the object around it as input; eight missing
    around a 240 KB SOM payload built it eight times (25x ``orjson.loads``, 44 MiB). In check's
    readers a field that refuses an ``Absent`` is in error on it alone; only Matrix's payload,
    a JSON value (which any object is), stays required and holds the document. Counted on the
    errors the reader raises, not timed.
    """
    raw = b'{"unknown":[' + b",".join([b"[]"] * 20_000) + b"]}"
    with pytest.raises(ValidationError) as caught:
        spec_named(spec).read_large(raw, {})
    errors = caught.value.errors(include_url=False)
    holding = [error for error in errors if isinstance(error["input"], dict)]
    missing = [v for v in ek.check(raw, spec).violations if v.rule.endswith(".required")]
    kept = 1 if spec == "matrix" else 0
    assert len(holding) == kept < len(missing), (holding, missing)


class Part(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    sku: str
    qty: int | str


class Order(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    order_id: str = Field(alias="orderId")
    total: int | float | str
    parts: list[Part]
    by_key: dict[str, Part]
    note: str = ""


@pytest.mark.parametrize(
    "raw",
    [
        b"{}",
        b'{"unknown":1}',
        b'{"orderId":"o"}',
        b'{"total":[],"parts":[{}],"by_key":{"a":{},"b":{"sku":1},"c":{}}}',
        b'{"order_id":"o","parts":[{"qty":1},{}],"by_key":{}}',
    ],
)
def test_restored_errors_are_the_model_s_own(raw: bytes) -> None:
    """Mapped back, the errors of a validator with ``absent`` are pydantic's, in its order.

    One ``missing`` per field (a union's members each refused the ``Absent``), at the alias
    pydantic names the field by, for each of several objects of the same model in turn.
    """
    schema = Order.__pydantic_core_schema__
    config = own_config(schema, Order)
    own = fail_fast_validator(schema, config)
    with_absent = fail_fast_validator(schema, config, absent=True)
    with pytest.raises(ValidationError) as expected:
        own.validate_json(raw)
    with pytest.raises(ValidationError) as found:
        with_absent.validate_json(raw)
    raw_errors = found.value.errors(include_url=False)
    assert any(type(error["input"]) is Absent for error in raw_errors)

    def shown(errors: list[Any]) -> list[tuple[str, tuple[str | int, ...], str]]:
        return [(error["type"], tuple(error["loc"]), error["msg"]) for error in errors]

    assert shown(restored(raw_errors)) == shown(expected.value.errors(include_url=False))


@pytest.mark.parametrize(
    ("model", "raw", "options"),
    [
        # Over RESTORED_MOST errors (unknown keys of the closed SOM envelope): read again as
        # pydantic-core reads it, instead of restoring 1,500 errors one by one.
        (SomEnvelope, orjson.dumps({f"k{i}": [0] * 8 for i in range(1_500)}), {}),
        # Named by their Python names, missing fields are not where the Absent says.
        (
            MxResponse,
            orjson.dumps({"op": "$reply", "pad": "x" * FULL_REPORT_BYTES}),
            {"by_name": True},
        ),
        (MxResponse, orjson.dumps({"op": "$reply", "pad": "x" * FULL_REPORT_BYTES}), {}),
    ],
    ids=["many-errors", "by-name", "by-alias"],
)
def test_a_door_raises_pydantic_s_own_errors(
    model: type[BaseModel], raw: bytes, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(raw) > FULL_REPORT_BYTES
    restoring: list[object] = []
    real = doors.reported

    def spied(*args: Any) -> ValidationError:
        restoring.append(args)
        return real(*args)

    monkeypatch.setattr(doors, "reported", spied)
    expected = _raised(partial(large_validator(model).validate_json, **options), raw)
    assert expected is not None
    with pytest.raises(ValidationError) as caught:
        model.model_validate_json(raw, **options)
    assert [caught.value.title, caught.value.errors(include_url=False)] == expected
    assert any(error["type"] == "missing" for error in expected[1])
    assert bool(restoring) is (not options and model is MxResponse)


def _padded_refusal(head: bytes, tail: bytes) -> bytes:
    """``head`` + 6,000 small integers, then ``1e400`` (Infinity, refused) + ``tail``."""
    return head + b"-1," * 6_000 + b"1e400" + tail


def _som_with(member: str, value: bytes) -> bytes:
    envelope = orjson.loads(STORY.read_bytes())
    envelope[member] = "@"
    before, marker, after = orjson.dumps(envelope).partition(b'"@"')
    assert marker
    return before + value + after


REFUSED_FREE_FORM: list[tuple[type[BaseModel], bytes, str]] = [
    (
        BabelEnvelope,
        _padded_refusal(
            b'{"job":"urn:x:y","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","attempts":0,'
            b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"php",'
            b'"schema_version":1,"created_at":1749132727000},"data":{"a":[',
            b"]}}",
        ),
        "number.non_finite",
    ),
    (
        MxRequest,
        _padded_refusal(b'{"op":"fs.write","correlationId":"c","payload":{"a":[', b"]}}"),
        "number.non_finite",
    ),
    (SomEnvelope, _som_with("_actors", _padded_refusal(b'{"a":[', b"]}")), "number.non_finite"),
    # A plain validator's (`StringOrObject`): refused by its reading, or for its type.
    (SomEnvelope, _som_with("@context", _padded_refusal(b'{"a":[', b"]}")), "number.non_finite"),
    (
        SomEnvelope,
        _som_with("@context", _padded_refusal(b"[", b"]").replace(b"1e400", b"1")),
        "anyOf",
    ),
]


@pytest.mark.parametrize(
    ("model", "raw", "kind"), REFUSED_FREE_FORM, ids=lambda value: getattr(value, "__name__", "")
)
def test_a_refused_number_in_free_form_json_is_the_model_s_own_error(
    model: type[BaseModel], raw: bytes, kind: str
) -> None:
    """Over the bound the door raises what the model's own validator raises, input and all,
    and ``check`` says the same: the after-validators of free-form JSON read as a chain give
    their error the value they returned, which is their input (``_failfast.SAME_VALUE``)."""
    assert len(raw) > FULL_REPORT_BYTES
    own = _raised(model.__pydantic_validator__.validate_json, raw)
    assert own is not None
    door = errors_of(model, raw)
    assert [door.title, door.errors(include_url=False)] == own
    assert [error["type"] for error in own[1]] == [kind]
    assert ek.violations(door, model=model, partial=True) == ek.check(raw).violations


def test_check_s_copies_give_an_after_validator_s_error_the_value_it_was_given() -> None:
    """``check`` never shows an error's input: its copies chain every after-validator, whose
    error then holds the model it was given, not the whole input converted again (for 1 MiB
    of integers, 11 ms: pydantic-core converts an after-validator's input when it raises)."""
    raw = REFUSED_FREE_FORM[0][1]
    shown = _raised(large_validator(BabelEnvelope, absent=True).validate_json, raw)
    checks = large_validator(BabelEnvelope, absent=True, inputs=False)
    with pytest.raises(ValidationError) as caught:
        checks.validate_json(raw)
    (error,) = caught.value.errors(include_url=False)
    assert shown is not None
    (expected,) = shown[1]
    assert type(expected["input"]) is dict
    assert type(error["input"]) is BabelEnvelope
    assert error["input"].data == {"a": [-1] * 6_000 + [float("inf")]}
    assert {**error, "input": None} == {**expected, "input": None}
    assert checks is not large_validator(BabelEnvelope, absent=True)


class _Part(BaseModel):
    n: int


@pytest.mark.parametrize(
    ("annotation", "stops"),
    [
        (list[_Part], True),
        (tuple[_Part, ...], True),
        (set[int], True),
        (list[str], True),
        (tuple[_Part, int], False),
        (list[Any], False),
        (list, False),
        (list[JsonValue], False),
        (dict[str, Any], False),
        (dict[str, _Part], False),
        (JsonValue, False),
    ],
    ids=str,
)
def test_a_schema_stops_early_where_its_fail_fast_copy_could_report_less(
    annotation: Any, stops: bool
) -> None:
    """Only such a model's own validator reads a large message with the fail-fast copy (its
    gate costs every Python validation a wrap validator)."""
    assert stops_early(TypeAdapter(annotation).core_schema) is stops


@pytest.mark.parametrize(
    ("model", "stops"),
    [(SomEnvelope, True), (MxRequest, False), (MxResponse, False), (BabelEnvelope, False)],
    ids=lambda value: getattr(value, "__name__", str(value)),
)
def test_the_envelopes_own_validators_are_gated_where_they_could_report_less(
    model: type[BaseModel], stops: bool
) -> None:
    assert stops_early(model.__pydantic_core_schema__) is stops
