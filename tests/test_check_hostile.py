"""Hostile input within the limits: ``check``'s cost stays bounded and its findings exact.

Each test is a reproducer from issue 12; ``bench/hostile.py`` times the same classes at the
size limit (speed is proven there, never by a timed assertion here).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json

import envelopekit as ek
from envelopekit import _check as ek_check
from envelopekit import _json as _json_module
from envelopekit import rules
from envelopekit._failfast import FULL_REPORT_BYTES, fail_fast_validator
from envelopekit._json import (
    OUT_OF_RANGE_STAND_IN,
    PARSER_MAX_DIGITS,
    NumberReading,
    exceeds_depth,
    long_integer_digits,
    more_brackets_than,
    needs_scan,
    scan_numbers,
)
from envelopekit._violations import MAX_MESSAGE_CHARS, truncated
from envelopekit.babelqueue import BabelEnvelope
from envelopekit.matrix import _ops
from envelopekit.matrix._ops import DOMAIN_OP_PATTERN, op_problem
from envelopekit.som import SomEnvelope
from envelopekit.som._story_context import Asset, StoryContext
from tests._calls import peak_memory
from tests.test_duplicates import _lines_run

DATA = Path(__file__).parent / "data"
BQ_HEAD = (
    b'{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",'
    b'"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php",'
    b'"schema_version":1,"created_at":1749132727000},"attempts":0,"data":'
)


_MX_HEAD = b'{"op":"fs.write","correlationId":"c-1","replyTo":"$replies.c-1","payload":'


def bq(data: bytes) -> bytes:
    return BQ_HEAD + data + b"}"


def som_with_assets(item: bytes, count: int) -> bytes:
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope["payload"]["assets"] = []
    head, marker, tail = orjson.dumps(envelope).partition(b'"assets":[]')
    assert marker
    return head + b'"assets":[' + b",".join([item] * count) + b"]" + tail


def som_actors(actors: bytes) -> bytes:
    """The beat-6 story with ``_actors`` written as ``actors``."""
    envelope = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    envelope["_actors"] = "@"
    return orjson.dumps(envelope).replace(b'"@"', actors)


def recorded(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, at: int = 0) -> list[Any]:
    """The argument at ``at`` of each call of ``owner.name`` from now on (it still runs)."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[at])
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return calls


def resolves(document: Any, pointer: str) -> bool:
    node = document
    for raw in pointer.split("/")[1:]:
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and segment in node:
            node = node[segment]
        elif isinstance(node, list) and segment.isdigit() and int(segment) < len(node):
            node = node[int(segment)]
        else:
            return False
    return True


# --- the violation cap ------------------------------------------------------------------------


def test_a_small_message_reports_at_most_max_violations_and_how_many_were_left_out() -> None:
    raw = som_with_assets(b"{}", 300)  # 900 missing members, under the all-errors size
    assert len(raw) <= FULL_REPORT_BYTES
    verdict = ek.check(raw, "som", settings=ek.Settings(max_violations=10))
    assert len(verdict.violations) == 11
    last = verdict.violations[-1]
    assert last.rule == rules.VIOLATIONS_TRUNCATED
    assert last.pointer == ""
    assert re.fullmatch(
        r"(\d+) more findings left out \(the max_violations setting\)\.", last.message
    )
    left = int(last.message.split()[0])
    # Every pydantic error beyond the ten mapped ones is counted, none is mapped.
    assert left == 900 - 10
    assert all(v.rule == "story-context.required" for v in verdict.violations[:-1])


def test_the_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVELOPEKIT_MAX_VIOLATIONS", "3")
    ek.get_settings.cache_clear()
    verdict = ek.check(som_with_assets(b"{}", 10), "som")
    assert len(verdict.violations) == 4
    assert verdict.violations[-1].rule == rules.VIOLATIONS_TRUNCATED


def test_the_default_cap_is_a_hundred() -> None:
    verdict = ek.check(som_with_assets(b"{}", 300), "som")
    assert len(verdict.violations) == 101


def test_under_the_cap_nothing_is_added() -> None:
    verdict = ek.check(som_with_assets(b"{}", 2), "som")
    assert [v.pointer for v in verdict.violations] == [
        f"/payload/assets/{i}/{name}"
        for i in (0, 1)
        for name in ("asset_id", "asset_type", "status")
    ]


def test_a_large_message_stops_each_array_at_its_first_failing_item() -> None:
    raw = som_with_assets(b"{}", 79_000)
    assert FULL_REPORT_BYTES < len(raw) <= 240_000
    verdict = ek.check(raw, "som")
    assert verdict.rules() == ["story-context.required", rules.VIOLATIONS_TRUNCATED]
    assert [v.pointer for v in verdict.violations[:-1]] == [
        "/payload/assets/0/asset_id",
        "/payload/assets/0/asset_type",
        "/payload/assets/0/status",
    ]
    assert "first failing item" in verdict.violations[-1].message


def test_a_large_message_failing_outside_arrays_gets_every_error_and_no_notice() -> None:
    filler = b'"' + b"x" * (FULL_REPORT_BYTES + 10) + b'"'
    raw = bq(b'{"a":' + filler + b"}").replace(b'"attempts":0', b'"attempts":-1')
    raw = raw.replace(b'"lang":"php"', b'"lang":7')
    verdict = ek.check(raw, "babelqueue")
    assert sorted(v.pointer for v in verdict.violations) == ["/attempts", "/meta/lang"]


@pytest.mark.parametrize("count", [200, 79_000], ids=["all-errors", "fail-fast"])
def test_a_valid_message_reads_the_same_below_and_above_the_size(count: int) -> None:
    asset = orjson.dumps(
        {"asset_id": "a", "asset_type": "VIDEO", "status": "READY", "media_refs": []}
    )
    raw = som_with_assets(asset, count)
    raw = raw if len(raw) <= 240_000 else som_with_assets(asset, 2_500)
    verdict = ek.check(raw, "som")
    assert verdict.ok, verdict.violations
    assert verdict.envelope == SomEnvelope.model_validate_json(raw)
    assert type(verdict.envelope.payload) is StoryContext
    assets = verdict.envelope.payload.assets
    assert isinstance(assets, list)
    assert type(assets[0]) is Asset


def test_building_the_fail_fast_validator_leaves_the_models_complete() -> None:
    fail_fast_validator(SomEnvelope.__pydantic_core_schema__)
    assert StoryContext.__pydantic_complete__
    assert Asset.__pydantic_complete__
    # The models' own validators still report every failing item.
    with pytest.raises(ValidationError) as caught:
        SomEnvelope.model_validate_json(som_with_assets(b"{}", 2))
    assert caught.value.error_count() == 6


def test_warnings_are_capped_too() -> None:
    ints = b",".join([b"9007199254740993"] * 250)
    verdict = ek.check(bq(b'{"a":[' + ints + b"]}"), "babelqueue")
    assert verdict.ok
    assert len(verdict.warnings) == 101
    assert verdict.warnings[-1].rule == rules.VIOLATIONS_TRUNCATED
    assert {w.rule for w in verdict.warnings[:-1]} == {rules.NUMBER_UNSAFE_INTEGER}


