"""A large Matrix message (over ``FULL_REPORT_BYTES``): read with the request open, same verdict.

``check`` reads a Matrix message over 16 KiB with the fail-fast copy of the schema, and with
the request open: its unknown keys are noted, never built as one pydantic error each. The
verdict must be the one the closed fail-fast reading gives (and, for the mutation set, the one
the all-errors reading of a small message gives): the same violations in the same order, the
same count of what was left out, the same envelope.
"""

from __future__ import annotations

import json
import random
from enum import Enum
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_core import InitErrorDetails

import envelopekit as ek
from envelopekit import rules
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit._json import needs_scan, scan_numbers
from envelopekit._violations import Violation, violations
from envelopekit._violations import cap as capped
from envelopekit.matrix import _base, _spec
from envelopekit.matrix._classify import MESSAGE_ADAPTER, MxMessage
from envelopekit.matrix._error_payload import MxErrorPayload
from envelopekit.matrix._request import MxRequest
from envelopekit.matrix._response import MxResponse
from envelopekit.matrix._spec import SPEC
from tests._calls import python_calls
from tests.matrix.test_differential import corpus

LIMIT = 3  # a small cap, so that the mutation set crosses it


def all_errors(raw: bytes, limit: int) -> tuple[Any, list[Violation]]:
    """The small-message reading: every error, mapped up to ``limit``."""
    try:
        return MESSAGE_ADAPTER.validate_json(raw, by_name=False), []
    except ValidationError as exc:
        return None, violations(exc, model=MxMessage, limit=limit)


def closed_fail_fast(raw: bytes, limit: int) -> tuple[Any, list[Violation]]:
    """The large-message reading before this one: the closed request, fail-fast arrays."""
    try:
        return _spec._read_large(raw), []
    except ValidationError as exc:
        return None, violations(exc, model=MxMessage, limit=limit, partial=True)


# Built once each: a Settings reads the environment.
_SETTINGS = {limit: ek.Settings(max_violations=limit) for limit in (LIMIT, 100)}


def open_reading(raw: bytes, limit: int) -> tuple[Any, list[Violation]]:
    verdict = SPEC._validate_large(raw, _SETTINGS[limit])
    return verdict.envelope, verdict.violations


def with_unknown_keys(raw: bytes, count: int, rng: random.Random) -> bytes:
    """``raw`` (an object) with ``count`` unknown keys spread among its members, one repeated."""
    members = list(json.loads(raw).items())
    for i in range(count):
        members.insert(rng.randrange(len(members) + 1), (f"x{i}", rng.choice([0, "s", [1], {}])))
    text = json.dumps(dict(members))
    if count and rng.random() < 0.3:  # a repeated unknown key: reported once
        text = text[:-1] + ', "x0": 1}'
    return text.encode()


@pytest.mark.parametrize("kind", ["request", "response", "error-payload"])
def test_the_open_reading_is_the_closed_one_over_the_mutation_set(kind: str) -> None:
    rng = random.Random(f"large:{kind}")
    compared = 0
    for text, doc in corpus(kind):
        assert open_reading(text, 100) == closed_fail_fast(text, 100) == all_errors(text, 100)
        if isinstance(doc, dict) and rng.random() < 0.3:
            count = rng.choice([1, LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2, 40])
            widened = with_unknown_keys(text, count, rng)
            expected = closed_fail_fast(widened, LIMIT)
            assert open_reading(widened, LIMIT) == expected, widened
            assert expected == all_errors(widened, LIMIT)
            compared += 1
    assert compared > 400


def test_a_valid_large_request_is_the_closed_models_envelope() -> None:
    raw = orjson.dumps({"op": "fs.write", "payload": {"data": "x" * (FULL_REPORT_BYTES * 2)}})
    verdict = ek.check(raw, "matrix")
    assert verdict.ok
    assert verdict.envelope == MESSAGE_ADAPTER.validate_json(raw, by_name=False)
    assert verdict.envelope.__pydantic_extra__ is None
    assert verdict.envelope.to_json() == raw


