"""The ``system.audit`` payload (``system-audit.schema.json``): a governance audit record."""

from __future__ import annotations

from typing import ClassVar, Literal

from .._compat import MISSING
from ._types import DateTimeStr, FamilyModel, SomModel, Str, UuidStr

__all__ = ["AuditActor", "AuditTarget", "SystemAudit"]


class _Audit(SomModel):
    __schema_name__: ClassVar[str] = "system-audit"


class AuditTarget(_Audit):
    """``target``: the link, asset or telling the action applies to."""

    kind: Literal["LINK", "ASSET", "TELLING"]
    """What the action applies to: LINK, ASSET or TELLING."""
    id: Str
    """The id of that link, asset or telling, a string."""


class AuditActor(_Audit):
    """``actor``: who or what acted."""

    actor_id: Str
    """The actor's id, a string."""
    actor_type: Str
    """The kind of actor, a string."""


class SystemAudit(_Audit, FamilyModel):
    """The ``system.audit`` payload: a clearance or suppression record.

    Unlike every other family it has no ``extensions``.
    """

    message_type: Literal["system.audit"] | MISSING = MISSING
    """Always ``system.audit`` when present (optional)."""
    audit_id: UuidStr
    """The audit record's id, a UUID."""
    action: Literal["CLEARED", "SUPPRESSED", "WITHHELD", "OVERRIDDEN"]
    """What was done: CLEARED, SUPPRESSED, WITHHELD or OVERRIDDEN."""
    target: AuditTarget
    """What the action applies to; a suppression targets the held ASSET."""
    actor: AuditActor
    """Who or what acted: an object, never a flat ``actor_id``."""
    reason: Str | MISSING = MISSING
    """Why the action was taken, a string."""
    recorded_at: DateTimeStr
    """RFC 3339 date-time the action was recorded."""
