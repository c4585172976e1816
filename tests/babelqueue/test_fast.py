"""The fast path of ``BabelEnvelope`` (``babelqueue/_fast.py``) against the model's own validator.

Whatever the fast validator accepts, the model's validator (with its after-validator) must
accept and build the same envelope, and each rare case the fast path leaves out must make it
decline. ``model_validate_json``, ``model_validate`` and ``check`` must give what the model's
own validator gives, fast path or not.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import envelopekit as ek
from envelopekit import rules
from envelopekit._check import spec_named
from envelopekit._compat import MISSING
from envelopekit._json import BY_TEXT
from envelopekit._settings import Settings
from envelopekit.babelqueue import BabelEnvelope, _envelope
from envelopekit.babelqueue import _fast as fast_module
from envelopekit.babelqueue._envelope import FAST_PATH
from envelopekit.babelqueue._fast import DEPTH, SECONDS_THRESHOLD, fast_schema
from tests._calls import python_calls
from tests.conftest import DATA
from tests.test_check_properties import PROFILE, SEEDS, VALUES, WIDE, mutated

_FULL = BabelEnvelope.__pydantic_validator__


def _errors(exc: ValidationError) -> str:
    # As text: an input of NaN is not equal to itself.
    return repr(exc.errors(include_url=False))


def _full_json(raw: bytes | str, context: Any = None) -> BabelEnvelope | str:
    """The model's own JSON validation (after-validator and all): the envelope, or its errors."""
    try:
        found: BabelEnvelope = _FULL.validate_json(raw, context=context)
    except ValidationError as exc:
        return _errors(exc)
    return found


def _full_python(value: Any) -> BabelEnvelope | str:
    try:
        found: BabelEnvelope = _FULL.validate_python(value)
    except ValidationError as exc:
        return _errors(exc)
    return found


def _fast(raw: bytes | str) -> BabelEnvelope | None:
    try:
        found: BabelEnvelope | None = FAST_PATH.parse(raw)
    except ValidationError:
        return None
    return found


def _mvj(raw: bytes | str) -> BabelEnvelope | str:
    try:
        return BabelEnvelope.model_validate_json(raw)
    except ValidationError as exc:
        return _errors(exc)


def _state(envelope: BaseModel) -> Any:
    """Everything an instance holds, its nested blocks' too (the same for the same message)."""
    out: dict[str, Any] = {
        "class": type(envelope),
        "dict": dict(envelope.__dict__),
        "extra": envelope.__pydantic_extra__,
        "fields_set": envelope.__pydantic_fields_set__,
        "private": envelope.__pydantic_private__,
    }
    for name, value in envelope.__dict__.items():
        if isinstance(value, BaseModel):
            out[name] = _state(value)
    return out


def assert_same(fast: BabelEnvelope, full: BabelEnvelope) -> None:
    """Two envelopes indistinguishable by anything a caller can ask of them."""
    assert _state(fast) == _state(full)
    assert fast == full
    assert repr(fast) == repr(full)
    assert fast.model_dump() == full.model_dump()
    assert fast.model_dump(mode="json") == full.model_dump(mode="json")
    assert fast.model_dump_json() == full.model_dump_json()
    assert fast.to_json() == full.to_json()
    assert fast.envelope_warnings() == full.envelope_warnings() == []
    assert type(fast.__pydantic_extra__) is dict
    assert type(fast.meta.__pydantic_extra__) is dict
    with pytest.raises(ValidationError):
        fast.attempts = 3  # type: ignore[misc]  # frozen, as the model's own


def agree(raw: bytes | str) -> BabelEnvelope | None:
    """The fast path agrees with the model on ``raw``; returns what the fast path took."""
    full = _full_json(raw)
    fast = _fast(raw)
    if fast is not None:
        assert isinstance(full, BabelEnvelope), (raw, full)
        assert_same(fast, full)
    # model_validate_json gives the model's own result, taken fast or not.
    through = _mvj(raw)
    if isinstance(full, BabelEnvelope):
        assert isinstance(through, BabelEnvelope), (raw, through)
        assert _state(through) == _state(full)
        assert through.envelope_warnings() == full.envelope_warnings()
    else:
        assert through == full
    return fast