@pytest.mark.parametrize("bad_field", [False, True], ids=["keys-only", "and-a-bad-field"])
def test_unknown_keys_past_the_cap_are_never_built_as_errors(
    bad_field: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = 20_000
    members = b",".join(b'"k%05d":0' % i for i in range(keys))
    lamport = b'"lamport":-1,' if bad_field else b""
    raw = b'{"op":"fs.write",' + lamport + b'"payload":{},' + members + b"}"
    assert len(raw) > FULL_REPORT_BYTES
    built: list[int] = []

    def counted(exc: ValidationError, **kwargs: Any) -> list[Violation]:
        built.append(exc.error_count())
        return violations(exc, **kwargs)

    monkeypatch.setattr("envelopekit.matrix._spec.violations", counted)
    verdict = ek.check(raw, "matrix")
    # Every error pydantic built: the bad field's, and the keys the cap has room for.
    assert sum(built) <= 100
    assert len(verdict.violations) == 101
    first = verdict.violations[0]
    if bad_field:
        assert (first.rule, first.pointer) == ("request.minimum", "/lamport")
    assert verdict.violations[int(bad_field)].pointer == "/k00000"
    assert {v.rule for v in verdict.violations[:-1]} <= {
        "request.additionalProperties",
        "request.minimum",
    }
    left = verdict.violations[-1]
    assert left.rule == rules.VIOLATIONS_TRUNCATED
    assert left.message.startswith(f"{keys + int(bad_field) - 100} more findings")


# --- the merge of the other errors with the unknown keys, against the mapper itself -----------

_OTHER = st.sampled_from(
    [
        ("missing", ("request", "op")),
        ("missing", ("request", "payload")),
        ("string_type", ("request", "iface")),
        ("string_type", ("request", "from")),
        ("missing", ("request", "payload", 0)),  # an array's item: the fail-fast notice
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_OTHER, max_size=6), st.integers(0, 8), st.integers(1, 6))
def test_the_merge_is_what_the_mapper_makes_of_all_the_errors(
    other: list[tuple[str, tuple[str | int, ...]]], keys: int, limit: int
) -> None:
    errors: list[InitErrorDetails] = [{"type": t, "loc": loc, "input": None} for t, loc in other]
    unknown = [f"k{i}" for i in range(keys)]
    extra: list[InitErrorDetails] = [
        {"type": "extra_forbidden", "loc": ("request", key), "input": None} for key in unknown
    ]
    whole = ValidationError.from_exception_data("MxRequest", [*errors, *extra], "json")
    expected = violations(whole, model=MxMessage, limit=limit, partial=True)
    alone = ValidationError.from_exception_data("MxRequest", errors, "json")
    found = violations(alone, model=MxMessage, limit=limit, partial=True)
    assert _spec._with_unknown_keys(found, unknown, limit) == expected


@pytest.mark.parametrize(
    "document",
    [
        {"ok": False, "error": "x", "code": "@"},
        {"op": "$reply", "correlationId": "c", "payload": {"ok": False, "error": "x", "code": "@"}},
    ],
    ids=["bare", "in-a-reply"],
)
@pytest.mark.parametrize(
    "code", [b"[" + b",".join([b"{}"] * 9_000) + b"]", b"5"], ids=["large", "5"]
)
def test_an_error_code_that_is_no_string_never_reaches_the_enum_class(
    document: dict[str, Any], code: bytes
) -> None:
    """pydantic-core hands a value no member matches to the enum class, which quotes it whole.

    A 1 MiB array as ``code`` cost 30 ms in ``Enum.__new__`` building its repr; only a string
    reaches the enum validator now, and the verdict is the enum's own: ``enum`` and ``type``.
    """
    raw = orjson.dumps(document).replace(b'"@"', code)
    found: list[ek.Verdict[Any]] = []
    entered = python_calls(lambda: found.append(ek.check(raw, "matrix")))
    assert Enum.__new__.__code__ not in entered
    assert [(v.rule, v.pointer.rpartition("/")[2]) for v in found[0].violations] == [
        ("error-payload.enum", "code"),
        ("error-payload.type", "code"),
    ]


@pytest.mark.parametrize(
    "document",
    [
        {"ok": False, "error": "x", "code": "@"},
        {"op": "$reply", "correlationId": "c", "payload": {"ok": False, "error": "x", "code": "@"}},
    ],
    ids=["bare", "in-a-reply"],
)
@pytest.mark.parametrize("code", ['"' + "T" * 200_000 + '"', '"not_found"'], ids=["long", "case"])
def test_an_error_code_that_is_no_member_never_reaches_the_enum_class(
    document: dict[str, Any], code: str
) -> None:
    """A string no member matches went to the enum class too (3 ms for 1 MiB, its repr whole);
    it is refused with the enum's own error before, and a member still passes."""
    raw = orjson.dumps(document).replace(b'"@"', code.encode())
    found: list[ek.Verdict[Any]] = []
    entered = python_calls(lambda: found.append(ek.check(raw, "matrix")))
    assert Enum.__new__.__code__ not in entered
    assert [(v.rule, v.pointer.rpartition("/")[2]) for v in found[0].violations] == [
        ("error-payload.enum", "code")
    ]
    assert ek.check(raw.replace(code.encode(), b'"NOT_FOUND"'), "matrix").ok


def _numbers(groups: int) -> bytes:
    """``groups`` arrays of four small numbers, in an array: a walk is a call an array."""
    return b"[" + b",".join([b"[-1,12,0.5,-0.0]"] * groups) + b"]"


# Over FULL_REPORT_BYTES (the large reading), and over READ_BYTES only (the small one).
_GROUPS = {"large": 8_000, "over READ_BYTES": 200}
_PLACES = {
    "request payload": (b'{"op":"a.b","payload":@}', "/payload"),
    "response payload": (b'{"op":"$reply","correlationId":"c","ok":true,"payload":@}', "/payload"),
    "response extra": (b'{"op":"$reply","correlationId":"c","ok":true,"payload":1,"x":@}', "/x"),
    "error details": (b'{"ok":false,"error":"e","code":"NOT_FOUND","details":@}', "/details"),
    "error extra": (b'{"ok":false,"error":"e","x":@}', "/x"),
    "reply's error details": (
        b'{"op":"$reply","correlationId":"c","ok":false,'
        b'"payload":{"ok":false,"error":"e","details":@}}',
        "/payload/details",
    ),
}


@pytest.mark.parametrize("size", list(_GROUPS))
@pytest.mark.parametrize("place", list(_PLACES))
def test_numbers_proven_plain_are_not_walked_again(place: str, size: str) -> None:
    """Free-form JSON was walked twice, by its validator and for the warnings, a Python step a
    value (each walk about 5x ``orjson.loads`` on small integers). ``check`` (past
    ``READ_BYTES``) walks a tenth of it at most, then proves the text's numbers plain by C
    passes, and the warnings do not walk it again; the JSON door proves a large message
    first."""
    shell, _ = _PLACES[place]
    groups = _GROUPS[size]
    raw = shell.replace(b"@", _numbers(groups))
    large = len(raw) > FULL_REPORT_BYTES
    assert large is (size == "large") and len(raw) > _spec.READ_BYTES
    found: list[Any] = []
    checked = python_calls(lambda: found.append(ek.check(raw, "matrix")))
    assert checked.count(needs_scan.__code__) <= groups // 10
    read = python_calls(lambda: found.append(json_door(raw)))
    assert (needs_scan.__code__ not in read) is large
    verdict, envelope = found
    assert verdict.ok and verdict.warnings == []
    assert verdict.envelope == envelope == MESSAGE_ADAPTER.validate_json(raw, by_name=False)
    warned = python_calls(lambda: found.append(verdict.envelope.envelope_warnings()))
    assert needs_scan.__code__ not in warned
    assert found[-1] == []


@pytest.mark.parametrize("size", list(_GROUPS))
@pytest.mark.parametrize("place", list(_PLACES))
@pytest.mark.parametrize(
    ("number", "rule"),
    [(b"9007199254740992", rules.NUMBER_UNSAFE_INTEGER), (b"1e400", rules.NUMBER_NON_FINITE)],
)
def test_a_number_not_plain_is_still_found(place: str, size: str, number: bytes, rule: str) -> None:
    """One number beyond 2^53-1 (a warning) or infinite (a refusal) at the end: the proof
    fails and the walk finds it, at its pointer, through both doors."""
    shell, at = _PLACES[place]
    groups = _GROUPS[size]
    raw = shell.replace(b"@", _numbers(groups)[:-1] + b"," + number + b"]")
    pointer = f"{at}/{groups}"
    verdict = ek.check(raw, "matrix")
    noted = verdict.warnings if rule == rules.NUMBER_UNSAFE_INTEGER else verdict.violations
    assert [(v.rule, v.pointer) for v in noted] == [(rule, pointer)]
    if rule == rules.NUMBER_UNSAFE_INTEGER:
        door = json_door(raw)
        assert [(v.rule, v.pointer) for v in door.envelope_warnings()] == [(rule, pointer)]
    else:
        with pytest.raises(ValidationError):
            json_door(raw)


def json_door(raw: bytes, context: dict[str, Any] | None = None) -> Any:
    """The JSON door of the model the document is (``MxRequest``, ...), as a user calls it."""
    document = json.loads(raw)
    model = (
        MxResponse
        if document.get("op") == "$reply"
        else MxRequest
        if "op" in document
        else MxErrorPayload
    )
    return model.model_validate_json(raw, context=context)


@pytest.mark.parametrize("count", [1, 5], ids=["within-the-cap", "past-the-cap"])
@pytest.mark.parametrize("size", list(_GROUPS))
@pytest.mark.parametrize("place", list(_PLACES))
def test_the_numbers_to_note_are_scanned_for_once(
    place: str, size: str, count: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the proof fails, the payload's validator scanned it for refusals, and its
    warnings scanned it again (1 MiB of small integers then one beyond 2^53: 12x
    ``orjson.loads``). Read with a ``NumberReading`` (``check``, past ``READ_BYTES``), the
    validator's scan builds the warnings under the cap, kept for the model's: the same
    warnings, pointers and count of those left out as the JSON door's, which scans twice. The
    unknown keys, validated a value at a time, give their warnings from what each kept, within
    the cap; past it the scan of them all counts what is left out."""
    shell, at = _PLACES[place]
    groups = _GROUPS[size]
    unsafe = b",".join([b"9007199254740993"] * count)
    raw = shell.replace(b"@", _numbers(groups)[:-1] + b"," + unsafe + b"]")
    cap = ek.Settings(max_violations=3)
    scanned: list[int] = []

    def scan(value: Any, *args: Any, **options: Any) -> Any:
        scanned.append(len(orjson.dumps(value)))
        return scan_numbers(value, *args, **options)

    monkeypatch.setattr(_base, "scan_numbers", scan)
    found = [ek.check(raw, "matrix", settings=cap).warnings]
    # Scans of the numbers (others read a few bytes: a shell's `"ok":true` is an extra).
    twice = "extra" in place and count > 3
    assert len([size for size in scanned if size > 1000]) == (2 if twice else 1)
    assert [(v.rule, v.pointer) for v in found[0]] == [
        *((rules.NUMBER_UNSAFE_INTEGER, f"{at}/{groups + i}") for i in range(min(count, 3))),
        *([(rules.VIOLATIONS_TRUNCATED, "")] if count > 3 else []),
    ]
    door = json_door(raw, context={"max_violations": 3})
    assert door.envelope_warnings() == found[0]


_JSON_NUMBERS = st.recursive(
    st.one_of(
        st.integers(-(2**60), 2**60),
        st.sampled_from([2**53, -(2**53), 2**63 - 1, 0]),
        st.text(max_size=3),
        st.booleans(),
    ),
    lambda children: (
        st.lists(children, max_size=6)
        | st.dictionaries(st.text("ab/~", max_size=3), children, max_size=4)
    ),
    max_leaves=40,
)
_CAPS = {cap: ek.Settings(max_violations=cap) for cap in range(1, 5)}


@settings(max_examples=200, deadline=None)
@given(
    _JSON_NUMBERS,
    st.dictionaries(st.text("xy~/", min_size=1, max_size=2), _JSON_NUMBERS, max_size=4),
    st.sampled_from(sorted(_CAPS)),
    st.sampled_from(["request", "response"]),
)
def test_kept_warnings_are_the_scan_s(
    payload: Any, unknown: dict[str, Any], cap: int, kind: str
) -> None:
    """The warnings a reading keeps from its validator's scan are those a scan for the
    warnings finds (the JSON door's, without a reading): pointers rebased, same cap, same
    count of those left out; for a reply's unknown keys, put together from each member's."""
    # Past READ_BYTES, where check reads with a NumberReading.
    padded = {"pad": "x" * _spec.READ_BYTES, "p": payload}
    shell = (
        {"op": "a.b"} if kind == "request" else {**unknown, "op": "$reply", "correlationId": "c"}
    )
    raw = orjson.dumps({**shell, "payload": padded})
    verdict = ek.check(raw, "matrix", settings=_CAPS[cap])
    door = json_door(raw, context={"max_violations": cap})
    assert verdict.ok
    # `check` caps the model's warnings as a whole (each scan is capped on its own).
    expected = door.envelope_warnings()
    assert verdict.warnings == (capped(expected, cap) if len(expected) > cap else expected)