@pytest.mark.parametrize("cap", [1, 7, 150])
def test_the_warning_scan_is_capped_by_the_settings_of_the_check(
    cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment says 3; the call says otherwise, and the call wins (also above it).
    monkeypatch.setenv("ENVELOPEKIT_MAX_VIOLATIONS", "3")
    ek.get_settings.cache_clear()
    raw = bq(b'{"a":[' + b",".join([b"9007199254740993"] * 250) + b"]}")
    for spec in ("babelqueue", "auto"):
        verdict = ek.check(raw, spec, settings=ek.Settings(max_violations=cap))
        assert verdict.ok
        assert len(verdict.warnings) == cap + 1
        assert verdict.warnings[-1] == truncated(250 - cap)
        assert [w.pointer for w in verdict.warnings[:-1]] == [f"/data/a/{i}" for i in range(cap)]
    # Without settings the environment's cap applies, the model's reading too.
    assert len(ek.check(raw, "babelqueue").warnings) == 4
    assert len(BabelEnvelope.model_validate_json(raw).envelope_warnings()) == 4


def test_the_warning_cap_reaches_the_model_as_its_validation_context() -> None:
    raw = bq(b'{"a":[' + b",".join([b"9007199254740993"] * 20) + b"]}")
    read = BabelEnvelope.model_validate_json(raw, context={"max_violations": 5})
    assert read.envelope_warnings()[-1] == truncated(15)
    assert len(read.envelope_warnings()) == 6


# --- number scans -----------------------------------------------------------------------------


def test_many_nans_are_one_violation_at_the_first() -> None:
    raw = bq(b'{"a":[' + b",".join([b"NaN"] * 5000) + b"]}")
    verdict = ek.check(raw, "babelqueue")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_NON_FINITE, "/data/a/0")
    ]


def test_the_number_scan_stops_at_the_first_refusal() -> None:
    errors, _ = scan_numbers([1.0, float("nan"), float("inf")], "/x", first_refusal=True)
    assert [e.pointer for e in errors] == ["/x/1"]
    errors, _ = scan_numbers([1.0, float("nan"), float("inf")], "/x")
    assert [e.pointer for e in errors] == ["/x/1", "/x/2"]


def test_a_bare_number_is_scanned_at_its_base() -> None:
    errors, warnings = scan_numbers(2**64, "/v")
    assert [(e.rule, e.pointer) for e in errors] == [(rules.NUMBER_OUT_OF_RANGE, "/v")]
    errors, warnings = scan_numbers(2**60, "/v")
    assert [(w.rule, w.pointer) for w in warnings] == [(rules.NUMBER_UNSAFE_INTEGER, "/v")]


def test_number_pointers_escape_their_keys() -> None:
    errors, _ = scan_numbers({"a/b": {"c~d": [float("nan")]}}, "")
    assert [e.pointer for e in errors] == ["/a~1b/c~0d/0"]


_EDGES = st.sampled_from(
    [2**53 - 1, 2**53, -(2**53), 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**40, 10**80, 7]
)
_NUMBERS: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        _EDGES,
        st.sampled_from([float("nan"), float("inf"), 1.5, "s", True, None]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.sampled_from("ab/~"), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_NUMBERS, st.integers(0, 4), st.booleans(), st.booleans(), st.booleans())
def test_the_scan_past_the_cap_counts_what_the_whole_scan_finds(
    value: Any, cap: int, wide: bool, first: bool, integers: bool
) -> None:
    options: dict[str, Any] = {"wide_integers": wide, "first_refusal": first, "integers": integers}
    errors, every = scan_numbers(value, "/d", **options)
    capped_errors, capped = scan_numbers(value, "/d", max_warnings=cap, **options)
    assert capped_errors == errors
    if errors and first:
        assert capped == every[:cap]  # returned at the first refusal, nothing counted
    else:
        left = len(every) - cap
        assert capped == every[:cap] + ([truncated(left)] if left > 0 else [])


def test_past_the_cap_a_list_of_integers_costs_no_python_step_per_item() -> None:
    # Counted by C passes over the types and bit lengths (the loop ran seven lines an item).
    for value in ({"a": [2**64] * 5_000}, {"a": [2**60, 7, -(2**60)] * 2_000}):
        scan = partial(
            scan_numbers, value, "/d", wide_integers=True, first_refusal=True, max_warnings=10
        )
        lines = _lines_run(scan, _json_module.__file__)
        assert lines < 400
    # An object's members, and a list with anything but integers, still take the lean loop.
    mixed = {"a": [2**60, "s"] * 2_500}
    lines = _lines_run(
        lambda: scan_numbers(mixed, "/d", first_refusal=True, max_warnings=10),
        _json_module.__file__,
    )
    assert lines > 5_000


_LISTS: st.SearchStrategy[Any] = st.recursive(
    st.lists(_EDGES, min_size=1, max_size=12),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from("ab"), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_LISTS, _NUMBERS), st.integers(0, 4), st.booleans(), st.booleans())
def test_the_lists_counted_in_c_give_what_the_loop_gives(
    value: Any, cap: int, wide: bool, first: bool
) -> None:
    options: dict[str, Any] = {"wide_integers": wide, "first_refusal": first, "max_warnings": cap}
    fast = scan_numbers(value, "/d", **options)
    counted = _json_module._counted_integers
    _json_module._counted_integers = lambda *_: None  # every list by the loop
    try:
        slow = scan_numbers(value, "/d", **options)
    finally:
        _json_module._counted_integers = counted
    assert fast == slow


_PLAIN_LEAVES = st.sampled_from([0, -1, 7, 2**53 - 1, -(2**53 - 1), 1.5, -0.0, 1e308, "s", None])
_LEAVES = st.one_of(
    _EDGES, _PLAIN_LEAVES, st.sampled_from([float("nan"), float("inf"), float("-inf"), True])
)


def _trees(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("ab~/"), inner, max_size=3)
        ),
        max_leaves=8,
    )


@st.composite
def _long_lists(draw: st.DrawFn) -> list[Any]:
    """A list long enough to be read in parts: plain items in turn, a few others among them."""
    template = draw(st.lists(_trees(_PLAIN_LEAVES), min_size=1, max_size=4))
    length = draw(st.one_of(st.integers(60, 1_300), st.integers(4_000, 4_400)))
    items = [template[at % len(template)] for at in range(length)]
    for at, item in draw(st.lists(st.tuples(st.integers(0, 10**6), _trees(_LEAVES)), max_size=3)):
        items[at % length] = item
    return items


@settings(max_examples=300, deadline=None)
@given(_long_lists(), st.integers(0, 4), st.booleans(), st.booleans(), st.booleans())
def test_long_lists_read_by_c_passes_give_what_the_item_loop_gives(
    items: list[Any], cap: int, wide: bool, first: bool, integers: bool
) -> None:
    """Long lists are cleared a part at a time by C passes over their values, levels deep; the
    loop reading them item by item (every list shorter than `_BULK`) says the same."""
    value = {"a": items, "b": [items]}
    options: dict[str, Any] = {
        "wide_integers": wide,
        "first_refusal": first,
        "max_warnings": cap,
        "integers": integers,
    }
    fast = scan_numbers(value, "/d", **options), needs_scan(value)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_json_module, "_BULK", 10**9)
        slow = scan_numbers(value, "/d", **options), needs_scan(value)
    assert fast == slow