def check_agrees(raw: bytes, settings: Settings | None = None) -> ek.Verdict[Any]:
    """``check`` with the spec's quick reader gives the verdict it gives without it."""
    spec = spec_named("babelqueue")
    with_quick = ek.check(raw, spec="babelqueue", settings=settings)
    quick, plan = spec.quick, spec.quick_plan
    try:
        spec.quick = None
        spec.quick_plan = (None, spec.quick_plan[1], -1, False)
        without = ek.check(raw, spec="babelqueue", settings=settings)
    finally:
        spec.quick, spec.quick_plan = quick, plan
    assert with_quick.violations == without.violations
    assert with_quick.warnings == without.warnings
    if without.envelope is None:
        assert with_quick.envelope is None
    else:
        assert with_quick.envelope is not None
        assert _state(with_quick.envelope) == _state(without.envelope)
    return with_quick


# --- the corpus and its mutations -----------------------------------------------------------

CORPUS = sorted((DATA / "babelqueue").rglob("*.json"))
BASE: dict[str, Any] = orjson.loads(
    (DATA / "babelqueue" / "fixtures" / "order-created.json").read_bytes()
)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(DATA)))
def test_the_vendored_corpus_agrees(path: Any) -> None:
    raw = path.read_bytes()
    agree(raw)
    agree(orjson.dumps(orjson.loads(raw)))  # compact, as the benchmarks read it
    check_agrees(raw)


def test_the_fast_path_takes_the_common_message() -> None:
    # Not a test that could pass with the fast path never taken: these must be taken.
    for name in ["order-created", "unicode-and-numbers", "dead-lettered", "empty-data-roundtrip"]:
        raw = (DATA / "babelqueue" / "fixtures" / f"{name}.json").read_bytes()
        assert agree(raw) is not None, name
    assert spec_named("babelqueue").quick is not None


@PROFILE
@given(mutated(SEEDS["babelqueue"]))
def test_mutations_agree(raw: bytes) -> None:
    agree(raw)
    check_agrees(raw)


def _data_agrees(data: dict[str, Any]) -> None:
    raw = json.dumps({**BASE, "data": data}).encode("utf-8", "surrogatepass")
    agree(raw)
    check_agrees(raw)
    dict_agrees(json.loads(raw))


@PROFILE
@given(st.dictionaries(st.text(max_size=6), VALUES, max_size=5))
def test_any_data_agrees(data: dict[str, Any]) -> None:
    _data_agrees(data)


# --- each rare case leaves the fast path ------------------------------------------------------


def _message(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(BASE))
    for path, value in changes.items():
        node = document
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        if value is MISSING:
            del node[last]
        else:
            node[last] = value
    return document


DEAD_LETTER = {
    "reason": "failed",
    "error": None,
    "failed_at": 1749132727999,
    "original_queue": "orders",
    "attempts": 3,
}

RARE: dict[str, dict[str, Any]] = {
    "blank job, urn alias": _message(job=" \t", urn="urn:babel:a:b"),
    "no job, urn alias": _message(job=MISSING, urn="urn:babel:a:b"),
    "empty job": _message(job=""),
    "no job, no urn": _message(job=MISSING),
    "unknown top-level key": _message(x_extra=1),
    "forbidden top-level key": _message(timestamp=1),
    "unknown meta key": _message(meta__region="eu"),
    "forbidden meta key": _message(meta__attempts=1),
    "unknown dead_letter key": _message(dead_letter={**DEAD_LETTER, "node": "n1"}),
    "created_at in seconds": _message(meta__created_at=1749132727),
    "created_at just below 10^11": _message(meta__created_at=SECONDS_THRESHOLD - 1),
    "integer beyond 2^53-1 in data": _message(data={"n": 2**53}),
    "negative integer beyond 2^53-1": _message(data={"n": -(2**53)}),
    "integer beyond int64 in data": _message(data={"n": 2**64}),
    "nested unsafe integer": _message(data={"a": [{"b": [2**60]}]}),
    "float beyond 2^53-1": _message(data={"f": 1e300}),
}
RAW_RARE: dict[str, bytes] = {
    "NaN in data": orjson.dumps(BASE).replace(b'"order_id":1042', b'"order_id":NaN'),
    "Infinity in data": orjson.dumps(BASE).replace(b'"order_id":1042', b'"order_id":-Infinity'),
    "overflowing float in data": orjson.dumps(BASE).replace(b'"order_id":1042', b'"x":1e400'),
    "not JSON": b'{"job": ',
    # Past the parser's 4,300 digits: read again with a stand-in, also alongside other findings.
    "5,000-digit integer in data": orjson.dumps(BASE).replace(
        b'"order_id":1042', b'"order_id":' + b"9" * 5000
    ),
    "NaN, then a 5,000-digit integer": orjson.dumps(BASE).replace(
        b'"order_id":1042', b'"x":NaN,"order_id":-' + b"9" * 5000
    ),
    "a 5,000-digit integer, then NaN": orjson.dumps(BASE).replace(
        b'"order_id":1042', b'"order_id":' + b"9" * 5000 + b',"x":NaN'
    ),
    "a 5,000-digit attempts": orjson.dumps(BASE).replace(
        b'"attempts":0', b'"attempts":' + b"9" * 5000
    ),
    "two 5,000-digit integers, a blank job": orjson.dumps({**BASE, "job": " "}).replace(
        b'"order_id":1042', b'"a":' + b"9" * 5000 + b',"b":' + b"8" * 4400
    ),
    "too deep data": orjson.dumps({**BASE, "data": {"x": []}}).replace(
        b"[]", b"[" * (DEPTH - 1) + b"]" * (DEPTH - 1)
    ),
}


