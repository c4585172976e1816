"""Per-URN validation of ``data`` against a JSON Schema (ADR-0024), on the ``jsonschema`` library.

Opt-in: a URN with no registered schema is never validated. The keywords are the subset every
BabelQueue SDK (and the registry's ``compat`` linter) agrees on, so a message valid in Go or PHP
is valid here: ``type`` (one name), ``required``, ``properties``, ``additionalProperties`` (only
``false`` closes an object), ``items`` (one schema), ``enum``, ``const``, ``minLength`` (code
points) and ``minimum``, each under its own ``type`` only (``required`` under ``"object"``,
``minimum`` under ``"integer"`` or ``"number"``): a node without one checks ``const`` and
``enum`` alone, as the Python, Go and PHP validators switch on it. Every other keyword
(``$ref``, ``pattern``, ``format``, ``maxLength``, ``oneOf``, ``x-gdpr-sensitive`` ...) is
ignored, as in the other SDKs. ``enum`` and ``const`` compare JSON types strictly (``true`` is
not ``1``, ``1`` is not ``1.0``).

Violations carry ``payload-schema.<keyword>`` rule ids and pointers into the message
(``/data/order_id``), like every other envelopekit violation.
"""

from __future__ import annotations

import importlib
import json
import os
import reprlib
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

from .. import rules
from .._errors import InvalidPayloadError, SchemaRegistryError
from .._extras import missing_extra
from .._violations import Violation, pointer, violation

__all__ = [
    "InvalidPayloadError",
    "PayloadSchemas",
    "SchemaProvider",
    "SchemaRegistryError",
    "check_payload",
]

_SCHEMA = "payload-schema"
_JSON_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
# The keywords a node checks, by its `type` (babelqueue.md §10: the subset the SDKs agree on,
# each switching on the one type name): `const` and `enum` whatever the type.
_UNTYPED: frozenset[str] = frozenset({"const", "enum"})
_TYPED: dict[str, frozenset[str]] = {
    kind: _UNTYPED | {"type"} | extra
    for kind, extra in (
        ("object", {"required", "properties", "additionalProperties"}),
        ("array", {"items"}),
        ("string", {"minLength"}),
        ("integer", {"minimum"}),
        ("number", {"minimum"}),
        ("boolean", set()),
        ("null", set()),
    )
}


@runtime_checkable
class SchemaProvider(Protocol):
    """A source of per-URN ``data`` schemas."""

    def schema_for(self, urn: str) -> Mapping[str, Any] | None:
        """The JSON Schema registered for ``urn``, or ``None`` (then ``data`` is not checked)."""
        ...


