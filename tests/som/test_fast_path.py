"""The SOM fast path (``som/_fast.py``, wired in ``som/_envelope.py``) against the model.

``SomEnvelope.model_validate_json`` first tries a validator that picks the payload's model in
Rust, and falls back to the model's own validator for whatever it does not accept. The two
must never differ: on the corpus, the negatives, a deterministic sample of the differential
mutations, under every option combination, they give the same model (same dump, same payload
type, same fields set, recursively) or the same errors.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import envelopekit as ek
from envelopekit import _json
from envelopekit._failfast import FULL_REPORT_BYTES, large_validator
from envelopekit._formats import DATE_TIME_PATTERN, URI_PATTERN, UUID_PATTERN
from envelopekit.som import (
    PAYLOAD_MODELS,
    SomEnvelope,
    StoryContext,
    UnvalidatedPayload,
    _envelope,
)
from envelopekit.som._envelope import FAST_PATH
from tests.som._corpus import (
    label,
    negative_envelope,
    negative_files,
    positive_envelope,
    positive_files,
)
from tests.som.test_differential import MUTATIONS

SEED = 20260912
SAMPLE = 300

OPTIONS: list[dict[str, Any]] = [
    {"strict": strict, "context": context}
    for strict in (None, True, False)
    for context in (
        None,
        {"som_version_mode": "strict"},
        {"som_version_mode": "tolerant"},
        {"unknown_message_type": "refuse"},
        {"som_version_mode": "tolerant", "unknown_message_type": "refuse"},
    )
]
OPTION_IDS = [f"strict={o['strict']}-context={o['context']}" for o in OPTIONS]


def _documents() -> list[tuple[str, dict[str, Any]]]:
    found = [(label(p), positive_envelope(p)) for p in positive_files()]
    found += [(label(p), negative_envelope(p)) for p in negative_files()]
    rng = random.Random(SEED)
    found += [(f"{m.kind} at {m.where}", m.document) for m in rng.sample(MUTATIONS, SAMPLE)]
    return found


def _variants(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Versions of a document the options act on: another wire version, an unknown type."""
    yield "as is", document
    if isinstance(document.get("som_version"), str):
        yield "som_version 1.4.2", {**document, "som_version": "1.4.2"}
    yield "unknown type", {**document, "message_type": "asset.ingested", "topic": "som.asset"}
    payload = document.get("payload")
    if isinstance(payload, dict) and "message_type" in payload:
        # The fast path narrows the payload's own message type to the envelope's.
        for other in ("telling.ended", "link.gate_changed", "link.withdrawn"):
            if payload["message_type"] != other:
                yield (
                    f"payload says {other}",
                    {**document, "payload": {**payload, "message_type": other}},
                )