@pytest.mark.parametrize("name", sorted(RARE) + sorted(RAW_RARE))
def test_each_rare_case_is_left_to_the_model(name: str) -> None:
    raw = RAW_RARE[name] if name in RAW_RARE else json.dumps(RARE[name]).encode()
    assert agree(raw) is None
    check_agrees(raw)
    if name in RARE:
        dict_agrees(RARE[name])


def test_a_long_integer_the_quick_reader_stopped_at_is_read_once_as_its_stand_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = spec_named("babelqueue")
    raw = RAW_RARE["5,000-digit integer in data"]
    read: list[bytes | str] = []
    validate = spec.validate

    def recorded(text: bytes | str, settings: Settings) -> ek.Verdict[Any]:
        read.append(text)
        return validate(text, settings)

    monkeypatch.setattr(spec, "validate", recorded)
    assert ek.check(raw, spec="babelqueue").rules() == [rules.NUMBER_OUT_OF_RANGE]
    assert len(read) == 1
    assert b"9" * 5000 not in read[0] and b"18446744073709551616" in read[0]


def test_the_rare_cases_still_get_the_models_findings() -> None:
    # Each is read (or refused) by the model as before: spot-check what it reports.
    assert BabelEnvelope.model_validate_json(orjson.dumps(RARE["no job, urn alias"])).job == (
        "urn:babel:a:b"
    )
    warned = ek.check(orjson.dumps(RARE["created_at in seconds"]), spec="babelqueue")
    assert [w.rule for w in warned.warnings] == [rules.CREATED_AT_SECONDS]
    dropped = BabelEnvelope.model_validate_json(orjson.dumps(RARE["forbidden meta key"]))
    assert [w.rule for w in dropped.envelope_warnings()] == [rules.FORBIDDEN_KEY]
    refused = ek.check(RAW_RARE["NaN in data"], spec="babelqueue")
    assert refused.rules() == [rules.NUMBER_NON_FINITE]
    missing = ek.check(orjson.dumps(RARE["no job, no urn"]), spec="babelqueue")
    assert missing.rules() == [rules.URN_MISSING]


@pytest.mark.parametrize(
    "data",
    [{"n": 2**53 - 1}, {"n": -(2**53 - 1)}, {"f": 9007199254740991.0}, {"f": -0.0}, {"b": True}],
    ids=["max safe", "min safe", "max safe float", "negative zero", "a boolean"],
)
def test_the_bounds_are_taken(data: dict[str, Any]) -> None:
    raw = orjson.dumps({**BASE, "data": data})
    taken = agree(raw)
    assert taken is not None
    assert taken.data == data and type(taken.data[next(iter(data))]) is type(data[next(iter(data))])


def test_depth_bound_of_the_fast_path() -> None:
    def nested(levels: int) -> bytes:
        return orjson.dumps(BASE).replace(
            b'"order_id":1042', b'"x":' + b"[" * levels + b"1" + b"]" * levels
        )

    # The top-level object is 1 and `data` 2: DEPTH - 2 arrays inside `data` are within DEPTH.
    assert agree(nested(DEPTH - 2)) is not None
    assert agree(nested(DEPTH - 1)) is None
    # A too-deep message is refused by check whatever the fast path would do.
    deep = nested(DEPTH - 2)
    refused = check_agrees(deep, Settings(max_depth=DEPTH - 1))
    assert refused.rules() == [rules.MESSAGE_TOO_DEEP]
    assert check_agrees(deep, Settings(max_depth=DEPTH)).ok


