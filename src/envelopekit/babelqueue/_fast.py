"""A second validator for :class:`BabelEnvelope`: the common message, with no Python call.

The model's one Python hook, the after-validator ``_consume``, runs on every message and costs
about as much as all of its fields' validation in Rust (bench: 1.5x the same-run floor with
it, 1.0x without). What it does matters only for rare messages: a blank ``job`` (the ``urn``
alias, or ``urn.missing``), unknown or forbidden keys, a number in ``data`` to warn about or
refuse, a ``created_at`` in seconds.

This validator is the model's own schema without that hook, *narrowed* so that it accepts only
messages none of those cases apply to; for those the hook would change nothing, so what it
accepts the model accepts, and builds, the same (the same classes, fields, ``fields_set`` and
empty extras). Each case of ``_consume``, and what narrows it away:

* a blank ``job``: ``job`` is required, and must hold a character outside the ASCII blank set;
* unknown (so also forbidden) keys, at the top, in ``meta`` or ``dead_letter``: an unknown key
  is validated by a schema no value passes;
* ``data`` numbers: in JSON, ``data`` holds JSON values whose integers and floats lie within
  ±(2^53-1), floats finite (the rest of pydantic's reading of JSON: strings, booleans, null,
  arrays, objects, as ``Any`` reads them); from Python data, the caller runs ``needs_scan``;
* ``created_at`` below 10^11: ``created_at`` is at least 10^11.

It is only ever a fast path: whatever it does not accept (it returns ``None`` for a refusal,
with no Python error built) is validated again by the model's own validator, which then
decides and reports exactly as without it. Arrays and objects in ``data`` stop at their first
failing item, so a refusal costs no more than one failure per container.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import orjson
from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaValidator, core_schema

from .._failfast import FULL_REPORT_BYTES, TOO_LARGE, fresh_validator
from .._json import JS_SAFE_MAX
from .._text import json_branch
from ._urn import ASCII_WHITESPACE

# Internal: used by ._envelope, ._spec and the tests only.
__all__ = ["DEPTH", "SECONDS_THRESHOLD", "FastPath", "fast_schema"]

SECONDS_THRESHOLD: Final = 100_000_000_000
"""Below 10^11 ms is before March 1973, but 10^11 s is the year 5138: almost surely seconds."""

_ENVELOPE_FIELDS: Final = frozenset(
    {"job", "trace_id", "data", "meta", "attempts", "dead_letter", "urn"}
)
_META_FIELDS: Final = frozenset({"id", "queue", "lang", "schema_version", "created_at"})
_DEAD_LETTER_FIELDS: Final = frozenset(
    {"reason", "error", "exception", "failed_at", "original_queue", "attempts", "lang"}
)

# No value passes it: an integer both above and below 0 (the schema of an unknown key).
_NO_VALUE: Final = core_schema.int_schema(strict=True, gt=0, lt=0)

DEPTH: Final = 32
"""How deep a message the fast path takes nests, at most: the top-level object is depth 1,
``data`` 2, and ``data`` holds at most ``DEPTH - 2`` levels of arrays and objects."""

# orjson refuses, instead of encoding, anything but the JSON types themselves.
_PLAIN_DATA: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def _json_values(levels: int) -> tuple[CoreSchema, list[CoreSchema]]:
    """A JSON value as ``Any`` reads it, its numbers within ±(2^53-1) (floats finite).

    It nests at most ``levels`` arrays and objects: the schema is unrolled, one definition per
    level (each referred to by name from the next, not copied into it), so a message the fast
    path takes is proven within :data:`DEPTH`. Returns the value's schema and the definitions.

    The value itself (a member of ``data``) picks its choice by its type (:func:`_by_type`);
    below it, left to right: the first choice that accepts a value decides it (a JSON integer
    is tried as an integer before a float, which would take it too). Each choice has a label,
    which names it in the union's name: pydantic-core names a validator after its parts, and
    an unrolled level naming the one below twice (as an object's and as an array's) would
    double the name's length per level.
    """
    scalars: list[tuple[CoreSchema, str]] = [
        (core_schema.str_schema(strict=True), "string"),
        (core_schema.int_schema(strict=True, ge=-JS_SAFE_MAX, le=JS_SAFE_MAX), "integer"),
        (
            core_schema.float_schema(
                strict=True, allow_inf_nan=False, ge=-JS_SAFE_MAX, le=JS_SAFE_MAX
            ),
            "number",
        ),
        (core_schema.bool_schema(strict=True), "boolean"),
    ]
    definitions: list[CoreSchema] = []
    value = _one_of(list(scalars))
    choices = scalars
    for level in range(1, levels + 1):
        ref = f"{__name__}.json-value-{level - 1}"
        definitions.append(cast("CoreSchema", {**value, "ref": ref}))
        inner = core_schema.definition_reference_schema(ref)
        array = core_schema.list_schema(inner, strict=True, fail_fast=True)
        choices = [*scalars, (_object_of(inner), "object"), (array, "array")]
        value = _one_of(list(choices))
    return _by_type(choices), definitions


# The Python type of each labelled choice's JSON values.
_TYPES: Final = {"string": str, "integer": int, "number": float, "boolean": bool}
_TYPES_OF_CONTAINERS: Final = {"object": dict, "array": list}


def _by_type(choices: list[tuple[CoreSchema, str]]) -> CoreSchema:
    """The ``choices`` as a union tagged by the value's Python type (``type``, a C call).

    No choice fails before the one that takes the value: each failure builds an error holding
    a copy of the value (of a whole container, in pydantic-core), which made a member of
    ``data`` cost one to four failures (the bench's message: 3.15 -> 3.04 µs; a small nested
    payload: 8.8 -> 7.2 µs). Used for the members of ``data`` only: pydantic-core hands the
    discriminator the value converted to Python, which for a container is a copy of it.
    """
    types = _TYPES | _TYPES_OF_CONTAINERS
    return core_schema.nullable_schema(
        core_schema.tagged_union_schema(
            {types[label]: schema for schema, label in choices},
            discriminator=type,
            custom_error_type="json_value",
            custom_error_message="not a plain JSON value within the fast path's bounds",
        )
    )


def _one_of(choices: list[CoreSchema | tuple[CoreSchema, str]]) -> CoreSchema:
    return core_schema.nullable_schema(
        core_schema.union_schema(
            choices,
            mode="left_to_right",
            # One error for the value, not one per choice: a refusal is only ever dropped.
            custom_error_type="json_value",
            custom_error_message="not a plain JSON value within the fast path's bounds",
        )
    )


def _object_of(value: CoreSchema) -> CoreSchema:
    """A JSON object of ``value``s, as ``dict[str, Any]`` reads it.

    A ``dict`` schema, not a typed dict of unknown keys: those cost 300 more instructions a
    member (the fast path of the bench's message: 34,600 -> 32,650 instructions).
    """
    return core_schema.dict_schema(core_schema.str_schema(strict=True), value, strict=True)


def _model_fields(node: Mapping[str, Any], cls: type, names: frozenset[str]) -> dict[str, Any]:
    """A copy of a ``model`` schema of ``cls`` and its ``model-fields``, checked to be that.

    Raises:
        LookupError: when ``node`` is not the model schema expected.
    """
    inner = node.get("schema")
    if (
        node.get("type") != "model"
        or node.get("cls") is not cls
        or not isinstance(inner, dict)
        or inner.get("type") != "model-fields"
        or frozenset(cast("dict[str, Any]", inner["fields"])) != names
    ):
        raise LookupError(f"not the expected schema of {cls.__name__}")
    copy = {key: value for key, value in node.items() if key != "ref"}
    fields = dict(cast("dict[str, Any]", inner))
    fields["fields"] = dict(fields["fields"])
    # An unknown key (a forbidden one among them) is for the model's validator to handle.
    fields["extras_schema"] = _NO_VALUE
    copy["schema"] = fields
    return copy


def _retyped(fields: dict[str, Any], name: str, schema: CoreSchema) -> None:
    fields[name] = {**fields[name], "schema": schema}


def fast_schema(
    model: type[BaseModel],
    meta: type[BaseModel],
    dead_letter: type[BaseModel],
    consume: Callable[..., Any],
) -> CoreSchema:
    """The fast validator's schema: ``model``'s own, narrowed (see the module's docstring).

    Args:
        model: the envelope model, whose core schema is the starting point.
        meta: the model of ``meta``.
        dead_letter: the model of ``dead_letter``.
        consume: the after-validator left out.

    Raises:
        LookupError: when the model's schema is not the expected shape (a pydantic version
            that builds it otherwise); the caller then has no fast path.
    """
    schema = cast("dict[str, Any]", model.__pydantic_core_schema__)
    if schema.get("type") != "definitions":
        raise LookupError("the envelope's schema has no definitions")
    after = cast("dict[str, Any]", json_branch(schema["schema"]))
    if after.get("type") != "function-after" or after["function"]["function"] is not consume:
        raise LookupError("the envelope's schema is not its after-validator's")
    top = _model_fields(after["schema"], model, _ENVELOPE_FIELDS)
    fields = top["schema"]["fields"]
    # Required, and not blank: the `urn` alias is never needed.
    blank = "".join(f"\\x{ord(c):02x}" for c in ASCII_WHITESPACE)
    _retyped(fields, "job", core_schema.str_schema(strict=True, pattern=f"[^{blank}]"))
    value, definitions = _json_values(DEPTH - 2)
    _retyped(
        fields,
        "data",
        core_schema.json_or_python_schema(
            json_schema=_object_of(value),
            # Python data is scanned by the caller; `Any` keeps the very values given.
            python_schema=fields["data"]["schema"],
        ),
    )
    found: set[type] = set()
    for definition in schema["definitions"]:
        cls = definition.get("cls")
        if cls is meta:
            copy = _model_fields(definition, meta, _META_FIELDS)
            created_at = copy["schema"]["fields"]["created_at"]
            _retyped(
                copy["schema"]["fields"],
                "created_at",
                cast("CoreSchema", {**created_at["schema"], "ge": SECONDS_THRESHOLD}),
            )
        elif cls is dead_letter:
            copy = _model_fields(definition, dead_letter, _DEAD_LETTER_FIELDS)
        else:
            raise LookupError(f"an unexpected definition {definition.get('ref')!r}")
        found.add(cls)
        copy["ref"] = definition["ref"]  # the envelope's fields refer to it by name
        definitions.append(cast("CoreSchema", copy))
    if found != {meta, dead_letter}:
        raise LookupError("the envelope's schema lacks a block's definition")
    # A refusal is handed back as None, not raised: its errors would only be dropped.
    lenient = core_schema.with_default_schema(
        cast("CoreSchema", top), default=None, on_error="default"
    )
    return core_schema.definitions_schema(lenient, definitions)


class FastPath:
    """The fast validator of :func:`fast_schema`, built on first use.

    ``parse(raw)`` is the fast validator's own ``validate_json`` once built: the envelope, or
    ``None`` when the fast path does not take the message. It raises ``ValidationError`` for
    input that is not JSON (for the model's validator to report).
    """

    def __init__(
        self,
        model: type[BaseModel],
        meta: type[BaseModel],
        dead_letter: type[BaseModel],
        consume: Callable[..., Any],
    ) -> None:
        """A fast path for ``model`` (see :func:`fast_schema` for the arguments)."""
        self._arguments = (model, meta, dead_letter, consume)
        self._fast: list[SchemaValidator | None] = []
        self.parse: Callable[[str | bytes | bytearray], Any] = self._first_parse

    def _built(self) -> SchemaValidator | None:
        # Built on first use, once: a list, so that the read needs no lock.
        if not self._fast:
            try:
                schema = fast_schema(*self._arguments)
            except LookupError:
                self._fast.append(None)
            else:
                model, meta, dead_letter, _ = self._arguments
                self._fast.append(fresh_validator(schema, {model, meta, dead_letter}))
        return self._fast[0]

    def _first_parse(self, raw: str | bytes | bytearray) -> Any:
        fast = self._built()
        self.parse = _none if fast is None else fast.validate_json
        return self.parse(raw)

    def validator_json(self) -> Callable[[bytes], Any] | None:
        """The fast validator's ``validate_json`` (what :attr:`parse` becomes), built now.

        ``None`` when the model's schema is not the expected shape.
        """
        fast = self._built()
        return None if fast is None else fast.validate_json

    def validate_python(self, value: dict[str, Any]) -> Any:  # the envelope, None, TOO_LARGE
        """The envelope of a dict (``model_validate``), or ``None`` when not taken.

        Taken only for plain JSON data: orjson must encode ``value`` as it is, which refuses a
        lone surrogate (the model's own Python-mode probe, ``_text``), a subclass of a JSON
        type, a model instance, a date, an integer beyond 64 bits or a key that is not a
        string. ``data`` is then validated as the model does; the caller scans its numbers.
        :data:`TOO_LARGE` when its JSON is over ``FULL_REPORT_BYTES``.
        """
        try:
            encoded = orjson.dumps(value, option=_PLAIN_DATA)
        except (orjson.JSONEncodeError, RecursionError):
            return None
        if len(encoded) > FULL_REPORT_BYTES:
            return TOO_LARGE  # as over JSON: free-form values cost the fast path more
        fast = self._built()
        return None if fast is None else fast.validate_python(value)


def _none(raw: str | bytes | bytearray) -> None:
    """The fast path of a model whose schema is not the expected shape: never taken."""
    return None
