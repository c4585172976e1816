"""Every door pydantic gives a model reads the wire alike: JSON, a dict, a ``TypeAdapter``.

For every public model of the three specs, over the whole vendored corpus of each spec and the
mutation sets the differential tests generate, ``Model.model_validate(json.loads(raw))`` and
``TypeAdapter(Model).validate_python(json.loads(raw))`` must give what
``Model.model_validate_json(raw)`` gives: the same acceptance, and for a refusal the same
(rule id, pointer) pairs through :func:`envelopekit.violations`. Every accepted message must
survive ``Model.model_validate(m.model_dump())`` and re-emit the same bytes, and pydantic's own
serializers (``model_dump_json()``, ``model_dump(mode="json")``) must write the wire: the JSON
values of ``to_json()``, which ``check`` accepts.

One test per spec, each failing with the list of every disagreement (not the first one).

JSON text cannot carry a lone surrogate: pydantic's parser refuses the escape ``"\\udfff"`` as
``json.invalid`` at the root, while ``json.loads`` decodes it into a Python ``str`` that is no
Unicode text. The dict doors must refuse that ``str`` alike, so the mutations put one in every
value and every object's keys.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import decimal
import enum
import fractions
import json
import random
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

import orjson
import pytest
from pydantic import (
    BaseModel,
    ConfigDict,
    JsonValue,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticUseDefault, SchemaError
from typing_extensions import Self

import envelopekit as ek
from envelopekit import _failfast, _json
from envelopekit._text import refuse_unreadable
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse
from envelopekit.som import SomEnvelope, StoryContext
from tests import _calls as tests_calls
from tests._verdicts import typed
from tests.babelqueue.conformance._manifest import ROOT as BQ_DATA
from tests.conftest import DATA
from tests.matrix import test_differential as matrix_differential
from tests.matrix.test_cases import CASES as MATRIX_CASES
from tests.matrix.test_cases import raw_of
from tests.som._corpus import negative_envelope, negative_files, positive_envelope, positive_files
from tests.som._mutations import walk

Outcome = tuple[bool, frozenset[tuple[str, str]]]

SEED = 20261201


def _outcome(model: Any, validate: Any) -> tuple[Outcome, BaseModel | None]:
    try:
        found = validate()
    except ValidationError as exc:
        pairs = frozenset((v.rule, v.pointer) for v in ek.violations(exc, model=model))
        return (False, pairs), None
    return (True, frozenset()), found


def disagreements(model: type[BaseModel], raw: bytes, label: str) -> list[str]:
    """What the dict and TypeAdapter doors, and the dump round trip, do differently."""
    try:
        document = json.loads(raw)
    except ValueError:
        return []  # not JSON: nothing for the dict doors to read
    adapter = _adapter(model)
    expected, parsed = _outcome(model, lambda: model.model_validate_json(raw))
    found: list[str] = []
    doors = {
        "model_validate": lambda: model.model_validate(copy.deepcopy(document)),
        "TypeAdapter.validate_python": lambda: adapter.validate_python(copy.deepcopy(document)),
    }
    for door, validate in doors.items():
        got, _ = _outcome(model, validate)
        if got != expected:
            found.append(
                f"{label}: {door} {sorted(got[1]) or 'ok'} != JSON {sorted(expected[1]) or 'ok'}"
            )
    if parsed is not None:
        wire = parsed.to_json()  # type: ignore[attr-defined]
        again, copied = _outcome(model, lambda: model.model_validate(parsed.model_dump()))
        if copied is None:
            found.append(f"{label}: model_validate(model_dump()) refused {sorted(again[1])}")
        elif copied.to_json() != wire or copied.model_dump() != parsed.model_dump():  # type: ignore[attr-defined]
            found.append(f"{label}: model_validate(model_dump()) changed the message")
        # pydantic's own serializers write the wire: the same JSON values as to_json().
        spec = _SPEC_OF[model]
        for door, text in {
            "model_dump_json()": parsed.model_dump_json().encode(),
            "model_dump(mode='json')": json.dumps(parsed.model_dump(mode="json")).encode(),
        }.items():
            if json.loads(text) != json.loads(wire):
                found.append(f"{label}: {door} is not the wire: {text[:200]!r}")
            elif ek.check(text, spec=spec).ok != ek.check(wire, spec=spec).ok:
                found.append(f"{label}: check reads {door} otherwise than to_json()")
            else:
                try:
                    model.model_validate_json(text)
                except ValidationError:
                    found.append(f"{label}: model_validate_json refuses {door}")
    return found


_SPEC_OF: dict[type[BaseModel], str] = {
    SomEnvelope: "som",
    BabelEnvelope: "babelqueue",
    MxRequest: "matrix",
    MxResponse: "matrix",
    MxErrorPayload: "matrix",
}

_ADAPTERS: dict[type[BaseModel], TypeAdapter[Any]] = {}


def _adapter(model: type[BaseModel]) -> TypeAdapter[Any]:
    if model not in _ADAPTERS:
        _ADAPTERS[model] = TypeAdapter(model)
    return _ADAPTERS[model]


def _encode(document: Any) -> bytes:
    try:
        return json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only its escape is JSON text
        return json.dumps(document).encode("ascii")


def _set(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    target = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def _remove(document: Any, path: tuple[str | int, ...]) -> Any:
    changed = copy.deepcopy(document)
    target = changed
    for step in path[:-1]:
        target = target[step]
    del target[path[-1]]
    return changed


# "\ud800" and {"\udfff": 1}: what `json.loads` makes of a lone surrogate's escape.
WRONG_VALUES: list[Any] = [
    *(None, 0, 1.5, 2.0, -1, "", "x", True, [], {}, 2**63, "NOT_FOUND"),
    *("\ud800", {"\udfff": 1}),
]


def structural_mutations(document: dict[str, Any], rng: random.Random) -> Iterator[bytes]:
    """Each value removed, replaced by other JSON kinds, and each object given odd keys."""
    for path, value in walk(document):
        if isinstance(path[-1], str):
            yield _encode(_remove(document, path))
        for other in rng.sample(WRONG_VALUES, 4):
            yield _encode(_set(document, path, other))
        if isinstance(value, dict):
            for key in ("unknown", "correlation_id", "status_code", "actors", "_actors", "\udc80"):
                yield _encode(_set(document, (*path, key), rng.choice(WRONG_VALUES)))
    for key in ("unknown", "urn", "actors", "_actors", "@context", "context", "trace_id"):
        yield _encode({**document, key: rng.choice([*WRONG_VALUES, {"a": 1}, "https://x"])})


# --- SOM -----------------------------------------------------------------------------------------


def _som_documents() -> Iterator[tuple[str, bytes]]:
    from tests.som.test_differential import MUTATIONS

    rng = random.Random(SEED)
    for path in positive_files():
        envelope = positive_envelope(path)
        yield f"som {path.name}", _encode(envelope)
        # The members whose wire names are not Python identifiers.
        aliased = {**envelope, "_actors": {"a1": {"name": "Ada"}}, "@context": "https://x"}
        yield f"som {path.name} +aliases", _encode(aliased)
        for index, raw in enumerate(structural_mutations(aliased, rng)):
            if index % 7 == 0:  # a sample: the schema-guided mutations below are the bulk
                yield f"som {path.name} structural #{index}", raw
    for path in negative_files():
        yield f"som negative {path.name}", _encode(negative_envelope(path))
    for mutation in MUTATIONS:
        yield f"som {mutation.kind} at {mutation.where}", _encode(mutation.document)


def test_som_doors_agree() -> None:
    found: list[str] = []
    count = 0
    for label, raw in _som_documents():
        found += disagreements(SomEnvelope, raw, label)
        count += 1
    assert count > 5000
    assert found == [], f"{len(found)} disagreements:\n" + "\n".join(found)


# --- Matrix --------------------------------------------------------------------------------------

MATRIX_MODELS: dict[str, type[BaseModel]] = {
    "request": MxRequest,
    "response": MxResponse,
    "error-payload": MxErrorPayload,
}


def test_matrix_doors_agree() -> None:
    found: list[str] = []
    count = 0
    for case in MATRIX_CASES:
        found += disagreements(MATRIX_MODELS[case["kind"]], raw_of(case), f"case {case['id']}")
        count += 1
    for kind, model in MATRIX_MODELS.items():
        for index, (raw, _) in enumerate(matrix_differential.corpus(kind)):
            found += disagreements(model, raw, f"{kind} #{index}")
            count += 1
    bundled = sorted(
        (BQ_DATA.parent.parent.parent / "examples" / "messages" / "matrix").glob("*.json")
    )
    assert bundled
    for path in bundled:
        kind = "response" if path.name.startswith("response") else "request"
        found += disagreements(MATRIX_MODELS[kind], path.read_bytes(), f"example {path.name}")
    assert count > 6000
    assert found == [], f"{len(found)} disagreements:\n" + "\n".join(found)


def test_the_bundled_error_reply_reads_from_a_dict() -> None:
    """The issue's own reproduction: a valid error reply, through every door."""
    raw = (
        BQ_DATA.parent.parent.parent / "examples/messages/matrix/response-error-not-found.json"
    ).read_bytes()
    expected = MxResponse.model_validate_json(raw)
    assert MxResponse.model_validate(json.loads(raw)) == expected
    assert TypeAdapter(MxResponse).validate_python(json.loads(raw)) == expected
    assert expected.is_error