def test_check_still_looks_for_duplicate_keys() -> None:
    raw = orjson.dumps(BASE).replace(b'"order_id":1042', b'"order_id":1042,"order_id":1043')
    assert agree(raw) is not None  # the fast path takes it: the last one wins, as in the model
    warned = check_agrees(raw, Settings(duplicate_keys="warn"))
    assert [w.rule for w in warned.warnings] == [rules.JSON_DUPLICATE_KEY]
    assert check_agrees(raw, Settings(duplicate_keys="refuse")).rules() == [
        rules.JSON_DUPLICATE_KEY
    ]


def test_check_still_applies_the_size_limit() -> None:
    raw = orjson.dumps(BASE)
    assert check_agrees(raw, Settings(max_message_bytes=len(raw) - 1)).rules() == [
        rules.MESSAGE_TOO_LARGE
    ]
    assert check_agrees(raw, Settings(max_message_bytes=len(raw))).ok


def test_a_str_message_and_a_context() -> None:
    raw = orjson.dumps(BASE)
    assert agree(raw.decode()) is not None
    assert check_agrees(raw).ok
    assert ek.check(raw.decode(), spec="babelqueue").ok
    # A context changes nothing the fast path decides (it only caps the rare path's warnings).
    with_context = BabelEnvelope.model_validate_json(raw, context={"max_violations": 1})
    assert_same(with_context, BabelEnvelope.model_validate_json(raw))


def test_the_door_reads_each_option_past_its_common_call() -> None:
    """The common call is tested first; each option still reaches the model's own validator.

    The options are keyword-only, as ``BaseModel.model_validate_json``'s.
    """
    # Three unsafe integers: the context's cap of 1 keeps one warning and counts the rest.
    noted = orjson.dumps({**BASE, "data": {"a": 2**60, "b": 2**61, "c": 2**62}})
    capped = BabelEnvelope.model_validate_json(noted, context={"max_violations": 1})
    assert len(capped.envelope_warnings()) < len(
        BabelEnvelope.model_validate_json(noted).envelope_warnings()
    )
    # `strict=False`: the lax reading takes a number written as a string.
    lax = orjson.dumps({**BASE, "attempts": "3"})
    with pytest.raises(ValidationError):
        BabelEnvelope.model_validate_json(lax)
    assert BabelEnvelope.model_validate_json(lax, strict=False).attempts == 3
    # `extra="forbid"`: an unknown key is refused.
    unknown = orjson.dumps({**BASE, "x_note": 1})
    assert BabelEnvelope.model_validate_json(unknown).model_extra == {"x_note": 1}
    with pytest.raises(ValidationError, match="x_note"):
        BabelEnvelope.model_validate_json(unknown, extra="forbid")
    with pytest.raises(TypeError):
        BabelEnvelope.model_validate_json(unknown, None, "forbid")  # type: ignore[call-arg]


# --- parametrised and derived models keep the model's own validation ------------------------


class Order(BaseModel):
    order_id: int


def test_a_parametrised_envelope_validates_its_data() -> None:
    raw = orjson.dumps(BASE)
    typed = BabelEnvelope[Order].model_validate_json(raw)
    assert type(typed).__name__ == "BabelEnvelope[Order]"
    assert typed.data == Order(order_id=1042)
    assert BabelEnvelope[Order].model_validate(orjson.loads(raw)).data == Order(order_id=1042)
    with pytest.raises(ValidationError):
        BabelEnvelope[Order].model_validate_json(orjson.dumps({**BASE, "data": {"x": 1}}))


def test_a_subclass_gets_its_own_class() -> None:
    class Mine(BabelEnvelope):
        pass

    raw = orjson.dumps(BASE)
    assert type(Mine.model_validate_json(raw)) is Mine
    assert type(Mine.model_validate(orjson.loads(raw))) is Mine


@pytest.mark.parametrize(
    "options",
    [{"strict": False}, {"strict": True}, {"extra": "forbid"}, {"by_alias": True}],
    ids=["lax", "strict", "extra forbid", "by alias"],
)
def test_options_take_the_models_validator(options: dict[str, Any]) -> None:
    raw = orjson.dumps({**BASE, "x_extra": 1})
    try:
        expected: Any = _FULL.validate_json(raw, **options)
    except ValidationError as exc:
        expected = _errors(exc)
    try:
        found: Any = BabelEnvelope.model_validate_json(raw, **options)
    except ValidationError as exc:
        found = _errors(exc)
    assert found == expected


