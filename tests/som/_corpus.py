"""The vendored SOM 1.0 corpus (tests/data/som/), as the tests read it.

The official tools validate bare payloads against their family's schema alone (family by
directory); here every bare payload is wrapped in the SOM Managed Bus conformance kit's
standard envelope (som.md §10), so it is validated the way a consumer receives it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

DATA: Final = Path(__file__).resolve().parent.parent / "data" / "som"
SCHEMAS: Final = DATA / "schema"
EXAMPLES: Final = DATA / "examples"

# Directory of a bare positive example -> the message_type its payload is published under.
MESSAGE_TYPE_BY_DIR: Final = {
    "delivery": "delivery.media_available",
    "hurricane-run": "story.context",
    "link": "link.committed",
    "skill-warning": "skill.warning.raised",
    "story-context": "story.context",
    "system-audit": "system.audit",
    "telling": "telling.started",
}

# `family` of a negative example -> the message_type a bare negative payload is wrapped with.
MESSAGE_TYPE_BY_FAMILY: Final = {
    "delivery": "delivery.media_available",
    "link": "link.committed",
    "story-context": "story.context",
    "system-audit": "system.audit",
    "telling": "telling.started",
}

SCHEMA_BY_MESSAGE_TYPE: Final = {
    "story.context": "story-context",
    "telling.started": "telling-event",
    "telling.ended": "telling-event",
    "telling.exposed": "telling-event",
    "link.committed": "link-event",
    "link.gate_changed": "link-event",
    "link.withdrawn": "link-event",
    "delivery.media_available": "delivery-media-available",
    "system.audit": "system-audit",
    "skill.warning.raised": "skill-warning",
}


def wrap(payload: Any, message_type: str) -> dict[str, Any]:
    """The conformance kit's envelope around a bare payload (som.md §10)."""
    return {
        "som_version": "1.0.0",
        "message_id": "01920000-0000-7000-8000-000000000001",
        "correlation_id": "01920000-0000-7000-8000-000000000002",
        "message_type": message_type,
        "timestamp": "2026-09-11T16:41:00Z",
        "originating_system": {"system_id": "conformance-kit", "system_type": "custom"},
        "topic": f"som.{message_type}",
        "payload": payload,
    }


def positive_files() -> list[Path]:
    """The 18 examples that must validate."""
    return sorted(p for p in EXAMPLES.glob("*/*.json") if p.parent.name != "negative")


def negative_files() -> list[Path]:
    """The 20 examples that must be refused."""
    return sorted((EXAMPLES / "negative").glob("*.json"))


def positive_envelope(path: Path) -> dict[str, Any]:
    """A positive example as a full envelope (bare payloads wrapped)."""
    document = json.loads(path.read_bytes())
    if "payload" in document:
        return document  # type: ignore[no-any-return]
    return wrap(document, MESSAGE_TYPE_BY_DIR[path.parent.name])


def negative_envelope(path: Path) -> dict[str, Any]:
    """A negative example's ``message`` as a full envelope (bare payloads wrapped)."""
    document = json.loads(path.read_bytes())
    message = document["message"]
    if "payload" in message:
        return message  # type: ignore[no-any-return]
    return wrap(message, MESSAGE_TYPE_BY_FAMILY[document["family"]])


def schema(name: str) -> dict[str, Any]:
    """One of the seven official schemas."""
    return json.loads((SCHEMAS / f"{name}.schema.json").read_bytes())  # type: ignore[no-any-return]


def label(path: Path) -> str:
    """A test id: ``dir/file.json``."""
    return f"{path.parent.name}/{path.name}"