def _walked(value: Any, budget: int) -> tuple[bool | None, int]:
    reading = NumberReading(b"")
    reading.left = budget
    try:
        return needs_scan(value, reading), reading.left
    except _json_module._Spent:
        return None, reading.left


@settings(max_examples=200, deadline=None)
@given(_long_lists(), st.integers(0, 20_000))
def test_a_reading_is_charged_for_what_the_c_passes_clear(items: list[Any], budget: int) -> None:
    """What a part's C passes clear costs the walk's budget what walking it would (a step a
    value): the same answer, or the same `_Spent`, and within budget the same steps left."""
    value = [items, {"k": items}]
    fast = _walked(value, budget)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_json_module, "_BULK", 10**9)
        slow = _walked(value, budget)
    assert fast[0] == slow[0]
    if fast[0] is not None:
        assert fast[1] == slow[1]


def test_the_wide_bounds_are_made_once_per_int_str_limit() -> None:
    # 10**4300 and its neighbours are 14,000-bit numbers: made once, not per scan.
    scan_numbers({"a": 2**64}, "/d", wide_integers=True)
    made = _json_module._wide_bounds.cache_info().misses
    for _ in range(50):
        _, warnings = scan_numbers({"a": 2**64}, "/d", wide_integers=True)
        assert [w.rule for w in warnings] == [rules.NUMBER_BEYOND_INT64]
    assert _json_module._wide_bounds.cache_info().misses == made


@pytest.mark.parametrize("digits", [4301, 5000, 100_000])
def test_an_integer_past_4300_digits_is_out_of_range_at_its_member(digits: int) -> None:
    raw = bq(b'{"n":-' + b"9" * digits + b"}")
    for spec in ("babelqueue", "auto"):
        verdict = ek.check(raw, spec)
        assert [(v.rule, v.pointer) for v in verdict.violations] == [
            (rules.NUMBER_OUT_OF_RANGE, "/data/n")
        ]
        assert "more than 4300 digits" in verdict.violations[0].message
        assert "18446744073709551616" not in verdict.violations[0].message


def test_long_integers_do_not_bring_a_message_under_its_specs_size_limit() -> None:
    # 50 integers of 5,000 digits make this SOM message 250 KB, past SOM's 240,000 bytes; the
    # copy read with 2^64 stand-ins for them is 1,000 times smaller, and no smaller message.
    raw = som_with_assets(b"9" * 5000, 50)
    assert 240_000 < len(raw) < ek.Settings().max_message_bytes
    for spec in ("som", "auto"):
        verdict = ek.check(raw, spec)
        assert [(v.rule, v.pointer) for v in verdict.violations] == [
            (rules.MESSAGE_TOO_LARGE, "")
        ], spec
        assert verdict.spec == "som"


def test_an_integer_of_exactly_4300_digits_is_quoted_by_its_size() -> None:
    verdict = ek.check(b'{"op":"fs.write","payload":{"n":' + b"9" * 4300 + b"}}", "matrix")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, "/payload/n")
    ]
    assert verdict.violations[0].message.startswith("an integer of 4300 digits")
    # BabelQueue data reads it (Decisions §6), with a warning that quotes its size too.
    read = ek.check(bq(b'{"n":' + b"9" * 4300 + b"}"), "babelqueue")
    assert read.ok
    assert [w.message.startswith("an integer of 4300 digits") for w in read.warnings] == [True]


@pytest.fixture
def int_str_limit() -> Iterator[Callable[[int], None]]:
    """Set Python's int-str limit for one test (``sys.set_int_max_str_digits``)."""
    before = sys.get_int_max_str_digits()
    yield sys.set_int_max_str_digits
    sys.set_int_max_str_digits(before)


@pytest.mark.parametrize("limit", [0, 640, 4300, 10_000])
def test_the_parsers_own_limit_is_4300_digits_whatever_pythons(
    limit: int, int_str_limit: Callable[[int], None]
) -> None:
    int_str_limit(limit)
    assert from_json(b"[" + b"9" * PARSER_MAX_DIGITS + b"]") == [10**PARSER_MAX_DIGITS - 1]
    with pytest.raises(ValueError, match="number out of range"):
        from_json(b"[" + b"9" * (PARSER_MAX_DIGITS + 1) + b"]")


@pytest.mark.parametrize(("limit", "said"), [(640, 640), (4300, 4300), (0, 4300), (10_000, 4300)])
def test_a_long_integer_is_told_the_limit_in_force(
    limit: int, said: int, int_str_limit: Callable[[int], None]
) -> None:
    # Past the parser's 4,300 digits, and (at 640) past Python's int-str limit but not the
    # parser's: each refusal names the limit that applies, not a fixed 4300.
    int_str_limit(limit)
    assert long_integer_digits() == said
    for digits in (5000, 700):
        raw = bq(b'{"n":' + b"9" * digits + b"}")
        verdict = ek.check(raw, "babelqueue")
        if digits <= said:
            assert verdict.ok  # read with a warning (Decisions §6)
            continue
        assert [(v.rule, v.pointer) for v in verdict.violations] == [
            (rules.NUMBER_OUT_OF_RANGE, "/data/n")
        ]
        assert f"more than {said} digits" in verdict.violations[0].message or (
            f"more than the {said} digits" in verdict.violations[0].message
        )
        assert "64-bit" not in verdict.violations[0].message
    matrix = ek.check(b'{"op":"fs.write","payload":[' + b"9" * 5000 + b"]}", "matrix")
    assert f"an integer of more than {said} digits" in matrix.violations[0].message


def test_a_long_run_of_digits_in_a_string_is_left_alone() -> None:
    verdict = ek.check(bq(b'{"s":"' + b"9" * 5000 + b'"}'), "babelqueue")
    assert verdict.ok


def test_a_long_integer_elsewhere_in_a_matrix_payload_is_found_too() -> None:
    raw = b'{"op":"fs.write","payload":{"x":[1,' + b"7" * 4500 + b"]}}"
    verdict = ek.check(raw, "matrix")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, "/payload/x/1")
    ]


_LONG = b"9" * 4301
# The oracle of the long-integer finder: a string, or an integer longer than Python converts
# from text (sys.int_info's 4,300 digits), replaced with a Python step each.
_STRING_OR_LONG_INTEGER = re.compile(rb'"(?:[^"\\]|\\.)*"|(?<![0-9.eE+])(-?)[0-9]{4301,}')
# A text the regex reads as strings and what lies between them, a backslash in none of that.
_READ_BY_THE_REGEX = re.compile(rb'(?:"(?:[^"\\]|\\.)*"|[^"\\])*')


