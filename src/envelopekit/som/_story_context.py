"""The ``story.context`` payload (``story-context.schema.json``): a story's full snapshot."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .._compat import MISSING
from ._types import (
    Bool,
    DateTimeStr,
    Extensions,
    Integer,
    JsonArray,
    JsonObject,
    NonNegativeInteger,
    Number,
    SomModel,
    SomOpenModel,
    Str,
    StringOrObject,
    TamsSource,
    TimeRange,
    UnitNumber,
    UriStr,
    vendor_enum,
)

__all__ = [
    "TERMINAL_STORY_TYPES",
    "ActiveSkill",
    "Assertion",
    "AssertionTarget",
    "Asset",
    "AssetStatus",
    "AssetType",
    "AssetUsage",
    "AuthenticityCredential",
    "AuthorshipProvenance",
    "Collaboration",
    "ComplianceFlag",
    "ContentRef",
    "DeliverySpec",
    "EditorialGate",
    "EditorialSourceEntry",
    "GateBlock",
    "GovernmentApproval",
    "Lifecycle",
    "LifecyclePhase",
    "Locator",
    "MediaRange",
    "MediaRef",
    "PhaseOwner",
    "Premise",
    "Priority",
    "Relation",
    "ReviewState",
    "SkillsConfig",
    "StandardsClearance",
    "StoryContext",
    "StoryMeaning",
    "StoryTag",
    "StoryType",
]

_SCHEMA: Final = "story-context"

StoryType: TypeAlias = Literal["PLANNED", "ACTIVE", "KILLED", "SPIKED", "ARCHIVED", "ORPHAN"]
"""``story_type``; KILLED, SPIKED and ARCHIVED are terminal."""
LifecyclePhase: TypeAlias = Literal["DEVELOPING", "READY_TO_AIR", "BREAKING", "PUBLISHED"]
"""``lifecycle.phase`` (LIVE is derived from tellings, never stored)."""
AssetStatus: TypeAlias = Literal["READY", "IN_PRODUCTION", "PREPARED", "INVALIDATED"]
"""``assets[].status`` (FINALIZING was withdrawn at 1.0)."""

ASSET_TYPES: Final = (
    "VIDEO",
    "AUDIO",
    "GRAPHIC",
    "STILL",
    "CG",
    "SCRIPT",
    "PROMPTER",
    "LOWER_THIRD",
    "FULL_FRAME",
    "MAP",
    "SOCIAL_CARD",
    "TRANSCRIPT",
    "SUMMARY",
    "SOCIAL_POST",
    "ARTICLE",
    "ANALYSIS",
    "CUSTOM",
)
SOURCE_TYPES: Final = (
    "WIRE",
    "OFFICIAL",
    "FIELD_CREW",
    "POOL_FEED",
    "GOVERNMENT",
    "INTERNAL",
    "PRESS_RELEASE",
    "SCANNER",
    "USER_GENERATED",
    "SOCIAL",
    "ARCHIVE",
)

AssetType: TypeAlias = Annotated[
    str,
    PlainValidator(vendor_enum(*ASSET_TYPES)),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "enum": list(ASSET_TYPES)},
                {"type": "string", "pattern": "^x-[a-z0-9_]+$"},
            ]
        }
    ),
]
"""``asset_type``: one of the governed values or an ``x-`` vendor value."""

SourceType: TypeAlias = Annotated[
    str,
    PlainValidator(vendor_enum(*SOURCE_TYPES)),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "enum": list(SOURCE_TYPES)},
                {"type": "string", "pattern": "^x-[a-z0-9_]+$"},
            ]
        }
    ),
]
"""``editorial_source[].source_type``: a governed value or an ``x-`` vendor value."""

Text280: TypeAlias = Annotated[str, StringConstraints(strict=True, max_length=280)]
Text600: TypeAlias = Annotated[str, StringConstraints(strict=True, max_length=600)]
TagScheme: TypeAlias = Annotated[
    str,
    StringConstraints(
        strict=True, pattern=r"^(newsroom|iptc-mediatopic|com\.[a-z0-9-]+\.[a-z0-9-]+)$"
    ),
]
TagValue: TypeAlias = Annotated[str, StringConstraints(strict=True, min_length=1)]


class _Story(SomModel):
    __schema_name__: ClassVar[str] = _SCHEMA


class _OpenStory(SomOpenModel):
    __schema_name__: ClassVar[str] = _SCHEMA


# --- lifecycle, priority, premise ------------------------------------------------------------


class PhaseOwner(_Story):
    """``lifecycle.phase_owner``: who owns the current phase."""

    user_id: Str | MISSING = MISSING
    display_name: Str | MISSING = MISSING
    role: Str | MISSING = MISSING


class Lifecycle(_Story):
    """``lifecycle``: present exactly when ``story_type`` is ACTIVE."""

    phase: LifecyclePhase
    phase_entered_at: DateTimeStr
    previous_phase: LifecyclePhase | MISSING = MISSING
    phase_owner: PhaseOwner | MISSING = MISSING


class Priority(_Story):
    """``priority``: the editorial priority level."""

    level: Literal["ROUTINE", "STANDARD", "HIGH", "URGENT", "FLASH"]
    reason: Str | MISSING = MISSING
    escalated_by: Str | MISSING = MISSING
    escalated_at: DateTimeStr | MISSING = MISSING


class Premise(_Story):
    """``premise``: the expected outcome and whether it changed."""

    expected_outcome: Str | MISSING = MISSING
    confidence: Literal["LOW", "MEDIUM", "HIGH"] | MISSING = MISSING
    premise_changed: Bool | MISSING = MISSING
    previous_outcome: Str | MISSING = MISSING
    actual_outcome: Str | MISSING = MISSING
    affected_assets: list[Str] | MISSING = MISSING
    change_detected_at: DateTimeStr | MISSING = MISSING
    change_detected_by: Str | MISSING = MISSING


# --- compliance --------------------------------------------------------------------------------


class Locator(_Story):
    """A non-TAMS media store reference."""

    store: Str
    ref: Str


def _required_any(model: SomModel, branches: tuple[tuple[str, ...], ...], message: str) -> None:
    """Raise ``anyOf`` (with ``required``) unless one branch has all its members present."""
    for branch in branches:
        if all(getattr(model, name) is not MISSING for name in branch):
            return
    raise PydanticCustomError("anyOf", message, {"also": "required"})


class MediaRange(_Story):
    """``compliance[].media_range``: a restricted stretch, by TAMS source or locator."""

    # The schema's rule, which `_source_or_locator` enforces.
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["source", "time_range"]},
                {"required": ["locator", "time_range"]},
            ]
        }
    )

    source: TamsSource | MISSING = MISSING
    locator: Locator | MISSING = MISSING
    time_range: TimeRange | MISSING = MISSING

    @model_validator(mode="after")
    def _source_or_locator(self) -> MediaRange:
        _required_any(
            self,
            (("source", "time_range"), ("locator", "time_range")),
            "A media_range needs a time_range and a source or a locator",
        )
        return self


class ComplianceFlag(_Story):
    """``compliance[]``: a compliance flag raised on the story."""

    flag_id: Str
    type: Str
    severity: Literal["LOW", "MEDIUM", "HIGH", "CRITICAL"]
    detail: Str
    jurisdiction: Str | MISSING = MISSING
    regulation_ref: Str | MISSING = MISSING
    raised_by: Str
    raised_at: DateTimeStr
    status: Literal["ACTIVE", "RESOLVED", "WAIVED"]
    media_range: MediaRange | MISSING = MISSING


# --- gates, sources ------------------------------------------------------------------------------


class GateBlock(_Story):
    """``editorial_gates[].blocks[]``: what a gate holds (the object form)."""

    kind: Literal["ASSET", "PHASE"]
    ref: Str


class EditorialGate(_Story):
    """``editorial_gates[]``: an editorial gate and what it blocks."""

    gate_id: Str
    gate_type: Str
    status: Literal["PENDING", "APPROVED", "REJECTED"]
    required_by_skill: Str | MISSING = MISSING
    gate_rule_id: Str | MISSING = MISSING
    resolution_event_type: Str | MISSING = MISSING
    assigned_to: Str | MISSING = MISSING
    # A bare string is DEPRECATED but still valid at 1.0.
    blocks: list[GateBlock | Str] | MISSING = MISSING


class EditorialSourceEntry(_Story):
    """``editorial_source[]``: a source the story's reporting relies on."""

    source_id: Str
    source_type: SourceType
    provider: Str
    credibility: Literal["TRUSTED", "VERIFIED", "ENDORSED", "UNVERIFIED"]
    received_at: DateTimeStr
    content_hash: Str | MISSING = MISSING


