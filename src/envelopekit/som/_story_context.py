"""The ``story.context`` payload (``story-context.schema.json``): a story's full snapshot."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Annotated, Any, ClassVar, Final, Literal, TypeAlias, cast

from pydantic import (
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)

from .._compat import MISSING
from .._failfast import FIRST_FAILURE_READERS
from .._json import json_identity
from .._violations import STRING_CONST, joined, rule_error
from ._types import (
    Bool,
    DateTimeStr,
    Extensions,
    FamilyModel,
    Integer,
    JsonArray,
    JsonObject,
    NoBranch,
    NonNegativeInteger,
    Number,
    SomModel,
    SomOpenModel,
    Str,
    StringOrObject,
    TamsSource,
    Then,
    TimeRange,
    UnitNumber,
    UriStr,
    VendorEnum,
    any_of_required,
    conditional,
)

__all__ = [
    "CLAIM_KEYS",
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

AssetType: TypeAlias = Annotated[str, VendorEnum(*ASSET_TYPES)]
"""``asset_type``: one of the governed values or an ``x-`` vendor value."""

SourceType: TypeAlias = Annotated[str, VendorEnum(*SOURCE_TYPES)]
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
    """The phase owner's user id, a string."""
    display_name: Str | MISSING = MISSING
    """The phase owner's display name, a string."""
    role: Str | MISSING = MISSING
    """The phase owner's role, a string."""


class Lifecycle(_Story):
    """``lifecycle``: present exactly when ``story_type`` is ACTIVE."""

    phase: LifecyclePhase
    (
        "The story's current phase: DEVELOPING, READY_TO_AIR, BREAKING or PUBLISHED (LIVE is "
        "derived, never stored)."
    )
    phase_entered_at: DateTimeStr
    """RFC 3339 date-time the story entered its current phase."""
    previous_phase: LifecyclePhase | MISSING = MISSING
    """The phase the story was in before the current one (the same values as ``phase``)."""
    phase_owner: PhaseOwner | MISSING = MISSING
    """Who owns the current phase."""


class Priority(_Story):
    """``priority``: the editorial priority level."""

    level: Literal["ROUTINE", "STANDARD", "HIGH", "URGENT", "FLASH"]
    """The priority level: ROUTINE, STANDARD, HIGH, URGENT or FLASH."""
    reason: Str | MISSING = MISSING
    """Why the story has this priority, a string."""
    escalated_by: Str | MISSING = MISSING
    """Who escalated the priority, a string."""
    escalated_at: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time the priority was escalated."""


class Premise(_Story):
    """``premise``: the expected outcome and whether it changed."""

    expected_outcome: Str | MISSING = MISSING
    """The outcome the story expects, a string."""
    confidence: Literal["LOW", "MEDIUM", "HIGH"] | MISSING = MISSING
    """Confidence in the expected outcome: LOW, MEDIUM or HIGH."""
    premise_changed: Bool | MISSING = MISSING
    """Whether the premise has changed, a boolean."""
    previous_outcome: Str | MISSING = MISSING
    """The expected outcome before the premise changed, a string."""
    actual_outcome: Str | MISSING = MISSING
    """The outcome that actually happened, a string."""
    affected_assets: list[Str] | MISSING = MISSING
    """The assets the premise change affects, an array of strings."""
    change_detected_at: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time the premise change was detected."""
    change_detected_by: Str | MISSING = MISSING
    """Who or what detected the premise change, a string."""


# --- compliance --------------------------------------------------------------------------------


class Locator(_Story):
    """A non-TAMS media store reference."""

    store: Str
    """The non-TAMS media store holding the media, a string."""
    ref: Str
    """The media's reference in that store (a MAM path, S3 key, CMS id ...), a string."""


class MediaRange(_Story):
    """``compliance[].media_range``: a restricted stretch of an asset's media.

    It needs a ``time_range`` and a TAMS ``source``, a ``locator``, or both.
    """

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
    """Fully-qualified TAMS Source URI — tams://store/id."""
    locator: Locator | MISSING = MISSING
    """Non-TAMS media store reference."""
    time_range: TimeRange | MISSING = MISSING
    """TAMS time range (or list) for the restricted stretch."""

    _source_or_locator = any_of_required(
        (("source", "time_range"), ("locator", "time_range")),
        "A media_range needs a time_range and a source or a locator",
    )