def _by_regex(text: bytes) -> bytes | None:
    found = False

    def stand_in(match: re.Match[bytes]) -> bytes:
        nonlocal found
        if match.group(1) is None:
            return match.group(0)
        found = True
        return match.group(1) + OUT_OF_RANGE_STAND_IN

    copy = _STRING_OR_LONG_INTEGER.sub(stand_in, text)
    return copy if found else None


def _parser_error(raw: bytes) -> str:
    try:
        from_json(raw)
    except ValueError as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize(
    "head",
    [b'{"a":', b"[1,\r\n -", b'["\\"x", ', b'{"\xc3\xa9":[', b"\n\n\t[[", b"", b"-"],
    ids=["object", "second-line-minus", "after-escapes", "utf8-key", "third-line", "bare", "minus"],
)
@pytest.mark.parametrize("digits", [4301, 4302, 20_000])
def test_the_parser_says_where_the_integer_it_refused_begins(head: bytes, digits: int) -> None:
    # pydantic-core stops at the byte after the 4,301st digit: the finder's fast path relies on it.
    raw = head + b"7" * digits + b"]"
    error = _parser_error(raw)
    assert "number out of range" in error
    assert _json_module._refused_integer(raw, error) == len(head)


def test_the_parsers_own_position_is_not_tested_for_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The parser stops only outside strings: the quotes before its position are counted only
    # for a message that may not be its own (3 ms a MiB dense with escapes).
    raw = bq(b'{"s":[' + b",".join([b'"\\"a"'] * 3_000) + b'],"n":' + _LONG + b"}")
    error = _parser_error(raw)
    counted = recorded(monkeypatch, _json_module, "neutral")
    expected = _by_regex(raw)
    assert _json_module.without_long_integers(raw, error, parsed=True) == expected
    assert counted == []
    assert _json_module.without_long_integers(raw, error) == expected
    assert [len(text) for text in counted] == [raw.index(_LONG)]


def test_a_position_is_trusted_only_where_every_digit_the_parser_read_is_there() -> None:
    # A message not the parser's, pointing 4,301 bytes after the "1" of `1e-999…`: both ends are
    # digits, not the bytes between them.
    raw = b"[1e-" + _LONG + b"]"
    said = f"number out of range at line 1 column {1 + 4301 + 1}"
    assert _json_module._refused_integer(raw, said) is None
    assert _json_module.without_long_integers(raw, said) == _by_regex(raw)


# Pieces of text, JSON and not: the finder must replace what the regex over the whole text does.
_PIECES = st.sampled_from(
    [
        *(_LONG, b"9" * 4300, b"9" * 70, b"-", b".", b"e-", b"E-", b"e", b"+", b'"', b"\\"),
        *(b'\\"', b"\\\\", b"\n", b"a", b",", b"[", b"]", b'{"k":', b"}", b" ", b'"s"'),
        b'"\\u0022"',
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14))
# 4,300 digits, a fraction of 4,301, then trailing text: the parser stops where a refused
# integer of the fraction's length would have begun, for another reason.
@example([b"9" * 4300, b".", _LONG, b"-"])
# A string left open: the parser stops at the line's end, just after the second long run.
@example([b'"', _LONG, b"-", _LONG, b"\n"])
# 4,300 digits at the text's end, where a position past its end says 4,301 begin.
@example([b"9" * 70, *[b"-"] * 7, b"e-", b"\n", b'{"k":', b'{"k":', b'"\\u0022"', b"9" * 4300])
# A run of digits in a string where a position not the parser's says an integer begins.
@example(
    [
        b"9" * 70,
        b"-",
        b"-",
        b"-",
        b"-",
        b"e-",
        b'"',
        b'{"k":',
        b'{"k":',
        b'"s"',
        b'"\\u0022"',
        _LONG,
        b'"',
    ]
)
def test_the_long_integer_finder_replaces_what_the_regex_replaces(pieces: list[bytes]) -> None:
    raw = b"".join(pieces)
    error = _parser_error(raw)
    # A position that is not the parser's is never trusted.
    elsewhere = "number out of range at line 1 column 4400"
    if _READ_BY_THE_REGEX.fullmatch(raw):
        expected = _by_regex(raw)
        assert _json_module.without_long_integers(raw) == expected
        assert _json_module.without_long_integers(raw, error) == expected
        assert _json_module.without_long_integers(raw, error, parsed=True) == expected
        assert _json_module.without_long_integers(raw, elsewhere) == expected
        return
    # Never JSON: nothing replaced but the integer a message says the parser refused, where it
    # stands in the text as such an integer would; the copy's parse refuses the text again.
    assert _json_module.without_long_integers(raw) is None
    for said, parsed in ((error, False), (error, True), (elsewhere, False)):
        at = _json_module._refused_integer(raw, said, parsed)
        copy = _json_module.without_long_integers(raw, said, parsed=parsed)
        if at is None:
            assert copy is None
        else:
            assert copy == raw[:at] + OUT_OF_RANGE_STAND_IN + raw[at:].lstrip(b"0123456789")
            with pytest.raises(ValueError):
                from_json(copy)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.sampled_from([b"0" + _LONG, b"1e-" + _LONG])), max_size=14))
@example([b"[", b"0" + _LONG, b"]"])  # a leading zero: the parser refuses it as no number
@example([b"[1e-", _LONG, b",", _LONG, b"]"])  # a negative exponent the parser reads
@example([b'["\\"', b",", b"\\", _LONG, b"]"])  # a backslash before it: not JSON
def test_the_copy_made_before_any_parse_is_the_one_the_parse_leads_to(pieces: list[bytes]) -> None:
    # Where `check` reads the copy at once, its verdict is the one the parse of the text leads
    # to: the parser refuses the text at the first integer replaced (and the stand-in reading
    # makes the same copy), or at an error before it (the copy's parse says the same).
    raw = b"".join(pieces)
    replaced = _json_module.without_refused_integers(raw)
    if replaced is None:
        return
    copy, stand_in = replaced
    assert stand_in == _json_module.stand_in_for(raw)
    error = _parser_error(raw)
    assert error
    if "number out of range" in error:
        assert _json_module.without_long_integers(raw, error) == copy
    else:
        assert _parser_error(copy) == error


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":' + _LONG + b"}",
        b'{"s":["x","y\\"z"],"a":-' + _LONG + b',"b":[1.' + _LONG + b",2e+" + _LONG + b"]}",
        b'{"a":' + _LONG + b',"s":"' + _LONG + b'","b":[' + _LONG + b"]}",
        b'{"e":1e-' + _LONG + b',"a":' + _LONG + b"}",
        b'{"a":' + _LONG + b',"e":1E-' + _LONG + b',"t":"\\\\"}',
    ],
    ids=["one", "after-strings", "string-between", "negative-exponent-before", "after"],
)
def test_the_long_integer_finder_agrees_with_the_regex_on_messages(data: bytes) -> None:
    raw = bq(data)
    expected = _by_regex(raw)
    assert expected is not None
    assert _json_module.without_long_integers(raw, _parser_error(raw)) == expected
    assert _json_module.without_long_integers(raw) == expected


