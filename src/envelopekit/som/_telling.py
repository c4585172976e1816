"""The ``telling.*`` payloads (``telling-event.schema.json``): a telling started, ended, exposed."""

from __future__ import annotations

from typing import Annotated, ClassVar, Final, Literal, TypeAlias

from pydantic import ConfigDict, PlainValidator, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from .._compat import MISSING
from ._types import DateTimeStr, Extensions, JsonObject, SomModel, Str, UuidStr, vendor_enum

__all__ = ["TellingEvent", "TellingMessageType", "Transform", "TransformActor", "TransformType"]

TellingMessageType: TypeAlias = Literal["telling.started", "telling.ended", "telling.exposed"]
"""The three ``telling.*`` message types."""

TRANSFORM_TYPES: Final = ("CROP", "TRIM", "CAPTION_BURN")

TransformType: TypeAlias = Annotated[
    str,
    PlainValidator(vendor_enum(*TRANSFORM_TYPES)),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "enum": list(TRANSFORM_TYPES)},
                {"type": "string", "pattern": "^x-[a-z0-9_]+$"},
            ]
        }
    ),
]
"""``transform_type``: CROP, TRIM, CAPTION_BURN or an ``x-`` vendor value."""


class _Telling(SomModel):
    __schema_name__: ClassVar[str] = "telling-event"


class TransformActor(_Telling):
    """``transforms[].applied_by``: the audit actor shape."""

    actor_id: Str
    actor_type: Str


class Transform(_Telling):
    """``transforms[]``: an edge reshape applied to the telling (append-only, ordered)."""

    transform_type: TransformType
    params: JsonObject | MISSING = MISSING
    applied_by: TransformActor
    applied_at: DateTimeStr


class TellingEvent(_Telling):
    """The ``telling.started`` / ``telling.ended`` / ``telling.exposed`` payload.

    ``telling.started`` carries ``exposure_start`` and no ``exposure_end``; ``telling.ended``
    carries ``exposure_end``; ``telling.exposed`` carries both.
    """

    # The schema's conditionals, which `_exposure` enforces.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"message_type": {"const": "telling.started"}}},
                    "then": {"required": ["exposure_start"], "not": {"required": ["exposure_end"]}},
                },
                {
                    "if": {"properties": {"message_type": {"const": "telling.ended"}}},
                    "then": {"required": ["exposure_end"]},
                },
                {
                    "if": {"properties": {"message_type": {"const": "telling.exposed"}}},
                    "then": {"required": ["exposure_start", "exposure_end"]},
                },
            ]
        }
    )

    message_type: TellingMessageType
    telling_id: UuidStr
    link_id: UuidStr
    exposure_start: DateTimeStr | MISSING = MISSING
    exposure_end: DateTimeStr | MISSING = MISSING
    scheduled_start: DateTimeStr | MISSING = MISSING
    extensions: Extensions | MISSING = MISSING
    transforms: list[Transform] | MISSING = MISSING

    @model_validator(mode="after")
    def _exposure(self) -> TellingEvent:
        kind = self.message_type
        if kind in ("telling.started", "telling.exposed") and self.exposure_start is MISSING:
            raise PydanticCustomError(
                "required",
                "{kind} requires exposure_start",
                {"kind": kind, "pointer": "/exposure_start"},
            )
        if kind in ("telling.ended", "telling.exposed") and self.exposure_end is MISSING:
            raise PydanticCustomError(
                "required",
                "{kind} requires exposure_end",
                {"kind": kind, "pointer": "/exposure_end"},
            )
        if kind == "telling.started" and self.exposure_end is not MISSING:
            raise PydanticCustomError(
                "not", "telling.started carries no exposure_end", {"pointer": "/exposure_end"}
            )
        return self