class PayloadSchemas:
    """Per-URN ``data`` schemas, from a mapping or a babelqueue-registry ``registry.json``.

    ```python
    from envelopekit.babelqueue import PayloadSchemas

    schemas = PayloadSchemas({"urn:babel:orders:created": {
        "type": "object", "properties": {"order_id": {"type": "integer", "minimum": 1}},
    }})  # or PayloadSchemas.from_registry("registry/registry.json")
    found = schemas.check("urn:babel:orders:created", {"order_id": 0})
    assert [(v.rule, v.pointer) for v in found] == [("payload-schema.minimum", "/data/order_id")]
    ```
    """

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]]) -> None:
        """Use ``schemas`` (URN -> JSON Schema object).

        Raises:
            SchemaRegistryError: for a schema that is not a JSON object.
        """
        checked: dict[str, Mapping[str, Any]] = {}
        for urn, schema in schemas.items():
            if not isinstance(schema, Mapping):
                raise SchemaRegistryError(f"the schema for {urn!r} is not a JSON object")
            checked[urn] = schema
        self._schemas = checked

    @classmethod
    def from_registry(cls, path: str | os.PathLike[str]) -> PayloadSchemas:
        """Load every schema a registry manifest ``{"schemas": [{"urn", "schema"}, ...]}`` names.

        Schema paths are relative to the manifest. All files are read now, so a missing or
        broken one fails at start-up rather than on the first message.

        Raises:
            SchemaRegistryError: for an unreadable manifest or schema file.
        """
        manifest_path = Path(path)
        manifest = _read_json(manifest_path)
        entries = _member(manifest, "schemas")
        if not isinstance(entries, list):
            raise SchemaRegistryError(f"{manifest_path} has no 'schemas' list")
        schemas: dict[str, Mapping[str, Any]] = {}
        for index, entry in enumerate(cast("list[object]", entries)):
            urn = _member(entry, "urn")
            file = _member(entry, "schema")
            if not (isinstance(urn, str) and urn and isinstance(file, str) and file):
                raise SchemaRegistryError(
                    f"{manifest_path}: schemas[{index}] needs a non-empty 'urn' and 'schema'"
                )
            schema = _read_json(manifest_path.parent / file)
            if not isinstance(schema, dict):
                raise SchemaRegistryError(f"{file} (for {urn!r}) is not a JSON object")
            schemas[urn] = cast("dict[str, Any]", schema)
        return cls(schemas)

    def schema_for(self, urn: str) -> Mapping[str, Any] | None:
        """The schema registered for ``urn``, or ``None``."""
        return self._schemas.get(urn)

    def urns(self) -> list[str]:
        """The URNs with a registered schema, in registration order."""
        return list(self._schemas)

    def check(self, urn: str, data: Any) -> list[Violation]:
        """Why ``data`` does not match ``urn``'s schema (empty if it does or none is registered)."""
        schema = self.schema_for(urn)
        return [] if schema is None else check_payload(schema, data)

    def validate(self, urn: str, data: Any) -> None:
        """The producer-side guard: raise unless ``data`` matches ``urn``'s schema.

        Raises:
            InvalidPayloadError: when it does not.
        """
        found = self.check(urn, data)
        if found:
            raise InvalidPayloadError(urn, found)


def check_payload(schema: Mapping[str, Any], data: Any) -> list[Violation]:
    """Why ``data`` does not match ``schema`` (empty when it does).

    Args:
        schema: a JSON Schema object (the keyword subset of the module docstring applies).
        data: the message's ``data``, as decoded JSON (or a model's ``model_dump()``).

    Returns:
        ``payload-schema.<keyword>`` violations pointing into ``/data``, ordered by pointer.

    Raises:
        SchemaRegistryError: for a ``schema`` that is not a JSON object (or boolean schema).
        ImportError: when the ``schemas`` extra (``jsonschema``) is not installed.
    """
    if not isinstance(schema, (Mapping, bool)):
        raise SchemaRegistryError(f"a payload schema must be a JSON object, not {_short(schema)}")
    validator_class = _validator_class()
    validator = validator_class(_subset(schema, validator_class.VALIDATORS.keys()))
    reading = _READING.set(_Reading())
    try:
        found = {
            (v.rule, v.pointer): v
            for v in (_to_violation(error) for error in validator.iter_errors(data))
        }
    finally:
        _READING.reset(reading)
    return sorted(found.values(), key=lambda v: (v.pointer, v.rule))


# --- the jsonschema validator for the agreed keyword subset ----------------------------------


