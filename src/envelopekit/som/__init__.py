"""SOM 1.0: the Story Object Model envelope, its seven payload families, and story sequences.

```python
from envelopekit.som import OriginatingSystem, SomEnvelope, StoryContext

story = StoryContext(
    story_id="s-1", slug="HURRICANE", headline="Hurricane nears the coast",
    story_type="PLANNED", sequence_number=1, updated_at="2026-09-11T16:41:00Z",
)
system = OriginatingSystem(system_id="ncs-1", system_type="ncs")
raw = SomEnvelope.create("story.context", story, originating_system=system).to_json()
env = SomEnvelope.model_validate_json(raw)
assert isinstance(env.payload, StoryContext)
assert env.payload.headline == "Hurricane nears the coast"
```

The payload model is chosen by the envelope's ``message_type`` alone; a ``message_type`` with
no SOM 1.0 schema is accepted with an :class:`UnvalidatedPayload` (warning
``payload.unvalidated``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The public names, each once (envelopekit/_exports.py: the pattern every package follows).
if TYPE_CHECKING:
    from ._delivery import DeliveryLocator as DeliveryLocator
    from ._delivery import DeliveryMediaAvailable as DeliveryMediaAvailable
    from ._envelope import ModificationHeader as ModificationHeader
    from ._envelope import OriginatingSystem as OriginatingSystem
    from ._envelope import ProducingKeywords as ProducingKeywords
    from ._envelope import SomEnvelope as SomEnvelope
    from ._envelope import SystemType as SystemType
    from ._link import LinkEvent as LinkEvent
    from ._link import LinkMessageType as LinkMessageType
    from ._link import Withdrawal as Withdrawal
    from ._payloads import FAMILY_BY_MESSAGE_TYPE as FAMILY_BY_MESSAGE_TYPE
    from ._payloads import KNOWN_MESSAGE_TYPES as KNOWN_MESSAGE_TYPES
    from ._payloads import PAYLOAD_MODELS as PAYLOAD_MODELS
    from ._payloads import FamilyPayload as FamilyPayload
    from ._payloads import KnownMessageType as KnownMessageType
    from ._payloads import SomPayload as SomPayload
    from ._payloads import UnvalidatedPayload as UnvalidatedPayload
    from ._payloads import message_type_of as message_type_of
    from ._sequence import StoryLedger as StoryLedger
    from ._sequence import check_story as check_story
    from ._skill_warning import SkillWarning as SkillWarning
    from ._story_context import TERMINAL_STORY_TYPES as TERMINAL_STORY_TYPES
    from ._story_context import ActiveSkill as ActiveSkill
    from ._story_context import Assertion as Assertion
    from ._story_context import AssertionTarget as AssertionTarget
    from ._story_context import Asset as Asset
    from ._story_context import AssetStatus as AssetStatus
    from ._story_context import AssetType as AssetType
    from ._story_context import AssetUsage as AssetUsage
    from ._story_context import AuthenticityCredential as AuthenticityCredential
    from ._story_context import AuthorshipProvenance as AuthorshipProvenance
    from ._story_context import Collaboration as Collaboration
    from ._story_context import ComplianceFlag as ComplianceFlag
    from ._story_context import ContentRef as ContentRef
    from ._story_context import DeliverySpec as DeliverySpec
    from ._story_context import EditorialGate as EditorialGate
    from ._story_context import EditorialSourceEntry as EditorialSourceEntry
    from ._story_context import GateBlock as GateBlock
    from ._story_context import GovernmentApproval as GovernmentApproval
    from ._story_context import Lifecycle as Lifecycle
    from ._story_context import LifecyclePhase as LifecyclePhase
    from ._story_context import Locator as Locator
    from ._story_context import MediaRange as MediaRange
    from ._story_context import MediaRef as MediaRef
    from ._story_context import PhaseOwner as PhaseOwner
    from ._story_context import Premise as Premise
    from ._story_context import Priority as Priority
    from ._story_context import Relation as Relation
    from ._story_context import ReviewState as ReviewState
    from ._story_context import SkillsConfig as SkillsConfig
    from ._story_context import StandardsClearance as StandardsClearance
    from ._story_context import StoryContext as StoryContext
    from ._story_context import StoryMeaning as StoryMeaning
    from ._story_context import StoryTag as StoryTag
    from ._story_context import StoryType as StoryType
    from ._system_audit import AuditActor as AuditActor
    from ._system_audit import AuditTarget as AuditTarget
    from ._system_audit import SystemAudit as SystemAudit
    from ._telling import TellingEvent as TellingEvent
    from ._telling import TellingMessageType as TellingMessageType
    from ._telling import Transform as Transform
    from ._telling import TransformActor as TransformActor
    from ._telling import TransformType as TransformType
    from ._types import parse_date_time as parse_date_time
    from ._version import SOM_VERSION as SOM_VERSION
    from ._version import VersionMode as VersionMode
else:
    from .._exports import attach as _attach

    __all__, __getattr__, __dir__ = _attach(__name__)
