"""A user's subclass of the envelope keeps the spec's rules for the fields and keys it adds.

Its own fields are top-level members of the message: their numbers follow the rules that an
unknown top-level key follows on the base envelope. Its own ``model_config`` closing or
ignoring unknown keys still drops the spec's forbidden keys with a warning (policy K-15).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit._failfast import FULL_REPORT_BYTES
from envelopekit.babelqueue import BabelEnvelope, BabelMeta
from tests.babelqueue.test_consume import BASE

# Large enough that the JSON door reads it as `check` does (one error per array at most).
_PAD = "x" * (FULL_REPORT_BYTES + 1)

Door = Callable[[type[BabelEnvelope[Any]], dict[str, Any]], BabelEnvelope[Any]]


def _text(members: dict[str, Any]) -> str:
    # `json` writes NaN and Infinity as the tokens pydantic's JSON parser reads.
    return json.dumps(members, separators=(",", ":"))


PYTHON = ["dict", "dict-large", "adapter-python", "keywords"]
"""The doors of Python data."""

DOORS: dict[str, Door] = {
    "json": lambda model, members: model.model_validate_json(_text(members)),
    "json-large": lambda model, members: model.model_validate_json(
        _text({**members, "data": {**members["data"], "pad": _PAD}})
    ),
    "dict": lambda model, members: model.model_validate(members),
    "dict-large": lambda model, members: model.model_validate(
        {**members, "data": {**members["data"], "pad": _PAD}}
    ),
    "adapter-python": lambda model, members: TypeAdapter(model).validate_python(members),
    "adapter-json": lambda model, members: TypeAdapter(model).validate_json(_text(members)),
    "keywords": lambda model, members: model(**members),
}


def _verdict(door: Door, model: type[BabelEnvelope[Any]], members: dict[str, Any]) -> Any:
    """What a door makes of a message: its refusals, or its warnings and what it writes."""
    try:
        envelope = door(model, members)
    except ValidationError as exc:
        return ("refused", [(v.rule, v.pointer) for v in ek.violations(exc, model=model)])
    warnings = [(v.rule, v.pointer) for v in envelope.envelope_warnings()]
    return ("read", warnings, json.loads(envelope.to_json()))


# --- numbers in a subclass's own fields -------------------------------------------------------


class _Limits(BaseModel):
    model_config = ConfigDict(strict=True, populate_by_name=True)

    top: int = Field(alias="Top")


class _Scored(BabelEnvelope):
    """A user's envelope adding a float."""

    score: float = 0.5


class _Counted(BabelEnvelope):
    """A user's envelope adding an integer under an alias of its own."""

    count: int = Field(default=0, alias="Count")


class _Listed(BabelEnvelope):
    """A user's envelope adding a list of floats."""

    scores: list[float] = Field(default_factory=list)


class _Limited(BabelEnvelope[dict[str, Any]]):
    """A user's envelope adding a model, with ``data`` typed (read as its JSON text)."""

    limits: _Limits | None = None


class _TypedScored(BabelEnvelope[dict[str, object]]):
    """A user's envelope adding a float, with ``data`` typed (read through its JSON text)."""

    score: float = 0.5


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
@pytest.mark.parametrize(
    ("model", "member", "value", "expected"),
    [
        (_Scored, "score", float("nan"), ("refused", [(rules.NUMBER_NON_FINITE, "/score")])),
        (_Scored, "score", float("inf"), ("refused", [(rules.NUMBER_NON_FINITE, "/score")])),
        (_TypedScored, "score", float("-inf"), ("refused", [(rules.NUMBER_NON_FINITE, "/score")])),
        (_Counted, "Count", 2**60, [(rules.NUMBER_UNSAFE_INTEGER, "/Count")]),
        (_Counted, "Count", 2**64, ("refused", [(rules.NUMBER_OUT_OF_RANGE, "/Count")])),
        (
            _Listed,
            "scores",
            [1.5, float("nan")],
            ("refused", [(rules.NUMBER_NON_FINITE, "/scores/1")]),
        ),
        (_Limited, "limits", {"Top": 2**60}, [(rules.NUMBER_UNSAFE_INTEGER, "/limits/Top")]),
        (
            _Limited,
            "limits",
            {"Top": -(2**63) - 1},
            ("refused", [(rules.NUMBER_OUT_OF_RANGE, "/limits/Top")]),
        ),
    ],
    ids=[
        "nan",
        "infinity",
        "typed-data",
        "unsafe",
        "beyond-int64",
        "list",
        "model",
        "model-beyond",
    ],
)
def test_own_fields_follow_the_number_rules_of_a_top_level_key(
    door: Door, model: type[BabelEnvelope[Any]], member: str, value: Any, expected: Any
) -> None:
    # Its own fields were not scanned: a NaN, or an integer the base envelope refuses as an
    # unknown key, was read without a word, and the NaN written as `null`.
    members = {**BASE, member: value}
    found = _verdict(door, model, members)
    if expected[0] == "refused":
        assert found == expected
    else:
        assert found[:2] == ("read", expected)
        assert found[2][member] == value
    # The base envelope says the same of the same message, where the member is an unknown key.
    base = _verdict(door, BabelEnvelope, members)
    assert base[:2] == found[:2]


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
def test_own_fields_of_plain_numbers_note_nothing(door: Door) -> None:
    members = {**BASE, "score": 1.5, "Count": 2**53 - 1, "limits": {"Top": -(2**53) + 1}}
    for model in (_Scored, _Counted, _Limited):
        assert _verdict(door, model, members)[:2] == ("read", [])