def _jsonschema() -> Any:
    try:
        return importlib.import_module("jsonschema")
    except ImportError as exc:
        raise missing_extra("Payload schema validation", "schemas", exc) from exc


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    jsonschema = _jsonschema()
    draft7 = jsonschema.Draft7Validator
    error = jsonschema.ValidationError

    def type_(validator: Any, expected: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # One type name only, as in every SDK; a list (or an unknown name) constrains nothing.
        known = isinstance(expected, str) and expected in _JSON_TYPES
        if known and not validator.is_type(instance, expected):
            yield error(f"{_short(instance)} is not of type {expected!r}")

    def required(validator: Any, names: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if isinstance(names, list) and validator.is_type(instance, "object"):
            for name in cast("list[object]", names):
                if isinstance(name, str) and name not in instance:
                    # Point at the missing member, as the envelope's own `required` does.
                    yield error(f"{name!r} is a required property", path=[name])

    def additional(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # Only `false` closes an object; a schema value is not part of the agreed subset.
        if allowed is not False or not validator.is_type(instance, "object"):
            return
        known = _members(schema.get("properties"))
        for name in instance:
            if not isinstance(known.get(name), Mapping):  # no subschema names it
                yield error(f"{name!r} is not allowed (additionalProperties is false)", path=[name])

    def descend(validator: Any, value: Any, subschema: Any, at: str | int) -> Iterator[Any]:
        # Only a JSON object is a subschema in every SDK: `true`, `false`, a number, a list
        # check nothing (a member named by one is an additional member, see `additional`).
        if isinstance(subschema, Mapping):
            subset = _subset(cast("Mapping[str, Any]", subschema), keywords.keys())
            yield from validator.descend(value, subset, path=at, schema_path=at)

    def properties(validator: Any, known: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # The instance's members looked up, not the schema's each read: a wide schema costs
        # each object its own members (the violations are sorted by pointer in the end).
        if validator.is_type(instance, "object"):
            subschemas = _members(known)
            for name, value in instance.items():
                subschema = subschemas.get(name)
                if subschema is not None:
                    yield from descend(validator, value, subschema, name)

    def items(validator: Any, item_schema: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # One schema for every item; the tuple form is not part of the agreed subset.
        if isinstance(item_schema, Mapping) and validator.is_type(instance, "array"):
            for index, item in enumerate(instance):
                yield from descend(validator, item, item_schema, index)

    def enum(validator: Any, values: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if isinstance(values, list) and not _one_of(instance, cast("list[object]", values)):
            yield error(f"{_short(instance)} is not one of {_quoted(values)}")

    def const(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not same_json(instance, value):
            yield error(f"{_quoted(value)} was expected")

    def min_length(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # Code points, against a numeric bound only: any other value constrains nothing, as a
        # non-numeric `minimum` does (jsonschema's own compared it and raised a TypeError). A
        # fractional bound is truncated, as every SDK reads it (`int(2.5)` is 2).
        if not (validator.is_type(instance, "string") and validator.is_type(bound, "number")):
            return
        if len(instance) < int(bound):
            said = "should be non-empty" if bound == 1 else "is too short"
            yield error(f"{_short(instance)} {said}")

    def minimum(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[Any]:
        # As a float, as the Python reference compares (2^53 + 1 is not below 2^53 there).
        if not (validator.is_type(instance, "number") and validator.is_type(bound, "number")):
            return
        try:
            below = float(instance) < float(bound)
        except OverflowError:  # beyond any float: the exact comparison is the only one
            below = instance < bound
        if below:
            yield error(f"{_short(instance)} is less than the minimum of {bound!r}")

    keywords = {
        "type": type_,
        "required": required,
        "properties": properties,
        "additionalProperties": additional,
        "items": items,
        "enum": enum,
        "const": const,
        "minLength": min_length,
        "minimum": minimum,
    }
    return jsonschema.validators.create(
        meta_schema=draft7.META_SCHEMA,
        validators=keywords,
        type_checker=draft7.TYPE_CHECKER,
        format_checker=draft7.FORMAT_CHECKER,
        id_of=draft7.ID_OF,
    )


def _subset(schema: Mapping[str, Any] | bool, known: AbstractSet[str]) -> Mapping[str, Any] | bool:
    """``schema`` with only the ``known`` keywords that apply to it, as jsonschema is given it.

    A keyword applies under the node's own single ``type`` only, as the Python, Go and PHP
    validators switch on it (``required`` under ``"object"``, ``minimum`` under ``"number"``):
    a node without one checks ``const`` and ``enum`` alone. jsonschema reads more than a
    validator's keywords: a node's ``$schema`` picks another dialect for it (whose ``pattern``,
    ``$ref`` and ``format`` then apply: a backtracking pattern, a remote ``$ref`` fetched), and
    its ``$id`` is joined as a URI (a non-string one raises). None of that is in the agreed
    subset, so none of it reaches jsonschema.
    """
    if isinstance(schema, bool):
        return schema
    kind = schema.get("type")
    applies = _TYPED.get(kind, _UNTYPED) if isinstance(kind, str) else _UNTYPED
    if schema.keys() <= applies:
        return schema
    return {key: value for key, value in schema.items() if key in applies and key in known}


def _members(properties: object) -> Mapping[str, object]:
    """``properties`` where it is a JSON object, else no member.

    Only its members that are JSON objects are subschemas, as every SDK reads them: ``descend``
    checks nothing under another, and ``additionalProperties`` counts its name as unknown.
    """
    return cast("Mapping[str, object]", properties) if isinstance(properties, Mapping) else {}


def _to_violation(error: Any) -> Violation:
    keyword = error.validator if error.validator in rules.KEYWORDS else "invalid"
    return violation(
        rules.structural(_SCHEMA, keyword), pointer("data", *error.absolute_path), error.message
    )


def _member(document: Any, key: str) -> Any:
    """``document[key]`` when ``document`` is a JSON object holding it, else ``None``."""
    return cast("dict[str, Any]", document).get(key) if isinstance(document, dict) else None


_SCALARS: frozenset[type] = frozenset((str, int, float, bool, type(None)))
_EnumReading = tuple[frozenset[tuple[type, object]], list[object]]


class _Reading:
    """What one :func:`check_payload` call has read of its schema's values, by their ids.

    Each is read once per call, not once per item: an array of 100,000 items against an
    ``enum`` of 2,000 values compared 200 million pairs (70 s for a message of 400 KB), and
    quoted the values for every item refused. The values themselves are kept, so that no id is
    reused while the call runs.
    """

    __slots__ = ("enums", "kept", "quotes")

    def __init__(self) -> None:
        self.enums: dict[int, _EnumReading] = {}
        self.quotes: dict[int, str] = {}
        self.kept: list[object] = []


_READING: ContextVar[_Reading | None] = ContextVar("payload_reading", default=None)


def _one_of(instance: object, values: list[object]) -> bool:
    """Whether ``instance`` is one of ``values``, as :func:`same_json` compares (type-strict)."""
    reading = _READING.get()
    found = None if reading is None else reading.enums.get(id(values))
    if found is None:
        scalars = frozenset((type(v), v) for v in values if type(v) in _SCALARS)
        found = (scalars, [v for v in values if type(v) not in _SCALARS])
        if reading is not None:
            reading.enums[id(values)] = found
            reading.kept.append(values)
    if type(instance) in _SCALARS:
        # (type, value) pairs: equal exactly when same_json says so (1 is not 1.0 nor true).
        return (type(instance), instance) in found[0]
    return any(same_json(instance, v) for v in found[1])


# How a value is quoted in a message: a few members and levels, whatever its size (a full
# `repr` of the value refused at each of 190 levels of a 900 KB message took 7 s).
_QUOTE = reprlib.Repr()
_QUOTE.maxlist = _QUOTE.maxdict = 8
_QUOTE.maxlevel = 4
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = 60


def _quoted(value: object) -> str:
    """A schema's ``value`` as a message quotes it, once per :func:`check_payload` call."""
    reading = _READING.get()
    text = None if reading is None else reading.quotes.get(id(value))
    if text is None:
        text = _QUOTE.repr(value)
        if reading is not None:
            reading.quotes[id(value)] = text
            reading.kept.append(value)
    return text


def same_json(a: Any, b: Any) -> bool:
    """Equality that also compares JSON types, all the way down: true != 1, 1 != 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        left = cast("dict[object, object]", a)
        return left.keys() == b.keys() and all(same_json(left[k], b[k]) for k in left)
    if isinstance(a, list):
        items = cast("list[object]", a)
        return len(items) == len(b) and all(same_json(x, y) for x, y in zip(items, b, strict=True))
    return bool(a == b)


def _short(value: Any) -> str:
    # A string's head, as its full repr began; anything else a few members and levels deep.
    text = repr(value[:60]) if type(value) is str else _QUOTE.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nests too deep
        raise SchemaRegistryError(f"cannot read {path}: {exc}") from exc
