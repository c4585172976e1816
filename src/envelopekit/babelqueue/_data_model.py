"""A ``data`` model as the toolkit is given one: its JSON Schema, and what its values must be.

A :class:`~envelopekit.babelqueue.Router` registration and
:func:`envelopekit.testing.valid_messages` take a model of ``data``; both refuse, when given, one
no valid message's ``data`` follows (:func:`require_object_data`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

__all__ = ["AnyWhereUnwritable", "require_object_data"]


class AnyWhereUnwritable(GenerateJsonSchema):
    """A JSON Schema writer that reads a field it cannot write (an arbitrary type) as any value.

    For reading a model's shape only (its marks, its root's type): a model may hold such a
    field, and is no less usable for it.
    """

    def handle_invalid_for_json_schema(self, schema: Any, error_info: str) -> JsonSchemaValue:
        return {}


def require_object_data(model: Any, urn: str | None = None) -> None:
    """Refuse a ``data`` model whose values are not all JSON objects.

    A valid message's ``data`` is an object, so a model of other values (``list[int]``,
    ``int``, ``Model | None``, ``Any``) would fail every message a Router takes (retried, then
    dead-lettered), or draw messages ``check`` refuses.

    Args:
        model: a type pydantic validates (a model, a dataclass, a ``TypedDict``,
            ``dict[str, int]``), or a ``TypeAdapter`` of one.
        urn: the URN it is given for, named in the error.

    Raises:
        ValueError: naming the model and what its values are (``type 'array'``, ``anyOf``).
    """
    adapter = model if isinstance(model, TypeAdapter) else TypeAdapter(model)
    generated = adapter.json_schema(schema_generator=AnyWhereUnwritable)
    root: Mapping[str, Any] = generated
    reference = root.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        root = generated["$defs"][reference.removeprefix("#/$defs/")]
    if root.get("type") == "object":
        return
    given = f" (for {urn!r})" if urn is not None else ""
    raise ValueError(
        f"data {_named(model)}{given} takes values that are not JSON objects "
        f"({_json_type(root)}): a BabelQueue message's data is an object, such as a pydantic "
        "model's"
    )


def _named(model: Any) -> str:
    if isinstance(model, type):
        return model.__name__
    return repr(model)


def _json_type(schema: Mapping[str, Any]) -> str:
    """What a JSON Schema's values are, in a few words: ``type 'array'``, ``anyOf``."""
    if "type" in schema:
        return f"type {schema['type']!r}"
    return next((key for key in ("anyOf", "oneOf", "allOf", "$ref") if key in schema), "any")
