"""The ``system.audit`` payload (``system-audit.schema.json``): a governance audit record."""

from __future__ import annotations

from typing import ClassVar, Literal

from .._compat import MISSING
from ._types import DateTimeStr, SomModel, Str, UuidStr

__all__ = ["AuditActor", "AuditTarget", "SystemAudit"]


class _Audit(SomModel):
    __schema_name__: ClassVar[str] = "system-audit"


class AuditTarget(_Audit):
    """``target``: the link, asset or telling the action applies to."""

    kind: Literal["LINK", "ASSET", "TELLING"]
    id: Str


class AuditActor(_Audit):
    """``actor``: who or what acted."""

    actor_id: Str
    actor_type: Str


class SystemAudit(_Audit):
    """The ``system.audit`` payload: a clearance or suppression record.

    Unlike every other family it has no ``extensions``.
    """

    message_type: Literal["system.audit"] | MISSING = MISSING
    audit_id: UuidStr
    action: Literal["CLEARED", "SUPPRESSED", "WITHHELD", "OVERRIDDEN"]
    target: AuditTarget
    actor: AuditActor
    reason: Str | MISSING = MISSING
    recorded_at: DateTimeStr