def test_finding_a_long_integer_costs_no_python_step_per_string() -> None:
    strings = b",".join([b'"s\\"%d"' % i for i in range(2_000)])
    raw = bq(b'{"before":[' + strings + b'],"n":' + _LONG + b',"after":[' + strings + b"]}")
    error = _parser_error(raw)
    copy = _json_module.without_long_integers(raw, error)
    assert copy == _by_regex(raw)
    find = _json_module.without_long_integers
    lines = _lines_run(lambda: find(raw, error), _json_module.__file__)
    assert lines < 80  # the regex with a callback ran three lines a string (12,000 here)
    verdict = ek.check(raw, "babelqueue")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, "/data/n")
    ]


@pytest.mark.parametrize(
    ("item", "sep"),
    [(b"1e-5", b","), (b"1E-5", b","), (b"1." + b"7" * 64, b","), (b"1", b",\n"), (b"[]", b"\n,")],
    ids=["exponents", "upper-exponents", "runs-of-64", "lines", "lines-of-arrays"],
)
@pytest.mark.parametrize("exponent", [b"", b"1e-" + _LONG + b","], ids=["", "after-an-exponent"])
def test_finding_a_long_integer_costs_no_python_step_per_number_or_line(
    item: bytes, sep: bytes, exponent: bytes
) -> None:
    # Each "e-" before the integer was matched in Python (a MiB of `1e-5`: 20x orjson), and each
    # line split into an object of its own (a MiB of them: 10x).
    raw = bq(b'{"a":[' + exponent + sep.join([item] * 10_000) + b"," + _LONG + b"]}")
    error = _parser_error(raw)
    expected = _by_regex(raw)
    find = _json_module.without_long_integers
    assert find(raw, error) == expected
    assert _lines_run(lambda: find(raw, error), _json_module.__file__) < 300
    # Its line found by counting newlines, not by splitting the text at them (12 times its size).
    assert peak_memory(lambda: _json_module._refused_integer(raw, error)) < 2 * len(raw)
    verdict = ek.check(raw, "babelqueue")
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, f"/data/a/{10_000 + bool(exponent)}")
    ]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(b"ab\n"[x % 3] for x in b)), st.integers(2, 45))
def test_a_line_begins_where_splitting_at_newlines_says(raw: bytes, line: int) -> None:
    parts = raw.split(b"\n")
    expected = len(raw) - len(raw.split(b"\n", line - 1)[-1]) if line <= len(parts) else -1
    assert _json_module._line_start(raw, line) == expected


def test_a_long_integer_keeps_the_verdict_of_its_stand_in_copy() -> None:
    # The copy is validated whole: its other findings and warnings are the verdict's.
    raw = bq(b'{"n":' + _LONG + b',"m":[-' + _LONG + b'],"u":9007199254740993}')
    for spec in ("babelqueue", "auto"):
        verdict = ek.check(raw, spec)
        assert [(v.rule, v.pointer) for v in verdict.violations] == [
            (rules.NUMBER_OUT_OF_RANGE, "/data/n"),
            (rules.NUMBER_OUT_OF_RANGE, "/data/m/0"),
        ]
        assert [(w.rule, w.pointer) for w in verdict.warnings] == [
            (rules.NUMBER_UNSAFE_INTEGER, "/data/u")
        ]
        # A field that fails stops the model before its number rules, in the copy as anywhere.
        bad_trace = ek.check(raw.replace(b"7b3f9c2a", b"not-uuid"), spec)
        assert [(v.rule, v.pointer) for v in bad_trace.violations] == [
            ("message-envelope.format.uuid", "/trace_id")
        ]


@pytest.mark.parametrize(
    ("spec", "head", "pointer"),
    [
        ("babelqueue", BQ_HEAD, "/data/n"),
        ("auto", BQ_HEAD, "/data/n"),
        ("matrix", _MX_HEAD, "/payload/n"),
        ("auto", _MX_HEAD, "/payload/n"),
    ],
    ids=["babelqueue", "auto", "matrix", "auto-matrix"],
)
def test_the_stand_in_copy_is_not_read_again_for_its_numbers(
    monkeypatch: pytest.MonkeyPatch, spec: str, head: bytes, pointer: str
) -> None:
    # The copy holds 2^64, a number to note: its proof is false without cutting its strings out
    # (a MiB dense with escapes: 7 ms of the 35 `check` spends, past 10x orjson before), also
    # where validation asks for it after the reading let its copies go (Matrix's, past its
    # budget of steps).
    strings = b",".join([b'"\\"\\\\\\"a"'] * 3_000)
    raw = head + b'{"s":[' + strings + b'],"n":' + _LONG + b"}}"
    assert len(raw) > FULL_REPORT_BYTES
    copy = _json_module.without_long_integers(raw, _parser_error(raw))
    assert copy is not None
    read = recorded(monkeypatch, _json_module, "_cut_out")
    verdict = ek.check(raw, spec)
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, pointer)
    ]
    # BabelQueue proves the message's numbers before its parse fails; the others' parse fails
    # first.
    assert (raw in read) is (spec == "babelqueue")
    assert copy not in read
    # Within such a reading the proof is false; of another text, or after it, it reads.
    with _json_module.one_reading(copy, stood_in=True):
        assert not _json_module.plain_numbers(copy)
        assert _json_module.plain_numbers(bq(b"[1]"))
    assert copy not in read
    assert not _json_module.plain_numbers(copy)
    assert copy in read


