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
    other = _other_values(generated, generated.get("$defs", {}))
    if other is None:
        return
    given = f" (for {urn!r})" if urn is not None else ""
    raise ValueError(
        f"data {_named(model)}{given} takes values that are not JSON objects ({other}): a "
        "BabelQueue message's data is an object, such as a pydantic model's"
    )


def _other_values(schema: Mapping[str, Any], definitions: Mapping[str, Any]) -> str | None:
    """What ``schema`` takes besides JSON objects, in a few words (``type 'array'``), if any.

    A union takes objects alone when each branch does (``A | B``, discriminated or not).
    """
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        return _other_values(definitions[reference.removeprefix("#/$defs/")], definitions)
    if schema.get("type") == "object":
        return None
    if "type" in schema:
        return f"type {schema['type']!r}"
    for union in ("anyOf", "oneOf"):
        branches = schema.get(union)
        if isinstance(branches, list) and branches:
            others = [_other_values(branch, definitions) for branch in branches]
            found = [other for other in others if other is not None]
            return f"{union}: {', '.join(found)}" if found else None
    return "any"


def _named(model: Any) -> str:
    if isinstance(model, type):
        return model.__name__
    return repr(model)
