"""The base of every wire model: one way of making warnings, the same for the three specs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.json_schema import JsonSchemaMode, models_json_schema

import envelopekit as ek
from envelopekit import rules
from envelopekit._check import REGISTRY
from envelopekit._json import PARSER_MAX_DEPTH
from envelopekit._model import WireModel, attach_warnings
from envelopekit._text import _lone_surrogate_at, json_branch, refuse_unreadable, too_deep_at
from envelopekit._violations import violation
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse, SuccessPayload, WriteArgs
from envelopekit.som import SomEnvelope, StoryContext, UnvalidatedPayload
from tests._calls import python_calls
from tests.conftest import DATA
from tests.test_doors_values import CORPUS, _public_models


def _models() -> list[type[WireModel]]:
    for entry in REGISTRY.values():
        importlib.import_module(entry.package)
    found: list[type[WireModel]] = []
    todo = [WireModel]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_no_model_makes_warnings_its_own_way() -> None:
    # A model contributes what it notes about itself through `_notes`; `envelope_warnings`,
    # what `check` reads, is WireModel's for every model of every spec.
    models = _models()
    assert len(models) > 40
    for cls in models:
        assert cls.envelope_warnings is WireModel.envelope_warnings, cls.__qualname__
    overriding = {cls.__name__ for cls in models if "_notes" in vars(cls)}
    assert {"SomEnvelope", "MxRequest", "MxResponse", "MxErrorPayload"} <= overriding
    # `check` asks a model only when it has something noted or notes of its own: `__notes__`
    # must say so for every model, or a warning would go missing.
    for cls in models:
        assert cls.__notes__ == (cls._notes is not WireModel._notes), cls.__qualname__


def test_what_validation_noted_comes_first_then_what_the_model_notes() -> None:
    example = DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json"
    raw = orjson.dumps({**orjson.loads(example.read_bytes()), "som_version": "1.2.0"})
    env = SomEnvelope.model_validate_json(raw, context={"som_version_mode": "tolerant"})
    noted = env.envelope_warnings()
    assert [w.rule for w in noted] == [rules.SOM_VERSION_UNSUPPORTED_MINOR]
    earlier = violation(rules.NUMBER_UNSAFE_INTEGER, "/payload/x", "noted while reading")
    attach_warnings(env, [earlier])
    assert env.envelope_warnings() == [earlier, *noted]


def test_check_reports_each_spec_s_warnings_through_the_one_method() -> None:
    forbidden = ek.check(
        b'{"job":"urn:a:b","trace_id":"0190a000-0000-4000-8000-000000000001","data":{},'
        b'"meta":{"id":"0190a000-0000-4000-8000-000000000001","queue":"q","lang":"python",'
        b'"schema_version":1,"created_at":1700000000000,"ts":1},"attempts":0}',
        spec="babelqueue",
    )
    assert forbidden.ok
    assert [w.rule for w in forbidden.warnings] == [rules.FORBIDDEN_KEY]
    assert forbidden.envelope is not None
    assert forbidden.warnings == forbidden.envelope.envelope_warnings()
    lint = ek.check(MxRequest(op="Bad Op", payload={}).to_json(), spec="matrix")
    assert [w.rule for w in lint.warnings] == [rules.OP_CONVENTION]
    assert lint.envelope is not None
    assert lint.warnings == lint.envelope.envelope_warnings()


# --- Python-mode validation refuses what JSON cannot carry ---------------------------------------


def _babel_document() -> dict[str, Any]:
    raw = (
        DATA.parent.parent / "examples" / "messages" / "babelqueue" / "order-created.json"
    ).read_bytes()
    document: dict[str, Any] = json.loads(raw)
    return document


def _document(model: type[WireModel], value: object) -> dict[str, Any]:
    """A valid message of ``model`` (BabelQueue or a Matrix request) holding ``value``."""
    if model is BabelEnvelope:
        return {**_babel_document(), "data": {"v": value}}
    return {"op": "fs.write", "correlationId": "c-1", "payload": {"v": value}}


def _nested(levels: int) -> object:
    value: object = []
    for _ in range(levels):
        value = [value]
    return value


def _refused(model: Any, document: object) -> list[tuple[str, str]] | None:
    try:
        model.model_validate(document)
    except ValidationError as exc:
        return [(v.rule, v.pointer) for v in ek.violations(exc, model=model)]
    return None


@pytest.mark.parametrize(
    "data",
    [
        {"a": "\ud800"},
        {"\udfff": 1},
        [1, [2, {"k": "x\udc80y"}]],
        {"nested": {"deep": ["\ud83d"]}},
    ],
    ids=["value", "key", "in-arrays", "nested"],
)
def test_a_lone_surrogate_anywhere_is_json_invalid_at_the_root(data: object) -> None:
    document = {**_babel_document(), "data": data}
    assert _refused(BabelEnvelope, document) == [("json.invalid", "")]
    assert _refused(BabelEnvelope, json.loads(json.dumps(document))) == [("json.invalid", "")]
    # JSON validation of the same text says the same.
    with pytest.raises(ValidationError) as caught:
        BabelEnvelope.model_validate_json(json.dumps(document))
    assert [(v.rule, v.pointer) for v in ek.violations(caught.value)] == [("json.invalid", "")]


def test_a_lone_surrogate_beside_other_errors_is_only_json_invalid() -> None:
    # JSON validation refuses the whole text before any member is read; so does the dict door.
    document = {**_babel_document(), "attempts": -1, "unknown": "\ud800"}
    assert _refused(BabelEnvelope, document) == [("json.invalid", "")]
    request = json.loads(
        (DATA.parent.parent / "examples/messages/matrix/request-join-tell.json").read_bytes()
    )
    assert _refused(MxRequest, {**request, "extra\udc80": 1}) == [("json.invalid", "")]


def test_the_message_says_where_the_lone_surrogate_is() -> None:
    document = {**_babel_document(), "data": {"a/b": [0, "\ud800"]}}
    with pytest.raises(ValidationError) as caught:
        BabelEnvelope.model_validate(document)
    (found,) = ek.violations(caught.value)
    assert "/data/a~1b/1" in found.message


def test_what_orjson_refuses_but_is_unicode_text_is_not_json_invalid() -> None:
    # An integer beyond 64 bits is read with a warning; the probe's fallback walk finds no
    # lone surrogate in it, so the model decides as before.
    document = {**_babel_document(), "data": {"big": 2**70, "text": "é ✓"}}
    found = BabelEnvelope.model_validate(document)
    assert [v.rule for v in found.envelope_warnings()] == ["number.beyond_int64"]


_BIG = 2**64  # beyond what orjson writes


@pytest.mark.parametrize("model", [BabelEnvelope, MxRequest], ids=["babelqueue", "matrix"])
def test_integers_orjson_refuses_are_probed_by_the_standard_encoder_not_walked(
    model: type[WireModel],
) -> None:
    # orjson refuses an integer beyond 64 bits, and its refusal was a Python walk of every value
    # for lone surrogates and depth (50,000 such integers: model_validate 52x orjson.loads).
    document = _document(model, [_BIG] * 2_000)
    entered = python_calls(lambda: _refused(model, document))
    assert _lone_surrogate_at.__code__ not in entered
    assert too_deep_at.__code__ not in entered


@pytest.mark.parametrize("model", [BabelEnvelope, MxRequest], ids=["babelqueue", "matrix"])
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([_BIG, {"a/b": [0, "\ud800"]}], ("json.invalid", "")),
        ({"\udfff": _BIG}, ("json.invalid", "")),
        ([_BIG, _nested(PARSER_MAX_DEPTH)], ("message.too_deep", None)),
    ],
    ids=["lone-surrogate-value", "lone-surrogate-key", "too-deep"],
)
def test_beside_an_integer_orjson_refuses_what_no_json_text_carries_is_still_refused(
    model: type[WireModel], value: object, expected: tuple[str, str | None]
) -> None:
    found = _refused(model, _document(model, value))
    assert found is not None
    rule, at = found[0]
    assert (rule, at if expected[1] is not None else None) == expected


def test_a_model_given_as_input_is_not_probed_again() -> None:
    # model_validate(instance) returns the instance (pydantic does not revalidate it).
    message = BabelEnvelope.model_validate(_babel_document())
    assert BabelEnvelope.model_validate(message) is message


def test_json_validation_runs_the_model_schema_itself() -> None:
    # The Python-mode probe wraps each message model's schema; JSON mode never calls it.
    for model in (BabelEnvelope, SomEnvelope, MxRequest, MxResponse, MxErrorPayload):
        schema = model.__pydantic_core_schema__
        if schema["type"] == "definitions":
            schema = schema["schema"]
        assert schema["type"] == "json-or-python", model
        assert json_branch(schema) is schema["json_schema"]
        assert schema["python_schema"]["function"]["function"] is refuse_unreadable


# A user's subclass of a model read alone (a payload family, an unvalidated payload, a Matrix
# payload convention), each with a string no JSON text holds where a string is valid. (A message
# model's schema holds its probe itself, rebuilt or not.)
class _Story(StoryContext):
    """A user's payload family."""