# --- BabelQueue ----------------------------------------------------------------------------------


def _babelqueue_documents() -> Iterator[tuple[str, bytes]]:
    rng = random.Random(SEED)
    for path in sorted((BQ_DATA / "fixtures").glob("*.json")):
        raw = path.read_bytes()
        yield f"babelqueue {path.name}", raw
        document = json.loads(raw)
        if isinstance(document, dict):
            for index, mutated in enumerate(structural_mutations(document, rng)):
                yield f"babelqueue {path.name} mutation #{index}", mutated


def test_babelqueue_doors_agree() -> None:
    found: list[str] = []
    count = 0
    for label, raw in _babelqueue_documents():
        found += disagreements(BabelEnvelope, raw, label)
        count += 1
    assert count > 500
    assert found == [], f"{len(found)} disagreements:\n" + "\n".join(found)


def test_an_envelope_validated_again_keeps_what_it_noted_once() -> None:
    """A BabelQueue envelope validated again (``model_validate`` of the instance, a
    ``TypeAdapter``, FastAPI's ``response_model``, a FastStream publish) is returned as it is,
    after its validator runs on it again: what the first reading noted stays, once. It was
    noted twice (a FastStream publish doubled a warning); the dropped forbidden key, which the
    second run cannot see, is kept."""
    raw = BabelEnvelope.create("urn:a:b", {"n": 2**53 + 1}).to_json()
    raw = raw[:-1] + b',"timestamp":1}'
    envelope = BabelEnvelope.model_validate_json(raw)
    noted = [(v.rule, v.pointer) for v in envelope.envelope_warnings()]
    assert noted == [("forbidden_key", "/timestamp"), ("number.unsafe_integer", "/data/n")]
    assert BabelEnvelope.model_validate(envelope) is envelope
    assert TypeAdapter(BabelEnvelope).validate_python(envelope) is envelope
    assert [(v.rule, v.pointer) for v in envelope.envelope_warnings()] == noted


def test_a_large_text_dense_with_escapes_reads_alike_through_every_door() -> None:
    # `check` reads a text over 16 KiB outside its strings once for its depth scan and number
    # proof (session 35); the model's doors, which read it without that sharing, agree with it:
    # the same envelope and the same warning (an unsafe integer at the end).
    head = (
        b'{"job":"urn:a:b","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","meta":{"id":'
        b'"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"q","lang":"php","schema_version":1,'
        b'"created_at":1749132727000},"attempts":0,"data":{"a":['
    )
    items = b",".join(b'{"\\u0022{":%d,"a\\"":"\\\\ [%d]"}' % (i, i) for i in range(2_000))
    raw = head + items + b',{"n":9007199254740993}]}}'
    assert len(raw) > 16_384
    verdict = ek.check(raw)
    assert verdict.ok and verdict.spec == "babelqueue"
    doors = [
        BabelEnvelope.model_validate_json(raw),
        BabelEnvelope.model_validate(json.loads(raw)),
        TypeAdapter(BabelEnvelope).validate_json(raw),
    ]
    for envelope in doors:
        assert envelope == verdict.envelope
        assert envelope.envelope_warnings() == verdict.warnings
    assert [v.pointer for v in verdict.warnings] == ["/data/a/2000/n"]


# --- Python data: what the dict doors and producers read beyond what JSON gives ------------------
#
# A dict built in code may hold what `json.loads` never makes: subclasses of the JSON types (an
# IntEnum member, numpy's float64 is a float subclass), values of other types, nesting past the
# parser's limit. Every door refuses what no JSON text can carry with a ValidationError (the
# producers with a ProducerError) naming the rule and the pointer, reads a subclass as the JSON
# value its base type writes, and what it accepts re-emits and reads back.

BQ_TRACE, BQ_ID = "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b", "f1e2d3c4-b5a6-4789-90ab-cdef01234567"
SOM_SYSTEM = {"system_id": "cms", "system_type": "ncs"}


class _Status(enum.IntEnum):
    OK = 1


class _Float(float):
    pass


class _Int(int):
    pass


def _bq(data: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "id": BQ_ID,
        "queue": "q",
        "lang": "php",
        "schema_version": 1,
        "created_at": 1749132727000,
    }
    return {"job": "urn:babel:a:b", "trace_id": BQ_TRACE, "data": data, "meta": meta, "attempts": 0}


def _som(extension: dict[str, Any]) -> dict[str, Any]:
    return {
        "som_version": "1.0.0",
        "message_id": "01920000-0000-7000-8000-000000000001",
        "correlation_id": "01920000-0000-7000-8000-000000000002",
        "message_type": "asset.ingested",
        "timestamp": "2026-09-11T16:41:00Z",
        "originating_system": SOM_SYSTEM,
        "topic": "som.asset.ingested",
        "payload": {},
        "extensions": {"com.vendor.x": extension},
    }


# spec -> (model, the message around the free-form object, the pointer of that object)
_SPECS: dict[str, tuple[type[BaseModel], Any, str]] = {
    "babelqueue": (BabelEnvelope, _bq, "/data"),
    "som": (SomEnvelope, _som, "/extensions/com.vendor.x"),
    "matrix": (MxRequest, lambda payload: {"op": "fs.list", "payload": payload}, "/payload"),
}
_DICT_DOORS: dict[str, Any] = {
    "model_validate": lambda model, document: model.model_validate(document),
    "TypeAdapter": lambda model, document: TypeAdapter(model).validate_python(document),
}


def _pairs(found: list[ek.Violation]) -> list[tuple[str, str]]:
    return [(v.rule, v.pointer) for v in found]


def _read_back(model: type[BaseModel], envelope: Any) -> None:
    """What a door accepted re-emits, both ways, and reads back as the same message."""
    wire = envelope.to_json()
    assert model.model_validate_json(wire).to_json() == wire  # type: ignore[attr-defined]
    assert model.model_validate_json(envelope.model_dump_json()).to_json() == wire  # type: ignore[attr-defined]