# --- the dict door ----------------------------------------------------------------------------


def dict_agrees(value: Any) -> None:
    """``model_validate`` gives what the model's own Python validation gives."""
    full = _full_python(value)
    try:
        found: Any = BabelEnvelope.model_validate(value)
    except ValidationError as exc:
        found = _errors(exc)
    if isinstance(full, BabelEnvelope):
        assert isinstance(found, BabelEnvelope)
        assert _state(found) == _state(full)
        assert found.envelope_warnings() == full.envelope_warnings()
    else:
        assert found == full


class _Text(str):
    pass


@pytest.mark.parametrize(
    "document",
    [
        BASE,
        {**BASE, "data": {"t": (1, 2)}},
        {**BASE, "data": {"n": float("nan")}},
        {**BASE, "data": {"n": 2**60}},
        {**BASE, "data": {"n": 2**70}},
        {**BASE, "data": {"s": "\ud800"}},
        {**BASE, "data": {"s": _Text("x")}},
        {**BASE, "job": _Text("urn:babel:a:b")},
        {**BASE, "attempts": True},
        {**BASE, "meta": {**BASE["meta"], "created_at": 5}},
        {**BASE, "x_extra": 1},
        {**BASE, "data": {1: "non-string key"}},
    ],
    ids=[
        "plain",
        "a tuple",
        "NaN",
        "unsafe integer",
        "beyond 64 bits",
        "lone surrogate",
        "str subclass in data",
        "str subclass job",
        "bool attempts",
        "created_at in seconds",
        "unknown key",
        "non-string key",
    ],
)
def test_the_dict_door_agrees(document: dict[str, Any]) -> None:
    dict_agrees(document)


def test_the_dict_door_keeps_the_values_given() -> None:
    # `data` is validated as `dict[str, Any]` is: the dict is new, its values the very ones given.
    items = [1, 2]
    found = BabelEnvelope.model_validate({**BASE, "data": {"items": items}})
    assert found.data["items"] is items
    assert found.data == {"items": [1, 2]}


def test_the_dict_door_takes_a_model_instance_through_the_model() -> None:
    meta = BabelEnvelope.model_validate(BASE).meta
    dict_agrees({**BASE, "meta": meta})


def _nested(levels: int, inner: object) -> object:
    for _ in range(levels):
        inner = [inner]
    return inner