@pytest.mark.parametrize("spec", ["som", "auto"])
def test_a_copy_read_without_a_finding_leaves_the_parsers_refusal(
    monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    # SOM's free-form JSON takes any integer, 2^64 too: the copy holds no finding, and the text
    # is json.invalid in the parser's words. Under "auto" without a parse of the text after the
    # copy's (the reading of detection's members stopped where it would). The copy's free-form
    # JSON is walked for NaN and Infinity, its text not read for them (1.2 ms of 240 KB).
    strings = b",".join([b'"\\"a"'] * 3_000)
    raw = som_actors(b'{"s":[' + strings + b'],"n":' + _LONG + b"}")
    assert len(raw) > FULL_REPORT_BYTES
    copy = _json_module.without_long_integers(raw, _parser_error(raw))
    parsed = recorded(monkeypatch, ek_check, "from_json")
    read = recorded(monkeypatch, _json_module, "_cut_out")
    verdict = ek.check(raw, spec)
    assert [(v.rule, v.pointer, v.message) for v in verdict.violations] == [
        (rules.JSON_INVALID, "", f"Invalid JSON: {_parser_error(raw)}.")
    ]
    assert parsed == []
    assert copy not in read
    # A NaN beside it is still found, by the walk.
    nan = raw.replace(b'"n":', b'"x":NaN,"n":')
    assert [(v.rule, v.pointer) for v in ek.check(nan, spec).violations] == [
        (rules.NUMBER_NON_FINITE, "/_actors/x")
    ]


def test_only_the_parsers_own_words_are_trusted_for_where_it_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SOM's validator refuses the text in the parser's words: the quotes before where it
    # stopped are not counted. A json.invalid a validator writes quotes the input's keys, and
    # may say anything: it is tested.
    raw = som_actors(b'{"s":["\\"a"],"n":' + _LONG + b"}")
    counted = recorded(monkeypatch, _json_module, "neutral")
    assert [v.rule for v in ek.check(raw, "som").violations] == [rules.JSON_INVALID]
    assert counted == []
    said = "Invalid JSON: number out of range at line 1 column 4400."
    assert ek_check._PARSER_REFUSED.fullmatch(said)
    quoted = "Invalid JSON: a string or key at /" + said + " holds a lone surrogate."
    assert ek_check._PARSER_REFUSED.fullmatch(quoted) is None


def test_detection_refused_at_a_long_integer_reads_the_stand_in_without_a_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # spec "auto": the reading of detection's members stops where the parse would; the copy is
    # read from there (the parse of the text, 8 ms of a MiB of escaped strings, is not made).
    raw = bq(b'{"s":[' + b",".join([b'"\\"a"'] * 3_000) + b'],"n":' + _LONG + b"}")
    parsed = recorded(monkeypatch, ek_check, "from_json")
    verdict = ek.check(raw, "auto")
    assert (verdict.spec, [(v.rule, v.pointer) for v in verdict.violations]) == (
        "babelqueue",
        [(rules.NUMBER_OUT_OF_RANGE, "/data/n")],
    )
    assert raw not in parsed


@given(st.integers(0, 3 * 2048), st.sampled_from([_LONG, b"-" + _LONG, b"9" * 9000]))
def test_a_long_integer_is_found_wherever_it_begins(offset: int, integer: bytes) -> None:
    # Only a text holding a block of digits at a multiple of 2,048 is read for one.
    raw = b'{"a":"' + b"x" * offset + b'","n":' + integer + b"}"
    assert _json_module.without_refused_integers(raw) == (_by_regex(raw), OUT_OF_RANGE_STAND_IN)


def test_a_text_without_a_run_that_long_is_not_read_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A MiB of 20-digit integers: no block of 2,048 digits, so no copy of it made (1.3 ms).
    raw = bq(b'{"a":[' + b",".join([b"18446744073709551616"] * 45_000) + b"]}")
    assert _json_module.without_refused_integers(raw) is None
    # Nor hashed for a stand-in (the text holds 2^64's digits): 1 ms a MiB.
    assert peak_memory(lambda: _json_module.without_refused_integers(raw)) < 64 * 1024
    hashed = recorded(monkeypatch, hashlib, "blake2b")
    assert _json_module.without_refused_integers(raw) is None
    assert hashed == []


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize("spec", ["babelqueue", "auto"])
def test_a_number_the_text_holds_is_never_taken_for_the_stand_in(spec: str, size: str) -> None:
    # 2^64 in the text was reported as the too-long integer it looked like, and refused: it
    # stays a warning, and the stand-in is one the text does not hold.
    strings = b",".join([b'"s"'] * (6_000 if size == "large" else 1))
    held = b"18446744073709551616"
    raw = bq(b'{"w":' + held + b',"t":"' + held + b'1","s":[' + strings + b'],"n":' + _LONG + b"}")
    assert (len(raw) > FULL_REPORT_BYTES) is (size == "large")
    verdict = ek.check(raw, spec)
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, "/data/n")
    ]
    assert [(w.rule, w.pointer) for w in verdict.warnings] == [
        (rules.NUMBER_BEYOND_INT64, "/data/w")
    ]
    assert held.decode() in verdict.warnings[0].message
    stand_in = _json_module.stand_in_for(raw)
    assert stand_in not in raw
    assert int(stand_in) >= 2**64
    assert stand_in == _json_module.stand_in_for(raw)  # the same text, the same stand-in
    assert _json_module.stand_in_for(bq(b'{"n":' + _LONG + b"}")) == OUT_OF_RANGE_STAND_IN


@pytest.mark.parametrize(("sign", "said"), [(b"", "an integer"), (b"-", "a negative integer")])
def test_a_message_quoting_the_stand_in_names_the_integer_with_its_sign(
    sign: bytes, said: str
) -> None:
    # Matrix quotes the value it refuses: "-18446744073709551616" read "-an integer of ...".
    raw = _MX_HEAD + b'{"n":' + sign + _LONG + b"}}"
    (found,) = ek.check(raw, "matrix").violations
    assert (found.rule, found.pointer) == (rules.NUMBER_OUT_OF_RANGE, "/payload/n")
    assert found.message.startswith(f"{said} of more than 4300 digits ")


@pytest.mark.parametrize("sign", [b"", b"-"])
def test_a_long_integer_is_read_with_its_stand_in_before_any_parse_of_the_text(
    monkeypatch: pytest.MonkeyPatch, sign: bytes
) -> None:
    # A spec that proves its numbers reads the copy at once where the proof fails: a parse of
    # the MiB would only stop at the integer (a third of `check` on strings dense with escapes).
    raw = bq(b'{"s":[' + b",".join([b'"\\"a"'] * 3_000) + b'],"n":' + sign + _LONG + b"}")
    assert len(raw) > FULL_REPORT_BYTES
    spec, pointer = "babelqueue", "/data/n"
    validated = recorded(monkeypatch, ek_check.Spec, "validate", at=1)
    verdict = ek.check(raw, spec)
    assert [(v.rule, v.pointer) for v in verdict.violations] == [
        (rules.NUMBER_OUT_OF_RANGE, pointer)
    ]
    assert validated == [_json_module.without_long_integers(raw, _parser_error(raw))]
    # A run of digits the parser refuses for another reason (a leading zero): the text is parsed.
    validated.clear()
    zero = raw.replace(sign + _LONG, sign + b"0" + _LONG)
    verdict = ek.check(zero, spec)
    assert [v.rule for v in verdict.violations] == [rules.JSON_INVALID]
    assert validated == [zero]


# --- the depth scan ---------------------------------------------------------------------------


def reference_depth(raw: bytes, limit: int) -> bool:
    """The byte-by-byte scan the bounded one replaced: its oracle."""
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x7D, 0x5D):
            depth -= 1
    return False


@given(
    st.binary(max_size=120).map(lambda b: bytes(b'[]{}"\\ a'[x % 8] for x in b)), st.integers(1, 6)
)
def test_the_depth_scan_agrees_with_the_byte_loop(raw: bytes, limit: int) -> None:
    assert exceeds_depth(raw, limit) is reference_depth(raw, limit)


# Nested arrays and objects of a few levels, one after another: texts the passes that drop
# the innermost level read alone (or with the running sum after a few of them).
_NESTS = st.recursive(
    st.just(0),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=30,
).map(orjson.dumps)


@given(st.lists(_NESTS, min_size=1, max_size=6), st.integers(1, 12), st.booleans())
def test_the_depth_scan_by_levels_agrees_with_the_byte_loop(
    nests: list[bytes], limit: int, joined: bool
) -> None:
    raw = (b"," if joined else b"").join(nests)
    assert exceeds_depth(raw, limit) is reference_depth(raw, limit)