# Python values read as the JSON value of their base type: what the number rules say of it.
# (spec, free-form object, the refusal or None, the warnings), pointers below the object. SOM
# bounds no integer in free-form JSON, so its cases are those NaN and Infinity give.
_SUBCLASSES: dict[str, tuple[str, dict[str, Any], tuple[str, str] | None, list[str]]] = {
    "bq-intenum-beside-an-unsafe-integer": (
        "babelqueue",
        {"big": 2**53, "status": _Status.OK},
        None,
        ["number.unsafe_integer /big"],
    ),
    "som-intenum-beside-a-wide-integer": (
        "som",
        {"big": 2**64, "status": _Status.OK},
        None,
        [],
    ),
    "bq-intenum-beside-a-wide-integer": (
        "babelqueue",
        {"big": 2**64, "status": _Status.OK},
        None,
        ["number.beyond_int64 /big"],
    ),
    "bq-intenum-in-a-nested-list": (
        "babelqueue",
        {"l": [{"big": 2**53}, _Status.OK]},
        None,
        ["number.unsafe_integer /l/0/big"],
    ),
    "bq-int-subclass-unsafe": (
        "babelqueue",
        {"x": _Int(2**60)},
        None,
        ["number.unsafe_integer /x"],
    ),
    "bq-int-subclass-beyond-int64": (
        "babelqueue",
        {"x": _Int(2**70)},
        None,
        ["number.beyond_int64 /x"],
    ),
    **{
        f"{spec}-{name}": (spec, value, refused, [])
        for spec in ("babelqueue", "som")
        for name, value, refused in (
            ("float-subclass-nan", {"x": _Float("nan")}, ("number.non_finite", "/x")),
            ("float-subclass-infinity", {"x": [1, _Float("-inf")]}, ("number.non_finite", "/x/1")),
            (
                "float-subclass-after-a-wide-list",
                {"x": [1.5] * 70 + [_Float("inf")]},
                ("number.non_finite", "/x/70"),
            ),
        )
    },
}


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize(
    ("spec", "value", "refused", "warned"), _SUBCLASSES.values(), ids=_SUBCLASSES.keys()
)
def test_a_dict_door_reads_a_subclass_as_its_json_value(
    spec: str,
    door: str,
    value: dict[str, Any],
    refused: tuple[str, str] | None,
    warned: list[str],
) -> None:
    model, message, at = _SPECS[spec]
    if refused is not None:
        with pytest.raises(ValidationError) as caught:
            _DICT_DOORS[door](model, message(value))
        assert _pairs(ek.violations(caught.value, model=model)) == [(refused[0], at + refused[1])]
        return
    envelope = _DICT_DOORS[door](model, message(value))
    noted = [f"{v.rule} {v.pointer}" for v in envelope.envelope_warnings()]
    assert [w for w in noted if w.startswith("number.")] == [
        f"{rule} {at}{pointer}" for rule, pointer in (w.split(" ") for w in warned)
    ]
    _read_back(model, envelope)


def test_matrix_reads_those_subclasses_as_before() -> None:
    """Matrix's payload (pydantic's ``JsonValue``) already read them so: it still does."""
    for value, rule in ((_Float("nan"), "number.non_finite"), (_Int(2**70), "number.out_of_range")):
        with pytest.raises(ValidationError) as caught:
            MxRequest.model_validate({"op": "fs.list", "payload": {"x": value}})
        assert _pairs(ek.violations(caught.value, model=MxRequest)) == [(rule, "/payload/x")]
    request = MxRequest.model_validate({"op": "fs.list", "payload": {"s": _Status.OK}})
    assert request.to_json() == b'{"op":"fs.list","payload":{"s":1}}'


def _produce(spec: str, via: str, data: dict[str, Any], settings: ek.Settings | None = None) -> Any:
    if spec == "som":
        return SomEnvelope.create(
            "asset.ingested",
            data,
            originating_system=SOM_SYSTEM,
            allow_unknown=True,
            settings=settings,
        )
    if via == "child":
        return BabelEnvelope.create("urn:babel:a:b", {}).child(
            "urn:babel:a:c", data, settings=settings
        )
    return BabelEnvelope.create("urn:babel:a:b", data, settings=settings)


_PRODUCERS = {
    "babelqueue create": ("babelqueue", "create", "/data"),
    "babelqueue child": ("babelqueue", "child", "/data"),
    "som create": ("som", "create", "/payload"),
}

# (data, the ProducerError's rule and pointer below the data, or None)
_PRODUCED: dict[str, tuple[dict[str, Any], dict[str, tuple[str, str] | None]]] = {
    "intenum-beside-an-unsafe-integer": (
        {"big": 2**53, "status": _Status.OK},
        {"babelqueue": None, "som": None},
    ),
    "intenum-beside-a-wide-integer": (
        {"big": 2**64, "o": _Status.OK},
        {"babelqueue": ("number.out_of_range", "/big"), "som": None},
    ),
    "float-subclass-nan": (
        {"x": _Float("nan")},
        {"babelqueue": ("number.non_finite", "/x"), "som": ("number.non_finite", "/x")},
    ),
    "int-subclass-beyond-int64": (
        {"x": _Int(2**70)},
        {"babelqueue": ("number.out_of_range", "/x")},
    ),
}


@pytest.mark.parametrize(
    ("producer", "data", "expected"),
    [
        pytest.param(producer, data, refused[spec], id=f"{name}-{producer}")
        for name, (data, refused) in _PRODUCED.items()
        for producer, (spec, _, _) in _PRODUCERS.items()
        if spec in refused
    ],
)
def test_a_producer_reads_a_subclass_as_its_json_value(
    producer: str, data: dict[str, Any], expected: tuple[str, str] | None
) -> None:
    spec, via, at = _PRODUCERS[producer]
    if expected is None:
        envelope = _produce(spec, via, data)
        _read_back(type(envelope), envelope)
        return
    with pytest.raises(ek.ProducerError) as caught:
        _produce(spec, via, data)
    assert _pairs(caught.value.violations) == [(expected[0], at + expected[1])]


# --- Python data nesting deeper than the JSON parser reads --------------------------------------
#
# The JSON door refuses a text nesting more than 200 levels (pydantic-core's parser); orjson
# writes 254, and Python recurses about 1,000. The dict doors refuse alike (`message.too_deep`,
# at the first array or object past the limit), however deep, however wide the containers
# around it, and never recurse; the producers give a ProducerError.


def _nest(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


# The free-form object's depth in each spec's message: BabelQueue's `data`, SOM's extension.
_FREE_DEPTH = {"babelqueue": 2, "som": 3, "matrix": 2}


def _deep(shape: str, levels: int) -> tuple[dict[str, Any], str]:
    """A free-form object holding ``levels`` levels of arrays at ``/x``, and where level 201 is.

    The pointer is relative to the object, for an object at depth 2 (the caller shifts it).
    ``levels`` counts the array at ``/x`` and what nests in it.
    """
    if shape == "chain":
        return {"x": _nest(levels)}, "/x" + "/0" * 198
    if shape == "in-a-narrow-list":  # read as text, then for its depth
        return {"x": [_nest(levels - 1), *range(10)]}, "/x" + "/0" * 198
    if shape == "in-a-wide-list":  # written within its depth bound
        return {"x": [_nest(levels - 1), *range(40)]}, "/x" + "/0" * 198
    wide = {f"k{i}": i for i in range(40)}
    return {"x": {**wide, "deep": _nest(levels - 1)}}, "/x/deep" + "/0" * 197


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("spec", _SPECS)
@pytest.mark.parametrize("shape", ["chain", "in-a-narrow-list", "in-a-wide-list", "in-a-wide-dict"])
@pytest.mark.parametrize("past", [1, 2, 52, 53, 54, 800])
def test_a_dict_door_refuses_nesting_the_json_door_refuses(
    spec: str, door: str, shape: str, past: int
) -> None:
    """``past`` levels past the limit are refused; the limit itself is read, and reads back."""
    model, message, at = _SPECS[spec]
    value, _ = _deep(shape, 200 - _FREE_DEPTH[spec])
    document = message(value)
    assert model.model_validate_json(json.dumps(document))
    _read_back(model, _DICT_DOORS[door](model, document))
    value, where = _deep(shape, 200 - _FREE_DEPTH[spec] + past)
    document = message(value)
    if past < 600:  # json.dumps recurses too
        with pytest.raises(ValidationError) as caught:
            model.model_validate_json(json.dumps(document))
        assert _pairs(ek.violations(caught.value, model=model)) == [("message.too_deep", "")]
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, document)
    # The pointer where the limit is passed, one level higher for SOM's deeper object.
    expected = where if _FREE_DEPTH[spec] == 2 else where[: where.rindex("/0")]
    assert _pairs(ek.violations(caught.value, model=model)) == [("message.too_deep", at + expected)]


