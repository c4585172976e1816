"""The envelope's JSON Schema: the payload chosen by ``message_type``, as JSON Schema says it.

The shipped schemas (:func:`envelopekit.json_schema`) dispatch with ``if``/``then``, as the
official tools read it; pydantic's own JSON Schema (FastAPI's OpenAPI) says the same as a
discriminated ``oneOf`` of one envelope per ``message_type``, which code generators can type.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Any, Final

from pydantic import BaseModel, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from .._schema import ref_to
from ._payloads import PAYLOAD_MODELS, UNVALIDATED
from ._typed import expected_of, payload_choices
from ._version import SOM_VERSION

__all__ = ["as_tagged_union", "envelope_json_schema"]

_ENVELOPE_DESCRIPTION: Final = (
    "A SOM 1.0 message: the envelope, with the payload its `message_type` selects. "
    "`message_type` is the only parsing discriminator: the payload of one of the ten types with "
    "a SOM 1.0 schema must match that family's schema; any other `message_type` carries a JSON "
    "object, unvalidated. `som_version` is 1.0.0."
)


def envelope_json_schema(schema: dict[str, Any], cls: type[Any]) -> None:
    """What the envelope's validators enforce, in its generated JSON Schema.

    ``som_version`` is 1.0.0 (the default, strict mode). The payload is chosen by
    ``message_type`` alone: one ``if``/``then`` per known type, whose ``then`` also holds the
    payload's own ``message_type`` (where its family has one) to the envelope's; any other
    ``message_type`` carries an object, unvalidated. A plain ``oneOf`` of the families and the
    unknown-family object would refuse every valid known message (it matches both).

    The class docstring documents the Python API; the schema gets the wire-level description.
    """
    schema["description"] = _ENVELOPE_DESCRIPTION
    properties = schema["properties"]
    properties["som_version"]["const"] = SOM_VERSION
    payload = properties["payload"]
    if "oneOf" not in payload:
        _typed_envelope_json_schema(properties, cls)
        return
    branches = payload.pop("oneOf")
    payload["type"] = "object"
    choices = payload_choices(cls) or {}
    dispatch: list[dict[str, Any]] = []
    for message_type in PAYLOAD_MODELS:
        if message_type not in choices:
            continue  # a typed envelope's message_type enum leaves it out
        family = _ref_to(choices[message_type], branches)
        if "message_type" in PAYLOAD_MODELS[message_type].model_fields:
            family["properties"] = {"message_type": {"const": message_type}}
        dispatch.append(
            {
                "if": _message_type_is({"const": message_type}),
                "then": {"properties": {"payload": family}},
            }
        )
    if UNVALIDATED in choices:
        dispatch.append(
            {
                "if": _message_type_is({"not": {"enum": sorted(PAYLOAD_MODELS)}}),
                "then": {"properties": {"payload": _ref_to(choices[UNVALIDATED], branches)}},
            }
        )
    schema["allOf"] = dispatch
    _typed_envelope_json_schema(properties, cls)


def _ref_to(kinds: list[type], branches: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference to the one of ``kinds``, or an ``anyOf`` of theirs."""
    refs = [ref_to(kind, branches) for kind in kinds]
    return refs[0] if len(refs) == 1 else {"anyOf": refs}


def _typed_envelope_json_schema(properties: dict[str, Any], cls: type[Any]) -> None:
    """``SomEnvelope[Family]``: the payload is that type; ``message_type`` one that selects it."""
    expected = expected_of(cls)
    if expected is None:
        return
    known, unknown, _ = expected
    if not unknown:
        properties["message_type"]["enum"] = sorted(known)
    elif not known:
        properties["message_type"]["not"] = {"enum": sorted(PAYLOAD_MODELS)}


def _message_type_is(condition: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {"message_type": condition}, "required": ["message_type"]}


