"""SOM 1.0: the Story Object Model envelope, its seven payload families, and story sequences.

```python
from envelopekit.som import SomEnvelope, StoryContext

env = SomEnvelope.model_validate_json(raw)
if isinstance(env.payload, StoryContext):
    print(env.payload.headline)
```

The payload model is chosen by the envelope's ``message_type`` alone; a ``message_type`` with
no SOM 1.0 schema is accepted with an :class:`UnvalidatedPayload` (warning
``payload.unvalidated``).
"""

from __future__ import annotations

from ._delivery import DeliveryLocator, DeliveryMediaAvailable
from ._envelope import (
    SOM_VERSION,
    ModificationHeader,
    OriginatingSystem,
    SomEnvelope,
    SystemType,
    VersionMode,
)
from ._link import LinkEvent, LinkMessageType, Withdrawal
from ._payloads import (
    FAMILY_BY_MESSAGE_TYPE,
    KNOWN_MESSAGE_TYPES,
    PAYLOAD_MODELS,
    FamilyPayload,
    SomPayload,
    UnvalidatedPayload,
)
from ._sequence import StoryLedger, check_story
from ._skill_warning import SkillWarning
from ._story_context import (
    TERMINAL_STORY_TYPES,
    ActiveSkill,
    Assertion,
    AssertionTarget,
    Asset,
    AssetStatus,
    AssetType,
    AssetUsage,
    AuthenticityCredential,
    AuthorshipProvenance,
    Collaboration,
    ComplianceFlag,
    ContentRef,
    DeliverySpec,
    EditorialGate,
    EditorialSourceEntry,
    GateBlock,
    GovernmentApproval,
    Lifecycle,
    LifecyclePhase,
    Locator,
    MediaRange,
    MediaRef,
    PhaseOwner,
    Premise,
    Priority,
    Relation,
    ReviewState,
    SkillsConfig,
    StandardsClearance,
    StoryContext,
    StoryMeaning,
    StoryTag,
    StoryType,
)
from ._system_audit import AuditActor, AuditTarget, SystemAudit
from ._telling import TellingEvent, TellingMessageType, Transform, TransformActor, TransformType
from ._types import parse_date_time

__all__ = [
    "FAMILY_BY_MESSAGE_TYPE",
    "KNOWN_MESSAGE_TYPES",
    "PAYLOAD_MODELS",
    "SOM_VERSION",
    "TERMINAL_STORY_TYPES",
    "ActiveSkill",
    "Assertion",
    "AssertionTarget",
    "Asset",
    "AssetStatus",
    "AssetType",
    "AssetUsage",
    "AuditActor",
    "AuditTarget",
    "AuthenticityCredential",
    "AuthorshipProvenance",
    "Collaboration",
    "ComplianceFlag",
    "ContentRef",
    "DeliveryLocator",
    "DeliveryMediaAvailable",
    "DeliverySpec",
    "EditorialGate",
    "EditorialSourceEntry",
    "FamilyPayload",
    "GateBlock",
    "GovernmentApproval",
    "Lifecycle",
    "LifecyclePhase",
    "LinkEvent",
    "LinkMessageType",
    "Locator",
    "MediaRange",
    "MediaRef",
    "ModificationHeader",
    "OriginatingSystem",
    "PhaseOwner",
    "Premise",
    "Priority",
    "Relation",
    "ReviewState",
    "SkillWarning",
    "SkillsConfig",
    "SomEnvelope",
    "SomPayload",
    "StandardsClearance",
    "StoryContext",
    "StoryLedger",
    "StoryMeaning",
    "StoryTag",
    "StoryType",
    "SystemAudit",
    "SystemType",
    "TellingEvent",
    "TellingMessageType",
    "Transform",
    "TransformActor",
    "TransformType",
    "UnvalidatedPayload",
    "VersionMode",
    "Withdrawal",
    "check_story",
    "parse_date_time",
]
