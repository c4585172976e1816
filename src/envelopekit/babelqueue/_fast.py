"""A second validator for :class:`BabelEnvelope`: the common message, with no Python frame.

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
  arrays, objects, as ``Any`` reads them): a scalar member is checked in Rust, an array or
  object member walked once in Python (:func:`_plain_container`), a wide one read from the
  text orjson writes of it; from Python data, the caller runs ``needs_scan``;
* ``created_at`` below 10^11: ``created_at`` is at least 10^11.

It is only ever a fast path: whatever it does not accept (it returns ``None`` for a refusal,
with no Python error built) is validated again by the model's own validator, which then
decides and reports exactly as without it. A flat ``data`` (strings, numbers, booleans, null)
is validated with no Python call; each array or object member of ``data`` is one call, which
walks it as the model's own hook would (a container of ``BY_TEXT`` members or more is read
first from the text orjson writes of it, unless the text of one above it did not show it
within and sent it to the walk: 18 -> 14 µs for 40 line items). The fast path is tried only
for a message within ``FULL_REPORT_BYTES`` (the callers' bound).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaValidator, core_schema

from .._failfast import fresh_validator
from .._json import BY_TEXT, JS_SAFE_MAX, exceeds_depth, plain_within, written_plain
from .._text import json_branch
from ._urn import NOT_BLANK_PATTERN

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


def _member_values() -> CoreSchema:
    """A member of ``data`` as ``Any`` reads it from JSON, its numbers within ±(2^53-1).

    The member picks its schema by its Python type (a tagged union on ``type``, a C call): no
    choice fails before the one that takes it, and each failure would build an error holding
    a copy of the value (pydantic-core copies a whole container into it). A scalar is checked
    in Rust. An array or object is read as ``Any`` reads it, then checked once by
    :func:`_plain_container` in Python, as the model's own ``needs_scan`` checks it: an unrolled
    union per level (the first design) copied each container into the error of every choice
    that failed on it, at every level, which made 16 KB of nested arrays cost 17 times the
    model's own reading (``BENCHMARKS.md``).
    """
    scalars: dict[type, CoreSchema] = {
        str: core_schema.str_schema(strict=True),
        int: core_schema.int_schema(strict=True, ge=-JS_SAFE_MAX, le=JS_SAFE_MAX),
        float: core_schema.float_schema(
            strict=True, allow_inf_nan=False, ge=-JS_SAFE_MAX, le=JS_SAFE_MAX
        ),
        bool: core_schema.bool_schema(strict=True),
    }
    checked = core_schema.no_info_after_validator_function
    containers: dict[type, CoreSchema] = {
        dict: checked(
            _plain_container,
            core_schema.dict_schema(
                core_schema.str_schema(strict=True), core_schema.any_schema(), strict=True
            ),
        ),
        list: checked(
            _plain_container, core_schema.list_schema(core_schema.any_schema(), strict=True)
        ),
    }
    return core_schema.nullable_schema(
        core_schema.tagged_union_schema(
            {**scalars, **containers},
            discriminator=type,
            # One error for the value: a refusal is only ever dropped.
            custom_error_type="json_value",
            custom_error_message="not a plain JSON value within the fast path's bounds",
        )
    )


_SAFE_MIN: Final = -JS_SAFE_MAX


def _plain_container(value: Any) -> Any:
    """``value`` (a member of ``data``: an array or object), if it is within the bounds.

    Raises:
        ValueError: for a number beyond ±(2^53-1) or not finite, or nesting deeper than
            :data:`DEPTH` (the member is at depth 3).
    """
    if _within(value, DEPTH - 3):
        return value
    raise ValueError("not within the fast path's bounds")


def _within(container: dict[str, Any] | list[Any], levels: int, by_text: bool = True) -> bool:
    """Whether every value in ``container`` is within the bounds, nesting at most ``levels``.

    A container of ``BY_TEXT`` members or more is first read as orjson writes it
    (:func:`_written_within`), while ``by_text`` (false below a container whose text did not
    show it within); where that does not show it within, it is walked.
    """
    items: Any = container.values() if type(container) is dict else container
    if by_text and len(items) >= BY_TEXT:
        if _written_within(container, levels):
            return True
        by_text = False  # the walk decides, and writes nothing below again
    for item in items:
        kind = type(item)
        if kind is str or item is None or kind is bool:
            continue
        if kind is int or kind is float:
            # NaN compares false, the infinities are out of range.
            if _SAFE_MIN <= item <= JS_SAFE_MAX:
                continue
            return False
        if (
            (kind is dict or kind is list)
            and levels
            and (not item or _within(item, levels - 1, by_text))
        ):
            continue
        return False
    return True


def _written_within(container: dict[str, Any] | list[Any], levels: int) -> bool:
    """Whether orjson's text of ``container`` shows it within the bounds (exact when true).

    :func:`written_plain` with its floats within ±2^53, and the text's depth by the depth scan
    (``container`` itself is one level).
    """
    text = written_plain(container, safe_floats=True)
    return text is not None and not exceeds_depth(text, levels + 1)


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
    _retyped(fields, "job", core_schema.str_schema(strict=True, pattern=NOT_BLANK_PATTERN))
    definitions: list[CoreSchema] = []
    _retyped(
        fields,
        "data",
        core_schema.json_or_python_schema(
            json_schema=core_schema.dict_schema(
                core_schema.str_schema(strict=True), _member_values(), strict=True
            ),
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

    def validate_python(  # the envelope, None, TOO_LARGE
        self, value: dict[str, Any], encoded: bytes | None = None
    ) -> Any:
        """The envelope of a dict (``model_validate``), or ``None`` when not taken.

        Taken only for what :func:`~envelopekit._json.plain_within` passes, given
        ``encoded`` (plain JSON data; ``TOO_LARGE`` over ``FULL_REPORT_BYTES``). ``data`` is
        then validated as the model does; the caller scans its numbers.
        """
        text = plain_within(value, encoded)
        if not isinstance(text, bytes):
            return text
        fast = self._built()
        return None if fast is None else fast.validate_python(value)


def _none(raw: str | bytes | bytearray) -> None:
    """The fast path of a model whose schema is not the expected shape: never taken."""
    return None