class ComplianceFlag(_Story):
    """``compliance[]``: a compliance flag raised on the story."""

    flag_id: Str
    """The flag's id, a string."""
    type: Str
    """The kind of flag, a free string (e.g. LEGAL_REVIEW, MINOR_INVOLVED, DEFAMATION_RISK)."""
    severity: Literal["LOW", "MEDIUM", "HIGH", "CRITICAL"]
    """The flag's severity: LOW, MEDIUM, HIGH or CRITICAL."""
    detail: Str
    """The flag's detail, a string."""
    jurisdiction: Str | MISSING = MISSING
    """The jurisdiction the flag applies in, a string."""
    regulation_ref: Str | MISSING = MISSING
    """A reference to the regulation concerned, a string."""
    raised_by: Str
    """Who or what raised the flag, a string."""
    raised_at: DateTimeStr
    """RFC 3339 date-time the flag was raised."""
    status: Literal["ACTIVE", "RESOLVED", "WAIVED"]
    """The flag's status: ACTIVE, RESOLVED or WAIVED."""
    media_range: MediaRange | MISSING = MISSING
    (
        "CONFIRMED (v0.3.1, Source re-key 29 Jun): flags a restricted stretch of the asset's media "
        "by Source URI + time range (was flow_id). The what/why/type live on the compliance flag. "
        "NOTE: a re-edit mints new TAMS media, so this pin does not automatically survive "
        "re-editing; the fuller structured-restriction shape is settled after the lock."
    )


# --- gates, sources ------------------------------------------------------------------------------


class GateBlock(_Story):
    """``editorial_gates[].blocks[]``: what a gate holds (the object form)."""

    kind: Literal["ASSET", "PHASE"]
    """What the gate holds: ASSET or PHASE."""
    ref: Str
    """The held thing: an ``asset_id`` for ASSET, a lifecycle-phase token for PHASE."""


GateBlockItem: TypeAlias = Annotated[GateBlock | Str | NoBranch, Field(union_mode="left_to_right")]
"""``editorial_gates[].blocks[]``: a :class:`GateBlock`, or a bare string (DEPRECATED)."""


class EditorialGate(_Story):
    """``editorial_gates[]``: an editorial gate and what it blocks."""

    gate_id: Str
    """The gate's id, a string."""
    gate_type: Str
    """The kind of gate, a free string."""
    status: Literal["PENDING", "APPROVED", "REJECTED"]
    """The gate's status: PENDING, APPROVED or REJECTED."""
    required_by_skill: Str | MISSING = MISSING
    """The skill that requires the gate, a string."""
    gate_rule_id: Str | MISSING = MISSING
    """The id of the rule behind the gate, a string."""
    resolution_event_type: Str | MISSING = MISSING
    """The event type that resolves the gate, a string."""
    assigned_to: Str | MISSING = MISSING
    """Who the gate is assigned to, a string."""
    # A bare string is DEPRECATED but still valid at 1.0.
    blocks: list[GateBlockItem] | MISSING = MISSING
    (
        "Contract restored (v0.3.2; was a bare string array — dropped wording). Names the things "
        "this gate holds: {kind ASSET, ref asset_id} or {kind PHASE, ref lifecycle-phase token}, "
        "reusing the UPPER target-kind vocabulary. Bare strings DEPRECATED (accepted for migration "
        "only)."
    )


class EditorialSourceEntry(_Story):
    """``editorial_source[]``: a source the story's reporting relies on."""

    source_id: Str
    """The source's id, a string; ``content_refs[].source_id`` refers to it."""
    source_type: SourceType
    """The kind of source: a governed value (WIRE, OFFICIAL ...) or an ``x-`` vendor value."""
    provider: Str
    """Who provided the source, a string."""
    credibility: Literal["TRUSTED", "VERIFIED", "ENDORSED", "UNVERIFIED"]
    """The source's credibility: TRUSTED, VERIFIED, ENDORSED or UNVERIFIED."""
    received_at: DateTimeStr
    """RFC 3339 date-time the source was received."""
    content_hash: Str | MISSING = MISSING
    """A hash of the source's content, a string."""