# --- provenance and assertions -----------------------------------------------------------------


class ReviewState(_Story):
    """``review``: the human-review record (REJECTED entries are kept, not deleted)."""

    state: Literal["PENDING", "CONFIRMED", "REJECTED"]
    reviewer: Str | MISSING = MISSING
    reviewed_at: DateTimeStr | MISSING = MISSING


class AuthorshipProvenance(_Story):
    """``provenance``: who or what authored an output (HUMAN carries no model)."""

    # `model` and `model_version` are the schema's names. The schema's conditional is what
    # `_human_has_no_model` enforces.
    model_config = ConfigDict(
        protected_namespaces=(),
        json_schema_extra={
            "allOf": [
                {
                    "if": {"properties": {"author": {"const": "HUMAN"}}},
                    "then": {
                        "not": {"anyOf": [{"required": ["model"]}, {"required": ["model_version"]}]}
                    },
                }
            ]
        },
    )

    author: Literal["HUMAN", "MODEL"]
    model: Str | MISSING = MISSING
    model_version: Str | MISSING = MISSING
    confidence: UnitNumber | MISSING = MISSING
    generated_at: DateTimeStr | MISSING = MISSING
    input_sources: list[Str] | MISSING = MISSING
    prompt_hash: Str | MISSING = MISSING
    review: ReviewState | MISSING = MISSING

    @model_validator(mode="after")
    def _human_has_no_model(self) -> AuthorshipProvenance:
        if self.author == "HUMAN":
            for name in ("model", "model_version"):
                if getattr(self, name) is not MISSING:
                    raise PydanticCustomError(
                        "not",
                        "A HUMAN author carries no {name}",
                        {"name": name, "pointer": f"/{name}"},
                    )
        return self