@pytest.mark.parametrize("door", [DOORS[name] for name in PYTHON], ids=PYTHON)
@pytest.mark.parametrize(
    ("members", "pointer"),
    [
        ({**BASE, "x_note": float("nan")}, "/x_note"),
        ({**BASE, "data": {"x": float("inf")}}, "/data/x"),
    ],
    ids=["unknown-key", "data"],
)
def test_a_typed_envelope_refuses_non_finite_python_numbers_as_the_envelope_does(
    door: Door, members: dict[str, Any], pointer: str
) -> None:
    # Its Python doors read a dict through the JSON orjson writes of it, where NaN and Infinity
    # are `null`: an unknown key's NaN was read as null, a float in `data` refused as a type.
    for model in (BabelEnvelope[dict[str, float]], BabelEnvelope):
        assert _verdict(door, model, members) == ("refused", [(rules.NUMBER_NON_FINITE, pointer)])


# --- the forbidden keys under a subclass's own `extra` ----------------------------------------


class _Closed(BabelEnvelope):
    """A user's envelope refusing unknown keys."""

    model_config = ConfigDict(extra="forbid")


class _ClosedTyped(BabelEnvelope[dict[str, object]]):
    """A user's envelope refusing unknown keys, with ``data`` typed (read as its JSON text)."""

    model_config = ConfigDict(extra="forbid")

    tenant: str = "none"


class _Ignoring(BabelEnvelope):
    """A user's envelope ignoring unknown keys."""

    model_config = ConfigDict(extra="ignore")


class _Open(BabelEnvelope):
    """A user's envelope saying again that it keeps unknown keys."""

    model_config = ConfigDict(extra="allow")


_FORBIDDEN = {"timestamp": 1749132727, "meta": {**BASE["meta"], "ts": 1749132727}}
_DROPPED = [(rules.FORBIDDEN_KEY, "/timestamp"), (rules.FORBIDDEN_KEY, "/meta/ts")]


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
@pytest.mark.parametrize("model", [_Closed, _ClosedTyped, _Ignoring, _Open, BabelEnvelope])
def test_forbidden_keys_are_dropped_with_a_warning_whatever_extra_says(
    door: Door, model: type[BabelEnvelope[Any]]
) -> None:
    # K-15: a consumer drops them with a warning and never re-emits them. A subclass with
    # `extra="forbid"` refused the message; one with `extra="ignore"` dropped them unsaid.
    members = {**BASE, **_FORBIDDEN}
    found = _verdict(door, model, members)
    assert found[:2] == ("read", _DROPPED)
    written = found[2]
    assert "timestamp" not in written
    assert "ts" not in written["meta"]


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
@pytest.mark.parametrize("model", [_Closed, _ClosedTyped])
def test_a_closed_subclass_refuses_the_other_unknown_keys(
    door: Door, model: type[BabelEnvelope[Any]]
) -> None:
    members = {**BASE, **_FORBIDDEN, "x_note": 1, "x_more": [2**70]}
    closed = rules.structural("message-envelope", "additionalProperties")
    assert _verdict(door, model, members) == ("refused", [(closed, "/x_note"), (closed, "/x_more")])


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
def test_an_ignoring_subclass_drops_the_other_unknown_keys_unsaid(door: Door) -> None:
    # Dropped before the number rules read them: an ignored key is not the message's.
    members = {**BASE, **_FORBIDDEN, "x_note": 1, "x_more": [2**70, float("nan")]}
    found = _verdict(door, _Ignoring, members)
    assert found[:2] == ("read", _DROPPED)
    assert "x_note" not in found[2]
    assert "x_more" not in found[2]
    assert door(_Ignoring, members).model_extra == {}