# --- provenance and assertions -----------------------------------------------------------------


class ReviewState(_Story):
    """``review``: the human-review record (REJECTED entries are kept, not deleted)."""

    state: Literal["PENDING", "CONFIRMED", "REJECTED"]
    """PENDING, CONFIRMED or REJECTED; a REJECTED entry is marked, not deleted."""
    reviewer: Str | MISSING = MISSING
    """Audit actor_id shape"""
    reviewed_at: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time of the review."""


class AuthorshipProvenance(_Story):
    """``provenance``: who or what authored an output (HUMAN carries no model)."""

    # `model` and `model_version` are the schema's names. The schema's conditional is what
    # `_human_has_no_model` enforces: a field validator, run on the default too, since a model
    # validator would not run after another member's error (the schema's `not` fires whatever
    # else fails). A missing or invalid author is absent from `info.data`: no rule is applied.
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
    """HUMAN or MODEL; a HUMAN author carries no ``model`` or ``model_version``."""
    model: Str | MISSING = Field(default=MISSING, validate_default=True)
    """The model that authored the output, a string; refused when ``author`` is HUMAN."""
    model_version: Str | MISSING = Field(default=MISSING, validate_default=True)
    """The version of that model, a string; refused when ``author`` is HUMAN."""
    confidence: UnitNumber | MISSING = MISSING
    (
        "Confidence from 0 to 1 inclusive; optional and asset-type-specific (generative free text "
        "has no calibrated confidence)."
    )
    generated_at: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time the output was generated."""
    input_sources: list[Str] | MISSING = MISSING
    """What the output was generated from, an array of strings."""
    prompt_hash: Str | MISSING = MISSING
    """A hash of the prompt, a string."""
    review: ReviewState | MISSING = MISSING
    """The human-review record of the output."""

    _human_has_no_model = conditional(
        "author",
        {"HUMAN": Then(refused=("model", "model_version"))},
        refused="A HUMAN author carries no {member}",
    )


class AssertionTarget(_Story):
    """``assertions[].target``: what a claim is about."""

    kind: Literal["ASSET", "LINK", "TELLING", "STORY"]
    """What kind of thing the claim is about: ASSET, LINK, TELLING or STORY."""
    id: Str
    """The id of that asset, link, telling or story, a string."""


CLAIM_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "FACT_CHECK": ("metric", "value"),
    "MATCH": ("story_id",),
    "DETECTION": ("detection_class", "verdict"),
}
"""The keys ``claim`` holds for each ``assertion_type`` (the schema's ``if``/``then``)."""


