"""Maximal SOM messages: every optional member of each payload schema present, one per family.

The corpus's 18 valid messages leave many members out (``premise``, ``story_meaning``,
``priority``, ``government_approval``, ``relations``, ``collaboration``, ``link.withdrawn``,
``telling.exposed``, ``active_skills``...): these put each one on the wire at least once, so the
differential test mutates them too. Written for this SDK's tests from the seven schemas, not
official examples.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.som._corpus import wrap

U1 = "01920000-0000-7000-8000-0000000000a1"
U2 = "01920000-0000-7000-8000-0000000000a2"
T = "2026-09-11T16:41:00Z"
prov_model = {
    "author": "MODEL",
    "model": "m",
    "model_version": "1",
    "confidence": 0.5,
    "generated_at": T,
    "input_sources": ["a"],
    "prompt_hash": "h",
    "review": {"state": "CONFIRMED", "reviewer": "r", "reviewed_at": T},
}
story = {
    "story_id": "s-1",
    "slug": "SLUG",
    "headline": "H",
    "story_type": "ACTIVE",
    "tags": [
        {"scheme": "newsroom", "value": "v", "label": "l"},
        {"scheme": "com.example.ncs", "value": "w"},
    ],
    "lifecycle": {
        "phase": "BREAKING",
        "phase_entered_at": T,
        "previous_phase": "DEVELOPING",
        "phase_owner": {"user_id": "u", "display_name": "d", "role": "r"},
    },
    "sequence_number": 3,
    "updated_at": T,
    "newsroom_id": "n",
    "story_owner": {"a": None},
    "priority": {"level": "HIGH", "reason": "r", "escalated_by": "e", "escalated_at": T},
    "premise": {
        "expected_outcome": "e",
        "confidence": "LOW",
        "premise_changed": True,
        "previous_outcome": "p",
        "actual_outcome": "a",
        "affected_assets": ["x"],
        "change_detected_at": T,
        "change_detected_by": "c",
    },
    "compliance": [
        {
            "flag_id": "f",
            "type": "LEGAL_HOLD",
            "severity": "HIGH",
            "detail": "d",
            "raised_by": "r",
            "raised_at": T,
            "status": "ACTIVE",
            "jurisdiction": "j",
            "regulation_ref": "rr",
            "media_range": {
                "source": "tams://s/x",
                "locator": {"store": "s", "ref": "r"},
                "time_range": ["[0:0_1:0)", "(1:0_]"],
            },
        }
    ],
    "editorial_gates": [
        {
            "gate_id": "g",
            "gate_type": "t",
            "status": "PENDING",
            "required_by_skill": "s",
            "gate_rule_id": "gr",
            "resolution_event_type": "ret",
            "assigned_to": "a",
            "blocks": [{"kind": "ASSET", "ref": "a1"}, "legacy"],
        }
    ],
    "story_meaning": {
        "who": "w",
        "what": "w",
        "when": "w",
        "where": "w",
        "why": "w",
        "how": "h",
        "summary": "s",
        "confidence": 1,
        "provenance_refs": ["p"],
    },
    "government_approval": {"status": "REQUESTED", "jurisdiction": "j"},
    "editorial_source": [
        {
            "source_id": "src1",
            "source_type": "WIRE",
            "provider": "AP",
            "credibility": "TRUSTED",
            "received_at": T,
            "content_hash": "c",
        },
        {
            "source_id": "src2",
            "source_type": "x-radio_feed",
            "provider": "P",
            "credibility": "VERIFIED",
            "received_at": T,
        },
    ],
    "assets": [
        {
            "asset_id": "a1",
            "asset_type": "VIDEO",
            "status": "READY",
            "evidential_position": "PRIMARY",
            "acquisition_state": "CAPTURED",
            "derived_from": ["z"],
            "produced_by": "p",
            "invalidated_by": "i",
            "framing_treatment": "f",
            "provenance": prov_model,
            "usage": [{"link_id": "l", "destination_id": "d", "state": "committed"}],
            "standards_clearance": {"status": "CLEARED", "blocked_by": ["b"], "last_reviewed": T},
            "delivery_spec": {"format": "f", "resolution": "r", "frame_rate": 29.97, "extra": None},
            "media_refs": [
                {
                    "source": "tams://s/x",
                    "locator": {"store": "s", "ref": "r"},
                    "label": "l",
                    "time_range": "[0:0_)",
                }
            ],
            "authenticity_credential": {
                "present": True,
                "standard": "c2pa",
                "claim": "c",
                "validated_by": "v",
            },
        },
        {
            "asset_id": "a2",
            "asset_type": "x-graphics_pack",
            "status": "PREPARED",
            "provenance": {"author": "HUMAN", "confidence": 0.2},
        },
    ],
    "skills_config": {
        "newsroom": "n",
        "skills_spec_version": "1",
        "skill_executor_id": "e",
        "scope_context": "s",
        "active_skills": [
            {
                "skill_id": "k",
                "skill_version": "1.0",
                "skill_type": "NEWSROOM",
                "disclosure_level": "L2",
                "migration_policy": "HOT",
                "skill_priority": "LOW",
            }
        ],
    },
    "content_refs": [
        {
            "uri": "https://wire.ap.org/stories/x.json",
            "mime_type": "application/json",
            "content_format": "ap-som-body-json-v1",
            "placement": "p",
            "provider": "AP",
            "role": "r",
            "source_id": "src1",
        }
    ],
    "relations": [
        {
            "relation_type": "FOLLOW_UP",
            "target_story_id": "s-0",
            "_version": 2,
            "_created_at": T,
            "_created_by": "c",
            "_modified_at": T,
            "_modified_by": "m",
            "_history": [None, 1],
            "free": {"x": None},
        }
    ],
    "collaboration": {
        "editing_version": 3,
        "active_editors": [None, "a"],
        "lock_status": "l",
        "more": None,
    },
    "extensions": {"com.acme.x": {"a": None}},
    "assertions": [
        {
            "assertion_id": "as1",
            "assertion_type": "FACT_CHECK",
            "target": {"kind": "ASSET", "id": "a1"},
            "claim": {"metric": "m", "value": None},
            "asserted_at": T,
            "provenance": prov_model,
            "attributed_to": "a",
            "confidence": 0.0,
            "originated_from": "o",
            "review": {"state": "PENDING"},
        },
        {
            "assertion_id": "as2",
            "assertion_type": "MATCH",
            "target": {"kind": "STORY", "id": "s"},
            "claim": {"story_id": "x"},
            "asserted_at": T,
            "provenance": {"author": "MODEL"},
        },
        {
            "assertion_id": "as3",
            "assertion_type": "DETECTION",
            "target": {"kind": "TELLING", "id": "t"},
            "claim": {"detection_class": "c", "verdict": "v"},
            "asserted_at": T,
            "provenance": {"author": "HUMAN"},
        },
    ],
}
telling = {
    "message_type": "telling.exposed",
    "telling_id": U1,
    "link_id": U2,
    "exposure_start": T,
    "exposure_end": T,
    "scheduled_start": T,
    "extensions": {"com.acme.x": 1},
    "transforms": [
        {
            "transform_type": "CROP",
            "applied_by": {"actor_id": "a", "actor_type": "t"},
            "applied_at": T,
            "params": {"x": None},
        },
        {
            "transform_type": "x-blur",
            "applied_by": {"actor_id": "a", "actor_type": "t"},
            "applied_at": T,
        },
    ],
}
link = {
    "message_type": "link.withdrawn",
    "link_id": U1,
    "asset_id": "a",
    "destination_id": "d",
    "committed_by": "c",
    "committed_at": T,
    "compliance_gate_status": "BLOCKED",
    "withdrawn": {"withdrawn_by": "w", "withdrawn_at": T, "reason": "r"},
    "extensions": {"com.acme.x": 1},
}
delivery = {
    "message_type": "delivery.media_available",
    "delivery_id": U1,
    "asset_id": "a",
    "source": "tams://s/x",
    "locator": {"store": "s", "ref": "r"},
    "time_range": ["[0:0_1:0)"],
    "arrived_in": "sys",
    "arrived_at": T,
    "extensions": {"com.acme.x": 1},
}
audit = {
    "message_type": "system.audit",
    "audit_id": U1,
    "action": "WITHHELD",
    "target": {"kind": "TELLING", "id": "t"},
    "actor": {"actor_id": "a", "actor_type": "t"},
    "reason": "r",
    "recorded_at": T,
}
warning = {
    "warning_id": U1,
    "skill_id": "k",
    "skill_version": "1.2.3",
    "story_id": "s",
    "scope": "story:s",
    "severity": "flag",
    "rule_id": "r",
    "non_overridable": False,
    "affected_fields": ["a"],
    "detail": "d",
    "blocks": ["b"],
    "skill_warning_ref": "ref",
    "content_type": "c",
    "message_type": "skill.warning.raised",
    "extensions": {"com.acme.x": 1},
}


_FAMILIES: list[tuple[dict[str, Any], str]] = [
    (story, "story.context"),
    (telling, "telling.exposed"),
    (link, "link.withdrawn"),
    (delivery, "delivery.media_available"),
    (audit, "system.audit"),
    (warning, "skill.warning.raised"),
]


def maximal_envelopes() -> dict[str, dict[str, Any]]:
    """Each family's maximal payload in an envelope with every optional envelope member, by type."""
    out: dict[str, dict[str, Any]] = {}
    for payload, message_type in _FAMILIES:
        env = wrap(copy.deepcopy(payload), message_type)
        env.update(
            {
                "causation_id": U2,
                "@context": {"x": 1},
                "_actors": {"a": None},
                "extensions": {"com.acme.": None},
                "modification_header": {
                    "story_version": 2,
                    "modified_at": T,
                    "modified_by": "m",
                    "change_summary": "c",
                    "history": [None, {}],
                    "other": 1,
                },
            }
        )
        env["originating_system"].update(system_name="n", vendor="v", version="1")
        out[message_type] = env
    return out