def as_tagged_union(envelope: dict[str, Any], handler: GetJsonSchemaHandler) -> None:
    """Rewrite the envelope's ``if``/``then`` schema as a discriminated ``oneOf`` of variants.

    Each ``if``/``then`` pair becomes one variant: the envelope with ``message_type`` held to
    the condition and ``payload`` to the schema it selects. The conditions exclude each other
    (nine ``const`` and the ``not`` ``enum`` of them), so exactly one variant takes a message
    the ``if``/``then`` form accepts, and none one it refuses.
    """
    dispatch = envelope.pop("allOf", None)
    if dispatch is None:  # already rewritten in this generation
        return
    properties = envelope["properties"]
    payload = {k: v for k, v in properties["payload"].items() if k != "type"}
    variants: list[JsonSchemaValue] = []
    mapping: dict[str, str] = {}
    for branch in dispatch:
        condition = branch["if"]["properties"]["message_type"]
        message_type = condition.get("const")
        title = _variant_title(message_type)
        variant = {
            **envelope,
            "title": title,
            "description": (
                f"A SOM 1.0 message of message_type {message_type}."
                if message_type is not None
                else "A SOM 1.0 message of a message_type with no SOM 1.0 schema: its payload "
                "is a JSON object, unvalidated."
            ),
            "properties": {
                **properties,
                "message_type": {**properties["message_type"], **condition},
                "payload": {**payload, **branch["then"]["properties"]["payload"]},
            },
        }
        # Through a `definitions` schema: generated in full (its hook, its definition), where
        # the handler called on the model's own schema would only inline it.
        model = _variant_model(title).__pydantic_core_schema__
        reference = model.get("ref")
        assert reference is not None, "a model's core schema has a reference"
        wrapped = core_schema.definitions_schema(
            core_schema.definition_reference_schema(reference), [model]
        )
        token = _VARIANT.set(variant)
        try:
            ref = handler(wrapped)
        finally:
            _VARIANT.reset(token)
        variants.append(ref)
        if message_type is not None:
            mapping[message_type] = ref["$ref"]
    for key in ("type", "properties", "required", "additionalProperties"):
        envelope.pop(key, None)
    envelope["oneOf"] = variants
    envelope["discriminator"] = {"propertyName": "message_type", "mapping": mapping}


def _variant_title(message_type: str | None) -> str:
    """``story.context`` -> ``SomStoryContextEnvelope``; ``None`` -> ``SomUnknownEnvelope``."""
    words = re.split(r"[._]", message_type) if message_type is not None else ["unknown"]
    return "Som" + "".join(word.capitalize() for word in words) + "Envelope"


# The variant schema `as_tagged_union` is registering, read by the variant model's hook.
_VARIANT: ContextVar[JsonSchemaValue | None] = ContextVar("envelopekit_som_variant", default=None)
_VARIANT_MODELS: dict[str, type[BaseModel]] = {}


def _variant_model(title: str) -> type[BaseModel]:
    """A model that only names one variant's definition (its JSON Schema is ``_VARIANT``'s).

    A JSON Schema definition is registered by a core schema with a reference, and a model's is
    one; validation never uses it.
    """
    if title not in _VARIANT_MODELS:

        def variant_schema(
            cls: type[BaseModel], schema: CoreSchema, handler: GetJsonSchemaHandler
        ) -> JsonSchemaValue:
            found = _VARIANT.get()
            assert found is not None, "generated only inside as_tagged_union"
            ref = handler(schema)  # registers the definition, then holds the variant
            definition = handler.resolve_ref_schema(ref)
            definition.clear()
            definition.update(found)
            return ref

        _VARIANT_MODELS[title] = type(
            title,
            (BaseModel,),
            {
                "__module__": __name__,
                "__qualname__": title,
                "__doc__": f"The {title} variant of SomEnvelope's JSON Schema.",
                "__get_pydantic_json_schema__": classmethod(variant_schema),
            },
        )
    return _VARIANT_MODELS[title]