class Assertion(_Story):
    """``assertions[]``: a claim about content (FACT_CHECK, DETECTION or MATCH)."""

    # The schema's conditionals, which `_claim_shape` enforces: a field validator, since a model
    # validator would not run after another member's error. An invalid assertion_type is
    # absent from `info.data`: no rule is applied (the schema's `if` fails).
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
                for kind, keys in CLAIM_KEYS.items()
            ]
        }
    )

    assertion_id: Str
    """The assertion's id, a string."""
    assertion_type: Literal["FACT_CHECK", "DETECTION", "MATCH"]
    (
        "The kind of claim: FACT_CHECK, DETECTION or MATCH; it selects the members ``claim`` "
        "requires."
    )
    target: AssertionTarget
    (
        "What the claim is about. Target kinds are the audit target set (LINK/ASSET/TELLING) plus "
        "STORY. STORY has no audit counterpart today — adding it to the audit target set is "
        "proposed so the two vocabularies converge; until that lands this set is deliberately the "
        "wider of the two."
    )
    claim: JsonObject
    (
        "Typed claim payload, per assertion_type: FACT_CHECK {metric, value} — skills grip on "
        "typed fields, not prose; DETECTION {detection_class, verdict, ...} — what was looked for "
        "and the finding, with per-detector fields extending underneath and governed by the "
        "registry; MATCH {story_id} — the proposed story. The assertion envelope already carries "
        "the subject (target), the method (provenance), the score (confidence) and the editorial "
        "act (review), so the claim seeds only what those cannot say."
    )
    attributed_to: Str | MISSING = MISSING
    """Who made the underlying claim (e.g. FEMA Director)"""
    asserted_at: DateTimeStr
    """RFC 3339 date-time of the assertion."""
    confidence: UnitNumber | MISSING = MISSING
    """The assertion's score, a number from 0 to 1 inclusive."""
    originated_from: Str | MISSING = MISSING
    """Ref to the source transcript/asset the claim came from"""
    review: ReviewState | MISSING = MISSING
    (
        "The editorial review of the claim; a MATCH is a proposal until ``review.state`` is "
        "CONFIRMED."
    )
    provenance: AuthorshipProvenance
    """The method: who or what produced the assertion."""

    @field_validator("claim")
    @classmethod
    def _claim_shape(cls, claim: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        kind = info.data.get("assertion_type")
        for key in CLAIM_KEYS.get(kind or "", ()):
            if key not in claim:
                raise rule_error("required", f"A {kind} claim requires '{key}'", pointer=f"/{key}")
        return claim


# --- assets ------------------------------------------------------------------------------------


class AssetUsage(_Story):
    """``assets[].usage[]``: a committed link of the asset to a destination."""

    link_id: Str
    """The committed link's id, a string (not required to be a UUID here)."""
    destination_id: Str
    """The link's destination, a string."""
    state: Annotated[Literal["committed"], STRING_CONST]
    """Always ``committed`` (lower case): the index holds committed links only."""


class StandardsClearance(_Story):
    """``assets[].standards_clearance``: whether the asset is cleared against standards."""

    status: Literal["CLEARED", "BLOCKED", "PENDING"] | MISSING = MISSING
    """The clearance status: CLEARED, BLOCKED or PENDING."""
    blocked_by: list[Str] | MISSING = MISSING
    """What blocks the clearance, an array of strings."""
    last_reviewed: DateTimeStr | MISSING = MISSING
    """RFC 3339 date-time of the last review."""


class DeliverySpec(_OpenStory):
    """``assets[].delivery_spec``: an open object; unknown members are kept as sent."""

    format: Str | MISSING = MISSING
    """The delivery format, a string."""
    resolution: Str | MISSING = MISSING
    """The delivery resolution, a string."""
    frame_rate: Number | MISSING = MISSING
    """The delivery frame rate, a number."""


class MediaRef(_Story):
    """``assets[].media_refs[]``: media by TAMS source or by locator."""

    # The schema's rule, which `_source_or_locator` enforces.
    model_config = ConfigDict(
        json_schema_extra={"anyOf": [{"required": ["source"]}, {"required": ["locator"]}]}
    )

    source: TamsSource | MISSING = MISSING
    (
        "Fully-qualified TAMS Source URI — tams://store/id; resolves across remote/second-hand "
        "stores."
    )
    locator: Locator | MISSING = MISSING
    """Non-TAMS media store reference."""
    label: Str | MISSING = MISSING
    """A label for the media reference, a string."""
    time_range: TimeRange | MISSING = MISSING
    """Optional TAMS time range, or list of ranges, onto the Source."""

    _source_or_locator = any_of_required(
        (("source",), ("locator",)), "A media_ref needs a source or a locator"
    )


class AuthenticityCredential(_Story):
    """``assets[].authenticity_credential``: the media-authenticity (C2PA) axis."""

    present: Bool
    """Whether a credential is present; ``false`` is recorded, not hidden."""
    standard: Str | MISSING = MISSING
    """The credential's standard (e.g. C2PA), a string."""
    claim: Str | MISSING = MISSING
    """The credential's claim, a string."""
    validated_by: Str | MISSING = MISSING
    """Who or what validated the credential, a string."""


class Asset(_Story):
    """``assets[]``: one asset of the story."""

    asset_id: Str
    """The asset's id, a string."""
    asset_type: AssetType
    (
        "TRANSCRIPT locked at v0.3.1 (29 Jun; the 30 Jun re-cut omitted it — carried here). "
        "SUMMARY/SOCIAL_POST/ARTICLE/ANALYSIS promoted from enrichment_type at v0.3.2 (AI-outputs "
        "refactor; the Telling test: publishes → needs a Telling → is an Asset). PROMPTER "
        "duplication resolved — it now lives here only. Direction: governed-but-extensible "
        "registry (same model as Platform / framing_treatment); vendor values keep the x- prefix."
    )
    status: AssetStatus
    (
        "Editorial-state only (decision #16). LIVE/AIRED are DERIVED from the Telling, never "
        "stored here Distinct from acquisition_state, which is primary-assets-only."
    )
    evidential_position: Literal["PRIMARY", "SECONDARY", "TERTIARY"] | MISSING = MISSING
    """Voice-count criterion (decision #22); single-reporter package defaults TERTIARY"""
    acquisition_state: Literal["CAPTURING", "CAPTURED"] | MISSING = MISSING
    """Primary assets only; REOPENED is an event, not a stored value (decision #16)"""
    derived_from: list[Str] | MISSING = MISSING
    """EDITORIAL lineage only; computational/format relationships belong in delivery_spec"""
    produced_by: Str | MISSING = MISSING
    """Who or what produced the asset, a string."""
    usage: list[AssetUsage] | MISSING = MISSING
    (
        "Asset-side back-edge index (decision #3); committed-only, fail-closed modify-gate; "
        "maintenance semantics per §5"
    )
    invalidated_by: Str | MISSING = MISSING
    """What invalidated the asset, a string."""
    standards_clearance: StandardsClearance | MISSING = MISSING
    """The asset's standards clearance."""
    delivery_spec: DeliverySpec | MISSING = MISSING
    """Delivery parameters (format, resolution, frame rate): an open object."""
    media_refs: list[MediaRef] | MISSING = MISSING
    (
        "CONFIRMED (v0.3.1, Source re-key 29 Jun; lazy-consensus window to 1 Jul): the "
        "media_source leg. TAMS media referenced by a fully-qualified Source URI (tams://store/id) "
        "+ optional time range(s); non-TAMS via locator. One of source/locator required. flow_id "
        "removed — SOM references Source + time, not Flow."
    )
    authenticity_credential: AuthenticityCredential | MISSING = MISSING
    (
        "Media-authenticity axis (C2PA). Distinct from credibility. present:false is recorded, not "
        "hidden."
    )
    framing_treatment: Str | MISSING = MISSING
    (
        "Flat governed per-newsroom registry key (UPPER_SNAKE canonical, x-<lowercase> vendor). "
        "SECONDARY/TERTIARY assets; single value. The governed registry itself is not yet "
        "published — see spec/open-register.md."
    )
    provenance: AuthorshipProvenance | MISSING = MISSING
    """Who or what authored the asset: HUMAN or MODEL."""


# --- skills, tags, refs, relations ---------------------------------------------------------------


class ActiveSkill(_Story):
    """``skills_config.active_skills[]``: a skill active for the story."""

    skill_id: Str
    """The skill's id, a string."""
    skill_version: Str
    """The skill's version, a string (no pattern here)."""
    skill_type: Literal["NEWSROOM", "VENDOR", "REFERENCE"]
    """The kind of skill: NEWSROOM, VENDOR or REFERENCE."""
    disclosure_level: Literal["L1", "L2", "L3"] | MISSING = MISSING
    """The disclosure level: L1, L2 or L3."""
    migration_policy: Literal["HOT", "COLD", "GATED"] | MISSING = MISSING
    """The migration policy: HOT, COLD or GATED."""
    skill_priority: Literal["CRITICAL", "NORMAL", "LOW"] | MISSING = MISSING
    """The skill's priority: CRITICAL, NORMAL or LOW."""


class SkillsConfig(_Story):
    """``skills_config``: which skills run for the story (``broadcaster`` is refused)."""

    __false_schema__: ClassVar[frozenset[str]] = frozenset({"broadcaster"})

    newsroom: Str | MISSING = MISSING
    """Renamed from skills_config.broadcaster (decision #12)"""
    skills_spec_version: Str | MISSING = MISSING
    """The skills specification version, a string."""
    skill_executor_id: Str | MISSING = MISSING
    """The skill executor's id, a string."""
    scope_context: Str | MISSING = MISSING
    """The skills' scope context, a string; SOM 1.0 does not define it further."""
    active_skills: list[ActiveSkill] | MISSING = MISSING
    """The skills active for the story."""


class StoryTag(_Story):
    """``tags[]``: a subject-matter tag qualified by its scheme."""

    scheme: TagScheme
    (
        "Vocabulary the value belongs to. newsroom is a house-local desk tag. iptc-mediatopic is "
        "an IPTC Media Topic identifier, the broadcast-standard taxonomy. com.{vendor}.{name} "
        "carries a vendor or newsroom-system vocabulary, following the same vendor carve-out the "
        "extensions object uses. Governed-but-extensible: a new first-class scheme is a registry "
        "addition, a vendor scheme needs no registry."
    )
    value: TagValue
    (
        "The tag itself. Lowercase for the newsroom scheme, for example sport or politics; the "
        "numeric topic identifier for iptc-mediatopic. Deliberately unconstrained beyond "
        "non-empty, because the scheme namespace is what is governed and the value vocabulary "
        "belongs to the scheme owner."
    )
    label: Str | MISSING = MISSING
    (
        "Optional human-readable label for an opaque identifier, since an IPTC topic number means "
        "nothing on a dashboard. Display only: never resolve a trigger policy on this."
    )


def _tag_key(tag: StoryTag) -> tuple[str, str, str | None]:
    return (tag.scheme, tag.value, None if tag.label is MISSING else tag.label)


def _unique_tags(tags: list[StoryTag]) -> list[StoryTag]:
    # JSON-value equality: every member is a string, so equal tags have equal keys.
    seen: set[tuple[str, str, str | None]] = set()
    for index, tag in enumerate(tags):
        key = _tag_key(tag)
        if key in seen:
            raise rule_error("uniqueItems", f"tags[{index}] repeats an earlier tag")
        seen.add(key)
    return tags


def _tags_unique_as_sent(tags: Any, handler: ValidatorFunctionWrapHandler) -> list[StoryTag]:
    """``_unique_tags``, and on the tags as sent when one of them is invalid.

    The schema's ``uniqueItems`` holds or fails whatever else the items fail; the fast path
    (``_twin``) reads this as ``_unique_tags`` after the list, as it only takes valid tags.
    """
    try:
        found = handler(tags)
    except ValidationError as error:
        if isinstance(tags, list):
            _refuse_a_repeat(error, tags, map(json_identity, cast("list[object]", tags)))
        raise
    checked: list[StoryTag] = found  # not typing.cast, a call
    return _unique_tags(checked)


def _tags_unique_as_read(tags: Any, handler: ValidatorFunctionWrapHandler) -> list[StoryTag]:
    """``_tags_unique_as_sent`` where the list stops at its first invalid tag (large messages).

    The tags before it are valid, and an invalid tag is equal to no valid one: a repeat among
    the tags read is among those before it (``_failfast.FIRST_FAILURE_READERS``). A valid tag
    read from JSON is an object of strings, whose members Python compares as JSON Schema does.
    """
    try:
        found = handler(tags)
    except ValidationError as error:
        if isinstance(tags, list):
            at = [line["loc"][0] for line in error.errors(include_url=False) if line["loc"]]
            valid = cast("list[object]", tags)[: min((i for i in at if type(i) is int), default=0)]
            keys: list[Hashable] = (
                list(map(frozenset, map(dict.items, cast("list[dict[str, str]]", valid))))
                if set(map(type, valid)) <= {dict}
                else list(map(json_identity, valid))
            )
            if len(set(keys)) < len(keys):
                _refuse_a_repeat(error, tags, keys)
        raise
    checked: list[StoryTag] = found
    return _unique_tags(checked)


def _refuse_a_repeat(error: ValidationError, tags: list[Any], keys: Iterable[Hashable]) -> None:
    """Raise ``error`` with ``uniqueItems`` at the first of ``keys`` (the tags') seen before."""
    seen: set[Hashable] = set()
    for index, key in enumerate(keys):
        if key in seen:
            refused = rule_error("uniqueItems", f"tags[{index}] repeats an earlier tag")
            raise joined(error, refused, tags) from None
        seen.add(key)


FIRST_FAILURE_READERS[_tags_unique_as_sent] = _tags_unique_as_read


class ContentRef(_Story):
    """``content_refs[]``: a reference to the story's body content."""

    uri: UriStr
    """Where the content is: an RFC 3986 absolute URI."""
    mime_type: Str | MISSING = MISSING
    """The content's MIME type, a string."""
    content_format: Str | MISSING = MISSING
    """The content's format, a string (e.g. ``ap-som-body-json-v1``)."""
    placement: Str | MISSING = MISSING
    """The content's placement, a string."""
    provider: Str | MISSING = MISSING
    """Who provides the content, a string."""
    role: Str | MISSING = MISSING
    """The content's role, a string."""
    source_id: Str | MISSING = MISSING
    """The ``editorial_source[].source_id`` the content comes from, a string."""


class Relation(_OpenStory):
    """``relations[]``: an open, versioned relation to another story."""

    relation_type: Str
    (
        "The kind of relation, a free string (by convention FOLLOW_UP, SIDEBAR, RELATED, SPIN_OFF, "
        "DEVELOPS, CORRECTS or SUPERSEDES)."
    )
    target_story_id: Str | MISSING = MISSING
    """The related story's id, a string."""
    version: Integer | MISSING = Field(default=MISSING, alias="_version")
    """The relation's version, an integer."""
    created_at: DateTimeStr | MISSING = Field(default=MISSING, alias="_created_at")
    """RFC 3339 date-time the relation was created."""
    created_by: Str | MISSING = Field(default=MISSING, alias="_created_by")
    """Who created the relation, a string."""
    modified_at: DateTimeStr | MISSING = Field(default=MISSING, alias="_modified_at")
    """RFC 3339 date-time the relation was last modified."""
    modified_by: Str | MISSING = Field(default=MISSING, alias="_modified_by")
    """Who last modified the relation, a string."""
    history: JsonArray | MISSING = Field(default=MISSING, alias="_history")
    """The relation's history: an array, items unconstrained."""


class StoryMeaning(_Story):
    """``story_meaning``: the 5W1H kernel (each field at most 280 characters)."""

    who: Text280 | MISSING = MISSING
    """Who: at most 280 characters."""
    what: Text280 | MISSING = MISSING
    """What: at most 280 characters."""
    when: Text280 | MISSING = MISSING
    """When: at most 280 characters."""
    where: Text280 | MISSING = MISSING
    """Where: at most 280 characters."""
    why: Text280 | MISSING = MISSING
    """Why: at most 280 characters."""
    how: Text280 | MISSING = MISSING
    """How: at most 280 characters."""
    summary: Text600 | MISSING = MISSING
    """A summary, at most 600 characters."""
    confidence: UnitNumber | MISSING = MISSING
    """Confidence in the kernel, a number from 0 to 1 inclusive."""
    provenance_refs: list[Str] | MISSING = MISSING
    """Provenance references, an array of strings; SOM 1.0 does not define them further."""


class GovernmentApproval(_Story):
    """``government_approval``: the publication gate."""

    status: Literal[
        "NOT_REQUIRED", "REQUESTED", "UNDER_REVIEW", "APPROVED", "RETURNED_FOR_REVISION", "REJECTED"
    ]
    (
        "The approval status: NOT_REQUIRED, REQUESTED, UNDER_REVIEW, APPROVED, "
        "RETURNED_FOR_REVISION or REJECTED."
    )
    jurisdiction: Str | MISSING = MISSING
    """The jurisdiction whose approval applies, a string."""


class Collaboration(_OpenStory):
    """``collaboration``: an open object; unknown members are kept as sent."""

    editing_version: Integer | MISSING = MISSING
    """Renamed from collaboration.version"""
    active_editors: JsonArray | MISSING = MISSING
    """Who is editing: an array, items unconstrained."""
    lock_status: Str | MISSING = MISSING
    """The editing lock's status, a string."""


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


class StoryContext(_Story, FamilyModel):
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
    """The story's id, a string; immutable across the story's snapshots."""
    slug: Str
    """The story's slug, a string."""
    headline: Str
    """The story's headline, a string."""
    story_type: StoryType
    (
        "ORPHAN (v0.3.2): a minimal shell story minted to hold a clip that arrived with no story "
        "(UGC / found media) until a proposed match is confirmed. On confirm the clip MOVES to the "
        "real story (same asset_id, original timestamps; the association change is recorded on "
        "som.system.audit against the asset — NOTE the locked action vocabulary "
        "CLEARED/SUPPRESSED/WITHHELD/OVERRIDDEN cannot yet express an association, so an "
        "ASSOCIATED action is proposed to make this record expressible; until it lands the move is "
        "recorded by convention, not by a defined action) and the shell ALWAYS retires to ARCHIVED "
        "(Morag, accepted 13 Jul) — the reason it closed (resolved onto a story, or "
        "rejected/discarded) lives in the audit trail, so the terminal story_type carries no "
        "distinction; never deleted. Consumers exclude orphans with the same single story_type "
        "predicate used for KILLED/SPIKED."
    )
    tags: Annotated[list[StoryTag], WrapValidator(_tags_unique_as_sent)] | MISSING = MISSING
    (
        "Subject-matter tags: what the story is about. Order is significant — the first entry is "
        "the primary tag, and a trigger policy whose map matches more than one entry resolves on "
        "the earliest match, so a story that is genuinely both sport and politics routes "
        "deterministically instead of ambiguously. Optional and additive; an absent array means "
        "untagged, never a default desk."
    )
    lifecycle: Lifecycle | MISSING = Field(default=MISSING, validate_default=True)
    """The story's lifecycle: present only when ``story_type`` is ACTIVE."""
    sequence_number: NonNegativeInteger
    (
        "The snapshot's sequence number, an integer of at least 0; it must increase from one "
        "snapshot of the story to the next."
    )
    updated_at: DateTimeStr
    (
        "RFC 3339 date-time the story was last updated; it must move forward from one snapshot of "
        "the story to the next."
    )
    newsroom_id: Str | MISSING = MISSING
    (
        "Optional at 1.0 — derive from skills_config.newsroom if absent (decision #12). Making it "
        "required would be a 2.0 change; see spec/compatibility-policy.md."
    )
    story_owner: StringOrObject | MISSING = MISSING
    """System/entity with authoritative control over the story"""
    priority: Priority | MISSING = MISSING
    """The story's editorial priority."""
    premise: Premise | MISSING = MISSING
    """The story's premise: its expected outcome and whether it changed."""
    compliance: list[ComplianceFlag] | MISSING = MISSING
    """Compliance flags raised on the story."""
    editorial_gates: list[EditorialGate] | MISSING = MISSING
    """Editorial gates on the story, and what they block."""
    story_meaning: StoryMeaning | MISSING = MISSING
    """Structured 5W1H kernel (decision #14); fields token-capped ≤280 chars, summary ≤600"""
    government_approval: GovernmentApproval | MISSING = MISSING
    """Publication gate (decision #15) — executor MUST NOT publish while status blocks"""
    editorial_source: list[EditorialSourceEntry] | MISSING = MISSING
    """Renamed from sources[] (second leg of the source disambiguation)"""
    assets: list[Asset] | MISSING = MISSING
    """The story's assets."""
    skills_config: SkillsConfig | MISSING = MISSING
    """Which skills run for the story."""
    content_refs: list[ContentRef] | MISSING = MISSING
    """References to the story's body content."""
    relations: list[Relation] | MISSING = MISSING
    """Relations to other stories."""
    collaboration: Collaboration | MISSING = MISSING
    """Collaborative-editing state: an open object."""
    extensions: Extensions | MISSING = MISSING
    """Vendor fields, reverse-domain namespaced (com.{vendor}.*); consumers ignore-if-unknown"""
    assertions: list[Assertion] | MISSING = MISSING
    """Claims about content: the single authoritative home for a confirmed fact value."""

    # The `if` requires story_type: a missing or invalid one takes the else-branch.
    _lifecycle_iff_active = conditional(
        "story_type",
        {"ACTIVE": Then(required=("lifecycle",))},
        otherwise=Then(refused=("lifecycle",)),
        if_requires=True,
        required="An ACTIVE story requires a lifecycle",
        refused="Only an ACTIVE story carries a lifecycle (story_type is {value})",
    )

    @property
    def is_terminal(self) -> bool:
        """Whether the story is KILLED, SPIKED or ARCHIVED."""
        return self.story_type in TERMINAL_STORY_TYPES


TERMINAL_STORY_TYPES: Final = frozenset({"KILLED", "SPIKED", "ARCHIVED"})
"""The ``story_type`` values a story never leaves."""