class AssertionTarget(_Story):
    """``assertions[].target``: what a claim is about."""

    kind: Literal["ASSET", "LINK", "TELLING", "STORY"]
    id: Str


_CLAIM_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "FACT_CHECK": ("metric", "value"),
    "MATCH": ("story_id",),
    "DETECTION": ("detection_class", "verdict"),
}


class Assertion(_Story):
    """``assertions[]``: a claim about content (FACT_CHECK, DETECTION or MATCH)."""

    # The schema's conditionals, which `_claim_shape` enforces.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {
                        "properties": {"assertion_type": {"const": kind}},
                        "required": ["assertion_type"],
                    },
                    "then": {"properties": {"claim": {"required": list(keys)}}},
                }
                for kind, keys in _CLAIM_KEYS.items()
            ]
        }
    )

    assertion_id: Str
    assertion_type: Literal["FACT_CHECK", "DETECTION", "MATCH"]
    target: AssertionTarget
    claim: JsonObject
    attributed_to: Str | MISSING = MISSING
    asserted_at: DateTimeStr
    confidence: UnitNumber | MISSING = MISSING
    originated_from: Str | MISSING = MISSING
    review: ReviewState | MISSING = MISSING
    provenance: AuthorshipProvenance

    @model_validator(mode="after")
    def _claim_shape(self) -> Assertion:
        for key in _CLAIM_KEYS[self.assertion_type]:
            if key not in self.claim:
                raise PydanticCustomError(
                    "required",
                    "A {kind} claim requires '{key}'",
                    {"kind": self.assertion_type, "key": key, "pointer": f"/claim/{key}"},
                )
        return self


# --- assets ------------------------------------------------------------------------------------


class AssetUsage(_Story):
    """``assets[].usage[]``: a committed link of the asset to a destination."""

    link_id: Str
    destination_id: Str
    state: Literal["committed"]


class StandardsClearance(_Story):
    """``assets[].standards_clearance``."""

    status: Literal["CLEARED", "BLOCKED", "PENDING"] | MISSING = MISSING
    blocked_by: list[Str] | MISSING = MISSING
    last_reviewed: DateTimeStr | MISSING = MISSING


class DeliverySpec(_OpenStory):
    """``assets[].delivery_spec``: an open object; unknown members are kept as sent."""

    format: Str | MISSING = MISSING
    resolution: Str | MISSING = MISSING
    frame_rate: Number | MISSING = MISSING


class MediaRef(_Story):
    """``assets[].media_refs[]``: media by TAMS source or by locator."""

    # The schema's rule, which `_source_or_locator` enforces.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["source"]}, {"required": ["locator"]}]}
    )

    source: TamsSource | MISSING = MISSING
    locator: Locator | MISSING = MISSING
    label: Str | MISSING = MISSING
    time_range: TimeRange | MISSING = MISSING

    @model_validator(mode="after")
    def _source_or_locator(self) -> MediaRef:
        _required_any(self, (("source",), ("locator",)), "A media_ref needs a source or a locator")
        return self