def test_a_closed_subclass_keeps_its_json_schema() -> None:
    assert _Closed.model_json_schema()["additionalProperties"] is False
    assert _Closed.model_config.get("extra") == "forbid"


_RUN_TIME: dict[str, Door] = {
    "json": lambda model, members: model.model_validate_json(_text(members), extra="allow"),
    "json-large": lambda model, members: model.model_validate_json(
        _text({**members, "data": {**members["data"], "pad": _PAD}}), extra="allow"
    ),
    "dict": lambda model, members: model.model_validate(members, extra="allow"),
    "dict-large": lambda model, members: model.model_validate(
        {**members, "data": {**members["data"], "pad": _PAD}}, extra="allow"
    ),
    "adapter-python": lambda model, members: TypeAdapter(model).validate_python(
        members, extra="allow"
    ),
    "adapter-json": lambda model, members: TypeAdapter(model).validate_json(
        _text(members), extra="allow"
    ),
}


@pytest.mark.parametrize("door", _RUN_TIME.values(), ids=_RUN_TIME.keys())
@pytest.mark.parametrize("model", [_Closed, _ClosedTyped, _Ignoring])
def test_a_run_time_extra_allow_opens_a_closed_subclass_as_pydantic_documents(
    door: Door, model: type[BabelEnvelope[Any]]
) -> None:
    # pydantic's run-time `extra` is over the model's own: a closed subclass refused the other
    # unknown keys, an ignoring one dropped them. K-15 holds as on the envelope.
    members = {**BASE, **_FORBIDDEN, "x_note": 1}
    found = _verdict(door, model, members)
    assert found[:2] == ("read", _DROPPED)
    assert found[2]["x_note"] == 1
    assert "timestamp" not in found[2]
    assert _verdict(door, BabelEnvelope, members)[:2] == found[:2]
    # The class's own `extra` holds again on the next call.
    again = _verdict(DOORS["dict"], model, members)
    assert again[0] == "refused" or "x_note" not in again[2]


@pytest.mark.parametrize("extra", ["ignore", "forbid"])
@pytest.mark.parametrize("model", [_Closed, _Ignoring])
def test_a_run_time_extra_ignore_or_forbid_reads_as_on_the_envelope(
    model: type[BabelEnvelope[Any]], extra: Any
) -> None:
    # pydantic-core applies it over every model's own `extra`, the envelope's too.
    members = {**BASE, **_FORBIDDEN, "x_note": 1}
    assert _outcome(model, members, extra) == _outcome(BabelEnvelope, members, extra)


def _outcome(model: type[BabelEnvelope[Any]], members: dict[str, Any], extra: Any) -> Any:
    outcomes: list[Any] = []
    reads: list[Callable[[], BabelEnvelope[Any]]] = [
        lambda: model.model_validate(members, extra=extra),
        lambda: model.model_validate_json(_text(members), extra=extra),
    ]
    for read in reads:
        try:
            envelope = read()
        except ValidationError as exc:
            found = [(v.rule, v.pointer) for v in ek.violations(exc, model=model)]
            outcomes.append(("refused", found))
            continue
        warnings = [(v.rule, v.pointer) for v in envelope.envelope_warnings()]
        outcomes.append(("read", warnings, json.loads(envelope.to_json())))
    return outcomes


# --- the forbidden `meta` keys under a user's meta class's own `extra` ------------------------


class _ClosedMeta(BabelMeta):
    """A user's `meta` refusing unknown keys."""

    model_config = ConfigDict(extra="forbid")


class _IgnoringMeta(BabelMeta):
    """A user's `meta` ignoring unknown keys."""

    model_config = ConfigDict(extra="ignore")


class _WithClosedMeta(BabelEnvelope):
    """A user's envelope typing `meta` by a closed class."""

    meta: _ClosedMeta


