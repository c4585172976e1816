r"""Python-mode validation refuses what JSON validation refuses: strings that are not Unicode.

``json.loads`` decodes the escape ``"\ud800"`` into a ``str`` holding a lone surrogate, which
is not Unicode text: pydantic's JSON parser refuses the same bytes (``json.invalid``), while its
Python mode (``model_validate`` of a dict, a ``TypeAdapter``, FastAPI) would accept the decoded
dict and fail only when the message is written. The message models' core schemas are
``json-or-python`` schemas (:func:`text_checked_schema`): JSON validation runs the model schema
as it is, Python validation first probes its input (:func:`refuse_unreadable`), which also
refuses nesting deeper than the parser reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

import orjson
from pydantic import BaseModel, GetCoreSchemaHandler, ValidationInfo
from pydantic_core import CoreSchema, core_schema

from . import rules
from ._json import PARSER_MAX_DEPTH, exceeds_depth, pointer_of, segment
from ._violations import is_unicode, pointer, rule_error

WRITTEN: Final = "envelopekit:written"
"""A validation context key: the text orjson wrote of the input, plain JSON data, where a
producer wrote it and kept it within the depth ``check`` reads (``envelopekit._bounds``).
:func:`refuse_unreadable` then writes no probe of it again, nor do the fast paths."""

__all__ = [
    "WRITTEN",
    "json_branch",
    "refuse_unreadable",
    "text_checked_schema",
    "too_deep_at",
]


def text_checked_schema(
    cls: type[BaseModel],
    source: type[BaseModel],
    handler: GetCoreSchemaHandler,
) -> CoreSchema:
    """A message model's core schema, for its ``__get_pydantic_core_schema__``.

    The model's ``ref`` moves to the ``json-or-python`` wrapper, so a nested use is still a
    ``$ref`` in the JSON Schema.
    """
    schema = handler(source)
    if cls.__dict__.get("__pydantic_complete__"):
        return schema  # a use of the finished model: its own schema is already wrapped
    if schema["type"] == "definitions":
        return {**schema, "schema": _text_checked(schema["schema"])}
    return _text_checked(schema)


def _text_checked(schema: CoreSchema) -> CoreSchema:
    ref = schema.get("ref")
    bare = cast("CoreSchema", {key: value for key, value in schema.items() if key != "ref"})
    wrapped = core_schema.json_or_python_schema(
        json_schema=bare,
        python_schema=core_schema.with_info_before_validator_function(refuse_unreadable, bare),
    )
    if ref is not None:
        wrapped["ref"] = ref
    return wrapped


def json_branch(schema: CoreSchema) -> CoreSchema:
    """The schema JSON validation runs: a :func:`text_checked_schema` unwrapped."""
    if schema["type"] == "json-or-python":
        inner: CoreSchema = schema["json_schema"]
        return inner
    return schema


def refuse_unreadable(value: object, info: ValidationInfo) -> object:
    """``value`` (the input of Python validation), refused where no JSON text could carry it.

    A string or key that is no Unicode text, or nesting deeper than the JSON parser reads. One
    orjson encode probes every string and key (orjson refuses a lone surrogate); only an input
    it cannot encode is walked in Python, for the pointer and to tell a lone surrogate from
    what else orjson refuses (an integer beyond 64 bits, a key that is not a string). The same
    encode shows the depth: a text of ``2n`` bytes nests ``n`` levels at most, and only a
    longer one is read by the depth scan (C passes); orjson itself refuses 255 levels, where
    the input is walked. Python data past :data:`PARSER_MAX_DEPTH` (200) is what the JSON door
    refuses as ``json_invalid``, and what a message accepted from it could not be written as
    and read back. A producer that wrote its wire data and kept it within the bounds says so
    in the validation context (:data:`WRITTEN`): nothing is written again.

    Raises:
        PydanticCustomError: ``json.invalid`` for a lone surrogate, a verdict on the whole
            document, as JSON validation gives for the same message; ``message.too_deep`` at
            the pointer of the first array or object past the limit.
    """
    if isinstance(value, BaseModel):
        return value  # an instance, not input: the model decides whether it revalidates it
    context = info.context
    if type(context) is dict and context.get(WRITTEN) is not None:
        return value  # its producer wrote it, within the bounds: no second probe
    try:
        text = orjson.dumps(value, default=_members)
    except orjson.JSONEncodeError:
        written = _written_by_json(value)
        if written is None:
            _refuse_lone_surrogate(value)
            _refuse_too_deep(value)
            return value
        text = written
    if len(text) > 2 * PARSER_MAX_DEPTH and exceeds_depth(text, PARSER_MAX_DEPTH):
        _refuse_too_deep(value)
    return value


def _written_by_json(value: object) -> bytes | None:
    """``value`` as the standard library's C encoder writes it, where orjson wrote nothing.

    orjson refuses an integer beyond 64 bits too, and its refusal was the walk of every value
    in Python (50,000 integers beyond 2^64 in a dict's `data`: ``model_validate`` 52x
    ``orjson.loads``); the standard encoder writes any integer. ``None`` where it fails too,
    or a string or key holds a lone surrogate (its UTF-8 fails): the walk says where.
    """
    try:
        return json.dumps(
            value, default=_members, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return None


def _refuse_lone_surrogate(value: object) -> None:
    at = _lone_surrogate_at(value)
    if at is not None:
        raise rule_error(
            rules.JSON_INVALID,
            f"Invalid JSON: a string or key at {at or '/'} holds a lone surrogate, "
            "which no JSON text can carry.",
        ) from None


def _refuse_too_deep(value: object) -> None:
    at = too_deep_at(value, PARSER_MAX_DEPTH)
    if at is not None:
        raise rule_error(
            rules.MESSAGE_TOO_DEEP,
            f"The message nests arrays and objects deeper than {PARSER_MAX_DEPTH} levels, "
            "the most its JSON text may hold.",
            pointer=at,
        ) from None


def _members(value: object) -> object:
    # orjson's hook for what it cannot encode: a model's members (input may hold models), one
    # object, as the model writes them.
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__
        return {**value.__dict__, **extra} if extra else value.__dict__
    return None  # anything else holds no string of the input


def too_deep_at(document: object, limit: int) -> str | None:
    """The pointer of the first array or object of ``document`` nested past ``limit`` levels.

    ``None`` when it nests no deeper. Python data: mappings, lists and tuples, and models
    (their members) are levels, as their JSON is. Walked with an explicit stack, in document
    order, never below the limit, so its cost is the size of what lies within it.
    """
    if not isinstance(document, (Mapping, list, tuple, BaseModel)):
        return None
    # (value, its depth, its parent's node, its key); a node (as the number walks build one)
    # for containers only, and a pointer only for what is reported.
    stack: list[tuple[object, int, Any, object]] = [(document, 1, None, None)]
    while stack:
        value, depth, parent, key = stack.pop()
        members: Iterable[tuple[object, object]]
        if isinstance(value, BaseModel):
            extra = value.__pydantic_extra__
            members = ({**value.__dict__, **extra} if extra else value.__dict__).items()
        elif isinstance(value, Mapping):
            members = cast("Mapping[object, object]", value).items()
        else:
            members = enumerate(cast("list[object] | tuple[object, ...]", value))
        node = (
            None if key is None else (None, parent, segment(key if type(key) is int else str(key)))
        )
        if depth > limit:
            return pointer_of(node, "")
        inner = [
            (item, depth + 1, node, member)
            for member, item in members
            if isinstance(item, (Mapping, list, tuple, BaseModel))
        ]
        stack.extend(reversed(inner))
    return None


def _lone_surrogate_at(document: object) -> str | None:
    """The pointer of the first string or key that is not Unicode text, if there is one."""
    stack: list[tuple[object, str]] = [(document, "")]
    while stack:
        value, at = stack.pop()
        if isinstance(value, str):
            if not is_unicode(value):
                return at
        elif isinstance(value, BaseModel):
            members = {**value.__dict__, **(value.__pydantic_extra__ or {})}
            stack.extend((item, at + pointer(name)) for name, item in members.items())
        elif isinstance(value, Mapping):
            for key, item in cast("Mapping[object, object]", value).items():
                if isinstance(key, str) and not is_unicode(key):
                    return at
                stack.append((item, at + pointer(str(key))))
        elif isinstance(value, (list, tuple)):
            items = cast("list[object] | tuple[object, ...]", value)
            stack.extend((item, at + pointer(index)) for index, item in enumerate(items))
    return None
