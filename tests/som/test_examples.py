"""The demo messages in examples/messages/som/ give the verdicts their names promise."""

from __future__ import annotations

from pathlib import Path

import pytest

import envelopekit as ek

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "messages" / "som"

EXPECTED = {
    "story-context.json": ([], []),
    "telling-started.json": ([], []),
    "unknown-family.json": ([], ["payload.unvalidated"]),
    "bad-topic.json": (["envelope.pattern"], []),
    "pre-1-0-version.json": (["som_version.pre_1_0"], []),
    "payload-message-type-mismatch.json": (["payload.message_type_mismatch"], []),
}


def test_every_example_is_listed() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.json")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_verdict(name: str) -> None:
    verdict = ek.check((EXAMPLES / name).read_bytes())
    assert verdict.spec == "som"
    assert ([v.rule for v in verdict.violations], [w.rule for w in verdict.warnings]) == EXPECTED[
        name
    ]