class _WithIgnoringMeta(BabelEnvelope[dict[str, object]]):
    """A user's envelope typing `meta` by an ignoring class, with ``data`` typed."""

    meta: _IgnoringMeta


_META_FORBIDDEN: dict[str, Any] = {
    "timestamp": 1749132727,
    "meta": {**BASE["meta"], "ts": 1749132727, "source": "php", "max_retries": 3},
}
_META_DROPPED = [
    (rules.FORBIDDEN_KEY, "/timestamp"),
    (rules.FORBIDDEN_KEY, "/meta/max_retries"),
    (rules.FORBIDDEN_KEY, "/meta/source"),
    (rules.FORBIDDEN_KEY, "/meta/ts"),
]


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
@pytest.mark.parametrize("model", [_WithClosedMeta, _WithIgnoringMeta])
def test_forbidden_meta_keys_are_dropped_with_a_warning_whatever_the_meta_class_says(
    door: Door, model: type[BabelEnvelope[Any]]
) -> None:
    # K-15 for `meta` (babelqueue.md 1.2): a closed meta class refused the message at /meta/ts,
    # an ignoring one dropped the keys unsaid.
    found = _verdict(door, model, {**BASE, **_META_FORBIDDEN})
    assert found[:2] == ("read", _META_DROPPED)
    assert found[2]["meta"] == BASE["meta"]
    assert _verdict(door, BabelEnvelope, {**BASE, **_META_FORBIDDEN})[:2] == found[:2]


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
def test_a_closed_meta_class_refuses_the_other_unknown_meta_keys(door: Door) -> None:
    members = {**BASE, "meta": {**_META_FORBIDDEN["meta"], "x_hop": 2}}
    closed = rules.structural("message-envelope", "additionalProperties")
    assert _verdict(door, _WithClosedMeta, members) == ("refused", [(closed, "/meta/x_hop")])


@pytest.mark.parametrize("door", DOORS.values(), ids=DOORS.keys())
def test_an_ignoring_meta_class_drops_the_other_unknown_meta_keys_unsaid(door: Door) -> None:
    members = {**BASE, "meta": {**_META_FORBIDDEN["meta"], "x_hop": [2**70, float("nan")]}}
    found = _verdict(door, _WithIgnoringMeta, members)
    assert found[:2] == ("read", _META_DROPPED[1:])
    assert found[2]["meta"] == BASE["meta"]


def test_a_run_time_extra_allow_opens_a_closed_meta_class() -> None:
    members = {**BASE, "meta": {**_META_FORBIDDEN["meta"], "x_hop": 2}}
    for model in (_WithClosedMeta, _WithIgnoringMeta):
        read = model.model_validate(members, extra="allow")
        assert read.meta.model_extra == {"x_hop": 2}
        assert [(v.rule, v.pointer) for v in read.envelope_warnings()] == _META_DROPPED[1:]


def test_a_closed_meta_class_keeps_its_json_schema() -> None:
    assert _ClosedMeta.model_json_schema()["additionalProperties"] is False
    assert (
        _WithClosedMeta.model_json_schema()["$defs"]["_ClosedMeta"]["additionalProperties"] is False
    )


class _RegionMeta(BabelMeta):
    """A user's `meta` with members of its own, one under a wire name of its own."""

    region: str
    hop_count: int = Field(alias="hopCount")


class _WithRegionMeta(BabelEnvelope):
    """A user's envelope typing `meta` by a class with members of its own."""

    meta: _RegionMeta


def test_a_meta_class_s_own_members_are_re_emitted() -> None:
    # `to_json()` wrote the spec's meta keys only: `region` and `hopCount` were lost on every
    # re-emission (retry, dead letter), though `model_dump_json()` wrote them.
    meta = {**BASE["meta"], "region": "eu", "hopCount": 2, "x_note": "kept"}
    raw = _text({**BASE, "meta": meta}).encode()
    envelope = _WithRegionMeta.model_validate_json(raw)
    assert envelope.to_json() == raw
    for again in (envelope.retried(), envelope.dead_lettered("failed", error=ValueError("no"))):
        assert {k: again.to_wire()["meta"][k] for k in ("region", "hopCount", "x_note")} == {
            "region": "eu",
            "hopCount": 2,
            "x_note": "kept",
        }
