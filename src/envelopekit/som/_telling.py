"""The ``telling.*`` payloads (``telling-event.schema.json``): a telling started, ended, exposed."""

from __future__ import annotations

from typing import Annotated, ClassVar, Final, Literal, TypeAlias

from pydantic import ConfigDict, Field

from .._compat import MISSING
from ._types import (
    DateTimeStr,
    Extensions,
    FamilyModel,
    JsonObject,
    SomModel,
    Str,
    Then,
    UuidStr,
    VendorEnum,
    conditional,
)

__all__ = ["TellingEvent", "TellingMessageType", "Transform", "TransformActor", "TransformType"]

TellingMessageType: TypeAlias = Literal["telling.started", "telling.ended", "telling.exposed"]
"""The three ``telling.*`` message types."""

TRANSFORM_TYPES: Final = ("CROP", "TRIM", "CAPTION_BURN")

TransformType: TypeAlias = Annotated[str, VendorEnum(*TRANSFORM_TYPES)]
"""``transform_type``: CROP, TRIM, CAPTION_BURN or an ``x-`` vendor value."""


class _Telling(SomModel):
    __schema_name__: ClassVar[str] = "telling-event"


class TransformActor(_Telling):
    """``transforms[].applied_by``: the audit actor shape."""

    actor_id: Str
    """The actor's id, a string."""
    actor_type: Str
    """The kind of actor, a string."""


class Transform(_Telling):
    """``transforms[]``: an edge reshape applied to the telling (append-only, ordered)."""

    transform_type: TransformType
    (
        "Governed-but-extensible registry (same model as Platform / framing_treatment); seed "
        "values CROP / TRIM / CAPTION_BURN; vendor values x-lowercase."
    )
    params: JsonObject | MISSING = MISSING
    (
        "Per-type payload (not generic from/to): CROP {aspect_ratio | geometry}, TRIM "
        "{time_range}, CAPTION_BURN {caption_ref | style}. Shapes settle with the registry."
    )
    applied_by: TransformActor
    """Audit actor shape (shared convention)."""
    applied_at: DateTimeStr
    """RFC 3339 date-time the transform was applied."""


class TellingEvent(_Telling, FamilyModel):
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
    (
        "Which telling event: telling.started, telling.ended or telling.exposed; it decides which "
        "exposure times are required."
    )
    telling_id: UuidStr
    """The telling's id, a UUID."""
    link_id: UuidStr
    """The link this Telling followed from — referenced, not duplicated"""
    exposure_start: DateTimeStr | MISSING = Field(default=MISSING, validate_default=True)
    (
        "RFC 3339 date-time the exposure started (immutable, event-stamped); required on "
        "telling.started and telling.exposed."
    )
    exposure_end: DateTimeStr | MISSING = Field(default=MISSING, validate_default=True)
    (
        "RFC 3339 date-time the exposure ended (immutable, event-stamped); required on "
        "telling.ended and telling.exposed, refused on telling.started."
    )
    scheduled_start: DateTimeStr | MISSING = MISSING
    """Mutable intended-air; never used to derive on-air state"""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
    transforms: list[Transform] | MISSING = MISSING
    """Application-ordered, append-only edge reshapes on this telling; none of them new media."""

    # The schema's conditionals, on the default too (they fire whatever else fails).
    _exposure = conditional(
        "message_type",
        {
            "telling.started": Then(required=("exposure_start",), refused=("exposure_end",)),
            "telling.ended": Then(required=("exposure_end",)),
            "telling.exposed": Then(required=("exposure_start", "exposure_end")),
        },
    )
