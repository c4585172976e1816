"""The ``delivery.media_available`` payload (``delivery-media-available.schema.json``)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict

from .._compat import MISSING
from .._violations import STRING_CONST
from ._types import (
    DateTimeStr,
    Extensions,
    FamilyModel,
    SomModel,
    Str,
    TamsSource,
    TimeRange,
    UuidStr,
    any_of_required,
)

__all__ = ["DeliveryLocator", "DeliveryMediaAvailable"]


class _Delivery(SomModel):
    __schema_name__: ClassVar[str] = "delivery-media-available"


class DeliveryLocator(_Delivery):
    """``locator``: a non-TAMS media store reference."""

    store: Str
    """The non-TAMS media store holding the media, a string."""
    ref: Str
    """The media's reference in that store (a MAM path, S3 key, CMS id ...), a string."""


class DeliveryMediaAvailable(_Delivery, FamilyModel):
    """The ``delivery.media_available`` payload: media arrived in a store.

    It names the media by a TAMS ``source``, a ``locator``, or both; never neither.
    """

    # The schema's rule, which `_source_or_locator` enforces.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["source"]}, {"required": ["locator"]}]}
    )

    message_type: Annotated[Literal["delivery.media_available"], STRING_CONST]
    """Always ``delivery.media_available``."""
    delivery_id: UuidStr
    """The delivery's id, a UUID."""
    asset_id: Str
    """The id of the asset the media belongs to, a string."""
    source: TamsSource | MISSING = MISSING
    (
        "Fully-qualified TAMS Source URI — tams://store/id; resolves across remote/second-hand "
        "stores. Replaces flow_id (Source re-key 29 Jun)."
    )
    time_range: TimeRange | MISSING = MISSING
    (
        "Optional time range, or list of ranges. Against a TAMS source, ranges are onto the Source "
        "timeline. Against a locator, ranges are offset from the referenced file's own zero: a SOM "
        "locator points at a stored file, not a conform against embedded source timecode, so the "
        "ten-hour-start and source-versus-record reconciliation problem does not arise. Where a "
        "non-TAMS store carries its own internal timing the range is still offset from the file's "
        "zero, never from an embedded label — which keeps the door open for stores that segment "
        "natively."
    )
    arrived_in: Str
    """Receiving system (system_id)"""
    arrived_at: DateTimeStr
    """RFC 3339 date-time the media arrived."""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
    locator: DeliveryLocator | MISSING = MISSING
    """Non-TAMS media store reference (mirrors media_refs[].locator)."""

    _source_or_locator = any_of_required(
        (("source",), ("locator",)), "A delivery needs a source or a locator"
    )
