"""The ``link.*`` payloads (``link-event.schema.json``): an asset-to-destination link."""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

from pydantic import ConfigDict, Field

from .._compat import MISSING
from ._types import DateTimeStr, Extensions, FamilyModel, SomModel, Str, Then, UuidStr, conditional

__all__ = ["LinkEvent", "LinkMessageType", "Withdrawal"]

LinkMessageType: TypeAlias = Literal["link.committed", "link.gate_changed", "link.withdrawn"]
"""The three ``link.*`` message types."""


class _Link(SomModel):
    __schema_name__: ClassVar[str] = "link-event"


class Withdrawal(_Link):
    """``withdrawn``: who withdrew the link, and when."""

    withdrawn_by: Str
    """Who withdrew the link, a string."""
    withdrawn_at: DateTimeStr
    """RFC 3339 date-time the link was withdrawn."""
    reason: Str | MISSING = MISSING
    """Why the link was withdrawn, a string."""


class LinkEvent(_Link, FamilyModel):
    """The ``link.committed`` / ``link.gate_changed`` / ``link.withdrawn`` payload.

    ``link.committed`` requires ``committed_by`` and ``committed_at``; ``withdrawn`` is required
    on ``link.withdrawn`` and refused on the other two.
    """

    # The schema's conditionals, which `_committed` and `_withdrawn` enforce.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"message_type": {"const": "link.committed"}}},
                    "then": {"required": ["committed_by", "committed_at"]},
                },
                {
                    "if": {"properties": {"message_type": {"const": "link.withdrawn"}}},
                    "then": {"required": ["withdrawn"]},
                    "else": {"not": {"required": ["withdrawn"]}},
                },
            ]
        }
    )

    message_type: LinkMessageType
    """Which link event: link.committed, link.gate_changed or link.withdrawn."""
    link_id: UuidStr
    """The link's id, a UUID."""
    asset_id: Str
    """The linked asset's id, a string."""
    destination_id: Str
    """The linked destination's id, a string."""
    committed_by: Str | MISSING = Field(default=MISSING, validate_default=True)
    """Who committed the link, a string; required on link.committed."""
    committed_at: DateTimeStr | MISSING = Field(default=MISSING, validate_default=True)
    """RFC 3339 date-time the link was committed; required on link.committed."""
    compliance_gate_status: Literal["PENDING", "CLEARED", "BLOCKED"]
    """The link's compliance gate status: PENDING, CLEARED or BLOCKED."""
    withdrawn: Withdrawal | MISSING = Field(default=MISSING, validate_default=True)
    """Who withdrew the link, and when; required on link.withdrawn, refused on the other two."""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""

    # The schema's two conditionals, on the default too (they fire whatever else fails).
    _committed = conditional(
        "message_type", {"link.committed": Then(required=("committed_by", "committed_at"))}
    )
    _withdrawn = conditional(
        "message_type",
        {"link.withdrawn": Then(required=("withdrawn",))},
        otherwise=Then(refused=("withdrawn",)),
        refused="Only link.withdrawn carries withdrawn (message_type is {value})",
    )