@pytest.mark.parametrize("producer", _PRODUCERS)
@pytest.mark.parametrize("levels", [199, 1_000, 100_000])
def test_a_producer_refuses_nesting_no_json_text_may_hold(producer: str, levels: int) -> None:
    """Refused past the limit (``levels`` arrays in an object at depth 2), taken up to it.

    The parser's limit, whatever the settings allow (``max_depth`` is 64 by default).
    """
    spec, via, at = _PRODUCERS[producer]
    deep = ek.Settings(max_depth=1_000)
    _read_back(
        SomEnvelope if spec == "som" else BabelEnvelope,
        _produce(spec, via, {"x": _nest(198)}, deep),
    )
    with pytest.raises(ek.ProducerError) as caught:
        _produce(spec, via, {"x": _nest(levels)}, deep)
    assert _pairs(caught.value.violations) == [("message.too_deep", at + "/x" + "/0" * 198)]


def test_matrix_s_producer_refuses_deep_data_without_recursing() -> None:
    with pytest.raises(ek.ProducerError):
        MxRequest.create("fs.list", {"x": _nest(100_000)})


def _cycle(shape: str) -> list[Any]:
    """A list that holds itself: once (nesting without end), or twice (a fan-out of 2^n)."""
    loop: list[Any] = []
    loop.extend([loop] * (1 if shape == "chain" else 2))
    return loop


# A cycle is nesting without end: refused as nesting past the limit, where the first array
# past it is. Each door hung, walking it without end (the probe for lone surrogates, the
# producers' copy).
@pytest.mark.timeout(60)
@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("spec", _SPECS)
@pytest.mark.parametrize("shape", ["chain", "fan-out"])
def test_a_dict_door_refuses_a_cycle_as_nesting_past_the_limit(
    spec: str, door: str, shape: str
) -> None:
    model, message, at = _SPECS[spec]
    _, where = _deep("chain", 0)
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, message({"x": _cycle(shape)}))
    expected = where if _FREE_DEPTH[spec] == 2 else where[: where.rindex("/0")]
    assert _pairs(ek.violations(caught.value, model=model)) == [("message.too_deep", at + expected)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("shape", ["chain", "fan-out"])
def test_a_payload_model_read_alone_refuses_a_cycle(door: str, shape: str) -> None:
    story = json.loads((DATA / "som/examples/story-context/tags.json").read_bytes())
    story["extensions"] = {"com.vendor.x": {"deep": _cycle(shape)}}
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](StoryContext, story)
    at = "/extensions/com.vendor.x/deep" + "/0" * 197
    assert _pairs(ek.violations(caught.value, model=StoryContext)) == [("message.too_deep", at)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("producer", [*_PRODUCERS, "matrix create"])
@pytest.mark.parametrize("shape", ["chain", "fan-out"])
def test_a_producer_refuses_a_cycle_as_nesting_past_the_limit(producer: str, shape: str) -> None:
    deep = ek.Settings(max_depth=1_000, matrix_from="agent:a")
    with pytest.raises(ek.ProducerError) as caught:
        if producer == "matrix create":
            MxRequest.create("fs.list", {"x": _cycle(shape)}, settings=deep)
        else:
            spec, via, _ = _PRODUCERS[producer]
            _produce(spec, via, {"x": _cycle(shape)}, deep)
    at = "/payload" if producer == "matrix create" else _PRODUCERS[producer][2]
    assert _pairs(caught.value.violations) == [("message.too_deep", at + "/x" + "/0" * 198)]


def test_the_depth_limits_are_the_parsers_and_orjsons() -> None:
    """``_json.PARSER_MAX_DEPTH`` is what pydantic-core's parser reads, and
    ``ORJSON_MAX_DEPTH`` what orjson writes, which the depth bounds build on."""
    adapter = TypeAdapter(Any)
    adapter.validate_json(json.dumps(_nest(_json.PARSER_MAX_DEPTH)))
    with pytest.raises(ValidationError, match="recursion limit exceeded"):
        adapter.validate_json(json.dumps(_nest(_json.PARSER_MAX_DEPTH + 1)))
    orjson.dumps(_nest(_json.ORJSON_MAX_DEPTH))
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(_nest(_json.ORJSON_MAX_DEPTH + 1))


# --- Python data no JSON text holds -----------------------------------------------------------
#
# In free-form JSON (BabelQueue's `data` and unknown keys, SOM's extensions, open objects and
# unknown payloads), a value or key no JSON text can carry is refused as `json.invalid` at its
# pointer, by every dict door, as the producers refuse it; what the encoders write as JSON
# (the JSON types and their subclasses, tuples, enum members, UUIDs) is read and reads back.


class _Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class _Point:
    x: int = 1


_JSONABLE: dict[str, Any] = {
    "tuple": (1, "a"),
    "enum": _Colour.RED,
    "intenum": _Status.OK,
    "uuid": uuid.UUID(int=7),
    "str-subclass": _Colour.RED.value,
}

_NOT_JSON: dict[str, Any] = {
    "decimal": decimal.Decimal("9.99"),
    "date": datetime.date(2026, 1, 1),
    "datetime": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
    "bytes": b"x",
    "set": {1},
    "frozenset": frozenset(),
    "complex": 1j,
    "fraction": fractions.Fraction(1, 3),
    "object": object(),
    "iterator": iter([1]),
    "dataclass": _Point(),
    "model": ek.Violation("json.invalid", "", "x", "json"),
    "falsy-decimal": decimal.Decimal(0),
    "empty-bytes": b"",
}

# (a message around a free-form value, the pointer of that value)
_PLACES: dict[str, tuple[type[BaseModel], Any, str]] = {
    "babelqueue-data": (BabelEnvelope, lambda v: _bq({"a": 1, "v": v}), "/data/v"),
    "babelqueue-data-nested": (BabelEnvelope, lambda v: _bq({"l": [{"v": v}]}), "/data/l/0/v"),
    "babelqueue-unknown-key": (BabelEnvelope, lambda v: {**_bq({}), "x": {"v": v}}, "/x/v"),
    "babelqueue-meta-key": (
        BabelEnvelope,
        lambda v: {**_bq({}), "meta": {**_bq({})["meta"], "x": [v]}},
        "/meta/x/0",
    ),
    "som-extension": (SomEnvelope, lambda v: _som({"v": v}), "/extensions/com.vendor.x/v"),
    "som-unknown-payload": (
        SomEnvelope,
        lambda v: {**_som({}), "payload": {"deep": {"v": v}}},
        "/payload/deep/v",
    ),
    "som-story-extension": (
        SomEnvelope,
        lambda v: {
            **json.loads(
                (DATA / "som/examples/story-context/hurricane-beat6-envelope.json").read_bytes()
            ),
            "extensions": {"com.vendor.x": {"v": v}},
        },
        "/extensions/com.vendor.x/v",
    ),
}


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("place", _PLACES)
@pytest.mark.parametrize("value", _NOT_JSON.values(), ids=_NOT_JSON.keys())
def test_a_dict_door_refuses_a_value_no_json_text_holds(place: str, door: str, value: Any) -> None:
    """Refused at its pointer, beside a 2^53 (which sends BabelQueue's data to the scan) and
    values the encoders write as JSON, which are read and read back without it."""
    model, message, at = _PLACES[place]
    read = _DICT_DOORS[door]
    with pytest.raises(ValidationError) as caught:
        read(model, message(value))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at)]
    with pytest.raises(ValidationError) as caught:
        read(model, message([2**53, _JSONABLE, value]))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at + "/2")]
    _read_back(model, read(model, message([2**53, _JSONABLE])))


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("place", _PLACES)
@pytest.mark.parametrize("key", [1, ("a", "b"), None], ids=["int", "tuple", "none"])
def test_a_dict_door_refuses_a_key_that_is_not_a_string(place: str, door: str, key: Any) -> None:
    model, message, at = _PLACES[place]
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, message({"ok": 1, key: 2}))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at)]