@pytest.mark.parametrize(
    ("raw", "limit"),
    [(b"[[][", 2), (b"[[][", 1), (b"{[]}[[]", 2), (b"]][[[]]", 2), (b"[[]][[[]", 3)],
)
def test_a_text_that_does_not_close_what_it_opens_is_read_whole(raw: bytes, limit: int) -> None:
    # Dropping the innermost level lowers such a text's depth by one or by none: the running
    # sum reads all of it (after one pass, `[[][` would read as `[[`, two levels under one).
    assert exceeds_depth(raw, limit) is reference_depth(raw, limit)


_JSON_TEXTS = st.recursive(
    st.text(alphabet='[]{}"\\a\x01', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
).map(lambda value: orjson.dumps(value))


@settings(max_examples=300, deadline=None)
@given(_JSON_TEXTS)
def test_the_brackets_outside_strings_are_the_regex_s(raw: bytes) -> None:
    """A JSON text, its strings holding brackets, quotes and backslashes: cut at its quotes
    (few strings) or with its pairs neutralised, the brackets left are those outside."""
    expected = _json_module._STRING.sub(b"", raw).translate(None, _json_module._STRUCTURE_ONLY)
    assert _json_module.outside_strings(raw) == expected
    few = _json_module._few_strings_outside(raw)
    if b"\\" in raw:
        assert few is not None
        assert few.translate(None, _json_module._STRUCTURE_ONLY) == expected


def test_the_depth_scan_crosses_its_chunks() -> None:
    raw = b"[" * 70_000 + b"]" * 70_000
    assert exceeds_depth(raw, 69_999) and not exceeds_depth(raw, 70_000)
    assert not exceeds_depth(b'["' + b"[" * 200_000 + b'"]', 64)


class _NoRegex:
    """Stands in for a module's compiled regex and records every text it is asked to read."""

    def __init__(self, real: re.Pattern[Any]) -> None:
        self.real = real
        self.read: list[int] = []

    def sub(self, repl: bytes, text: bytes) -> bytes:
        self.read.append(len(text))
        return self.real.sub(repl, text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        self.read.append(len(text))
        return self.real.fullmatch(text)


# A text of 16 KiB or more (where brackets are found one by one): a short piece repeated.
_LARGE = st.binary(min_size=1, max_size=12).map(
    lambda b: bytes(b'[]{}"\\ a'[x % 8] for x in b) * (20_000 // len(b) + 1)
)


# Texts on each side of 16 KiB (up to it the brackets are counted, past it found one by one),
# dense with brackets (a short piece repeated) or sparse (a few put into spaces).
_SIZES = st.sampled_from([700, 5_000, 16_384, 16_385, 20_000])
_DENSE = st.tuples(st.binary(min_size=1, max_size=12), _SIZES).map(
    lambda p: (bytes(b'[]{}"\\ a'[x % 8] for x in p[0]) * p[1])[: p[1]]
)
_SPARSE = st.tuples(
    _SIZES, st.lists(st.tuples(st.integers(0, 20_000), st.sampled_from(b"[{]}")), max_size=80)
).map(lambda p: bytes(_with_brackets(p[0], p[1])))


def _with_brackets(size: int, brackets: list[tuple[int, int]]) -> bytearray:
    text = bytearray(b" " * size)
    for at, bracket in brackets:
        text[at % size] = bracket
    return text


@settings(max_examples=120, deadline=None)
@given(st.one_of(_DENSE, _SPARSE), st.integers(1, 70))
def test_the_bracket_bound_is_the_count_at_every_size(raw: bytes, limit: int) -> None:
    assert more_brackets_than(raw, limit) is (raw.count(b"{") + raw.count(b"[") > limit)


@settings(max_examples=25, deadline=None)
@given(_LARGE, st.integers(1, 70))
def test_the_depth_scan_of_a_large_text_agrees_with_the_byte_loop(raw: bytes, limit: int) -> None:
    assert exceeds_depth(raw, limit) is reference_depth(raw, limit)


@pytest.mark.parametrize(
    "data",
    [b'"' + b"[{" * 400_000 + b'"', b'"' + b'[{\\n\\"\\\\' * 100_000 + b'"'],
    ids=["plain", "with-escapes"],
)
def test_brackets_in_strings_are_skipped_without_the_regex(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    from envelopekit import _json

    regex = _NoRegex(_json._STRING)
    monkeypatch.setattr(_json, "_STRING", regex)
    verdict = ek.check(bq(b'{"s":' + data + b"}"), "babelqueue")
    assert verdict.ok, verdict.violations
    assert regex.read == []


def test_a_backslash_outside_strings_is_read_as_the_byte_loop_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from envelopekit import _json

    regex = _NoRegex(_json._STRING)
    monkeypatch.setattr(_json, "_STRING", regex)
    # Outside a string the byte loop ignores a backslash: `\"` opens a string there.
    assert not exceeds_depth(b'[\\"[[[[["]', 2)
    assert exceeds_depth(b"[\\\\[[[]]]", 2)
    assert len(regex.read) == 2


@pytest.mark.parametrize("spec", ["babelqueue", "matrix"])
def test_recognising_the_spec_holds_no_second_document(spec: str) -> None:
    items = b",".join([b"[]"] * 60_000)
    if spec == "babelqueue":
        raw = bq(b'{"a":[' + items + b"]}")
    else:
        raw = b'{"op":"fs.write","payload":{"a":[' + items + b"]}}"
    assert ek.check(raw, "auto").ok
    # The parse that recognises the spec is freed before validation builds its own tree.
    assert peak_memory(lambda: ek.check(raw, "auto")) < 1.3 * peak_memory(
        lambda: ek.check(raw, spec)
    )


# --- messages quote a short prefix ------------------------------------------------------------


def test_a_long_op_is_quoted_by_a_prefix() -> None:
    op = "a." * 50_000 + "A"
    verdict = ek.check(orjson.dumps({"op": op, "payload": {}}), "matrix")
    assert verdict.ok
    assert [w.rule for w in verdict.warnings] == [rules.OP_CONVENTION]
    assert len(verdict.warnings[0].message) <= MAX_MESSAGE_CHARS


@given(st.text(alphabet="aZ0.$\n_", max_size=12))
def test_the_op_lint_reads_the_domain_pattern(op: str) -> None:
    follows = re.fullmatch(DOMAIN_OP_PATTERN, op) is not None
    if follows:
        assert op_problem(op) is None
    elif not op.startswith("$"):
        assert op_problem(op) is not None


_OP_TEXT = st.text(alphabet="azAZ09.$\n_\u00e9\u212a", max_size=20)
_OP_SEGMENTS = st.lists(st.text(alphabet="aZ0", min_size=0, max_size=4), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_OP_TEXT, _OP_SEGMENTS.map(".".join)))
def test_the_long_op_reader_is_the_domain_pattern(op: str) -> None:
    follows = re.fullmatch(DOMAIN_OP_PATTERN, op) is not None
    assert _ops._is_long_domain_op(op) is follows
    # Past the pattern's length the same op, repeated, reads the same way as the pattern does.
    long = (op + ".") * (300 // (len(op) + 1) + 1) + "x"
    assert _ops._is_domain_op(long) is (re.fullmatch(DOMAIN_OP_PATTERN, long) is not None)


@pytest.mark.parametrize(
    ("op", "follows"),
    [("a." * 600_000 + "A", False), ("a." * 600_000 + "a", True), ("$" + "a" * 10**6, True)],
    ids=["off", "domain", "system"],
)
def test_a_long_op_is_never_read_by_a_regex_with_repeated_groups(
    op: str, follows: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = _NoRegex(_ops._DOMAIN_RE)
    monkeypatch.setattr(_ops, "_DOMAIN_RE", domain)
    assert (op_problem(op) is None) is follows
    assert domain.read == []


def test_every_message_is_cut_to_a_short_prefix() -> None:
    som = orjson.loads(
        (DATA / "som" / "examples" / "story-context" / "hurricane-beat6-envelope.json").read_bytes()
    )
    som["som_version"] = "7." + "9" * 50_000
    verdict = ek.check(orjson.dumps(som), "som")
    assert not verdict.ok
    assert all(len(v.message) <= MAX_MESSAGE_CHARS for v in verdict.violations)


# --- duplicate keys ---------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_document_is_json_invalid_and_nothing_else(encoding: str) -> None:
    raw = '{"op":"fs.write","payload":{},"payload":{}}'.encode(encoding)
    verdict = ek.check(raw, "matrix", settings=ek.Settings(duplicate_keys="refuse"))
    assert verdict.rules() == [rules.JSON_INVALID]


def test_a_large_valid_babelqueue_message_is_the_model_reading() -> None:
    raw = bq(b"{" + b",".join(b'"k%05d":%d' % (i, i) for i in range(3000)) + b"}")
    assert len(raw) > FULL_REPORT_BYTES
    verdict = ek.check(raw, "babelqueue")
    assert verdict.ok
    assert verdict.envelope == BabelEnvelope.model_validate_json(raw)


@pytest.mark.parametrize("integers", [True, False])
def test_chunks_of_integers_to_note_none_are_not_measured_one_by_one(
    monkeypatch: pytest.MonkeyPatch, integers: bool
) -> None:
    # orjson's text of a chunk tells that none is to note (before: each integer's bit length,
    # 6.6 ms of a MiB of them); only the chunk that holds one is measured, and those after it.
    chunk = _json_module._CHUNK
    value: list[Any] = [-1] * (10 * chunk) + [2**64, 5]
    measured: list[int] = []
    real = _json_module._bit_lengths

    def counted(items: list[Any]) -> bytes | None:
        measured.append(len(items))
        return real(items)

    monkeypatch.setattr(_json_module, "_bit_lengths", counted)
    warnings = scan_numbers(value, "/d", wide_integers=True, integers=integers)[1]
    assert measured == [2]
    noted = [(w.rule, w.pointer) for w in warnings]
    assert noted == ([(rules.NUMBER_BEYOND_INT64, f"/d/{10 * chunk}")] if integers else [])


def test_chunks_of_strings_are_read_by_their_kinds_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # A chunk of strings alone holds nothing to note: one pass over its kinds (before: its parts
    # read one by one, 2.7 ms of a MiB of short strings). Once a chunk holds another kind, the
    # parts are read as before, for that chunk and every one after it.
    chunk = _json_module._CHUNK
    value: list[Any] = ["s"] * (10 * chunk) + ["s", float("nan")] + ["s"] * (2 * chunk - 2)
    parts = recorded(monkeypatch, _json_module, "_plain_values")
    violations = scan_numbers(value, "/d", wide_integers=True)[0]
    assert [(v.rule, v.pointer) for v in violations] == [
        (rules.NUMBER_NON_FINITE, f"/d/{10 * chunk + 1}")
    ]
    # The first part is read before the chunks (it tells how the list is read), then only the
    # parts of the chunk holding the NaN and those after it.
    part = _json_module._PART
    assert [len(items) for items in parts] == [part] + [part] * (2 * chunk // part)


def test_a_nan_after_chunks_of_strings_is_found_through_every_door() -> None:
    # The chunks read by their kinds serve every door's scan of a large list: a dict through
    # `model_validate` and a TypeAdapter, the JSON text through the model's door and `check`.
    chunk = _json_module._CHUNK
    document = orjson.loads(bq(b"{}"))
    document["data"] = {"s": ["s"] * (3 * chunk) + [float("nan")]}
    raw = bq(b'{"s":[' + b",".join([b'"s"'] * (3 * chunk)) + b",NaN]}")
    expected = [(rules.NUMBER_NON_FINITE, f"/data/s/{3 * chunk}")]
    doors: list[Callable[[], object]] = [
        lambda: BabelEnvelope.model_validate(document),
        lambda: TypeAdapter(BabelEnvelope).validate_python(document),
        lambda: BabelEnvelope.model_validate_json(raw),
    ]
    for door in doors:
        with pytest.raises(ValidationError) as refused:
            door()
        assert [(v.rule, v.pointer) for v in ek.violations(refused.value)] == expected
    assert [(v.rule, v.pointer) for v in ek.check(raw, "babelqueue").violations] == expected


# Long arrays of small integers with a few of anything at random places: what the chunks read
# by C passes (`_notable_items`, chunks of 16 here) must read as the loop does.
_RARE = st.sampled_from(
    [
        2**53,
        -(2**53),
        2**63,
        2**64,
        -(2**63) - 1,
        10**30,
        0.5,
        float("nan"),
        float("inf"),
        -float("inf"),
        True,
        None,
        "s",
        [],
        [2**60],
        {"a": float("nan")},
        {},
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(64, 200),
    st.lists(st.tuples(st.integers(0, 199), _RARE), max_size=4),
    st.integers(0, 3),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([7, "s"]),
)
def test_long_arrays_read_by_chunks_give_what_the_loop_gives(
    size: int,
    rare: list[tuple[int, Any]],
    cap: int,
    wide: bool,
    first: bool,
    integers: bool,
    base: Any,
) -> None:
    value = [base] * size
    for at, item in rare:
        value[at % size] = item
    options: dict[str, Any] = {
        "wide_integers": wide,
        "first_refusal": first,
        "max_warnings": cap,
        "integers": integers,
    }
    bulk, chunk = _json_module._BULK, _json_module._CHUNK
    setattr(_json_module, "_CHUNK", 16)  # noqa: B010 - a Final the test alone changes
    try:
        fast = (scan_numbers(value, "/d", **options), needs_scan(value))
        setattr(_json_module, "_BULK", 10**9)  # noqa: B010 - every array by the loop
        slow = (scan_numbers(value, "/d", **options), needs_scan(value))
    finally:
        setattr(_json_module, "_BULK", bulk)  # noqa: B010
        setattr(_json_module, "_CHUNK", chunk)  # noqa: B010
    # NaN is not equal to itself: compare the findings' rules, pointers and messages.
    assert [(v.rule, v.pointer, v.message) for v in fast[0][0] + fast[0][1]] == [
        (v.rule, v.pointer, v.message) for v in slow[0][0] + slow[0][1]
    ]
    assert fast[1] == slow[1]
