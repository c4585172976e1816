"""Story sequences: the hurricane run passes the ledger; broken runs get the right rule."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from envelopekit.som import SomEnvelope, StoryContext, StoryLedger, check_story
from tests.som._corpus import EXAMPLES, wrap

RUN = [
    json.loads((EXAMPLES / "hurricane-run" / f"hurricane-0{i}.json").read_bytes())
    for i in range(1, 8)
]


def _stories(payloads: list[dict[str, Any]]) -> list[StoryContext]:
    return [StoryContext.model_validate(p) for p in payloads]


def _rules(payloads: list[dict[str, Any]]) -> list[set[str]]:
    return [{v.rule for v in verdict.violations} for verdict in check_story(_stories(payloads))]


def test_the_hurricane_run_passes_without_warnings() -> None:
    verdicts = check_story(_stories(RUN))
    assert [v.ok for v in verdicts] == [True] * 7
    assert all(v.warnings == [] for v in verdicts)
    assert [v.envelope.sequence_number for v in verdicts if v.envelope] == list(range(1, 8))


def test_the_hurricane_run_passes_as_envelopes() -> None:
    ledger = StoryLedger()
    for payload in RUN:
        env = SomEnvelope.model_validate(wrap(payload, "story.context"))
        assert ledger.add(env).ok
    assert ledger.story_id == "hurricane-2026-0911"
    assert ledger.last is not None and ledger.last.sequence_number == 7


def test_reordered_run_is_refused() -> None:
    reordered = [RUN[0], RUN[2], RUN[1]]
    found = _rules(reordered)
    assert found[0] == set() and found[1] == set()
    assert "sequence_number.not_increasing" in found[2]
    assert "updated_at.backwards" in found[2]


def test_reversed_pair_reports_pointers_under_payload_for_envelopes() -> None:
    ledger = StoryLedger()
    assert ledger.add(SomEnvelope.model_validate(wrap(RUN[3], "story.context"))).ok
    verdict = ledger.add(SomEnvelope.model_validate(wrap(RUN[2], "story.context")))
    assert not verdict.ok
    pointers = {v.pointer for v in verdict.violations}
    assert "/payload/sequence_number" in pointers
    assert all(p.startswith("/payload/") for p in pointers)
    assert all(v.source == "sequence" for v in verdict.violations)


def test_skipped_snapshot_is_a_gap_warning_only() -> None:
    verdicts = check_story(_stories([RUN[0], RUN[1], RUN[3]]))
    assert all(v.ok for v in verdicts)
    assert [w.rule for w in verdicts[2].warnings] == ["sequence_number.gap"]


def test_trimmed_snapshot_is_refused_for_missing_members() -> None:
    trimmed = copy.deepcopy(RUN[4])
    del trimmed["story_meaning"]
    found = _rules([RUN[3], trimmed])
    assert found[1] == {"snapshot.members_missing"}


def test_dropped_asset_is_refused() -> None:
    trimmed = copy.deepcopy(RUN[4])
    trimmed["assets"] = trimmed["assets"][1:]
    assert _rules([RUN[3], trimmed])[1] == {"snapshot.assets_dropped"}


def test_asset_type_change_is_refused() -> None:
    changed = copy.deepcopy(RUN[4])
    first = changed["assets"][0]
    first["asset_type"] = "STILL" if first["asset_type"] != "STILL" else "VIDEO"
    assert _rules([RUN[3], changed])[1] == {"asset.type_changed"}


def test_story_id_change_is_refused() -> None:
    other = copy.deepcopy(RUN[1])
    other["story_id"] = "another-story"
    assert _rules([RUN[0], other])[1] == {"story_id.changed"}


def test_updated_at_compares_instants_not_text() -> None:
    earlier = copy.deepcopy(RUN[0])
    later = copy.deepcopy(RUN[1])
    earlier["updated_at"] = "2026-09-11T13:00:00Z"
    # Sorts before "…00Z" as text, but is half a second later.
    later["updated_at"] = "2026-09-11T13:00:00.5Z"
    assert _rules([earlier, later])[1] == set()
    later["updated_at"] = "2026-09-11T14:59:59+02:00"  # 12:59:59Z
    assert _rules([earlier, later])[1] == {"updated_at.backwards"}
    later["updated_at"] = earlier["updated_at"]  # equal is allowed
    assert _rules([earlier, later])[1] == set()


def _retyped(payload: dict[str, Any], story_type: str) -> dict[str, Any]:
    changed = copy.deepcopy(payload)
    changed["story_type"] = story_type
    if story_type != "ACTIVE":
        changed.pop("lifecycle", None)
    return changed


@pytest.mark.parametrize("terminal", ["KILLED", "SPIKED", "ARCHIVED"])
def test_no_return_from_a_terminal_story_type(terminal: str) -> None:
    killed = _retyped(RUN[1], terminal)
    revived = RUN[2]
    found = _rules([RUN[0], killed, revived])
    # Leaving ACTIVE drops `lifecycle`, which the schema then forbids: not a missing member.
    assert found[1] == set()
    assert found[2] == {"story_type.left_terminal"}
    archived = _retyped(RUN[2], "ARCHIVED")
    assert _rules([RUN[0], killed, archived])[2] == set()


def test_refused_snapshot_is_not_recorded() -> None:
    ledger = StoryLedger()
    stories = _stories(RUN)
    assert ledger.add(stories[2]).ok
    assert not ledger.add(stories[1]).ok
    assert ledger.last is stories[2]
    assert ledger.add(stories[3]).ok


def test_check_does_not_record() -> None:
    ledger = StoryLedger()
    stories = _stories(RUN)
    assert ledger.check(stories[0]).ok
    assert ledger.last is None


def test_only_story_context_snapshots_are_taken() -> None:
    telling = json.loads((EXAMPLES / "telling" / "started.json").read_bytes())
    env = SomEnvelope.model_validate(wrap(telling, "telling.started"))
    with pytest.raises(TypeError):
        StoryLedger().add(env)


_HUGE = 10**4400  # past the 4,300 digits str() writes: a Python caller can hold one


@pytest.mark.parametrize(
    ("last", "this", "rule"),
    [
        (_HUGE, _HUGE, "sequence_number.not_increasing"),
        (_HUGE, _HUGE - 1, "sequence_number.not_increasing"),
        (7, _HUGE, "sequence_number.gap"),
        (_HUGE, _HUGE + 2, "sequence_number.gap"),
    ],
    ids=["repeated", "backwards", "jump-from-small", "jump-between-huge"],
)
def test_a_huge_sequence_number_is_reported_by_its_size(last: int, this: int, rule: str) -> None:
    first = StoryContext.model_validate({**RUN[0], "sequence_number": last})
    second = StoryContext.model_validate({**RUN[1], "sequence_number": this})
    verdict = check_story([first, second])[1]
    (found,) = [*verdict.violations, *verdict.warnings]
    assert (found.rule, found.pointer) == (rule, "/sequence_number")
    assert "an integer of 4401 digits" in found.message


def _other_type(asset: dict[str, Any]) -> dict[str, Any]:
    return {**asset, "asset_type": "x-other" if asset["asset_type"] != "x-other" else "VIDEO"}


def _repeat_in_the_first_snapshot() -> tuple[list[dict[str, Any]], str]:
    first = copy.deepcopy(RUN[4])
    first["assets"].append(_other_type(first["assets"][0]))
    return [first], f"/assets/{len(first['assets']) - 1}/asset_type"


def _hidden_by_a_later_repeat() -> tuple[list[dict[str, Any]], str]:
    second = copy.deepcopy(RUN[5])
    kept = second["assets"][0]
    second["assets"][0] = _other_type(kept)
    second["assets"].append(kept)
    return [RUN[4], second], "/assets/0/asset_type"


@pytest.mark.parametrize(
    "case",
    [_repeat_in_the_first_snapshot, _hidden_by_a_later_repeat],
    ids=["repeat-in-the-first-snapshot", "hidden-by-a-later-repeat"],
)
def test_a_repeated_asset_id_keeps_the_type_it_was_first_seen_with(case: Any) -> None:
    payloads, at = case()
    verdict = check_story(_stories(payloads))[-1]
    assert [(v.rule, v.pointer) for v in verdict.violations] == [("asset.type_changed", at)]


@pytest.mark.parametrize(
    ("last", "this"),
    [
        ("2026-09-11T13:00:00.0000002Z", "2026-09-11T13:00:00.0000001Z"),
        ("2026-09-11T15:00:00.1234567+02:00", "2026-09-11T13:00:00.12345660Z"),
        (
            "2026-09-11T13:00:00.000000" + "9" * 50 + "Z",
            "2026-09-11T13:00:00.000000" + "9" * 49 + "Z",
        ),
    ],
    ids=["a-tenth-of-a-microsecond", "across-offsets", "fifty-digits"],
)
def test_updated_at_going_back_less_than_a_microsecond_is_refused(last: str, this: str) -> None:
    first, second = copy.deepcopy(RUN[0]), copy.deepcopy(RUN[1])
    first["updated_at"], second["updated_at"] = last, this
    assert _rules([first, second])[1] == {"updated_at.backwards"}
    first["updated_at"], second["updated_at"] = this, last  # forward is accepted
    assert _rules([first, second])[1] == set()