# Matrix's free-form JSON is pydantic's `JsonValue`, which takes the JSON types and their
# subclasses alone (no tuple, `Enum` member or UUID either): the same values, and those, are
# refused, named where they are.
_MATRIX_PLACES: dict[str, tuple[type[BaseModel], Any, str]] = {
    "request-payload": (
        MxRequest,
        lambda v: {"op": "fs.list", "payload": {"a": 1, "v": v}},
        "/payload/v",
    ),
    "request-payload-nested": (
        MxRequest,
        lambda v: {"op": "fs.list", "payload": {"l": [1, {"v": v}]}},
        "/payload/l/1/v",
    ),
    "reply-unknown-key": (
        MxResponse,
        lambda v: {"op": "$reply", "correlationId": "c1", "payload": {}, "x": {"v": v}},
        "/x/v",
    ),
    "error-details": (
        MxErrorPayload,
        lambda v: {"ok": False, "error": "m", "code": "INTERNAL", "details": [[v]]},
        "/details/0/0",
    ),
}


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("place", _MATRIX_PLACES)
@pytest.mark.parametrize(
    "value",
    [*_NOT_JSON.values(), *_JSONABLE.values(), orjson.Fragment(b"[1")],
    ids=[*_NOT_JSON, *_JSONABLE, "orjson-fragment"],
)
def test_matrix_refuses_a_value_no_json_text_holds_where_it_is(
    place: str, door: str, value: Any
) -> None:
    model, message, at = _MATRIX_PLACES[place]
    if isinstance(value, (str, int)):  # a JSON type's value, or subclass (`IntEnum`): taken
        _read_back(model, _DICT_DOORS[door](model, message(value)))
        return
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, message(value))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at)]


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("place", _MATRIX_PLACES)
@pytest.mark.parametrize("key", [1, ("a", "b"), None], ids=["int", "tuple", "none"])
def test_matrix_refuses_a_key_that_is_not_a_string_at_its_object(
    place: str, door: str, key: Any
) -> None:
    model, message, at = _MATRIX_PLACES[place]
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, message({"ok": 1, key: 2}))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at)]


# --- The dict door probes its input once ---------------------------------------------------------
#
# Every public model refuses in Python mode what no JSON text carries (envelopekit._text); a model
# holding others probes the whole input, and the models it holds are read by their JSON branches
# within it, so the probe (one orjson encode) is paid once however many models the message holds.

_ONE_PROBE: dict[str, tuple[Any, str]] = {
    "som-story-context": (SomEnvelope, "som/examples/story-context/hurricane-beat6-envelope.json"),
    "matrix-error-reply": (
        MxResponse,
        "../../examples/messages/matrix/response-error-not-found.json",
    ),
    "matrix-write-request": (
        MxRequest,
        "../../examples/messages/matrix/request-write-idempotent.json",
    ),
    "babelqueue-dead-lettered": (BabelEnvelope, "babelqueue/fixtures/dead-lettered.json"),
}


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("case", _ONE_PROBE)
def test_a_dict_door_probes_its_input_once(case: str, door: str) -> None:
    model, path = _ONE_PROBE[case]
    document = json.loads((DATA / path).read_bytes())
    _DICT_DOORS[door](model, document)  # built
    entered = tests_calls.python_calls(lambda: _DICT_DOORS[door](model, document))
    assert entered.count(refuse_unreadable.__code__) <= 1


@pytest.mark.parametrize("door", _DICT_DOORS)
def test_a_payload_model_read_alone_refuses_nesting_past_the_parsers_depth(door: str) -> None:
    """It was taken, and ``model_dump_json()`` then raised (maximum serialization depth)."""
    story = json.loads((DATA / "som/examples/story-context/tags.json").read_bytes())
    story["extensions"] = {"com.vendor.x": {"deep": _nest(300)}}
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](StoryContext, story)
    at = "/extensions/com.vendor.x/deep" + "/0" * 197
    assert _pairs(ek.violations(caught.value, model=StoryContext)) == [("message.too_deep", at)]


class _Label(str, enum.Enum):
    A = "a"


class _Ratio(float, enum.Enum):
    HALF = 0.5


_AS_JSON_VALUE = TypeAdapter(JsonValue, config=ConfigDict(strict=True))

# Matrix reads a payload of Python data written by orjson and read back first, with no Python
# call a value: what pydantic's `JsonValue` returns for it, types and all (a member of an `int`,
# `str` or `float` enum as its value; `-0.0` with its sign), in both of its readings (read back
# equal, or where orjson writes null for a NaN or an infinity, by a Rust schema).
_READ_AS_JSON_VALUE: dict[str, tuple[Any, str | None]] = {
    "scalars": ([1, 1.0, True, None, "s", -0.0, 5e-324, 1.7976931348623157e308, 2**53 - 1], None),
    "enum-members": ([_Status.OK, _Label.A, _Ratio.HALF, {"k": [_Status.OK]}], None),
    "enum-member-keys": ({_Label.A: 1, "b": [_Label.A]}, None),
    "nested": ({"a": [{"b": [[], {}, [None, False]]}], "c": {}}, None),
    "199-levels": (json.loads("[" * 198 + "1" + "]" * 198), None),
    "nan-beside-members": ([_Status.OK, float("nan"), _Label.A], "number.non_finite"),
    "infinity": ({"x": [1, float("inf")]}, "number.non_finite"),
}


@pytest.mark.parametrize(
    ("value", "refused"), _READ_AS_JSON_VALUE.values(), ids=_READ_AS_JSON_VALUE.keys()
)
def test_matrix_reads_python_data_as_pydantic_s_json_value(value: Any, refused: str | None) -> None:
    document = {"op": "fs.list", "payload": value}
    if refused is not None:  # read as JsonValue reads it, then refused by the number rules
        with pytest.raises(ValidationError) as caught:
            MxRequest.model_validate(document)
        assert [v.rule for v in ek.violations(caught.value, model=MxRequest)] == [refused]
        return
    payload = MxRequest.model_validate(document).payload
    assert typed(payload) == typed(_AS_JSON_VALUE.validate_python(value))


def test_matrix_reads_a_payload_as_a_copy() -> None:
    value = {"a": [1, {"b": [2]}]}
    payload = MxRequest.model_validate({"op": "fs.list", "payload": value}).payload
    value["a"][1]["b"].append(3)  # type: ignore[index]
    assert payload == {"a": [1, {"b": [2]}]}


@pytest.mark.parametrize(
    ("items", "refused"),
    [([-1] * 1_000, None), ([-1] * 1_000 + [float("inf")], "number.non_finite")],
    ids=["small-integers", "small-integers-then-an-infinity"],
)
def test_matrix_reads_plain_python_data_without_a_python_call_a_value(
    items: list[Any], refused: str | None
) -> None:
    """pydantic's ``JsonValue`` calls Python once a value (1 MiB of small integers: 22x
    ``orjson.loads``); a payload of the JSON types is read in a few calls, whatever its size."""
    document = {"op": "fs.list", "payload": {"a": items}}

    def read() -> None:
        try:
            MxRequest.model_validate(document)
        except ValidationError as exc:
            assert [v.rule for v in ek.violations(exc, model=MxRequest)] == [refused]
        else:
            assert refused is None

    read()
    assert len(tests_calls.python_calls(read)) < 100


class _Plain(enum.Enum):
    A = 1


# Python data orjson writes unequal to it, each with what the dict door raised before it was
# read for the number rules' refusal first: that refusal where the rest is of the JSON types,
# else JsonValue's error (its place below the payload), however the two are ordered.
_READ_BACK_UNEQUAL: dict[str, tuple[Any, tuple[str, tuple[str | int, ...], str | None]]] = {
    "infinity-last": ([-1] * 5_000 + [float("inf")], ("number.non_finite", (), "/5000")),
    "nan-first": ([float("nan"), 1, "s"], ("number.non_finite", (), "/0")),
    "beyond-int64-before-a-nan": ([2**63, float("nan")], ("number.out_of_range", (), "/0")),
    "beyond-int64-after-a-nan": (
        {"x": float("nan"), "y": 2**64 - 1},
        ("number.non_finite", (), "/x"),
    ),
    "nan-in-an-enum-member": ([_Ratio.HALF, float("-inf")], ("number.non_finite", (), "/1")),
    "escaped-key": ({"a/b~": [float("nan")]}, ("number.non_finite", (), "/a~1b~0/0")),
    "tuple-after-a-nan": ([float("nan"), (1,)], ("invalid-json-value", ("list", 1), None)),
    "tuple-before-a-nan": ([(1,), float("nan")], ("invalid-json-value", ("list", 0), None)),
    "uuid-beside-a-nan": (
        {"n": float("nan"), "u": uuid.UUID(int=1)},
        ("invalid-json-value", ("dict", "u"), None),
    ),
    "enum-member-of-no-json-type": (
        [_Plain.A, float("inf")],
        ("invalid-json-value", ("list", 0), None),
    ),
}


