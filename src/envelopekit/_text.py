r"""Python-mode validation refuses what JSON validation refuses: strings that are not Unicode.

``json.loads`` decodes the escape ``"\ud800"`` into a ``str`` holding a lone surrogate, which
is not Unicode text: pydantic's JSON parser refuses the same bytes (``json.invalid``), while its
Python mode (``model_validate`` of a dict, a ``TypeAdapter``, FastAPI) would accept the decoded
dict and fail only when the message is written. The message models' core schemas are
``json-or-python`` schemas (:func:`text_checked_schema`): JSON validation runs the model schema
as it is, Python validation first probes its input (:func:`refuse_lone_surrogates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import orjson
from pydantic import BaseModel, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from . import rules
from ._violations import is_unicode, pointer, rule_error

__all__ = ["json_branch", "refuse_lone_surrogates", "text_checked_schema"]


def text_checked_schema(
    cls: type[BaseModel], source: type[BaseModel], handler: GetCoreSchemaHandler
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
        python_schema=core_schema.no_info_before_validator_function(refuse_lone_surrogates, bare),
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


def refuse_lone_surrogates(value: object) -> object:
    """``value`` (the input of Python validation), refused if a string in it is no Unicode text.

    One orjson encode probes every string and key (orjson refuses a lone surrogate); only an
    input it cannot encode is walked in Python, for the pointer and to tell a lone surrogate
    from what else orjson refuses (an integer beyond 64 bits, a key that is not a string).

    Raises:
        PydanticCustomError: ``json.invalid``, a verdict on the whole document, as JSON
            validation gives for the same message.
    """
    if isinstance(value, BaseModel):
        return value  # an instance, not input: the model decides whether it revalidates it
    try:
        orjson.dumps(value, default=_members)
    except orjson.JSONEncodeError:
        at = _lone_surrogate_at(value)
        if at is not None:
            raise rule_error(
                rules.JSON_INVALID,
                f"Invalid JSON: a string or key at {at or '/'} holds a lone surrogate, "
                "which no JSON text can carry.",
            ) from None
    return value


def _members(value: object) -> object:
    # orjson's hook for what it cannot encode: a model's members (input may hold models).
    if isinstance(value, BaseModel):
        return (value.__dict__, value.__pydantic_extra__)
    return None  # anything else holds no string of the input


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
