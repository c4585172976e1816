"""The ``skill.warning.raised`` payload (``skill-warning.schema.json``)."""

from __future__ import annotations

from typing import ClassVar, Literal

from .._compat import MISSING
from ._types import Bool, Extensions, SemVer, SomModel, Str, UuidStr

__all__ = ["SkillWarning"]


class SkillWarning(SomModel):
    """The ``skill.warning.raised`` payload.

    Its time is the envelope's ``timestamp``: ``timestamp`` and ``instance_ref`` are refused
    here (``skill-warning.false_schema``).
    """

    __schema_name__: ClassVar[str] = "skill-warning"
    __false_schema__: ClassVar[frozenset[str]] = frozenset({"instance_ref", "timestamp"})

    warning_id: UuidStr
    skill_id: Str
    skill_version: SemVer
    story_id: Str
    scope: Str
    severity: Literal["hold", "flag", "inform"]
    rule_id: Str
    non_overridable: Bool
    affected_fields: list[Str]
    detail: Str
    blocks: list[Str]
    skill_warning_ref: Str
    content_type: Str | MISSING = MISSING
    message_type: Literal["skill.warning.raised"] | MISSING = MISSING
    extensions: Extensions | MISSING = MISSING
