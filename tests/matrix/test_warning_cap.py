"""The number warnings of a Matrix message are capped by the check's ``max_violations``.

Matrix builds its warnings when asked (``envelope_warnings``), after validation: the cap it
was validated with (the validation context's ``max_violations``, which ``check`` passes from
its settings) must still apply then, above the environment's value as well as below it.
"""

from __future__ import annotations

import gc
from typing import Any

import orjson
import pytest

import envelopekit as ek
from envelopekit import _json, _violations, rules
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._violations import truncated
from envelopekit.matrix import MxErrorPayload, MxRequest, MxResponse, _base
from envelopekit.matrix._classify import MESSAGE_ADAPTER

ENVIRONMENT_CAP = 100
WIDE = [2**60 + i for i in range(250)]  # each beyond 2^53-1: one warning each


def request(count: int = 250) -> bytes:
    return orjson.dumps({"op": "fs.list", "payload": WIDE[:count]})


def reply_with_error(count: int = 250) -> bytes:
    payload = {"ok": False, "error": "x", "details": WIDE[:count]}
    return orjson.dumps({"op": "$reply", "correlationId": "c", "payload": payload})


def large(raw: bytes) -> bytes:
    # The same message past FULL_REPORT_BYTES (the fail-fast reading, its own validate), by
    # an iface of the Name@N form: one off it would be a warning of its own, within the cap.
    document = orjson.loads(raw)
    document["iface"] = "X" * FULL_REPORT_BYTES + "@1"
    return orjson.dumps(document)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_MAX_VIOLATIONS", str(ENVIRONMENT_CAP))
    ek.get_settings.cache_clear()


def number_warnings(found: list[ek.Violation]) -> list[ek.Violation]:
    return [w for w in found if w.rule in (rules.NUMBER_UNSAFE_INTEGER, rules.VIOLATIONS_TRUNCATED)]


@pytest.mark.parametrize("cap", [1, 7, 150, 300])
@pytest.mark.parametrize("build", [request, reply_with_error])
@pytest.mark.parametrize("size", ["small", "large"])
def test_check_caps_the_warnings_at_its_own_max_violations(
    cap: int, build: object, size: str
) -> None:
    raw = build()  # type: ignore[operator]
    raw = large(raw) if size == "large" else raw
    assert (len(raw) > FULL_REPORT_BYTES) == (size == "large")
    for spec in ("matrix", "auto"):
        verdict = ek.check(raw, spec, settings=ek.Settings(max_violations=cap))
        assert verdict.ok
        found = number_warnings(verdict.warnings)
        if cap >= len(WIDE):
            assert len(found) == len(WIDE)
            assert rules.VIOLATIONS_TRUNCATED not in {w.rule for w in found}
        else:
            assert len(found) == cap + 1
            assert found[-1] == truncated(len(WIDE) - cap)


def test_without_settings_the_environment_caps_them() -> None:
    verdict = ek.check(request(), "matrix")
    assert number_warnings(verdict.warnings)[-1] == truncated(len(WIDE) - ENVIRONMENT_CAP)
    read = MxRequest.model_validate_json(request())
    assert read.envelope_warnings()[-1] == truncated(len(WIDE) - ENVIRONMENT_CAP)


@pytest.mark.parametrize("cap", [5, 150])
def test_the_validation_context_caps_them_at_every_door(cap: int) -> None:
    context = {"max_violations": cap}
    expected = truncated(len(WIDE) - cap)
    readings = [
        MxRequest.model_validate_json(request(), context=context),
        MESSAGE_ADAPTER.validate_json(request(), context=context),
        MxRequest.model_validate(orjson.loads(request()), context=context),
        MxResponse.model_validate_json(reply_with_error(), context=context),
        MxErrorPayload.model_validate_json(
            orjson.dumps({"ok": False, "error": "x", "details": WIDE}), context=context
        ),
    ]
    for read in readings:
        found = read.envelope_warnings()
        assert len(found) == cap + 1
        assert found[-1] == expected


def test_a_context_without_a_usable_cap_leaves_the_environments() -> None:
    for context in (
        {},
        {"max_violations": 0},
        {"max_violations": "5"},
        ["not", "a", "map"],
        object(),
    ):
        read = MxRequest.model_validate_json(request(), context=context)
        assert read.envelope_warnings()[-1] == truncated(len(WIDE) - ENVIRONMENT_CAP)


def test_the_cap_does_not_change_the_model() -> None:
    # Kept beside the model, not in it: equal to the same message read without a context,
    # and serialised by the union's serializer as before.
    verdict = ek.check(reply_with_error(), "matrix", settings=ek.Settings(max_violations=7))
    plain = MESSAGE_ADAPTER.validate_json(reply_with_error())
    assert verdict.envelope == plain
    assert MESSAGE_ADAPTER.dump_json(verdict.envelope) == MESSAGE_ADAPTER.dump_json(plain)
    assert len(plain.envelope_warnings()) == ENVIRONMENT_CAP + 1


def test_the_cap_is_forgotten_with_its_model() -> None:
    gc.collect()
    before = len(_base._READINGS)
    for _ in range(50):
        ek.check(request(), "matrix", settings=ek.Settings(max_violations=7))
    gc.collect()
    assert len(_base._READINGS) == before


def test_validation_builds_no_number_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    # The payload's validator only refuses; its warnings are built when asked, capped. Reading
    # 5,000 integers beyond 2^53 built 5,000 warnings (pointers and all) only to drop them.
    built = 0
    real = _violations.violation

    def counted(*args: Any) -> ek.Violation:
        nonlocal built
        built += 1
        return real(*args)

    monkeypatch.setattr(_json, "violation", counted)
    raw = orjson.dumps({"op": "fs.list", "payload": [2**60] * 5000})
    read = MxRequest.model_validate_json(raw, context={"max_violations": 10})
    assert built <= 1
    assert len(read.envelope_warnings()) == 11
    assert built <= 12