@pytest.mark.parametrize(
    ("value", "raised"), _READ_BACK_UNEQUAL.values(), ids=_READ_BACK_UNEQUAL.keys()
)
def test_matrix_refuses_a_non_finite_number_in_python_data_as_before(
    value: Any, raised: tuple[str, tuple[str | int, ...], str | None]
) -> None:
    kind, below, pointer = raised
    with pytest.raises(ValidationError) as caught:
        MxRequest.model_validate({"op": "fs.list", "payload": value})
    [error] = caught.value.errors(include_url=False)
    assert (error["type"], error["loc"], error.get("ctx")) == (
        kind,
        ("payload", *below),
        None if pointer is None else {"pointer": pointer},
    )
    # The refusal's input is the payload, JsonValue's the value it refused.
    assert error["input"] is (value if not below else value[below[-1]])


def test_matrix_reads_a_payload_s_numbers_once_to_refuse_a_non_finite_one() -> None:
    """orjson writes a NaN or an infinity ``null``: such a payload was copied by a Rust schema,
    then walked twice by the number rules (1 MiB of small integers then an infinity: 12.3x
    ``orjson.loads``); its refusal is now found in it by one walk, before any copy."""
    items = [-1] * 20_000 + [float("inf")]
    document = {"op": "fs.list", "payload": {"a": items}}

    def read() -> None:
        with pytest.raises(ValidationError):
            MxRequest.model_validate(document)

    read()
    chunks = -(-len(items) // 4_096)  # `_json._CHUNK`: a C pass reads a chunk of integers
    readings = tests_calls.python_calls(read).count(_json._plain_integers.__code__)
    assert 0 < readings <= chunks


@pytest.mark.parametrize(
    "write",
    [
        lambda request: request.model_dump(),
        lambda request: request.model_dump(mode="json"),
        lambda request: request.to_json(),
    ],
    ids=["model_dump", "model_dump-json", "to_json"],
)
def test_matrix_writes_a_payload_without_a_python_call_a_value(write: Any) -> None:
    """pydantic's ``JsonValue`` writes a value by calling Python for its tag too (a typed
    payload, written for its numbers, cost 13.9x ``orjson.loads`` so); written by type now."""
    items = [-1, 1.5, "s", True, None, {"k": [0]}] * 200
    request = MxRequest.model_validate_json(
        orjson.dumps({"op": "fs.list", "payload": {"a": items}})
    )
    written = write(request)
    payload = written["payload"] if type(written) is dict else json.loads(written)["payload"]
    assert payload == {"a": items}
    assert len(tests_calls.python_calls(lambda: write(request))) < 100


@pytest.mark.parametrize("door", _DICT_DOORS)
@pytest.mark.parametrize("place", ["babelqueue-data", "babelqueue-data-nested"])
@pytest.mark.parametrize(
    ("value", "within"),
    [
        ([2**64, 1, decimal.Decimal(1)], "/2"),
        ({"a": 2**64, "b": datetime.date(2026, 1, 1)}, "/b"),
        ({"a": 2**64, "b": "s", 1: 2}, ""),
        ([[2**64, None], [1.5, True, b"x"]], "/1/2"),
        ([{"a": 2**64}, {"b": False, "c": {1}}], "/1/c"),
    ],
    ids=["list-of-scalars", "object-of-scalars", "key-not-a-string", "lists", "objects"],
)
def test_a_dict_door_refuses_beside_integers_beyond_64_bits(
    place: str, door: str, value: Any, within: str
) -> None:
    """BabelQueue's ``data``, which takes them: containers of the JSON scalars alone are passed
    over (orjson writes no such integer); what else is in one is refused where it is."""
    model, message, at = _PLACES[place]
    with pytest.raises(ValidationError) as caught:
        _DICT_DOORS[door](model, message(value))
    assert _pairs(ek.violations(caught.value, model=model)) == [("json.invalid", at + within)]


def test_a_dict_door_passes_over_integers_beyond_64_bits_with_no_python_call_each() -> None:
    """A list of them was walked an item at a time (50,000 in BabelQueue's ``data``: its dict
    door 10.2x ``orjson.loads``, 5.9x the walk); a few calls now, beside the warnings'."""
    document = _bq({"a": [2**64] * 1_000})
    envelope = BabelEnvelope.model_validate(document)
    assert envelope.data == {"a": [2**64] * 1_000}
    calls = tests_calls.python_calls(lambda: BabelEnvelope.model_validate(document))
    assert len(calls) < 1_000


# --- The FastAPI and FastStream doors ------------------------------------------------------------
#
# Neither calls the model's `model_validate`: FastAPI validates a body with a TypeAdapter of
# `Annotated[Model, Body()]` (`validate_python(value, from_attributes=True)`, its route's body
# field), FastStream with a model fast_depends builds of the handler's arguments. Both build a
# schema holding the model's, where pydantic-core runs the model's own validator for it.


class _Order(BaseModel):
    order_id: int


_HELD_MODELS: dict[str, Any] = {
    "babelqueue": BabelEnvelope,
    "babelqueue-order": BabelEnvelope[_Order],
    "som": SomEnvelope,
    "matrix-request": MxRequest,
    "matrix-response": MxResponse,
    "matrix-error-payload": MxErrorPayload,
}


def _fastapi_door(model: Any) -> Any:
    """A route's body field of ``model``: what FastAPI runs on a request's parsed body."""
    from fastapi import FastAPI

    async def echo(body: Any) -> None:
        del body

    echo.__annotations__ = {"body": model, "return": None}
    app = FastAPI()
    app.post("/echo")(echo)
    field = app.routes[-1].dependant.body_params[0]  # type: ignore[attr-defined]

    def validate(document: Any) -> Any:
        value, errors = field.validate(document, {}, loc=("body",))
        if errors:
            raise _Refused([(e["type"], tuple(e["loc"])[1:], e["msg"]) for e in errors])
        return value

    return validate


def _faststream_door(model: Any) -> Any:
    """A subscriber's argument of ``model``: what fast_depends runs on a decoded message."""
    import inspect

    from fast_depends.library.serializer import OptionItem
    from fast_depends.pydantic import PydanticSerializer

    arguments = PydanticSerializer(use_fastdepends_errors=False)(
        name="handler",
        options=[OptionItem(field_name="body", field_type=model)],
        response_type=inspect.Parameter.empty,
    )

    def validate(document: Any) -> Any:
        try:
            return arguments({"body": document})["body"]
        except ValidationError as exc:
            raise _Refused(_details(exc, held=True)) from None

    return validate


class _Refused(Exception):
    """A held door's refusal: its errors' (type, location below the argument, message)."""

    def __init__(self, errors: list[tuple[str, tuple[Any, ...], str]]) -> None:
        super().__init__(errors)
        self.errors = errors


def _details(exc: ValidationError, *, held: bool = False) -> list[tuple[str, tuple[Any, ...], str]]:
    return [
        (e["type"], tuple(e["loc"])[1:] if held else tuple(e["loc"]), e["msg"])
        for e in exc.errors(include_url=False)
    ]


_HELD_DOORS: dict[str, Any] = {"FastAPI": _fastapi_door, "FastStream": _faststream_door}
_BUILT_DOORS: dict[tuple[str, str], Any] = {}


def _held(door: str, case: str) -> Any:
    if (door, case) not in _BUILT_DOORS:
        _BUILT_DOORS[door, case] = _HELD_DOORS[door](_HELD_MODELS[case])
    return _BUILT_DOORS[door, case]


def _own_code(entered: list[Any]) -> list[Any]:
    """The envelopekit functions among ``entered``, in order."""
    return [code for code in entered if "/envelopekit/" in code.co_filename]


_HELD_BODIES: dict[str, str] = {
    "babelqueue": "babelqueue/fixtures/dead-lettered.json",
    "som": "som/examples/story-context/hurricane-beat6-envelope.json",
    "matrix-request": "../../examples/messages/matrix/request-write-idempotent.json",
    "matrix-response": "../../examples/messages/matrix/response-error-not-found.json",
}


@pytest.mark.parametrize("door", _HELD_DOORS)
@pytest.mark.parametrize("case", _HELD_BODIES)
def test_a_held_door_runs_the_model_s_validator_once(case: str, door: str) -> None:
    """What the model's own validator runs, once: the probe and its after-validators ran twice
    (pydantic-core runs the model's validator for its model schema, which the whole schema
    around it wrapped in the same hooks again)."""
    model = _HELD_MODELS[case]
    document = json.loads((DATA / _HELD_BODIES[case]).read_bytes())
    validate = _held(door, case)
    validate(document)  # built
    own = _own_code(
        tests_calls.python_calls(lambda: model.__pydantic_validator__.validate_python(document))
    )
    entered = _own_code(tests_calls.python_calls(lambda: validate(document)))
    # The class validator's probe (within its gate, `_text.gated`, where it has one), once.
    assert own.count(refuse_unreadable.__code__) == 1
    if model is BabelEnvelope:
        # Held, the envelope takes the fast path first, as `model_validate` does.
        fast = _own_code(tests_calls.python_calls(lambda: model.model_validate(document)))
        assert entered[0].co_name == "_held_door"
        assert fast[0].co_name == "model_validate"
        assert entered[1:] == fast[1:]
        assert refuse_unreadable.__code__ not in entered
    else:
        assert entered == own


def _held_documents() -> Iterator[tuple[str, str, Any]]:
    """(case, label, document): the corpus's messages and their mutations, every model."""
    picked = random.Random(SEED)
    for label, raw in _babelqueue_documents():
        for case in ("babelqueue", "babelqueue-order"):
            yield case, label, raw
    som = list(_som_documents())
    for label, raw in picked.sample(som, 600):
        yield "som", label, raw
    names = {"request": "matrix-request", "response": "matrix-response"}
    for matrix_case in MATRIX_CASES:
        name = names.get(matrix_case["kind"], "matrix-error-payload")
        yield name, f"case {matrix_case['id']}", raw_of(matrix_case)
    for kind, name in names.items():
        for index, (raw, _) in enumerate(matrix_differential.corpus(kind)):
            if index % 5 == 0:
                yield name, f"{kind} #{index}", raw


def _read(validate: Any, document: Any) -> Any:
    try:
        found = validate(copy.deepcopy(document))
    except _Refused as exc:
        return ("refused", exc.errors)
    except ValidationError as exc:
        return ("refused", _details(exc))
    # (A SOM payload read alone has no `to_json`.)
    written = found.to_json() if hasattr(found, "to_json") else found.model_dump_json()
    return ("ok", written, found.model_dump())


@pytest.mark.parametrize("door", _HELD_DOORS)
def test_a_held_door_reads_as_the_model_s_own_validator(door: str) -> None:
    """The corpus and its mutations, every model: the same message, or the same errors, as
    ``TypeAdapter(model)`` (the model's own validator, as the door calls it); the same verdict
    as its JSON door."""
    found: list[str] = []
    count = 0
    for case, label, raw in _held_documents():
        try:
            document = json.loads(raw)
        except ValueError:
            continue
        model = _HELD_MODELS[case]
        # FastAPI reads the body's models from attributes too: pydantic's errors say so.
        attributes = door == "FastAPI"
        own = _read(partial(_adapter(model).validate_python, from_attributes=attributes), document)
        got = _read(_held(door, case), document)
        json_door = _read(model.model_validate_json, raw)
        if got != own or got[0] != json_door[0]:
            found.append(f"{case} {label}: {door} {got[0]} != {own[0]} (JSON {json_door[0]})")
        count += 1
    assert count > 2000
    assert found == [], f"{len(found)} disagreements:\n" + "\n".join(found[:50])


@pytest.mark.parametrize("door", _HELD_DOORS)
@pytest.mark.parametrize("case", _HELD_MODELS)
def test_a_held_door_leaves_the_model_s_schema_as_it_was(case: str, door: str) -> None:
    """pydantic inlines, in place, the definitions a schema holding the model refers to."""
    model = _HELD_MODELS[case]
    before = repr(model.__pydantic_core_schema__)
    _HELD_DOORS[door](model)
    assert repr(model.__pydantic_core_schema__) == before


_RUN_OPTIONS: dict[str, dict[str, Any]] = {
    "none": {},
    "strict": {"strict": True},
    "lax": {"strict": False},
    "extra allow": {"extra": "allow"},
    "extra ignore": {"extra": "ignore"},
    "extra forbid": {"extra": "forbid"},
    "by alias": {"by_alias": True},
    "by name": {"by_name": True},
    "by name only": {"by_alias": False, "by_name": True},
    "from attributes": {"from_attributes": True},
    "context": {"context": {"max_violations": 1}},
}


def _envelope_read(validate: Any, document: Any) -> Any:
    """``validate``'s verdict on ``document``, and all of an accepted envelope's state."""
    try:
        found = validate(copy.deepcopy(document))
    except ValidationError as exc:
        return ("refused", _details(exc))
    except _Refused as exc:
        return ("refused", exc.errors)
    meta = found.meta
    return (
        "ok",
        found.to_json(),
        found.model_dump(),
        found.model_fields_set,
        found.__pydantic_extra__,
        meta.__pydantic_extra__,
        meta.model_fields_set,
        [(v.rule, v.pointer, v.message) for v in found.envelope_warnings()],
    )


@pytest.mark.parametrize("options", _RUN_OPTIONS.values(), ids=_RUN_OPTIONS)
def test_a_held_envelope_reads_as_model_validate_under_every_option(
    options: dict[str, Any],
) -> None:
    """``BabelEnvelope`` held by another schema (here a list's item, as FastAPI's body and
    FastStream's arguments hold it) takes the fast path ``model_validate`` takes, which sees
    the call's options where the held one sees none: under every run-time option, the same
    envelope (its fields set, extras, warnings) or the same errors, on the corpus and its
    mutations."""
    adapter: TypeAdapter[list[BabelEnvelope[Any]]] = TypeAdapter(list[BabelEnvelope])

    def held(document: Any) -> Any:
        try:
            return adapter.validate_python([document], **options)[0]
        except ValidationError as exc:
            raise _Refused(_details(exc, held=True)) from None

    found: list[str] = []
    count = 0
    for label, raw in _babelqueue_documents():
        try:
            document = json.loads(raw)
        except ValueError:
            continue
        own = _envelope_read(partial(BabelEnvelope.model_validate, **options), document)
        got = _envelope_read(held, document)
        if got != own:
            found.append(f"{label}: {got} != {own}")
        count += 1
    assert count > 500
    assert found == [], f"{len(found)} disagreements:\n" + "\n".join(found[:20])


# --- Large Python data through the class's own validator ----------------------------------------
#
# Every door but the model's own methods runs the class's validator: a TypeAdapter of the class or
# of a list of them, FastAPI's body, FastStream's arguments. Over FULL_REPORT_BYTES it reads plain
# JSON data as `model_validate` does (the fail-fast copy: one error per array), where the call sets
# no run-time option that could change the verdict; its whole reading reported every item (1 MiB
# of SOM assets `[{}, ...]` through FastAPI: 287x `orjson.loads`).


def _story(**payload: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / _HELD_BODIES["som"]).read_bytes())
    document["payload"].update(payload)
    return document