class AuthenticityCredential(_Story):
    """``assets[].authenticity_credential``: the media-authenticity (C2PA) axis."""

    present: Bool
    standard: Str | MISSING = MISSING
    claim: Str | MISSING = MISSING
    validated_by: Str | MISSING = MISSING


class Asset(_Story):
    """``assets[]``: one asset of the story."""

    asset_id: Str
    asset_type: AssetType
    status: AssetStatus
    evidential_position: Literal["PRIMARY", "SECONDARY", "TERTIARY"] | MISSING = MISSING
    acquisition_state: Literal["CAPTURING", "CAPTURED"] | MISSING = MISSING
    derived_from: list[Str] | MISSING = MISSING
    produced_by: Str | MISSING = MISSING
    usage: list[AssetUsage] | MISSING = MISSING
    invalidated_by: Str | MISSING = MISSING
    standards_clearance: StandardsClearance | MISSING = MISSING
    delivery_spec: DeliverySpec | MISSING = MISSING
    media_refs: list[MediaRef] | MISSING = MISSING
    authenticity_credential: AuthenticityCredential | MISSING = MISSING
    framing_treatment: Str | MISSING = MISSING
    provenance: AuthorshipProvenance | MISSING = MISSING


# --- skills, tags, refs, relations ---------------------------------------------------------------


class ActiveSkill(_Story):
    """``skills_config.active_skills[]``."""

    skill_id: Str
    skill_version: Str
    skill_type: Literal["NEWSROOM", "VENDOR", "REFERENCE"]
    disclosure_level: Literal["L1", "L2", "L3"] | MISSING = MISSING
    migration_policy: Literal["HOT", "COLD", "GATED"] | MISSING = MISSING
    skill_priority: Literal["CRITICAL", "NORMAL", "LOW"] | MISSING = MISSING


class SkillsConfig(_Story):
    """``skills_config``: which skills run for the story (``broadcaster`` is refused)."""

    __false_schema__: ClassVar[frozenset[str]] = frozenset({"broadcaster"})

    newsroom: Str | MISSING = MISSING
    skills_spec_version: Str | MISSING = MISSING
    skill_executor_id: Str | MISSING = MISSING
    scope_context: Str | MISSING = MISSING
    active_skills: list[ActiveSkill] | MISSING = MISSING


class StoryTag(_Story):
    """``tags[]``: a subject-matter tag qualified by its scheme."""

    scheme: TagScheme
    value: TagValue
    label: Str | MISSING = MISSING


def _tag_key(tag: StoryTag) -> tuple[str, str, str | None]:
    return (tag.scheme, tag.value, None if tag.label is MISSING else tag.label)


def _unique_tags(tags: list[StoryTag]) -> list[StoryTag]:
    # JSON-value equality: every member is a string, so equal tags have equal keys.
    seen: set[tuple[str, str, str | None]] = set()
    for index, tag in enumerate(tags):
        key = _tag_key(tag)
        if key in seen:
            raise PydanticCustomError(
                "uniqueItems", "tags[{index}] repeats an earlier tag", {"index": index}
            )
        seen.add(key)
    return tags


class ContentRef(_Story):
    """``content_refs[]``: a reference to the story's body content."""

    uri: UriStr
    mime_type: Str | MISSING = MISSING
    content_format: Str | MISSING = MISSING
    placement: Str | MISSING = MISSING
    provider: Str | MISSING = MISSING
    role: Str | MISSING = MISSING
    source_id: Str | MISSING = MISSING


class Relation(_OpenStory):
    """``relations[]``: an open, versioned relation to another story."""

    relation_type: Str
    target_story_id: Str | MISSING = MISSING
    version: Integer | MISSING = Field(MISSING, alias="_version")
    created_at: DateTimeStr | MISSING = Field(MISSING, alias="_created_at")
    created_by: Str | MISSING = Field(MISSING, alias="_created_by")
    modified_at: DateTimeStr | MISSING = Field(MISSING, alias="_modified_at")
    modified_by: Str | MISSING = Field(MISSING, alias="_modified_by")
    history: JsonArray | MISSING = Field(MISSING, alias="_history")


