"""A second validator for :class:`SomEnvelope`, choosing the payload's model in Rust.

The envelope's ``payload`` field picks its model from the sibling ``message_type`` through a
wrap validator and a callable discriminator. Both are Python functions, and pydantic-core
hands a Python function its input as Python objects: in JSON mode the whole payload is first
built as dicts and lists, then validated in Python mode. For the beat-6 example that
round-trip costs about as much as validating the envelope's own fields and is a third of the
parse (bench/NOTES-som-matrix.md).

This validator is the same schema with the dispatch moved up one level: a tagged union of
the envelope, keyed by the JSON object's own ``message_type``, whose choice for each known
message type is the envelope schema with ``payload`` typed as that family's model. The JSON
is then validated in one pass, in JSON mode, with no Python between the envelope and the
payload. It is only ever a fast path: a message it rejects (or an unknown ``message_type``,
which it has no choice for) is validated again by the model's own validator, so errors,
their locations and every verdict are the model's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaValidator, core_schema

__all__: list[str] = []  # internal: used by ._envelope only

# Schema nodes that wrap a model's schema without changing what a field is validated with.
_WRAPPERS = frozenset({"function-after", "function-before", "function-wrap", "model"})


def _with_field(node: dict[str, Any], field: str, choice: CoreSchema) -> dict[str, Any] | None:
    """``node`` with ``field`` validated by ``choice``; only the dicts on the path are copied."""
    copy = dict(node)
    copy.pop("ref", None)
    kind = copy.get("type")
    if kind == "model-fields":
        fields = dict(copy["fields"])
        if field not in fields:
            return None
        replaced = dict(fields[field])
        replaced["schema"] = choice
        fields[field] = replaced
        copy["fields"] = fields
        return copy
    if kind in _WRAPPERS and isinstance(copy.get("schema"), dict):
        inner = _with_field(copy["schema"], field, choice)
        if inner is None:
            return None
        copy["schema"] = inner
        return copy
    return None


def _field_choices(node: dict[str, Any], field: str) -> dict[Any, Any] | None:
    """The choices of the tagged union ``field`` is validated with (under its wrap validator)."""
    while node.get("type") in _WRAPPERS and node.get("type") != "model-fields":
        node = node["schema"]
        if node.get("type") == "model-fields":
            break
    if node.get("type") != "model-fields" or field not in node["fields"]:
        return None
    schema = node["fields"][field]["schema"]
    while schema.get("type") in ("function-wrap", "function-after", "function-before"):
        schema = schema["schema"]
    if schema.get("type") != "tagged-union":
        return None
    choices: dict[Any, Any] = schema["choices"]
    return choices


def dispatching_validator(
    model: type[BaseModel], field: str, discriminator: str, tags: Iterable[str]
) -> SchemaValidator | None:
    """A validator of ``model`` whose ``field`` is typed by the input's ``discriminator`` key.

    Returns ``None`` when the model's schema is not the expected shape (the caller then uses
    the model's own validator only).
    """
    schema: dict[str, Any] = dict(model.__pydantic_core_schema__)
    definitions: list[CoreSchema] = []
    if schema.get("type") == "definitions":
        definitions = list(schema["definitions"])
        schema = schema["schema"]
    if schema.get("type") == "definition-ref":
        return None
    choices = _field_choices(schema, field)
    node = schema
    while node.get("type") != "model" and node.get("type") in _WRAPPERS:
        node = node["schema"]
    if choices is None or node.get("type") != "model":
        return None
    config = node.get("config")
    by_tag: dict[str, CoreSchema] = {}
    for tag in tags:
        if tag not in choices:
            return None
        variant = _with_field(schema, field, choices[tag])
        if variant is None:
            return None
        by_tag[tag] = variant
    # A rejected message is handed back as None, not raised: the errors would be built as a
    # Python ValidationError (with the whole input as Python objects) only to be dropped.
    union = core_schema.with_default_schema(
        core_schema.tagged_union_schema(by_tag, discriminator), default=None, on_error="default"
    )
    top = core_schema.definitions_schema(union, definitions) if definitions else union
    return SchemaValidator(top, config)