def test_the_fast_path_is_not_tried_over_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12: over 16 KiB the fast path cost up to 14x the model's own reading.

    Its JSON-value union copies a container into the error of each scalar choice that fails
    on it, at every level (20 levels of arrays around 100,000 integers: 118 ms against the
    model's 8.6 ms). Neither door tries it over ``FULL_REPORT_BYTES``.
    """
    tried: list[str] = []
    validate_json = FAST_PATH.validator_json()
    assert validate_json is not None
    built = FAST_PATH._built

    def parse(raw: bytes) -> Any:
        tried.append("json")
        return validate_json(raw)

    def counted_built() -> Any:
        tried.append("dict")
        return built()

    raw = BabelEnvelope.create("urn:x:y", {"x": _nested(20, list(range(4_000)))}).to_json()
    small = BabelEnvelope.create("urn:x:y", {"x": _nested(20, list(range(30)))}).to_json()
    assert len(raw) > 16_384
    expected, expected_small = _full_json(raw), _full_json(small)
    # The door reads the fast validator through its module's `_parse` (FAST_PATH.parse).
    monkeypatch.setattr(_envelope, "_parse", parse)
    monkeypatch.setattr(FAST_PATH, "_built", counted_built)
    assert BabelEnvelope.model_validate_json(raw) == expected
    assert BabelEnvelope.model_validate(json.loads(raw)) == expected
    assert tried == []
    assert BabelEnvelope.model_validate_json(small) == expected_small
    assert BabelEnvelope.model_validate(json.loads(small)) == expected_small
    assert tried == ["json", "dict"]


def _python_calls(call: Any, *args: Any) -> list[str]:
    """The Python functions ``call(*args)`` runs (``sys.setprofile``), by name."""
    return [code.co_name for code in python_calls(partial(call, *args))]


def test_flat_data_takes_no_python_call_and_each_container_one() -> None:
    """A scalar member of ``data`` is checked in Rust; an array or object member is one call.

    The first design checked containers in Rust too, with a union per level: pydantic-core
    copies a container into the error of each choice that fails on it, so 16 KB of nested
    arrays cost 17 times the model's own reading (issue 12, ``BENCHMARKS.md``).
    """
    validate = FAST_PATH.validator_json()
    assert validate is not None
    flat = orjson.dumps({**BASE, "data": {"s": "a", "i": 1, "f": 0.5, "b": True, "n": None}})
    assert validate(flat) is not None
    assert _python_calls(validate, flat) == []
    nested = orjson.dumps({**BASE, "data": {"a": [[1], {"b": [2]}], "c": {"d": []}, "e": 1}})
    assert validate(nested) is not None
    assert sorted(_python_calls(validate, nested)) == ["_plain_container"] * 2 + ["_within"] * 5


def test_no_union_is_tried_on_a_container() -> None:
    """No union schema reads ``data``'s containers: a failing choice would copy each one."""
    schema = fast_schema(*FAST_PATH._arguments)
    found: list[str] = []
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "union":
                found.append(repr(node)[:80])
            stack.extend(v for k, v in node.items() if k != "metadata")
        elif isinstance(node, list):
            stack.extend(node)
    assert found == []


_JSON_CONTAINERS = WIDE.filter(lambda value: isinstance(value, (dict, list)))


@settings(max_examples=300, deadline=None)
@given(_JSON_CONTAINERS, st.integers(0, 5))
def test_containers_read_as_text_are_within_as_the_walk_says(value: Any, levels: int) -> None:
    # A container of BY_TEXT members or more is first read as orjson writes it; what that
    # shows within the bounds, the walk alone shows within too, and the verdicts are the same.
    assert fast_module._within(value, levels) is fast_module._within(value, levels, False)
    if fast_module._written_within(value, levels):
        assert fast_module._within(value, levels, False)


@PROFILE
@given(st.dictionaries(st.text(max_size=6), WIDE, max_size=5))
def test_wide_data_agrees(data: dict[str, Any]) -> None:
    # Containers of BY_TEXT members and more: read from the text orjson writes of them.
    _data_agrees(data)


def test_a_wide_container_is_written_not_walked() -> None:
    validate = FAST_PATH.validator_json()
    assert validate is not None
    items = [{"sku": f"a{i}", "qty": i, "tags": ["x", "y"]} for i in range(40)]
    raw = orjson.dumps({**BASE, "data": {"items": items}})
    assert agree(raw) is not None
    # One call for the member, and the list written whole, its depth read by the depth scan:
    # the same calls for three times the items, no step an item (before: 81 calls).
    calls = _python_calls(validate, raw)
    assert calls[:4] == ["_plain_container", "_within", "_written_within", "written_plain"]
    assert "exceeds_depth" in calls and calls.count("_within") == 1
    longer = orjson.dumps({**BASE, "data": {"items": items * 3}})
    assert _python_calls(validate, longer) == calls

    # Within the bound it is taken; one level deeper, or with a number to note, it is left to
    # the model as before. `items` is at depth 3: DEPTH - 3 levels inside it are within DEPTH.
    def with_nest(levels: int) -> bytes:
        value: Any = 1
        for _ in range(levels):
            value = [value]
        return orjson.dumps({**BASE, "data": {"items": [*items, value]}})

    assert agree(with_nest(DEPTH - 3)) is not None
    assert agree(with_nest(DEPTH - 2)) is None
    assert agree(orjson.dumps({**BASE, "data": {"items": [*items, 2**53]}})) is None


@pytest.mark.parametrize(
    "value",
    [
        2**53 - 1,
        2**53,
        -(2**53),
        9007199254740992.0,
        1e16,
        -1e16,
        float("nan"),
        float("-inf"),
        None,
        "e+5",
        "1234567890123456",
        "[[[[",
        "]]]]",
        '"]]]]',
        "\\",
    ],
)
def test_each_bound_is_read_from_the_text_as_the_walk_reads_it(value: Any) -> None:
    # A wide container holding the value once, in a few levels of arrays; read as text first.
    wide = [0] * (BY_TEXT - 1) + [[[value]]]
    for levels in range(5):
        assert fast_module._within(wide, levels) is fast_module._within(wide, levels, False)