class StoryMeaning(_Story):
    """``story_meaning``: the 5W1H kernel (each field at most 280 characters)."""

    who: Text280 | MISSING = MISSING
    what: Text280 | MISSING = MISSING
    when: Text280 | MISSING = MISSING
    where: Text280 | MISSING = MISSING
    why: Text280 | MISSING = MISSING
    how: Text280 | MISSING = MISSING
    summary: Text600 | MISSING = MISSING
    confidence: UnitNumber | MISSING = MISSING
    provenance_refs: list[Str] | MISSING = MISSING


class GovernmentApproval(_Story):
    """``government_approval``: the publication gate."""

    status: Literal[
        "NOT_REQUIRED", "REQUESTED", "UNDER_REVIEW", "APPROVED", "RETURNED_FOR_REVISION", "REJECTED"
    ]
    jurisdiction: Str | MISSING = MISSING


class Collaboration(_OpenStory):
    """``collaboration``: an open object; unknown members are kept as sent."""

    editing_version: Integer | MISSING = MISSING
    active_editors: JsonArray | MISSING = MISSING
    lock_status: Str | MISSING = MISSING


# --- the payload ---------------------------------------------------------------------------------


def _story_context_json_schema(schema: dict[str, Any]) -> None:
    schema["properties"]["tags"]["uniqueItems"] = True
    schema["allOf"] = [
        {
            "if": {"properties": {"story_type": {"const": "ACTIVE"}}, "required": ["story_type"]},
            "then": {"required": ["lifecycle"]},
            "else": {"not": {"required": ["lifecycle"]}},
        }
    ]


class StoryContext(_Story):
    """The ``story.context`` payload: the complete state of a story, never a delta.

    ``lifecycle`` is present exactly when ``story_type`` is ACTIVE. The retired names
    ``ai_enrichments``, ``instances``, ``broadcaster_id``, ``sources`` and ``content_ref`` are
    refused (``story-context.false_schema``).
    """

    # What `_lifecycle_iff_active` and `_unique_tags` enforce, as the schema writes it.
    model_config = ConfigDict(json_schema_extra=_story_context_json_schema)

    __false_schema__: ClassVar[frozenset[str]] = frozenset(
        {"ai_enrichments", "instances", "broadcaster_id", "sources", "content_ref"}
    )

    story_id: Str
    slug: Str
    headline: Str
    story_type: StoryType
    tags: Annotated[list[StoryTag], AfterValidator(_unique_tags)] | MISSING = MISSING
    lifecycle: Lifecycle | MISSING = MISSING
    sequence_number: NonNegativeInteger
    updated_at: DateTimeStr
    newsroom_id: Str | MISSING = MISSING
    story_owner: StringOrObject | MISSING = MISSING
    priority: Priority | MISSING = MISSING
    premise: Premise | MISSING = MISSING
    compliance: list[ComplianceFlag] | MISSING = MISSING
    editorial_gates: list[EditorialGate] | MISSING = MISSING
    story_meaning: StoryMeaning | MISSING = MISSING
    government_approval: GovernmentApproval | MISSING = MISSING
    editorial_source: list[EditorialSourceEntry] | MISSING = MISSING
    assets: list[Asset] | MISSING = MISSING
    skills_config: SkillsConfig | MISSING = MISSING
    content_refs: list[ContentRef] | MISSING = MISSING
    relations: list[Relation] | MISSING = MISSING
    collaboration: Collaboration | MISSING = MISSING
    extensions: Extensions | MISSING = MISSING
    assertions: list[Assertion] | MISSING = MISSING

    @model_validator(mode="after")
    def _lifecycle_iff_active(self) -> StoryContext:
        if self.story_type == "ACTIVE":
            if self.lifecycle is MISSING:
                raise PydanticCustomError(
                    "required", "An ACTIVE story requires a lifecycle", {"pointer": "/lifecycle"}
                )
        elif self.lifecycle is not MISSING:
            raise PydanticCustomError(
                "not",
                "Only an ACTIVE story carries a lifecycle (story_type is {story_type})",
                {"story_type": self.story_type, "pointer": "/lifecycle"},
            )
        return self

    @property
    def is_terminal(self) -> bool:
        """Whether the story is KILLED, SPIKED or ARCHIVED."""
        return self.story_type in TERMINAL_STORY_TYPES


TERMINAL_STORY_TYPES: Final = frozenset({"KILLED", "SPIKED", "ARCHIVED"})
"""The ``story_type`` values a story never leaves."""