def _babelqueue_numbers(*last: float) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        BabelEnvelope.create("urn:x:y", {"k": list(range(5_000))}).to_json()
    )
    document["data"]["k"] += last
    return document


def _matrix_request(**members: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(MxRequest.create("fs.list", {}).to_json())
    document.update(members)
    return document


_LARGE: dict[str, tuple[Any, Any]] = {
    "som assets of empty objects": (SomEnvelope, _story(assets=[{}] * 8_000)),
    "som an invalid tag, then objects": (
        SomEnvelope,
        _story(tags=[{"scheme": 1}, *({"a": i} for i in range(3_000))]),
    ),
    "som extensions not namespaced": (
        SomEnvelope,
        _story(extensions={f"k{i}": 0 for i in range(3_000)}),
    ),
    "som valid, a large extension": (
        SomEnvelope,
        _story(extensions={"com.x.y": list(range(5_000))}),
    ),
    "story.context alone, assets of empty objects": (
        StoryContext,
        _story(assets=[{}] * 8_000)["payload"],
    ),
    "babelqueue valid": (BabelEnvelope, _babelqueue_numbers()),
    "babelqueue a NaN last": (BabelEnvelope, _babelqueue_numbers(float("nan"))),
    "matrix request valid": (MxRequest, _matrix_request(payload={"k": list(range(5_000))})),
    "matrix request, a wrong op": (
        MxRequest,
        _matrix_request(op=1, payload={"k": list(range(5_000))}),
    ),
}


def _class_doors(model: Any) -> dict[str, Any]:
    """Each door that runs ``model``'s class validator on Python data, raising ``_Refused``."""
    adapter = TypeAdapter(model)
    listed = TypeAdapter(list[model])

    def alone(document: Any) -> Any:
        try:
            return adapter.validate_python(document)
        except ValidationError as exc:
            raise _Refused(_details(exc)) from None

    def in_a_list(document: Any) -> Any:
        try:
            return listed.validate_python([document])[0]
        except ValidationError as exc:
            raise _Refused(_details(exc, held=True)) from None

    return {
        "TypeAdapter": alone,
        "list": in_a_list,
        "FastAPI": _fastapi_door(model),
        "FastStream": _faststream_door(model),
    }


@pytest.mark.parametrize("case", _LARGE)
def test_a_large_dict_reads_through_the_class_validator_as_model_validate_reads_it(
    case: str,
) -> None:
    """Over the bound, every door that runs the class's validator: the envelope
    ``model_validate`` builds, or its errors (one per array), through each."""
    model, document = _LARGE[case]
    assert len(orjson.dumps(document)) > _failfast.FULL_REPORT_BYTES
    own = _read(model.model_validate, document)
    if own[0] == "refused":
        assert len(own[1]) <= 3, own[1][:5]
    for door, validate in _class_doors(model).items():
        assert _read(validate, document) == own, door


@pytest.mark.parametrize("options", _RUN_OPTIONS.values(), ids=_RUN_OPTIONS)
@pytest.mark.parametrize("case", ["som assets of empty objects", "babelqueue valid"])
def test_a_large_dict_under_run_time_options_is_read_whole_where_they_could_change_it(
    case: str, options: dict[str, Any]
) -> None:
    """A validator function does not see the call's options. Where they could change the
    verdict (``strict``, ``extra``, ``by_name``, ``by_alias=False``), the class validator reads
    the whole message as without the bound, else as ``model_validate`` does."""
    model, document = _LARGE[case]
    schema = model.__pydantic_core_schema__
    whole = _failfast.fresh_validator(schema, {model}, _failfast.own_config(schema, model))
    at_defaults = set(options) <= {"by_alias", "from_attributes", "context"} and (
        options.get("by_alias", True)
    )
    reference = (
        partial(model.model_validate, **options)
        if at_defaults
        else partial(whole.validate_python, **options)
    )
    got = _read(partial(TypeAdapter(model).validate_python, **options), document)
    assert got == _read(reference, document)
    if got[0] == "refused":
        assert (len(got[1]) <= 3) is at_defaults


class _UsesDefault(StoryContext):
    @model_validator(mode="after")
    def _no_default(self) -> Self:
        raise PydanticUseDefault


class _HoldsUsesDefault(BaseModel):
    story: _UsesDefault | None = None


@pytest.mark.parametrize("door", ["model_validate", "TypeAdapter", "held with a default"])
def test_a_model_validator_s_use_default_reads_as_pydantic_s_through_the_gate(door: str) -> None:
    """A gated model's own validators run as pydantic runs them: a model validator's
    `PydanticUseDefault` is pydantic's `SchemaError` where no default is, and the default of
    the field that holds the model where one is (a `with_default` around the gate's reading
    took it, and gave `None` for the model; a wrap around the model stops it too)."""
    payload = _story()["payload"]
    if door == "held with a default":
        assert _HoldsUsesDefault.model_validate({"story": payload}).story is None
        return
    validate = (
        _UsesDefault.model_validate
        if door == "model_validate"
        else TypeAdapter(_UsesDefault).validate_python
    )
    with pytest.raises(SchemaError, match="Uncaught `PydanticUseDefault`"):
        validate(payload)


@pytest.mark.parametrize("model", [SomEnvelope, StoryContext], ids=lambda model: model.__name__)
def test_none_is_refused_by_a_gated_model(model: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(model).validate_python(None)
    assert caught.value.errors()[0]["type"] == "model_type"


def _kwargs_story() -> dict[str, Any]:
    """The README's story.context as keywords, with 1,000 tags: over the bound as JSON."""
    return {
        "story_id": "hurricane-2026-0911",
        "slug": "HURRICANE-LANDFALL",
        "headline": "Hurricane makes Cat 4 landfall",
        "story_type": "PLANNED",
        "sequence_number": 1,
        "updated_at": "2026-09-11T13:00:00Z",
        "tags": [{"scheme": "newsroom", "value": f"tag-{i}"} for i in range(1_000)],
    }


_CONSTRUCTED: dict[str, tuple[Any, Any]] = {
    "StoryContext, 1,000 tags": (StoryContext, _kwargs_story()),
    "SomEnvelope, a large extension": _LARGE["som valid, a large extension"],
    "SomEnvelope[StoryContext], a large extension": (
        SomEnvelope[StoryContext],
        _LARGE["som valid, a large extension"][1],
    ),
}


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("case", _CONSTRUCTED)
def test_a_model_constructed_from_large_keywords_is_that_message(case: str) -> None:
    """``Model(**members)`` (pydantic's ``__init__``, the class validator given the instance to
    fill) over the bound: the instance holds the message. The gate's reading returned another
    instance: pydantic warned and left this one empty (``AttributeError`` on every field)."""
    model, members = _CONSTRUCTED[case]
    assert len(orjson.dumps(members)) > _failfast.FULL_REPORT_BYTES
    built = model(**copy.deepcopy(members))
    assert built.model_dump() == model.model_validate(copy.deepcopy(members)).model_dump()
    assert built.model_fields_set == set(members)


class _Tenant:
    """A user's context of no dict type."""


@pytest.mark.parametrize("given", ["none", "dict", "object"])
@pytest.mark.parametrize("door", ["model_validate", "TypeAdapter", "list"])
@pytest.mark.parametrize("size", ["small", "large"])
def test_a_user_validator_is_given_the_call_s_context_itself(
    size: str, door: str, given: str
) -> None:
    """A user's validator reads the context the call was given, the very object (pydantic
    passes it as is: a validator may note into it), small or large. The gate's large reading
    gave it a copy with a key of its own: ``None`` became a dict, a dict a copy (a note into
    it was lost), an object a dict."""
    seen: list[Any] = []

    class Noting(SomEnvelope):
        @field_validator("message_id")
        @classmethod
        def _note(cls, value: str, info: ValidationInfo) -> str:
            seen.append(info.context)
            return value

    document = _LARGE["som valid, a large extension"][1] if size == "large" else _story()
    context = {"none": None, "dict": {"tenant": "a"}, "object": _Tenant()}[given]
    validate: Any = {
        "model_validate": Noting.model_validate,
        "TypeAdapter": TypeAdapter(Noting).validate_python,
        "list": lambda value, context: TypeAdapter(list[Noting]).validate_python(
            [value], context=context
        )[0],
    }[door]
    validate(copy.deepcopy(document), context=context)
    assert len(seen) == 1
    assert seen[0] is context
