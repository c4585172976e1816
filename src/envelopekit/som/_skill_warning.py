"""The ``skill.warning.raised`` payload (``skill-warning.schema.json``)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from .._compat import MISSING
from .._violations import STRING_CONST
from ._types import Bool, Extensions, FamilyModel, SemVer, Str, UuidStr

__all__ = ["SkillWarning"]


class SkillWarning(FamilyModel):
    """The ``skill.warning.raised`` payload: the twelve-field warning a skill raises.

    Its time is the envelope's ``timestamp``: ``timestamp`` and ``instance_ref`` are refused
    here (``skill-warning.false_schema``).
    """

    __schema_name__: ClassVar[str] = "skill-warning"
    __false_schema__: ClassVar[frozenset[str]] = frozenset({"instance_ref", "timestamp"})

    warning_id: UuidStr
    """UUIDv7"""
    skill_id: Str
    """The id of the skill that raised the warning, a string."""
    skill_version: SemVer
    """The skill's version: ``x.y.z`` with ASCII digits."""
    story_id: Str
    """The story's id, a string."""
    scope: Str
    (
        "The firing level as {level}:{id} — link:{link_id} for destination-specific skills "
        "(Compliance Gate), asset:{asset_id} for system-level skills evaluating one asset, "
        "story:{story_id} for story-wide system-level skills. Never an instance_ref."
    )
    severity: Literal["hold", "flag", "inform"]
    (
        "Permanent lower-case carve-out (decision #13). hold: executor MUST withhold output on "
        "affected fields; flag: mark for review; inform: advisory"
    )
    rule_id: Str
    """The id of the rule that raised the warning, a string."""
    non_overridable: Bool
    """Whether the warning cannot be overridden, a boolean."""
    affected_fields: list[Str]
    """The fields the warning concerns, an array of strings."""
    detail: Str
    """The warning's detail, a string."""
    blocks: list[Str]
    """What the warning blocks, an array of strings."""
    skill_warning_ref: Str
    """A skill-warning reference, a string; SOM 1.0 does not define it further."""
    content_type: Str | MISSING = MISSING
    (
        "Governed render key added by decision #21 (e.g. sync.ai.banner); vendor-extended via "
        "extensions.com.{vendor}.*"
    )
    message_type: Annotated[Literal["skill.warning.raised"], STRING_CONST] | MISSING = MISSING
    """Suffixed form per SOM-049; rides on the wire for topic routing"""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
