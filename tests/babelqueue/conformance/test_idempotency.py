"""Manifest section ``idempotency``: seen-set dedupe on ``meta.id`` around one handler."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envelopekit.babelqueue import BabelEnvelope, InMemorySeenStore, idempotent, message_id
from tests.babelqueue.conformance._manifest import fixture_bytes, section

SECTION = section("idempotency")
DEDUP = SECTION["dedup_key"]
SEQUENCES = SECTION["sequences"]["cases"]


class Boom(Exception):
    pass


def test_dedup_key_is_meta_id_verbatim() -> None:
    assert DEDUP["key_field"] == "meta.id"
    raw = fixture_bytes(DEDUP["envelope_file"])
    envelope = BabelEnvelope.model_validate_json(raw)
    assert message_id(envelope) == DEDUP["expected_key"]
    assert message_id(json.loads(raw)) == DEDUP["expected_key"]
    assert message_id(envelope) != envelope.trace_id


def test_same_trace_distinct_ids_are_distinct_effects() -> None:
    envelope = BabelEnvelope.model_validate_json(fixture_bytes(DEDUP["envelope_file"]))
    follow_up: BabelEnvelope = BabelEnvelope.create(envelope.job, {}, trace_id=envelope.trace_id)
    ran: list[str] = []

    def handler(env: BabelEnvelope) -> None:
        ran.append(env.meta.id)

    guarded = idempotent(InMemorySeenStore(), handler)
    assert [guarded(envelope), guarded(follow_up), guarded(envelope)] == ["run", "run", "skip"]
    assert len(ran) == 2


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["name"] for c in SEQUENCES])
def test_sequence(case: dict[str, Any]) -> None:
    # The sequence ids ("id-A", "") are not UUIDs, so the messages are the fixture decoded as
    # plain JSON with meta.id replaced verbatim: the helper keys on any message with meta.id.
    base = json.loads(fixture_bytes(DEDUP["envelope_file"]))
    store = InMemorySeenStore()
    effects = 0
    outcome = "ok"

    def handler(message: dict[str, Any]) -> None:
        # An effect is an invocation: a throwing run fired (part of) its side effect too.
        nonlocal effects
        effects += 1
        if outcome == "throw":
            raise Boom(message["meta"]["id"])

    guarded = idempotent(store, handler)
    for delivery in case["deliveries"]:
        message = {**base, "meta": {**base["meta"], "id": delivery["meta_id"]}}
        if delivery.get("forget_before"):
            store.forget(delivery["meta_id"])
        outcome = delivery.get("outcome", "ok")
        before = effects
        if delivery["expect_effect"] == "run" and outcome == "throw":
            with pytest.raises(Boom):
                guarded(message)
            assert effects == before + 1
            assert not store.seen(delivery["meta_id"])
            continue
        effect = guarded(message)
        assert effect == delivery["expect_effect"], delivery
        assert effects == before + (1 if effect == "run" else 0)
    assert effects == case["expected_effects"]
