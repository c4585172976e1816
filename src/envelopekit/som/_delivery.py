"""The ``delivery.media_available`` payload (``delivery-media-available.schema.json``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from .._compat import MISSING
from ._types import DateTimeStr, Extensions, SomModel, Str, TamsSource, TimeRange, UuidStr

__all__ = ["DeliveryLocator", "DeliveryMediaAvailable"]


class _Delivery(SomModel):
    __schema_name__: ClassVar[str] = "delivery-media-available"


class DeliveryLocator(_Delivery):
    """``locator``: a non-TAMS media store reference."""

    store: Str
    ref: Str


class DeliveryMediaAvailable(_Delivery):
    """The ``delivery.media_available`` payload: media arrived in a store.

    It names the media by a TAMS ``source``, a ``locator``, or both; never neither.
    """

    # The schema's rule, which `_source_or_locator` enforces.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["source"]}, {"required": ["locator"]}]}
    )

    message_type: Literal["delivery.media_available"]
    delivery_id: UuidStr
    asset_id: Str
    source: TamsSource | MISSING = MISSING
    time_range: TimeRange | MISSING = MISSING
    arrived_in: Str
    arrived_at: DateTimeStr
    extensions: Extensions | MISSING = MISSING
    locator: DeliveryLocator | MISSING = MISSING

    @model_validator(mode="after")
    def _source_or_locator(self) -> DeliveryMediaAvailable:
        if self.source is MISSING and self.locator is MISSING:
            raise PydanticCustomError(
                "anyOf", "A delivery needs a source or a locator", {"also": "required"}
            )
        return self