class _Unvalidated(UnvalidatedPayload):
    """A user's unknown payload."""


class _Reply(SuccessPayload):
    """A user's reply payload."""


_STORY = json.loads((DATA / "som/examples/story-context/tags.json").read_bytes())
_REBUILT: dict[str, tuple[type[BaseModel], dict[str, Any]]] = {
    "payload-family": (_Story, {**_STORY, "headline": "x\ud800"}),
    "unvalidated-payload": (_Unvalidated, {"note": "x\ud800"}),
    "payload-convention": (_Reply, {"ok": True, "note": "x\ud800"}),
}


@pytest.mark.parametrize("case", _REBUILT)
def test_a_model_rebuilt_still_refuses_what_no_json_text_holds(case: str) -> None:
    """``model_rebuild(force=True)`` rebuilt a model read alone without its probe (pydantic
    runs no on-complete hook again): a lone surrogate was taken, and its dump then raised."""
    model, document = _REBUILT[case]
    assert model.model_rebuild(force=True)
    for read in (model.model_validate, TypeAdapter(model).validate_python):
        with pytest.raises(ValidationError) as caught:
            read(document)
        assert [(v.rule, v.pointer) for v in ek.violations(caught.value, model=model)] == [
            ("json.invalid", "")
        ]


# Each generic wire model, parametrised in a user's module on a line of its own inside a
# bracketed statement (a list, a decorator's `response_model=`): what Python < 3.13 reads of
# that module to find field docstrings must not be read for a parametrisation.
GENERIC_PARAMETRISATIONS = {
    "babelqueue": "from envelopekit.babelqueue import BabelEnvelope as Generic",
    "som": "from envelopekit.som import SomEnvelope as Generic",
    "matrix-request": "from envelopekit.matrix import MxRequest as Generic",
    "matrix-response": "from envelopekit.matrix import MxResponse as Generic",
}