def _duplicated(document: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The document with ``message_type`` given twice (JSON parsers keep the last)."""
    text = json.dumps(document, ensure_ascii=False)
    if "message_type" not in document:
        return
    current = json.dumps(document["message_type"], ensure_ascii=False)
    member = f'"message_type": {current}'
    if text.count(member) < 1:
        return
    for other in ("story.context", "telling.ended", "asset.ingested", 7):
        duplicate = f'"message_type": {json.dumps(other)}'
        yield f"{other} then own", text.replace(member, f"{duplicate}, {member}", 1)
        yield f"own then {other}", text.replace(member, f"{member}, {duplicate}", 1)


def _raws() -> list[tuple[str, str | bytes]]:
    raws: list[tuple[str, str | bytes]] = []
    for index, (name, document) in enumerate(_documents()):
        for variant, changed in _variants(document):
            text = json.dumps(changed, ensure_ascii=False)
            raws.append((f"{name} ({variant})", text))
        if index < 50 or index % 10 == 0:  # the corpus, and some of the mutations
            for variant, text in _duplicated(document):
                raws.append((f"{name} (message_type {variant})", text))
    raws[::7] = [(name, str(raw).encode()) for name, raw in raws[::7]]  # bytes as well as str
    raws += [
        ("not json", "{"),
        ("not an object", "[]"),
        ("empty", b""),
        ("bad utf-8", b'{"som_version": "\xff"}'),
        ("lone surrogate", '{"message_type": "\\ud800"}'),
    ]
    return raws


RAWS = _raws()


def _fields_sets(model: BaseModel, at: str = "") -> Iterator[tuple[str, Any]]:
    """Every nested model's type, fields set, extras and private state, by path."""
    yield (
        at,
        (
            type(model),
            model.model_fields_set,
            model.__pydantic_extra__,
            model.__pydantic_private__,
        ),
    )
    for name in type(model).model_fields:
        yield from _nested(getattr(model, name), f"{at}/{name}")


def _nested(value: Any, at: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, BaseModel):
        yield from _fields_sets(value, at)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nested(item, f"{at}/{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nested(item, f"{at}/{key}")


def outcome(validate: Any, raw: Any, options: dict[str, Any]) -> Any:
    try:
        model = validate(raw, **options)
    except ValidationError as exc:
        return ("refused", exc.title, exc.errors(include_url=False))
    assert isinstance(model, SomEnvelope)
    return (
        "accepted",
        model.model_dump(by_alias=True),
        type(model.payload),
        list(_fields_sets(model)),
    )


def test_the_fast_validator_is_built() -> None:
    """The speed path is on: built, and accepting valid messages itself."""
    fast = FAST_PATH.validator()
    assert fast is not None
    for path in positive_files():
        raw = json.dumps(positive_envelope(path))
        found = fast.validate_json(raw, context={"som_version_mode": "strict"})
        assert isinstance(found, SomEnvelope), label(path)
        assert isinstance(found.payload, PAYLOAD_MODELS[found.message_type]), label(path)


def test_the_fast_validator_hands_back_what_it_does_not_accept() -> None:
    fast = FAST_PATH.validator()
    assert fast is not None
    document = positive_envelope(positive_files()[0])
    unknown = {**document, "message_type": "asset.ingested", "topic": "som.asset"}
    assert fast.validate_json(json.dumps(unknown)) is None
    assert fast.validate_json(json.dumps({**document, "payload": {}})) is None
    env = SomEnvelope.model_validate_json(json.dumps(unknown))
    assert isinstance(env.payload, UnvalidatedPayload)


def test_what_the_fast_validator_narrows_or_leaves_out_goes_to_the_model() -> None:
    fast = FAST_PATH.validator()
    assert fast is not None
    link = next(p for p in positive_files() if label(p) == "link/committed.json")
    document = positive_envelope(link)
    # Each choice's payload can only carry the choice's own message type.
    other = {**document, "payload": {**document["payload"], "message_type": "link.gate_changed"}}
    assert fast.validate_json(json.dumps(other)) is None
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(json.dumps(other))
    assert {e["type"] for e in caught.value.errors()} == {"payload.message_type_mismatch"}
    # Only the current wire version is taken; another needs the version mode.
    minor = json.dumps({**document, "som_version": "1.0.1"})
    assert fast.validate_json(minor, context={"som_version_mode": "tolerant"}) is None
    tolerant = SomEnvelope.model_validate_json(minor, context={"som_version_mode": "tolerant"})
    assert tolerant.som_version == "1.0.1"


def _str_nodes_with_a_pattern(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _str_nodes_with_a_pattern(item)
    elif isinstance(node, dict):
        if node.get("type") == "str" and "pattern" in node:
            yield node
        for key, value in node.items():
            if key != "metadata":
                yield from _str_nodes_with_a_pattern(value)


def test_each_pattern_is_one_validator_of_the_fast_schema() -> None:
    """One shared definition per distinct pattern: pydantic-core compiles a regex per node."""
    built = FAST_PATH.schema()
    assert built is not None
    patterned = list(_str_nodes_with_a_pattern(built.schema))
    shared = [d for d in built.schema["definitions"] if d in patterned]
    assert patterned == shared  # no pattern outside its one definition
    keys = [tuple(sorted((k, v) for k, v in d.items() if k != "ref")) for d in shared]
    assert len(keys) == len(set(keys))
    patterns = {d["pattern"] for d in shared}
    assert {UUID_PATTERN, DATE_TIME_PATTERN, URI_PATTERN} <= patterns


def test_each_choice_reads_the_envelope_message_type_as_its_tag() -> None:
    """The union picked the choice by ``message_type``: the field is a literal, not a pattern."""
    built = FAST_PATH.schema()
    assert built is not None
    union = built.schema["schema"]["schema"]
    assert union["type"] == "tagged-union"
    assert set(union["choices"]) == set(PAYLOAD_MODELS)
    for tag, choice in union["choices"].items():
        member = choice["schema"]["fields"]["message_type"]["schema"]
        assert member == {"type": "literal", "expected": [tag]}


class _Counting:
    """The model's own validator, counting the messages it is asked to validate."""

    def __init__(self, validator: Any) -> None:
        self.validator = validator
        self.calls = 0

    def validate_json(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.validator.validate_json(*args, **kwargs)


def test_model_validate_json_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A valid message never reaches the model's own validator; a refused one always does."""
    own = _Counting(SomEnvelope.__pydantic_validator__)
    monkeypatch.setattr(SomEnvelope, "__pydantic_validator__", own)
    for path in positive_files():
        env = SomEnvelope.model_validate_json(json.dumps(positive_envelope(path)))
        assert isinstance(env.payload, PAYLOAD_MODELS[env.message_type]), label(path)
    assert own.calls == 0
    refused = 0
    for path in negative_files():
        with pytest.raises(ValidationError):
            SomEnvelope.model_validate_json(json.dumps(negative_envelope(path)))
        refused += 1
    assert own.calls == refused > 0


def test_the_corpus_is_large_and_varied() -> None:
    assert len(RAWS) > 1000
    assert sum(name.endswith("(message_type own then 7)") for name, _ in RAWS) > 50
    outcomes = {outcome(SomEnvelope.model_validate_json, raw, {})[0] for _, raw in RAWS}
    assert outcomes == {"accepted", "refused"}


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_fast_path_and_model_validator_agree(options: dict[str, Any]) -> None:
    own = SomEnvelope.__pydantic_validator__.validate_json
    accepted = taken = 0
    disagreements: list[str] = []
    for name, raw in RAWS:
        expected = outcome(own, raw, options)
        found = outcome(SomEnvelope.model_validate_json, raw, options)
        if found != expected:
            disagreements.append(f"{name}: fast={found[:2]} own={expected[:2]}")
        accepted += expected[0] == "accepted"
        taken += FAST_PATH.validate_json(raw, **options) is not None
    assert disagreements == []
    assert accepted > 100
    # The comparison covers the fast path's own results, not only the model's fallback.
    assert taken > 100


DOCUMENTS = [
    (f"{name} ({variant})", changed)
    for name, document in _documents()
    for variant, changed in _variants(document)
]


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_the_dict_door_and_model_validator_agree(options: dict[str, Any]) -> None:
    """``model_validate`` of a dict takes the same fast path, and must agree the same way."""
    own = SomEnvelope.__pydantic_validator__.validate_python
    taken = 0
    disagreements: list[str] = []
    for name, document in DOCUMENTS:
        expected = outcome(own, document, options)
        found = outcome(SomEnvelope.model_validate, document, options)
        if repr(found) != repr(expected):  # by repr: NaN in an error's input
            disagreements.append(f"{name}: fast={found[:2]} own={expected[:2]}")
        taken += FAST_PATH.validate_python(document, options.get("strict")) is not None
    assert disagreements == []
    assert taken > 50


def test_the_fast_path_is_not_tried_over_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12: a large free-form value cost the fast path many times the model's reading.

    Its JSON-value union (``_twin.json_definition``) copies an array into the error of each
    choice that fails on it, at every level (a 170 KB ``_actors`` of nested arrays: 32 ms
    against the model's 2.7 ms). Neither door, nor ``check``, tries it over 16 KiB.
    """
    tried: list[str] = []
    parse, built, door = FAST_PATH.parse, FAST_PATH._built, _envelope._parse

    def counted_parse(raw: bytes | str) -> Any:
        tried.append("json")
        return parse(raw)

    def counted_door(raw: bytes | str) -> Any:
        tried.append("door")
        return door(raw)

    def counted_built() -> Any:
        tried.append("dict")
        return built()

    document = positive_envelope(positive_files()[0])
    nested: object = list(range(4_000))
    for _ in range(20):
        nested = [nested]
    document["_actors"] = {"x": nested}
    raw = json.dumps(document).encode()
    assert len(raw) > 16_384
    model = SomEnvelope.__pydantic_validator__.validate_json(raw)
    ek.check(b"{}", spec="som")  # the spec built before counting
    monkeypatch.setattr(FAST_PATH, "parse", counted_parse)
    monkeypatch.setattr(FAST_PATH, "_built", counted_built)
    # `model_validate_json` calls the fast validator through its own module global.
    monkeypatch.setattr(_envelope, "_parse", counted_door)
    assert SomEnvelope.model_validate_json(raw) == model
    assert SomEnvelope.model_validate(json.loads(raw)) == model
    assert ek.check(raw, spec="som").envelope == model
    assert tried == []


class _Sub(SomEnvelope):
    """A subclass: never the fast path, whose choices build ``SomEnvelope`` itself."""


_STORY = positive_envelope(next(p for p in positive_files() if p.name.endswith("-envelope.json")))
_LARGE_ACTORS = {"x": list(range(5_000))}
ARGUMENT_MESSAGES = {
    "valid": _STORY,
    "tolerated minor": {**_STORY, "som_version": "1.4.2"},
    "refused": negative_envelope(negative_files()[0]),
    "actors by name": {**_STORY, "actors": {"a": 1}},
    "actors by alias": {**_STORY, "_actors": {"a": 1}},
    "unknown member": {**_STORY, "surplus": 1},
    "large": {**_STORY, "_actors": _LARGE_ACTORS},
    "large, unknown member": {**_STORY, "_actors": _LARGE_ACTORS, "surplus": 1},
}
ARGUMENTS = [
    {"strict": strict, "extra": extra, "by_alias": by_alias, "by_name": by_name, "context": context}
    for strict in (None, True, False)
    for extra in (None, "ignore", "forbid", "allow")
    for by_alias in (None, True, False)
    for by_name in (None, True, False)
    for context in (None, {"som_version_mode": "tolerant"})
]


def _reading(validate: Any, raw: bytes, options: dict[str, Any]) -> Any:
    try:
        return outcome(validate, raw, options)
    except Exception as exc:  # an argument combination pydantic refuses, as it refuses it
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize(
    "model", [SomEnvelope, SomEnvelope[StoryContext], _Sub], ids=["plain", "typed", "subclass"]
)
def test_every_argument_combination_reads_as_before(model: type[SomEnvelope]) -> None:
    """The override's common path first: every option, class and size reads as pydantic does.

    Up to 16 KiB ``model_validate_json`` reads a message as pydantic's own
    ``BaseModel.model_validate_json`` does (the fast path only where it gives the same); over
    it, as the fail-fast copy of the model reads it, with the same options.
    """
    pydantic_own = partial(BaseModel.model_validate_json.__func__, model)  # type: ignore[attr-defined]
    large = large_validator(model).validate_json
    compared = 0
    for name, document in ARGUMENT_MESSAGES.items():
        raw = json.dumps(document).encode()
        over = len(raw) > FULL_REPORT_BYTES
        assert over == name.startswith("large")
        for options in ARGUMENTS:
            found = _reading(model.model_validate_json, raw, options)
            expected = _reading(large if over else pydantic_own, raw, options)
            assert repr(found) == repr(expected), (name, options)
            compared += 1
    assert compared == len(ARGUMENT_MESSAGES) * 216


# --- how deep the fast path's free-form values stand ------------------------------------------


def _free_form_places(schema: Any) -> dict[str, int]:
    """Each free-form value of a core schema (validated by ``finite_json``): its path, and the
    depth of the object or array holding it (the message itself is 1)."""
    definitions: dict[str, Any] = {}
    found: dict[str, int] = {}

    def walk(node: Any, depth: int, path: str, refs: frozenset[str]) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, depth, path, refs)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind == "definitions":
            definitions.update((each["ref"], each) for each in node["definitions"])
        if kind == "definition-ref":
            ref = node["schema_ref"]
            if ref not in refs:  # a recursive model is walked once down each path
                walk(definitions[ref], depth, path, refs | {ref})
            return
        function = node.get("function")
        if isinstance(function, dict) and function.get("function") is _json.finite_json:
            found[path] = max(found.get(path, 0), depth)
        if kind == "model-fields":
            for name, each in node["fields"].items():
                walk(each, depth + 1, f"{path}/{name}", refs)
            walk(node.get("extras_schema"), depth + 1, f"{path}/*", refs)
            return
        if kind in ("list", "dict"):
            walk(node.get("items_schema"), depth + 1, f"{path}/[]", refs)
            walk(node.get("values_schema"), depth + 1, f"{path}/[]", refs)
            return
        for key, value in node.items():
            if key not in ("metadata", "serialization"):
                walk(value, depth, path, refs)

    walk(schema, 0, "", frozenset())
    return found


def test_the_fast_path_s_free_form_values_stand_within_the_depth_it_leaves_them() -> None:
    """Python data on the fast path is taken nesting ``FAST_LEVELS`` levels in each free-form
    value: what holds the deepest one must leave that within the parser's 200 levels."""
    built = FAST_PATH.schema()
    assert built is not None
    places = _free_form_places(built.schema)
    # The walk finds them (the deepest, a transform's parameters, among them).
    assert {"/extensions", "/payload/transforms/[]/params"} <= places.keys()
    assert max(places.values()) + _json.FAST_LEVELS <= _json.PARSER_MAX_DEPTH