@pytest.mark.parametrize(
    "imported", GENERIC_PARAMETRISATIONS.values(), ids=list(GENERIC_PARAMETRISATIONS)
)
def test_a_generic_model_is_parametrised_on_any_line_of_a_user_s_module(
    imported: str, tmp_path: Path
) -> None:
    module = tmp_path / "service.py"
    module.write_text(
        "from pydantic import BaseModel\n"
        f"{imported}\n\n\n"
        "class Item(BaseModel):\n"
        "    name: str\n\n\n"
        "models = [\n"
        "    Generic[Item],\n"
        "]\n"
        "fields = Generic.model_fields.items()\n"
        "print(sum(bool(field.description) for _, field in fields))\n"
        "for name, field in fields:\n"
        "    print(name, field.description == models[0].model_fields[name].description)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(module)], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # Each field's description (its docstring in the generic model) is the parametrisation's.
    described, *lines = done.stdout.splitlines()
    kept = dict(line.split() for line in lines)
    assert int(described) > 0 and set(kept.values()) == {"True"}, kept


def _documented(base: Any) -> type[BaseModel]:
    class Documented(base):  # type: ignore[misc]
        note: str = ""
        """A note of the user's own."""

    return Documented


@pytest.mark.parametrize(
    "base",
    [BabelEnvelope, SomEnvelope, MxRequest, MxResponse],
    ids=["babelqueue", "som", "matrix-request", "matrix-response"],
)
def test_a_user_s_subclass_of_a_generic_model_reads_its_own_field_docstrings(base: Any) -> None:
    """A subclass still generic (``class Mine(SomEnvelope)``) read none: the generic model's
    config, which stops its parametrisations reading the caller's source, was inherited."""
    documented = _documented(base)
    assert documented.model_fields["note"].description == "A note of the user's own."
    schema = documented.model_json_schema()
    assert schema["properties"]["note"]["description"] == "A note of the user's own."


# --- the JSON Schema of every public model, in both modes -----------------------------------

_MODES: tuple[JsonSchemaMode, ...] = ("validation", "serialization")


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        found = node.get("$ref")
        if isinstance(found, str):
            yield found
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


@pytest.mark.parametrize("mode", _MODES)
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_public_model_has_a_json_schema_in_both_modes(
    name: str, mode: JsonSchemaMode
) -> None:
    # FastAPI writes a `response_model` in serialization mode; it raised KeyError
    # ('...-Input__1') for the models holding others.
    model, _ = CORPUS[name]
    schema = model.model_json_schema(mode=mode)
    assert TypeAdapter(model).json_schema(mode=mode) == schema
    definitions = schema.get("$defs", {})
    assert [ref for ref in _refs(schema) if ref.removeprefix("#/$defs/") not in definitions] == []


def _accepted() -> dict[str, tuple[type[BaseModel], list[Any]]]:
    """The corpus's documents each model accepts (it holds some that another one refuses)."""
    found: dict[str, tuple[type[BaseModel], list[Any]]] = {}
    for name, (model, documents) in CORPUS.items():
        for document in documents:
            try:
                model.model_validate(document)
            except ValidationError:
                continue
            found.setdefault(name, (model, []))[1].append(document)
    # A request's arguments, whose corpus messages carry those of their own model.
    found.setdefault("WriteArgs", (WriteArgs, []))[1].append({"idempotencyKey": "k-1"})
    return found


ACCEPTED: Final = _accepted()


def test_a_document_is_dumped_of_every_public_model() -> None:
    dumped = {model for model, _ in ACCEPTED.values()}
    assert _public_models() - dumped == set()


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_serialization_schema_describes_what_a_dump_writes(name: str) -> None:
    model, documents = ACCEPTED[name]
    validator = Draft202012Validator(model.model_json_schema(mode="serialization"))
    for document in documents:
        written = model.model_validate(document).model_dump(mode="json")
        assert [error.message for error in validator.iter_errors(written)] == []


def test_a_key_read_and_never_written_is_in_the_validation_schema_alone() -> None:
    read = BabelEnvelope.model_json_schema(mode="validation")["properties"]
    written = BabelEnvelope.model_json_schema(mode="serialization")["properties"]
    assert set(read) - set(written) == {"urn"}


@pytest.mark.parametrize(
    "modes",
    [("validation",), ("serialization",), _MODES],
    ids=["validation", "serialization", "both"],
)
def test_every_public_model_in_one_document_as_fastapi_writes_them(
    modes: tuple[JsonSchemaMode, ...],
) -> None:
    # FastAPI writes its OpenAPI components so: an app with response models alone referred to
    # definitions the document did not hold.
    # Each model once (`SomEnvelope[Any]` is `SomEnvelope`).
    models = list(dict.fromkeys(model for model, _ in CORPUS.values()))
    keys, document = models_json_schema([(model, mode) for model in models for mode in modes])
    definitions = document["$defs"]
    assert len(keys) == len(models) * len(modes)
    refs = set(_refs([document, *keys.values()]))
    assert {ref for ref in refs if ref.removeprefix("#/$defs/") not in definitions} == set()
